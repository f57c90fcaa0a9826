package broadcast

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/usid/usid/internal/redistest"
	"github.com/usid/usid/session"
)

// callersByAddress is server.CallerFor's networks for the tests' ids
// ("ip:ADDR" or "ip:PREFIX/64").
func callersByAddress(id string) session.Caller {
	s := strings.TrimPrefix(id, "ip:")
	a, err := netip.ParseAddr(s)
	if p, perr := netip.ParsePrefix(s); perr == nil {
		a, err = p.Addr(), nil
	}
	if err != nil {
		return session.Caller{Client: id}
	}
	return session.Caller{Client: id, Networks: session.NetworksOf(a)}
}

// TestPlacesPerNetwork (issue 43): two broadcasts from each of 8
// addresses of one IPv4 /24 took all 16 places; so could the /64s of one
// IPv6 /56. Now one /24 or /64 holds max_per_network (2), a /56 twice
// that, a /48 four times, in memory and in Redis alike; the refusals are
// 429 without a Retry-After (the place is held for as long as its owner
// keeps it), and a client of another network still gets a place.
func TestPlacesPerNetwork(t *testing.T) {
	rs := redistest.Start(t)
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			m := newTestManager(t, func(c *Config) {
				c.Callers = callersByAddress
				if store == "redis" {
					c.Redis = &RedisConfig{URL: rs.URL, Prefix: "places:"}
				}
			})
			create := func(owners ...string) (n int, refused *session.Error) {
				for _, o := range owners {
					for range 2 {
						if _, err := m.Create(o, &Request{}); err != nil {
							return n, err
						}
						n++
					}
				}
				return n, nil
			}
			var v4 []string
			for i := 1; i <= 8; i++ {
				v4 = append(v4, fmt.Sprintf("ip:203.0.113.%d", i))
			}
			n, err := create(v4...)
			t.Logf("8 addresses of 203.0.113.0/24: %d broadcasts, then %v", n, err)
			if n != 2 || err == nil || err.Code != session.CodeTooManyRequests || session.RetryAfter(err) != 0 {
				t.Errorf("one /24 created %d broadcasts, then %v (Retry-After %v); want 2, then too_many_requests without Retry-After", n, err, err)
			}
			// The /64s of 2001:db8:0:100::/56, then of two more /56s of
			// 2001:db8::/48.
			for i, want := range []int{4, 4, 0} {
				var v6 []string
				for j := range 8 {
					v6 = append(v6, fmt.Sprintf("ip:2001:db8:0:%x%02x::/64", i+1, j))
				}
				n, err := create(v6...)
				t.Logf("8 /64s of 2001:db8:0:%x00::/56: %d broadcasts, then %v", i+1, n, err)
				if n != want || err == nil || err.Code != session.CodeTooManyRequests {
					t.Errorf("/56 number %d created %d broadcasts, then %v; want %d, then too_many_requests", i+1, n, err, want)
				}
			}
			if _, err := m.Create("ip:198.51.100.7", &Request{}); err != nil {
				t.Errorf("a client of another network: %v", err)
			}
		})
	}
}

// TestViewersPerNetwork (issue 43): the viewers of one network's clients
// together are bounded as its broadcasts are (a /56 twice a /64's).
func TestViewersPerNetwork(t *testing.T) {
	m := newTestManager(t, func(c *Config) { c.Callers, c.MaxViewersPerNetwork = callersByAddress, 3 })
	v, err := m.Create("ip:192.0.2.1", &Request{})
	if err != nil {
		t.Fatal(err)
	}
	watch := func(clients ...string) (n int, refused *session.Error) {
		for _, c := range clients {
			for range 2 {
				if _, err := m.Reserve(c, v.ID); err != nil {
					return n, err
				}
				n++
			}
		}
		return n, nil
	}
	n, err := watch("ip:203.0.113.1", "ip:203.0.113.2", "ip:203.0.113.3")
	if n != 3 || err == nil || err.Code != session.CodeTooManyRequests {
		t.Errorf("one /24 seated %d viewers, then %v; want 3, then too_many_requests", n, err)
	}
	n, err = watch("ip:2001:db8:0:100::/64", "ip:2001:db8:0:101::/64", "ip:2001:db8:0:102::/64", "ip:2001:db8:0:103::/64")
	if n != 6 || err == nil || err.Code != session.CodeTooManyRequests {
		t.Errorf("one /56 seated %d viewers, then %v; want 6, then too_many_requests", n, err)
	}
	if _, err := m.Reserve("ip:198.51.100.7", v.ID); err != nil {
		t.Errorf("a viewer of another network: %v", err)
	}
}
