package play

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/usid/usid/internal/redislease"
)

// RedisConfig keeps games in Redis, shared by every instance using the
// same server and prefix (default RedisPrefix); see internal/redislease.
type RedisConfig = redislease.Config

// RedisPrefix is the default key prefix.
const RedisPrefix = "usid:play:"

// ErrNotHeld is Save's answer when this instance no longer holds the
// game's lease: another instance drives it now.
var ErrNotHeld = errors.New("play: the game is held by another instance")

// Shared is a Store several instances share. The instance driving a game
// holds a lease on it and renews it; another instance takes the game over
// (Take) when it is handed back (Hand: asked for, or a drain) or when the
// lease ran out (its instance died). The bounds on games in progress are
// counted in the store, for every instance together.
type Shared interface {
	Store
	// Admit counts st's game (in progress, held by this instance) against
	// the bounds and saves it: "ok", or the bound that refused it:
	// "client", "network:" and the network of st.Networks that is full,
	// or "games". Games in progress that nobody renewed for
	// orphan are forgotten first (their instances went and their players
	// did not come back).
	Admit(ctx context.Context, st *State, b Bounds, orphan time.Duration) (string, error)
	// Take takes game id of owner over: "ok" with its state (this
	// instance holds it now), "held" (another instance does: it has been
	// asked to hand it back; try again), "inactive" with its state (ended,
	// or forgotten as orphaned: nobody drives it), "nf" (no such game of
	// owner's).
	Take(ctx context.Context, id, owner string, orphan time.Duration) (string, *State, error)
	// Renew renews the leases of ids: for each, -1 when it is lost (another
	// instance holds it, or it ended), 1 when another instance asks for it
	// (Hand it back), 0 neither.
	Renew(ctx context.Context, ids []string) ([]int64, error)
	// Hand saves st and gives its lease up, for another instance to take.
	Hand(ctx context.Context, st *State) error
	// Finish saves st, ended, kept for keep (at most maxKept ended games are
	// kept), and takes it off the games in progress.
	Finish(ctx context.Context, st *State, keep time.Duration, maxKept int) error
	// Timing is the lease and the renewal period.
	Timing() (lease, check time.Duration)
}

// Bounds are the bounds on games in progress: per client, per network
// (State.Networks' narrowest; each wider one twice the one before, as
// session.NetworkBound), in all.
type Bounds struct {
	PerClient, PerNetwork, Games int
}

// RedisStore is the Shared store in Redis. Keys, under the prefix:
//
//   - game:{id}: the state (State, JSON); a game in progress has no TTL
//     (so that the volatile-lru eviction of the deployment's Redis never
//     drops it), an ended one lives Keep (and a minute), an orphan (no
//     instance renewed it for the lease and the grace) as long again.
//   - lease:{id}: the instance driving the game, with a TTL it renews.
//   - handback:{id}: "1" when another instance asks for the game.
//   - active (zset, by last renewal): games in progress; owner (hash id ->
//     client), count (hash client -> games in progress), network (hash id
//     -> network), netcount (hash network -> games in progress): the
//     bounds.
//   - ended (zset, by end): ended games kept, at most MaxKept.
//
// Every change that must see the bounds or a lease is one script, so that
// concurrent instances agree.
type RedisStore struct {
	cl      *redis.Client
	p       string
	pod     string
	lease   time.Duration
	check   time.Duration
	timeout time.Duration
}

// NewRedisStore connects to cfg.URL (lazily: the first call dials).
func NewRedisStore(cfg RedisConfig) (*RedisStore, error) {
	cl, cfg, pod, err := redislease.Open(cfg, RedisPrefix, "play")
	if err != nil {
		return nil, err
	}
	return &RedisStore{cl: cl, p: cfg.Prefix, pod: pod,
		lease: cfg.Lease, check: cfg.Check, timeout: cfg.Timeout}, nil
}

// Timing is the lease and the renewal period.
func (s *RedisStore) Timing() (lease, check time.Duration) { return s.lease, s.check }

// Close closes the connections.
func (s *RedisStore) Close() error { return s.cl.Close() }

