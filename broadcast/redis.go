package broadcast

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/usid/usid/internal/redislease"
	"github.com/usid/usid/session"
)

// RedisConfig is the Redis store's configuration (URL, key prefix, call
// timeout); its Lease and Check are taken from Config.
type RedisConfig = redislease.Config

// Keys, under the prefix (default "usid:bc:"):
//
//	b:<id>      hash: state (JSON), search, term (numbers), snap (a batch)
//	e:<id>      hash: ply → the evaluation of that position (JSON)
//	lease:<id>  the instance running the search (a random name), with a TTL
//	active      set of live broadcasts
//	o:<owner>   set of the owner's live broadcasts
//	n:<network> set of the live broadcasts of owners of that network
//	            (State.Networks: each of an owner's prefixes)
//
// Channels: l:<id> carries the batches, c:<id> a change (for the runner).
// Every instance subscribes to both patterns once.
type redisBackend struct {
	m      *Manager
	rdb    *redis.Client
	cfg    redislease.Config
	pod    string
	ps     *redis.PubSub
	wg     sync.WaitGroup
	cancel context.CancelFunc
}

func openRedis(m *Manager, c RedisConfig) (*redisBackend, error) {
	c.Lease, c.Check = m.cfg.Lease, m.cfg.Check
	rdb, cfg, pod, err := redislease.Open(c, RedisPrefix, "broadcast")
	if err != nil {
		return nil, err
	}
	b := &redisBackend{m: m, rdb: rdb, cfg: cfg, pod: pod}
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	b.ps = rdb.PSubscribe(ctx, cfg.Prefix+"l:*", cfg.Prefix+"c:*")
	b.wg.Add(1)
	go b.receive(ctx)
	return b, nil
}

// receive hands every instance's batches to this instance's hubs, and
// changes to its runners.
func (b *redisBackend) receive(ctx context.Context) {
	defer b.wg.Done()
	lines, ctl := b.cfg.Prefix+"l:", b.cfg.Prefix+"c:"
	for {
		msg, err := b.ps.ReceiveMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			select { // go-redis reconnects; don't spin meanwhile
			case <-time.After(50 * time.Millisecond):
			case <-ctx.Done():
				return
			}
			continue
		}
		switch {
		case strings.HasPrefix(msg.Channel, lines):
			b.m.deliver(msg.Channel[len(lines):], []byte(msg.Payload))
		case strings.HasPrefix(msg.Channel, ctl):
			b.m.poked(msg.Channel[len(ctl):])
		}
	}
}

func (b *redisBackend) close() {
	b.cancel()
	b.ps.Close()
	b.wg.Wait()
	b.rdb.Close()
}

func (b *redisBackend) key(parts ...string) string { return b.cfg.Prefix + strings.Join(parts, "") }

func (b *redisBackend) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, b.cfg.Timeout)
}

// createScript. KEYS: active, o:<owner>, b:<id>, then n:<network> of each
// of the owner's networks, narrowest first. ARGV: id, maxAll, maxPer,
// state, maxPerNetwork (the narrowest's; each wider one twice the one
// before, as session.NetworkBound). It answers 1, or the bound that is
// full: -1 all, -2 the owner's, -(3+i) the i-th network's.
var createScript = redis.NewScript(`
if redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[3]) then return -2 end
local bound = tonumber(ARGV[5])
for i = 4, #KEYS do
  if redis.call('SCARD', KEYS[i]) >= bound then return -i + 1 end
  bound = bound * 2
end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return -1 end
for i = 1, #KEYS do
  if i ~= 3 then redis.call('SADD', KEYS[i], ARGV[1]) end
end
redis.call('HSET', KEYS[3], 'state', ARGV[4], 'search', 0, 'term', 0)
return 1`)

