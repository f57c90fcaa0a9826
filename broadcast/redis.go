package broadcast

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
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
//	b:<id>      hash: state (JSON), search, term (numbers), snap (a batch), ended ("1")
//	e:<id>      hash: ply → the evaluation of that position (JSON)
//	lease:<id>  the instance running the search (a random name), with a TTL
//	end:<id>    set by the one instance that sends the ended event, for Keep
//	active      set of live broadcasts
//	o:<owner>   set of the owner's live broadcasts
//	owners      hash: id → owner, of the live broadcasts (a place whose
//	            state is gone is still given back to its owner)
//	n:<network> set of the live broadcasts of owners of that network
//	            (State.Networks: each of an owner's prefixes)
//	nets        hash: id → its owner's networks (separated by spaces), so
//	            that a place is given back to them as to its owner
//
// Every value is read within its bounds (Manager.bounds), measured in
// Redis first: one over them makes the broadcast invalid (CodeInvalid),
// ended by the first instance that finds it.
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
	lost := false
	for {
		v, err := b.ps.Receive(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			lost = true
			select { // go-redis reconnects; don't spin meanwhile
			case <-time.After(50 * time.Millisecond):
			case <-ctx.Done():
				return
			}
			continue
		}
		msg, ok := v.(*redis.Message)
		if !ok {
			if _, sub := v.(*redis.Subscription); sub && lost {
				// Subscribed again after a loss: what was published
				// meanwhile is repaired from the store.
				lost = false
				go b.m.repairAll()
			}
			continue
		}
		if len(msg.Payload) > b.m.bounds.snap+b.m.bounds.state {
			continue // no runner publishes so much at once
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

// Every script below works on one broadcast's keys together: they are
// created, changed and removed in one step, never left half done.

// luaTypes: sets(k...) is false when one of the keys is neither a set nor
// missing, hashes(k...) likewise for hashes (a script checks before it
// writes: Redis does not undo the writes of a script that fails half-way).
const luaTypes = `
local function typed(want, ...)
  for _, k in ipairs({...}) do
    local t = redis.call('TYPE', k).ok
    if t ~= want and t ~= 'none' then return false end
  end
  return true
end
local function sets(...) return typed('set', ...) end
local function hashes(...) return typed('hash', ...) end
`

// createScript. KEYS: active, o:<owner>, b:<id>, owners, nets, then
// n:<network> of each of the owner's networks, narrowest first. ARGV: id,
// maxAll, maxPer, state, owner, maxPerNetwork (the narrowest's; each
// wider one twice the one before, as session.NetworkBound), the networks
// (separated by spaces). The owner's and the networks' sets are cleared
// of ids no longer active (a place given back by another way) before
// they are counted. It answers 1, or -1 (all full), -2 (the owner's),
// -3 (a key of another type), -(4+i) (the i-th network's).
var createScript = redis.NewScript(luaTypes + `
if not sets(KEYS[1], KEYS[2]) or not hashes(KEYS[3], KEYS[4], KEYS[5]) then return -3 end
for i = 6, #KEYS do
  if not sets(KEYS[i]) then return -3 end
end
local function full(k, max)
  if redis.call('SCARD', k) < max then return false end
  for _, x in ipairs(redis.call('SRANDMEMBER', k, 64)) do
    if redis.call('SISMEMBER', KEYS[1], x) == 0 then redis.call('SREM', k, x) end
  end
  return redis.call('SCARD', k) >= max
end
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[2]) then return -1 end
if full(KEYS[2], tonumber(ARGV[3])) then return -2 end
local bound = tonumber(ARGV[6])
for i = 6, #KEYS do
  if full(KEYS[i], bound) then return -(i - 2) end
  bound = bound * 2
end
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[5])
for i = 6, #KEYS do redis.call('SADD', KEYS[i], ARGV[1]) end
if ARGV[7] ~= '' then redis.call('HSET', KEYS[5], ARGV[1], ARGV[7]) end
redis.call('HSET', KEYS[3], 'state', ARGV[4], 'search', 0, 'term', 0)
return 1`)

func (b *redisBackend) create(ctx context.Context, st *State, bd session.Bounds) *session.Error {
	js, err := json.Marshal(st)
	if err != nil {
		return errorf("internal", "%v", err)
	}
	if len(js) > b.m.bounds.state {
		return tooLarge(len(js), b.m.bounds.state)
	}
	ctx, cancel := b.call(ctx)
	defer cancel()
	keys := []string{b.key("active"), b.key("o:", st.Owner), b.key("b:", st.ID), b.key("owners"), b.key("nets")}
	for _, n := range st.Networks {
		keys = append(keys, b.key("n:", n))
	}
	n, err := createScript.Run(ctx, b.rdb, keys, st.ID, bd.Total, bd.PerClient, js, st.Owner, bd.PerNetwork, strings.Join(st.Networks, " ")).Int()
	switch {
	case err != nil:
		return b.m.unavailable(err)
	case n == -1:
		return full("broadcasts", &session.Full{What: "total", Max: bd.Total})
	case n == -2:
		return full("broadcasts", &session.Full{What: "client", Max: bd.PerClient})
	case n == -3:
		return b.m.unavailable(errors.New("the broadcasts' keys in Redis are not of their types"))
	case n <= -4 && -n-4 < len(st.Networks):
		i := -n - 4
		return full("broadcasts", &session.Full{What: "network", Network: st.Networks[i], Max: session.NetworkBound(bd.PerNetwork, i)})
	}
	return nil
}

// read reads fields of b:<id> within their bounds (redislease.ReadHash):
// notFound when it has no state (gone, or never there), invalid when a
// field is over its bound.
func (b *redisBackend) read(ctx context.Context, id string, named map[string]int, fields ...string) (map[string]string, *session.Error) {
	ctx, cancel := b.call(ctx)
	defer cancel()
	h, err := redislease.ReadHash(ctx, b.rdb, b.key("b:", id), redislease.Caps{Fields: 16, Value: 20, Named: named}, append(fields, "state")...)
	switch {
	case errors.Is(err, redislease.ErrTooMany):
		return nil, invalid(id, "hash", 16)
	case err != nil:
		return nil, b.m.unavailable(err)
	case len(h.Over) > 0 && !(len(h.Over) == 1 && h.Over[0] == "state" && named["state"] == 0):
		f := h.Over[0]
		return nil, invalid(id, f, named[f])
	case h.Values["state"] == "" && !slices.Contains(h.Over, "state"):
		return nil, notFound(id)
	}
	return h.Values, nil
}

func (b *redisBackend) load(ctx context.Context, id string) (*State, *session.Error) {
	st, _, err := b.loadRaw(ctx, id)
	return st, err
}

// loadRaw is load with the state's JSON as stored.
func (b *redisBackend) loadRaw(ctx context.Context, id string) (*State, string, *session.Error) {
	h, err := b.read(ctx, id, map[string]int{"state": b.m.bounds.state})
	if err != nil {
		return nil, "", err
	}
	js := h["state"]
	var st State
	if err := json.Unmarshal([]byte(js), &st); err != nil || st.ID != id {
		return nil, "", invalid(id, "state", b.m.bounds.state)
	}
	return &st, js, nil
}

// changeScript replaces a broadcast's state if it is still old; ending
// it also gives its place back and lets its keys expire, in the same
// step. KEYS: b:<id>, e:<id>, active, owners, o:<owner>. ARGV: id, old
// state, new state, "1" to end it, keep ms.
var changeScript = redis.NewScript(luaTypes + `
if redis.call('TYPE', KEYS[1]).ok ~= 'hash' then return 'nf' end
if redis.call('HSTRLEN', KEYS[1], 'state') ~= string.len(ARGV[2]) or redis.call('HGET', KEYS[1], 'state') ~= ARGV[2] then return 'again' end
local ending = ARGV[4] == '1'
if ending and (not sets(KEYS[3], KEYS[5]) or not hashes(KEYS[2], KEYS[4])) then return 'types' end
redis.call('HSET', KEYS[1], 'state', ARGV[3])
if ending then
  redis.call('HSET', KEYS[1], 'ended', '1')
  redis.call('SREM', KEYS[3], ARGV[1])
  redis.call('SREM', KEYS[5], ARGV[1])
  redis.call('HDEL', KEYS[4], ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  redis.call('PEXPIRE', KEYS[2], ARGV[5])
end
return 'ok'`)

func (b *redisBackend) update(ctx context.Context, id string, f func(*State) *session.Error) (*State, *session.Error) {
	for range 10 {
		st, old, err := b.loadRaw(ctx, id)
		if err != nil {
			return nil, err
		}
		was := st.Ended
		if err := f(st); err != nil {
			return nil, err
		}
		nj, jerr := json.Marshal(st)
		if jerr != nil {
			return nil, errorf("internal", "%v", jerr)
		}
		if len(nj) > b.m.bounds.state {
			return nil, tooLarge(len(nj), b.m.bounds.state)
		}
		ending := "0"
		if st.Ended && !was {
			ending = "1"
		}
		cctx, cancel := b.call(ctx)
		r, rerr := changeScript.Run(cctx, b.rdb, []string{b.key("b:", id), b.key("e:", id), b.key("active"), b.key("owners"), b.key("o:", st.Owner)},
			id, old, nj, ending, b.m.cfg.Keep.Milliseconds()).Text()
		cancel()
		switch {
		case rerr != nil:
			return nil, b.m.unavailable(rerr)
		case r == "nf":
			return nil, notFound(id)
		case r == "types":
			return nil, b.m.unavailable(errors.New("the broadcasts' keys in Redis are not of their types"))
		case r == "ok":
			return st, nil
		}
	}
	return nil, errorf(CodeConflict, "broadcast %s is being changed by others; retry", id)
}

// dropScript gives a broadcast's place back (a broadcast whose state is
// gone, over its bounds, or ended but still counted): its id leaves the
// sets (its owner's and its networks', named by the owners and nets
// hashes); del: its keys are removed, else they expire after keep. KEYS:
// b:<id>, e:<id>, active, owners, nets. ARGV: id, "del" or "keep", keep ms, the
// owner's set when the owners hash does not name one, the key prefix.
// Answer: 1 if the place was held (the caller tells the viewers), -1 if
// a key is not of its type.
var dropScript = redis.NewScript(luaTypes + `
if not hashes(KEYS[4], KEYS[5]) then return -1 end
local owner = redis.call('HGET', KEYS[4], ARGV[1])
local os = ARGV[4]
if owner then os = ARGV[5] .. 'o:' .. owner end
if not sets(KEYS[3], os, ARGV[4]) then return -1 end
local nets = {}
for net in string.gmatch(redis.call('HGET', KEYS[5], ARGV[1]) or '', '%S+') do
  local k = ARGV[5] .. 'n:' .. net
  if not sets(k) then return -1 end
  nets[#nets + 1] = k
end
local n = redis.call('SREM', KEYS[3], ARGV[1])
redis.call('SREM', os, ARGV[1])
if ARGV[4] ~= '' then redis.call('SREM', ARGV[4], ARGV[1]) end
redis.call('HDEL', KEYS[4], ARGV[1])
for _, k in ipairs(nets) do redis.call('SREM', k, ARGV[1]) end
redis.call('HDEL', KEYS[5], ARGV[1])
if ARGV[2] == 'del' then
  redis.call('DEL', KEYS[1], KEYS[2])
elseif redis.call('TYPE', KEYS[1]).ok == 'hash' then
  redis.call('HSET', KEYS[1], 'ended', '1')
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return n`)

func (b *redisBackend) drop(ctx context.Context, id, owner string, del bool) bool {
	ctx, cancel := b.call(ctx)
	defer cancel()
	how, set := "keep", ""
	if del {
		how = "del"
	}
	if owner != "" {
		set = b.key("o:", owner)
	}
	n, err := dropScript.Run(ctx, b.rdb, []string{b.key("b:", id), b.key("e:", id), b.key("active"), b.key("owners"), b.key("nets")},
		id, how, b.m.cfg.Keep.Milliseconds(), set, b.cfg.Prefix).Int()
	return err == nil && n == 1
}

func (b *redisBackend) owns(ctx context.Context, id, owner string) bool {
	ctx, cancel := b.call(ctx)
	defer cancel()
	ok, _ := b.rdb.SIsMember(ctx, b.key("o:", owner), id).Result()
	return ok
}

func (b *redisBackend) poke(ctx context.Context, id string) {
	ctx, cancel := b.call(ctx)
	defer cancel()
	b.rdb.Publish(ctx, b.key("c:", id), "changed")
}

// setIfLive sets field ARGV[1] of KEYS[2] to ARGV[2] while broadcast
// KEYS[1] has a state: a runner's late write never brings back the keys
// of a broadcast given back.
var setIfLive = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], 'state') == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1`)

func (b *redisBackend) publishState(ctx context.Context, id string, batch, state []byte) {
	ctx, cancel := b.call(ctx)
	defer cancel()
	b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Publish(ctx, b.key("l:", id), batch)
		setIfLive.Eval(ctx, p, []string{b.key("b:", id), b.key("b:", id)}, "snap", state) // EVALSHA cannot fall back to EVAL in a pipeline
		return nil
	})
}

func (b *redisBackend) publish(ctx context.Context, id string, batch []byte) {
	ctx, cancel := b.call(ctx)
	defer cancel()
	b.rdb.Publish(ctx, b.key("l:", id), batch)
}

func (b *redisBackend) snapshot(ctx context.Context, id string) ([]byte, *session.Error) {
	h, err := b.read(ctx, id, map[string]int{"state": 0, "snap": b.m.bounds.snap}, "snap")
	if err != nil {
		return nil, err
	}
	return []byte(h["snap"]), nil
}

func (b *redisBackend) addEval(ctx context.Context, id string, ply int, js []byte) {
	ctx, cancel := b.call(ctx)
	defer cancel()
	setIfLive.Run(ctx, b.rdb, []string{b.key("b:", id), b.key("e:", id)}, strconv.Itoa(ply), js)
}

func (b *redisBackend) evals(ctx context.Context, id string) ([]json.RawMessage, *session.Error) {
	ctx, cancel := b.call(ctx)
	defer cancel()
	bd := b.m.bounds
	h, err := redislease.ReadHash(ctx, b.rdb, b.key("e:", id), redislease.Caps{Fields: bd.evals, Value: bd.eval})
	switch {
	case errors.Is(err, redislease.ErrTooMany):
		return nil, invalid(id, "evaluations", bd.evals)
	case err != nil:
		return nil, b.m.unavailable(err)
	case len(h.Over) > 0:
		return nil, invalid(id, "evaluation", bd.eval)
	}
	m := make(map[int]json.RawMessage, len(h.Values))
	for k, v := range h.Values {
		if p, err := strconv.Atoi(k); err == nil && json.Valid([]byte(v)) {
			m[p] = json.RawMessage(v)
		}
	}
	return sortedEvals(m), nil
}

var nextScript = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], 'state') == 0 then return 0 end
return redis.call('HINCRBY', KEYS[1], 'search', 1)`)