// luaPlay is what the scripts share: drop(id) takes a game off those in
// progress; hold() keeps ARGV[2]'s lease on ARGV[1] for ARGV[3] ms (a
// lease that ran out while nobody took the game is taken again: the game
// goes on where it is).
const luaPlay = `
local P = KEYS[1]
local function put(gid, st, ttl)
  if tonumber(ttl) > 0 then
    redis.call('SET', P..'game:'..gid, st, 'PX', ttl)
  else
    redis.call('SET', P..'game:'..gid, st)
  end
end
local function drop(gid)
  local o = redis.call('HGET', P..'owner', gid)
  redis.call('ZREM', P..'active', gid)
  redis.call('HDEL', P..'owner', gid)
  if o and redis.call('HINCRBY', P..'count', o, -1) <= 0 then redis.call('HDEL', P..'count', o) end
  local ns = redis.call('HGET', P..'network', gid)
  redis.call('HDEL', P..'network', gid)
  if ns then
    for n in string.gmatch(ns, '%S+') do
      if redis.call('HINCRBY', P..'netcount', n, -1) <= 0 then redis.call('HDEL', P..'netcount', n) end
    end
  end
end
local function hold()
  local lk = P..'lease:'..ARGV[1]
  local cur = redis.call('GET', lk)
  if cur == ARGV[2] then
    redis.call('PEXPIRE', lk, ARGV[3])
    return true
  end
  if cur or not redis.call('ZSCORE', P..'active', ARGV[1]) then return false end
  redis.call('SET', lk, ARGV[2], 'PX', ARGV[3])
  return true
end
`

// admitScript. ARGV: id, owner, maxPer, maxGames, now, orphan ms, pod,
// lease ms, state, networks (narrowest first, separated by spaces; "":
// none), maxPerNetwork (of the narrowest; each wider one twice the one
// before, as session.NetworkBound).
var admitScript = redis.NewScript(luaPlay + `
local id, owner, now = ARGV[1], ARGV[2], tonumber(ARGV[5])
for _, gid in ipairs(redis.call('ZRANGEBYSCORE', P..'active', '-inf', now - tonumber(ARGV[6]))) do
  if redis.call('EXISTS', P..'lease:'..gid) == 0 then
    drop(gid)
    redis.call('PEXPIRE', P..'game:'..gid, ARGV[6])
  end
end
local nets = ARGV[10]
if tonumber(redis.call('HGET', P..'count', owner) or '0') >= tonumber(ARGV[3]) then return 'client' end
local bound = tonumber(ARGV[11])
for n in string.gmatch(nets, '%S+') do
  if tonumber(redis.call('HGET', P..'netcount', n) or '0') >= bound then return 'network:'..n end
  bound = bound * 2
end
if redis.call('ZCARD', P..'active') >= tonumber(ARGV[4]) then return 'games' end
redis.call('HINCRBY', P..'count', owner, 1)
if nets ~= '' then
  for n in string.gmatch(nets, '%S+') do redis.call('HINCRBY', P..'netcount', n, 1) end
  redis.call('HSET', P..'network', id, nets)
end
redis.call('HSET', P..'owner', id, owner)
redis.call('ZADD', P..'active', now, id)
redis.call('SET', P..'lease:'..id, ARGV[7], 'PX', ARGV[8])
put(id, ARGV[9], 0)
return 'ok'
`)

// maxState bounds a stored state as read back (a game of the most moves
// usid plays, 1024 and the move cap, with its KIF or SAN and times, holds
// well under a tenth of it): anyone able to write to the Redis could store
// anything there, and a larger value is refused on the server, never sent.
const maxState = 2 << 20

// errTooBig is the answer for a stored state over maxState.
var errTooBig = fmt.Errorf("play: a stored game state over %d bytes", maxState)