func (b *redisBackend) create(ctx context.Context, st *State, bd session.Bounds) *session.Error {
	js, err := json.Marshal(st)
	if err != nil {
		return errorf("internal", "%v", err)
	}
	ctx, cancel := b.call(ctx)
	defer cancel()
	keys := []string{b.key("active"), b.key("o:", st.Owner), b.key("b:", st.ID)}
	for _, n := range st.Networks {
		keys = append(keys, b.key("n:", n))
	}
	n, err := createScript.Run(ctx, b.rdb, keys, st.ID, bd.Total, bd.PerClient, js, bd.PerNetwork).Int()
	switch {
	case err != nil:
		return b.m.unavailable(err)
	case n == -1:
		return full("broadcasts", &session.Full{What: "total", Max: bd.Total})
	case n == -2:
		return full("broadcasts", &session.Full{What: "client", Max: bd.PerClient})
	case n <= -3 && -n-3 < len(st.Networks):
		i := -n - 3
		return full("broadcasts", &session.Full{What: "network", Network: st.Networks[i], Max: session.NetworkBound(bd.PerNetwork, i)})
	}
	return nil
}

func (b *redisBackend) load(ctx context.Context, id string) (*State, *session.Error) {
	ctx, cancel := b.call(ctx)
	defer cancel()
	js, err := b.rdb.HGet(ctx, b.key("b:", id), "state").Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, b.m.unavailable(err)
	}
	var st State
	if err := json.Unmarshal(js, &st); err != nil {
		return nil, notFound(id)
	}
	return &st, nil
}

func (b *redisBackend) update(ctx context.Context, id string, f func(*State) *session.Error) (*State, *session.Error) {
	ctx, cancel := b.call(ctx)
	defer cancel()
	k := b.key("b:", id)
	var out *State
	var ferr *session.Error
	for range 10 {
		err := b.rdb.Watch(ctx, func(tx *redis.Tx) error {
			js, err := tx.HGet(ctx, k, "state").Bytes()
			if errors.Is(err, redis.Nil) {
				ferr = notFound(id)
				return nil
			}
			if err != nil {
				return err
			}
			var st State
			if err := json.Unmarshal(js, &st); err != nil {
				ferr = notFound(id)
				return nil
			}
			if ferr = f(&st); ferr != nil {
				return nil
			}
			nj, err := json.Marshal(&st)
			if err != nil {
				return err
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.HSet(ctx, k, "state", nj)
				return nil
			})
			out = &st
			return err
		}, k)
		if errors.Is(err, redis.TxFailedErr) {
			continue
		}
		if err != nil {
			return nil, b.m.unavailable(err)
		}
		if ferr != nil {
			return nil, ferr
		}
		return out, nil
	}
	return nil, errorf(CodeConflict, "broadcast %s is being changed by others; retry", id)
}

func (b *redisBackend) ended(ctx context.Context, st *State, keep time.Duration) {
	ctx, cancel := b.call(ctx)
	defer cancel()
	b.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.SRem(ctx, b.key("active"), st.ID)
		p.SRem(ctx, b.key("o:", st.Owner), st.ID)
		for _, n := range st.Networks {
			p.SRem(ctx, b.key("n:", n), st.ID)
		}
		p.Expire(ctx, b.key("b:", st.ID), keep)
		p.Expire(ctx, b.key("e:", st.ID), keep)
		return nil
	})
}

func (b *redisBackend) poke(ctx context.Context, id string) {
	ctx, cancel := b.call(ctx)
	defer cancel()
	b.rdb.Publish(ctx, b.key("c:", id), "changed")
}

func (b *redisBackend) publishState(ctx context.Context, id string, batch, state []byte) {
	ctx, cancel := b.call(ctx)
	defer cancel()
	b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Publish(ctx, b.key("l:", id), batch)
		p.HSet(ctx, b.key("b:", id), "snap", state)
		return nil
	})
}

func (b *redisBackend) publish(ctx context.Context, id string, batch []byte) {
	ctx, cancel := b.call(ctx)
	defer cancel()
	b.rdb.Publish(ctx, b.key("l:", id), batch)
}

