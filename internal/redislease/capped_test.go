package redislease_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/usid/usid/internal/redislease"
	"github.com/usid/usid/internal/redistest"
)

// TestReadHash: a hash is read within its bounds, measured in Redis: a
// value over its bound is named, not sent; a hash of more fields is
// refused whole; a missing key or one of another type reads as nothing.
func TestReadHash(t *testing.T) {
	rs := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer c.Close()
	ctx := context.Background()
	c.HSet(ctx, "h", "small", "abc", "big", strings.Repeat("x", 1<<20), "named", strings.Repeat("y", 100), strings.Repeat("n", 40), "long name")
	c.Set(ctx, "s", "a string", 0)
	caps := redislease.Caps{Fields: 8, Value: 10, Named: map[string]int{"named": 200}}

	h, err := redislease.ReadHash(ctx, c, "h", caps)
	if err != nil || len(h.Values) != 2 || h.Values["small"] != "abc" || len(h.Values["named"]) != 100 || len(h.Over) != 1 || h.Over[0] != "big" {
		t.Errorf("every field: %v %v (over %v)", err, len(h.Values), h.Over)
	}
	h, err = redislease.ReadHash(ctx, c, "h", caps, "small", "missing")
	if err != nil || len(h.Values) != 1 || h.Values["small"] != "abc" || len(h.Over) != 0 {
		t.Errorf("named fields: %v %v %v", err, h.Values, h.Over)
	}
	if _, err := redislease.ReadHash(ctx, c, "h", redislease.Caps{Fields: 3, Value: 10}); !errors.Is(err, redislease.ErrTooMany) {
		t.Errorf("a hash of 4 fields read with a bound of 3: %v", err)
	}
	for _, k := range []string{"none", "s"} {
		if h, err := redislease.ReadHash(ctx, c, k, caps); err != nil || h.Values != nil {
			t.Errorf("key %s: %v %v", k, h.Values, err)
		}
	}
}