// takeScript. ARGV: id, owner, pod, lease ms, now, orphan ms, max state.
var takeScript = redis.NewScript(luaPlay + `
local id = ARGV[1]
local gk = P..'game:'..id
if redis.call('TYPE', gk).ok ~= 'string' then return {'nf'} end
if redis.call('STRLEN', gk) > tonumber(ARGV[7]) then return {'big'} end
local st = redis.call('GET', gk)
local o = redis.call('HGET', P..'owner', id)
if not o then return {'inactive', st} end
if o ~= ARGV[2] then return {'nf'} end
local lk = P..'lease:'..id
local cur = redis.call('GET', lk)
if cur and cur ~= ARGV[3] then
  redis.call('SET', P..'handback:'..id, '1', 'PX', ARGV[4])
  return {'held'}
end
if not cur and (tonumber(redis.call('ZSCORE', P..'active', id)) or 0) < tonumber(ARGV[5]) - tonumber(ARGV[6]) then
  drop(id)
  redis.call('PEXPIRE', P..'game:'..id, ARGV[6])
  return {'inactive', st}
end
redis.call('SET', lk, ARGV[3], 'PX', ARGV[4])
redis.call('ZADD', P..'active', 'XX', ARGV[5], id)
redis.call('DEL', P..'handback:'..id)
return {'ok', st}
`)

// renewScript. ARGV: id, pod, lease ms, now.
var renewScript = redis.NewScript(luaPlay + `
if not hold() then return -1 end
redis.call('ZADD', P..'active', 'XX', ARGV[4], ARGV[1])
if redis.call('EXISTS', P..'handback:'..ARGV[1]) == 1 then return 1 end
return 0
`)

// saveScript saves a state in progress, for the lease holder only. ARGV:
// id, pod, lease ms, state.
var saveScript = redis.NewScript(luaPlay + `
if not hold() then return 0 end
put(ARGV[1], ARGV[4], 0)
return 1
`)

// handScript saves a state and gives the lease up. ARGV: id, pod, state.
var handScript = redis.NewScript(luaPlay + `
local lk = P..'lease:'..ARGV[1]
if redis.call('GET', lk) ~= ARGV[2] then return 0 end
put(ARGV[1], ARGV[3], 0)
redis.call('DEL', lk, P..'handback:'..ARGV[1])
return 1
`)

// finishScript ends a game held by ARGV[2] (or whose lease ran out while
// nobody took it: its end, stored late after an outage, still counts).
// ARGV: id, pod, state, keep ms, now, maxKept.
var finishScript = redis.NewScript(luaPlay + `
local id, lk = ARGV[1], P..'lease:'..ARGV[1]
local cur = redis.call('GET', lk)
if cur ~= ARGV[2] and (cur or not redis.call('ZSCORE', P..'active', id)) then return 0 end
redis.call('DEL', lk, P..'handback:'..id)
put(id, ARGV[3], ARGV[4])
drop(id)
redis.call('ZADD', P..'ended', ARGV[5], id)
redis.call('ZREMRANGEBYSCORE', P..'ended', '-inf', tonumber(ARGV[5]) - tonumber(ARGV[4]))
local n = redis.call('ZCARD', P..'ended') - tonumber(ARGV[6])
if n > 0 then
  for _, gid in ipairs(redis.call('ZRANGE', P..'ended', 0, n - 1)) do
    redis.call('DEL', P..'game:'..gid)
    redis.call('ZREM', P..'ended', gid)
  end
end
return 1
`)

func (s *RedisStore) ctx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(parent), s.timeout)
}

func (s *RedisStore) run(ctx context.Context, sc *redis.Script, args ...any) (any, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	return sc.Run(ctx, s.cl, []string{s.p}, args...).Result()
}

// Save saves st, if this instance holds its lease (else ErrNotHeld).
func (s *RedisStore) Save(ctx context.Context, st *State) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	v, err := s.run(ctx, saveScript, st.ID, s.pod, s.lease.Milliseconds(), string(b))
	if err != nil {
		return err
	}
	if n, _ := v.(int64); n != 1 {
		return ErrNotHeld
	}
	return nil
}

// loadScript reads a stored state no larger than ARGV[1]: false when
// there is none, "big" when it is larger.
var loadScript = redis.NewScript(`
if redis.call('TYPE', KEYS[1]).ok ~= 'string' then return false end
if redis.call('STRLEN', KEYS[1]) > tonumber(ARGV[1]) then return 'big' end
return {redis.call('GET', KEYS[1])}
`)

