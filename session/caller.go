package session

import (
	"context"
	"time"

	"github.com/usid/usid/pool"
)

// Caller is who a search is for: the client identity that fair sharing
// (the pool's queue) counts, the priority class it waits in, and where its
// engine time is charged. The zero Caller is an anonymous interactive
// caller that nobody charges.
type Caller struct {
	Client string
	// Networks are the prefixes of neighbouring addresses Client belongs
	// to, narrowest first (NetworksOf: an anonymous client's IPv4 /24, or
	// IPv6 /64, /56 and /48), for the bounds on places that one
	// subscriber's many addresses must share (places.go); none for an API
	// key, which is bounded as one client.
	Networks []string
	Class    pool.Class
	// Budget, if set, is the caller's engine time (the server's
	// engine-time quota): each search takes from it as it starts and is
	// settled when it ends (see meter).
	Budget Budget
	// NoPreempt: a Background search that keeps its engine once it has
	// one, rather than give way to an interactive caller (game jobs bound
	// the preemptions of each position with it).
	NoPreempt bool
	// FreshGame: each search starts a new game on its engine (usinewgame:
	// the engine's hash from earlier searches goes), where one-shot
	// analyses otherwise share one. Game jobs compare searches of
	// neighbouring positions, and their verdicts were measured on
	// searches independent of each other.
	FreshGame bool
}

type callerKey struct{}

// WithCaller returns ctx carrying c, for Service.Analyze and Service.Mate:
// the REST handlers and game analysis jobs say whom they search for.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerOf returns the Caller ctx carries (the zero Caller if none).
func CallerOf(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}

// acquire leases an engine for caller, in its class and turn.
func (c *Service) acquire(ctx context.Context, engine string, who Caller, onQueue func(int)) (*pool.Lease, error) {
	return c.Pool.AcquireWith(ctx, engine, pool.AcquireOptions{Class: who.Class, Client: who.Client, OnQueue: onQueue})
}

// Timing is where a one-shot search's time went (Service.Analyze, Mate):
// waiting for an engine, and the search itself (go to bestmove). REST
// answers pass it on in a Server-Timing header.
type Timing struct {
	Queue, Search time.Duration
}

type timingKey struct{}

// WithTiming returns ctx with a Timing that a search made under it fills in.
func WithTiming(ctx context.Context) (context.Context, *Timing) {
	t := &Timing{}
	return context.WithValue(ctx, timingKey{}, t), t
}

func timingOf(ctx context.Context) *Timing {
	t, _ := ctx.Value(timingKey{}).(*Timing)
	return t
}