func (b *redisBackend) nextSearch(ctx context.Context, id string) int {
	ctx, cancel := b.call(ctx)
	defer cancel()
	n, err := nextScript.Run(ctx, b.rdb, []string{b.key("b:", id)}).Int()
	if err != nil {
		return 0
	}
	return n
}

func (b *redisBackend) searches(ctx context.Context, id string) (int, int) {
	n, term, _, _ := b.stored(ctx, id)
	return n, term
}

func (b *redisBackend) stored(ctx context.Context, id string) (n, term int, ended bool, err *session.Error) {
	// The state's bound 0: it is only seen to be there.
	h, err := b.read(ctx, id, map[string]int{"state": 0}, "search", "term", "ended")
	if err != nil {
		return 0, 0, false, err
	}
	n, _ = strconv.Atoi(h["search"])
	term, _ = strconv.Atoi(h["term"])
	return n, term, h["ended"] == "1", nil
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

func (b *redisBackend) claimEnd(ctx context.Context, id string) bool {
	ctx, cancel := b.call(ctx)
	defer cancel()
	ok, err := b.rdb.SetNX(ctx, b.key("end:", id), 1, b.m.cfg.Keep).Result()
	return err != nil || ok
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

// activeScript lists at most ARGV[1] members of the active set (more
// than the bound of broadcasts is none usid wrote), none longer than an id.
var activeScript = redis.NewScript(`
if redis.call('TYPE', KEYS[1]).ok ~= 'set' then return {} end
local out = {}
for _, id in ipairs(redis.call('SRANDMEMBER', KEYS[1], tonumber(ARGV[1]))) do
  if string.len(id) == 32 then out[#out + 1] = id end
end
return out`)

func (b *redisBackend) active(ctx context.Context) []string {
	ctx, cancel := b.call(ctx)
	defer cancel()
	ids, _ := activeScript.Run(ctx, b.rdb, []string{b.key("active")}, 2*b.m.cfg.MaxBroadcasts).StringSlice()
	return ids
}

func (b *redisBackend) lossy() bool { return true }