// Load returns the state saved under id.
func (s *RedisStore) Load(ctx context.Context, id string) (*State, bool, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	v, err := loadScript.Run(ctx, s.cl, []string{s.p + "game:" + id}, maxState).Result()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	a, _ := v.([]any)
	if len(a) != 1 {
		return nil, false, errTooBig
	}
	b, _ := a[0].(string)
	var st State
	if err := json.Unmarshal([]byte(b), &st); err != nil {
		return nil, false, err
	}
	return &st, true, nil
}

// Delete forgets an ended game (one in progress is left to its holder).
func (s *RedisStore) Delete(ctx context.Context, id string) error {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	if n, _ := s.cl.ZScore(ctx, s.p+"active", id).Result(); n != 0 {
		return nil
	}
	return s.cl.Del(ctx, s.p+"game:"+id).Err()
}

// Admit: see Shared.
func (s *RedisStore) Admit(ctx context.Context, st *State, bd Bounds, orphan time.Duration) (string, error) {
	b, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	v, err := s.run(ctx, admitScript, st.ID, st.Owner, bd.PerClient, bd.Games, time.Now().UnixMilli(), orphan.Milliseconds(),
		s.pod, s.lease.Milliseconds(), string(b), strings.Join(st.Networks, " "), bd.PerNetwork)
	str, _ := v.(string)
	return str, err
}

// Take: see Shared.
func (s *RedisStore) Take(ctx context.Context, id, owner string, orphan time.Duration) (string, *State, error) {
	v, err := s.run(ctx, takeScript, id, owner, s.pod, s.lease.Milliseconds(), time.Now().UnixMilli(), orphan.Milliseconds(), maxState)
	if err != nil {
		return "", nil, err
	}
	a, _ := v.([]any)
	if len(a) == 0 {
		return "", nil, errors.New("play: take: an unexpected answer")
	}
	status, _ := a[0].(string)
	if status == "big" {
		return "", nil, errTooBig
	}
	if len(a) < 2 {
		return status, nil, nil
	}
	str, _ := a[1].(string)
	var st State
	if err := json.Unmarshal([]byte(str), &st); err != nil {
		return "", nil, err
	}
	if st.Owner != owner {
		return "nf", nil, nil
	}
	return status, &st, nil
}

// Renew: see Shared. It pipelines one script per game.
func (s *RedisStore) Renew(ctx context.Context, ids []string) ([]int64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	now := time.Now().UnixMilli()
	pipe := s.cl.Pipeline()
	cmds := make([]*redis.Cmd, len(ids))
	for i, id := range ids {
		cmds[i] = renewScript.Run(ctx, pipe, []string{s.p}, id, s.pod, s.lease.Milliseconds(), now)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		// A script not yet loaded answers NOSCRIPT in a pipeline: load it
		// and try again once.
		if !strings.HasPrefix(err.Error(), "NOSCRIPT") {
			return nil, err
		}
		if err := renewScript.Load(ctx, s.cl).Err(); err != nil {
			return nil, err
		}
		return s.Renew(ctx, ids)
	}
	out := make([]int64, len(ids))
	for i, c := range cmds {
		out[i], _ = c.Int64()
	}
	return out, nil
}

// Hand: see Shared.
func (s *RedisStore) Hand(ctx context.Context, st *State) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	v, err := s.run(ctx, handScript, st.ID, s.pod, string(b))
	if err != nil {
		return err
	}
	if n, _ := v.(int64); n != 1 {
		return ErrNotHeld
	}
	return nil
}

// Finish: see Shared.
func (s *RedisStore) Finish(ctx context.Context, st *State, keep time.Duration, maxKept int) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	v, err := s.run(ctx, finishScript, st.ID, s.pod, string(b), (keep + time.Minute).Milliseconds(), time.Now().UnixMilli(), maxKept)
	if err != nil {
		return err
	}
	if n, _ := v.(int64); n != 1 {
		return ErrNotHeld
	}
	return nil
}

// Owned lists client's games in progress (the owner hash: every game in
// progress, MaxGames at most).
func (s *RedisStore) Owned(ctx context.Context, client string) ([]string, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	all, err := s.cl.HGetAll(ctx, s.p+"owner").Result()
	if err != nil {
		return nil, err
	}
	var ids []string
	for id, o := range all {
		if o == client {
			ids = append(ids, id)
		}
	}
	return ids, nil
}