func (b *redisBackend) snapshot(ctx context.Context, id string) []byte {
	ctx, cancel := b.call(ctx)
	defer cancel()
	s, _ := b.rdb.HGet(ctx, b.key("b:", id), "snap").Bytes()
	return s
}

func (b *redisBackend) addEval(ctx context.Context, id string, ply int, js []byte) {
	ctx, cancel := b.call(ctx)
	defer cancel()
	b.rdb.HSet(ctx, b.key("e:", id), strconv.Itoa(ply), js)
}

func (b *redisBackend) evals(ctx context.Context, id string) []json.RawMessage {
	ctx, cancel := b.call(ctx)
	defer cancel()
	all, err := b.rdb.HGetAll(ctx, b.key("e:", id)).Result()
	if err != nil {
		return nil
	}
	m := make(map[int]json.RawMessage, len(all))
	for k, v := range all {
		if p, err := strconv.Atoi(k); err == nil {
			m[p] = json.RawMessage(v)
		}
	}
	return sortedEvals(m)
}

func (b *redisBackend) nextSearch(ctx context.Context, id string) int {
	ctx, cancel := b.call(ctx)
	defer cancel()
	n, err := b.rdb.HIncrBy(ctx, b.key("b:", id), "search", 1).Result()
	if err != nil {
		return 0
	}
	return int(n)
}

func (b *redisBackend) searches(ctx context.Context, id string) (int, int) {
	ctx, cancel := b.call(ctx)
	defer cancel()
	v, err := b.rdb.HMGet(ctx, b.key("b:", id), "search", "term").Result()
	if err != nil || len(v) != 2 {
		return 0, 0
	}
	num := func(x any) int {
		s, _ := x.(string)
		n, _ := strconv.Atoi(s)
		return n
	}
	return num(v[0]), num(v[1])
}

var claimScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local t = tonumber(redis.call('HGET', KEYS[1], 'term') or '0') or 0
if t >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'term', ARGV[1])
return 1`)

func (b *redisBackend) claimTerm(ctx context.Context, id string, n int) bool {
	ctx, cancel := b.call(ctx)
	defer cancel()
	r, err := claimScript.Run(ctx, b.rdb, []string{b.key("b:", id)}, n).Int()
	return err == nil && r == 1
}

func (b *redisBackend) acquire(ctx context.Context, id string) bool {
	ctx, cancel := b.call(ctx)
	defer cancel()
	ok, err := b.rdb.SetNX(ctx, b.key("lease:", id), b.pod, b.cfg.Lease).Result()
	return err == nil && ok
}

var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`)

func (b *redisBackend) renew(ctx context.Context, id string) bool {
	ctx, cancel := b.call(ctx)
	defer cancel()
	r, err := renewScript.Run(ctx, b.rdb, []string{b.key("lease:", id)}, b.pod, b.cfg.Lease.Milliseconds()).Int()
	if err != nil {
		// Redis does not answer: keep searching while the lease may still
		// be ours; a renewal that finds it gone stops the search.
		return true
	}
	return r == 1
}

var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

func (b *redisBackend) release(ctx context.Context, id string) {
	ctx, cancel := b.call(context.WithoutCancel(ctx))
	defer cancel()
	releaseScript.Run(ctx, b.rdb, []string{b.key("lease:", id)}, b.pod)
}

func (b *redisBackend) held(ctx context.Context, id string) bool {
	ctx, cancel := b.call(ctx)
	defer cancel()
	n, err := b.rdb.Exists(ctx, b.key("lease:", id)).Result()
	return err != nil || n > 0
}

func (b *redisBackend) active(ctx context.Context) []string {
	ctx, cancel := b.call(ctx)
	defer cancel()
	ids, _ := b.rdb.SMembers(ctx, b.key("active")).Result()
	return ids
}
