// Package redislease holds what usid's Redis stores of work held by one
// instance at a time share: game analysis jobs (review) and games against
// the engine (play). Each entry is driven by the instance holding its
// lease, which renews it every Check and loses it Lease after it stops
// (it died); another instance takes over then. Config is a plain value;
// Open returns a client that its caller owns and closes. Safe for
// concurrent use as go-redis clients are.
package redislease

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Config sets up a store. Zero fields take the defaults shown.
type Config struct {
	URL    string // redis://[:password@]host:port/db; required
	Prefix string // key prefix (each store has its own default)
	// Lease is how long an entry stays with an instance that stops
	// renewing it (5s): an instance that dies loses its entries to another
	// after it.
	Lease time.Duration
	// Check is how often an instance renews its leases and reads what
	// other instances ask of its entries (250ms): a cancel or a hand-back
	// asked elsewhere reaches it within that.
	Check time.Duration
	// Timeout bounds one call (1s).
	Timeout time.Duration
}

// WithDefaults returns c with its zero fields set to the defaults, prefix
// being the store's default key prefix.
func (c Config) WithDefaults(prefix string) Config {
	if c.Prefix == "" {
		c.Prefix = prefix
	}
	if c.Lease <= 0 {
		c.Lease = 5 * time.Second
	}
	if c.Check <= 0 {
		c.Check = 250 * time.Millisecond
	}
	if c.Timeout <= 0 {
		c.Timeout = time.Second
	}
	return c
}

// Open connects a store of what (for errors) with c over its defaults: the
// client (calls bounded by Timeout), the configuration in force, and a
// random name for this instance, which its leases carry.
func Open(c Config, prefix, what string) (*redis.Client, Config, string, error) {
	if c.URL == "" {
		return nil, c, "", errors.New(what + ": redis url is required")
	}
	opt, err := redis.ParseURL(c.URL)
	if err != nil {
		return nil, c, "", err
	}
	c = c.WithDefaults(prefix)
	opt.ReadTimeout, opt.WriteTimeout = c.Timeout, c.Timeout
	b := make([]byte, 8)
	rand.Read(b)
	return redis.NewClient(opt), c, hex.EncodeToString(b), nil
}
