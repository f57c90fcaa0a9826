package match

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/usid/usid/internal/redislease"
)

// RedisConfig keeps matches in Redis, shared by every instance using the
// same server and prefix (default RedisPrefix); see internal/redislease.
type RedisConfig = redislease.Config

// RedisPrefix is the default key prefix.
const RedisPrefix = "usid:match:"

// redisStore holds matches in Redis for every pod sharing it: a match is
// its request (checked again by each pod that plays it), and its games are
// work items that pods claim under leases. Keys, under the prefix:
//
//   - m:{id} (hash): req (the Request, JSON), owner (client), planned,
//     conc (games at once), status, stopped ("1": no more games are
//     handed out: decided or failed), err (the failure, JSON), ended
//     (unix ms). An ended match and its games live for Keep (and a
//     minute), at most MaxKept of them (ended: a zset by end).
//   - g:{id} (hash): game index -> the ended game (storedGame, JSON),
//     stored the moment it ends.
//   - p:{id} (hash): game index -> the game under way as its pod last
//     wrote it (storedGame, JSON; at most every Check), so that every pod
//     lists it and its watch page follows it; written only under the
//     game's lease, dropped when the game ends, is handed back or is
//     claimed again (a replay starts from the opening), and with the
//     match's end.
//   - l:{id}:{i}: the pod playing game i, with a TTL it renews.
//   - live (zset, by creation): matches not ended; count (hash client ->
//     matches not ended): the bounds.
//
// Every change that must see a lease or the bounds is one script, so that
// pods agree. Safe for concurrent use.
type redisStore struct {
	cl      *redis.Client
	p       string
	pod     string
	lease   time.Duration
	check   time.Duration
	timeout time.Duration
	// An ended match is kept for keep, at most maxKept of them (the
	// ended zset, by end).
	keep    time.Duration
	maxKept int
}

func newRedisStore(cfg RedisConfig, keep time.Duration, maxKept int) (*redisStore, error) {
	cl, cfg, pod, err := redislease.Open(cfg, RedisPrefix, "matches")
	if err != nil {
		return nil, err
	}
	return &redisStore{cl: cl, p: cfg.Prefix, pod: pod, lease: cfg.Lease, check: cfg.Check, timeout: cfg.Timeout, keep: keep, maxKept: maxKept}, nil
}

func (s *redisStore) Close() error { return s.cl.Close() }

// Caps of what is read back: anyone able to write to the Redis can store
// anything there (see redislease.ReadHash).
var (
	metaCaps = redislease.Caps{Fields: 16, Value: 64, Named: map[string]int{"req": maxStoredRequest, "err": 4 << 10}}
	// maxStoredRequest bounds a stored request: a thousand openings of a
	// long game's moves stay well under it.
	maxStoredRequest = 4 << 20
	// maxStoredGame bounds one stored game: the most plies a match plays
	// with their record stay well under it.
	maxStoredGame = 1 << 20
)

// luaMatch is what the scripts share. ended(id, status) ends match id
// (kept ARGV keep ms from now); settle(id) ends it done or failed once no
// game is left to play and none is held.
const luaMatch = `
local P = KEYS[1]
local function ended(id, status, keep, now, maxKept)
  local mk = P..'m:'..id
  redis.call('HSET', mk, 'status', status, 'ended', now)
  redis.call('ZREM', P..'live', id)
  local o = redis.call('HGET', mk, 'owner')
  if o and redis.call('HINCRBY', P..'count', o, -1) <= 0 then redis.call('HDEL', P..'count', o) end
  redis.call('PEXPIRE', mk, keep)
  redis.call('PEXPIRE', P..'g:'..id, keep)
  redis.call('DEL', P..'p:'..id)
  redis.call('ZADD', P..'ended', now, id)
  redis.call('ZREMRANGEBYSCORE', P..'ended', '-inf', tonumber(now) - keep)
  local n = redis.call('ZCARD', P..'ended') - maxKept
  if n > 0 then
    for _, old in ipairs(redis.call('ZRANGE', P..'ended', 0, n - 1)) do
      redis.call('DEL', P..'m:'..old, P..'g:'..old)
      redis.call('ZREM', P..'ended', old)
    end
  end
end
local function live(id)
  local st = redis.call('HGET', P..'m:'..id, 'status')
  return st == 'queued' or st == 'running'
end
local function settle(id, keep, now, maxKept)
  local mk = P..'m:'..id
  if not live(id) then return end
  local n = tonumber(redis.call('HGET', mk, 'planned')) or 0
  if redis.call('HLEN', P..'g:'..id) < n and redis.call('HGET', mk, 'stopped') ~= '1' then return end
  for i = 0, n - 1 do
    if redis.call('EXISTS', P..'l:'..id..':'..i) == 1 then return end
  end
  local status = 'done'
  if redis.call('HEXISTS', mk, 'err') == 1 then status = 'failed' end
  ended(id, status, keep, now, maxKept)
end
`

// createScript. ARGV: id, owner, req, planned, conc, maxPerClient,
// maxMatches, now. Answer: ok, client or full.
var createScript = redis.NewScript(luaMatch + `
local id, owner = ARGV[1], ARGV[2]
if tonumber(redis.call('HGET', P..'count', owner) or '0') >= tonumber(ARGV[6]) then return 'client' end
if redis.call('ZCARD', P..'live') >= tonumber(ARGV[7]) then return 'full' end
redis.call('HSET', P..'m:'..id, 'req', ARGV[3], 'owner', owner, 'planned', ARGV[4], 'conc', ARGV[5], 'status', 'queued')
redis.call('ZADD', P..'live', ARGV[8], id)
redis.call('HINCRBY', P..'count', owner, 1)
return 'ok'
`)

// claimScript claims the first game of match ARGV[1] neither ended nor
// held (a game whose pod died is free again once its lease ran out), if
// fewer than conc are held. ARGV: id, pod, lease ms, keep ms, now, maxKept.
// Answer: the game's index, or -1 (none: the match may have settled).
var claimScript = redis.NewScript(luaMatch + `
local id = ARGV[1]
local mk = P..'m:'..id
if not live(id) then return -1 end
if redis.call('HGET', mk, 'stopped') ~= '1' then
  local n, conc = tonumber(redis.call('HGET', mk, 'planned')) or 0, tonumber(redis.call('HGET', mk, 'conc')) or 1
  local held, free = 0, -1
  for i = 0, n - 1 do
    if redis.call('EXISTS', P..'l:'..id..':'..i) == 1 then
      held = held + 1
    elseif free < 0 and redis.call('HEXISTS', P..'g:'..id, tostring(i)) == 0 then
      free = i
    end
  end
  if free >= 0 then
    if held >= conc then return -1 end
    redis.call('SET', P..'l:'..id..':'..free, ARGV[2], 'PX', ARGV[3])
    redis.call('HDEL', P..'p:'..id, tostring(free))
    redis.call('HSET', mk, 'status', 'running')
    return free
  end
end
settle(id, tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6]))
return -1
`)

// renewScript renews the lease on game ARGV[2] of match ARGV[1]. ARGV:
// id, game, pod, lease ms. Answer: 1, or 0 when the lease is lost or the
// match ended (cancelled): the game is abandoned.
var renewScript = redis.NewScript(luaMatch + `
local lk = P..'l:'..ARGV[1]..':'..ARGV[2]
if not live(ARGV[1]) then return 0 end
local cur = redis.call('GET', lk)
if cur ~= ARGV[3] then
  if cur or redis.call('HEXISTS', P..'g:'..ARGV[1], ARGV[2]) == 1 then return 0 end
  redis.call('SET', lk, ARGV[3], 'PX', ARGV[4]) -- ran out while nobody took it
  return 1
end
redis.call('PEXPIRE', lk, ARGV[4])
return 1
`)

// finishScript stores ended game ARGV[2] of match ARGV[1], played by
// ARGV[3] (or by a pod whose lease ran out while nobody took the game: its
// end still counts), and settles the match. ARGV: id, game, pod, the
// game, keep ms, now, maxKept. Answer: 1 stored, 0 not (lost, or the match ended).
var finishScript = redis.NewScript(luaMatch + `
local id, gk = ARGV[1], P..'g:'..ARGV[1]
local lk = P..'l:'..id..':'..ARGV[2]
local cur = redis.call('GET', lk)
if not live(id) or (cur and cur ~= ARGV[3]) or redis.call('HEXISTS', gk, ARGV[2]) == 1 then
  if cur == ARGV[3] then redis.call('DEL', lk); redis.call('HDEL', P..'p:'..id, ARGV[2]) end
  return 0
end
redis.call('HSET', gk, ARGV[2], ARGV[4])
redis.call('DEL', lk)
redis.call('HDEL', P..'p:'..id, ARGV[2])
settle(id, tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7]))
return 1
`)

// stopScript hands out no more games of match ARGV[1] (decided, or
// failed with ARGV[2], the first failure kept) and settles it. ARGV: id,
// err ("": none), keep ms, now, maxKept.
var stopScript = redis.NewScript(luaMatch + `
local mk = P..'m:'..ARGV[1]
if not live(ARGV[1]) then return 0 end
redis.call('HSET', mk, 'stopped', '1')
if ARGV[2] ~= '' then redis.call('HSETNX', mk, 'err', ARGV[2]) end
settle(ARGV[1], tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5]))
return 1
`)

// releaseScript gives game ARGV[2]'s lease up (this pod stops: another
// takes the game at once). ARGV: id, game, pod.
var releaseScript = redis.NewScript(luaMatch + `
local lk = P..'l:'..ARGV[1]..':'..ARGV[2]
if redis.call('GET', lk) == ARGV[3] then
  redis.call('DEL', lk)
  redis.call('HDEL', P..'p:'..ARGV[1], ARGV[2])
end
return 1
`)

// progressScript writes game ARGV[2] of match ARGV[1] as it stands, if
// pod ARGV[3] still holds its lease and the match is live. ARGV: id,
// game, pod, the game. Answer: 1 written, 0 not.
var progressScript = redis.NewScript(luaMatch + `
if not live(ARGV[1]) or redis.call('GET', P..'l:'..ARGV[1]..':'..ARGV[2]) ~= ARGV[3] then return 0 end
redis.call('HSET', P..'p:'..ARGV[1], ARGV[2], ARGV[4])
return 1
`)

// cancelScript cancels match ARGV[1] of owner ARGV[2]. ARGV: id, owner,
// keep ms, now, maxKept. Answer: 1 (cancelled, or ended already), 0 (no such match
// of owner's).
var cancelScript = redis.NewScript(luaMatch + `
if redis.call('HGET', P..'m:'..ARGV[1], 'owner') ~= ARGV[2] then return 0 end
if live(ARGV[1]) then ended(ARGV[1], 'cancelled', tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5])) end
return 1
`)

func (s *redisStore) run(ctx context.Context, sc *redis.Script, args ...any) (any, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	return sc.Run(ctx, s.cl, []string{s.p}, args...).Result()
}

func now() int64 { return time.Now().UnixMilli() }

func (s *redisStore) create(ctx context.Context, id, owner string, req []byte, planned, conc, maxPer, maxAll int) (string, error) {
	v, err := s.run(ctx, createScript, id, owner, string(req), planned, conc, maxPer, maxAll, now())
	str, _ := v.(string)
	return str, err
}

// claim claims a game of match id: its index, or -1.
func (s *redisStore) claim(ctx context.Context, id string) (int, error) {
	v, err := s.run(ctx, claimScript, id, s.pod, s.lease.Milliseconds(), s.keep.Milliseconds(), now(), s.maxKept)
	n, _ := v.(int64)
	return int(n), err
}

func (s *redisStore) renew(ctx context.Context, id string, i int) (bool, error) {
	v, err := s.run(ctx, renewScript, id, i, s.pod, s.lease.Milliseconds())
	n, _ := v.(int64)
	return n == 1, err
}

func (s *redisStore) finish(ctx context.Context, id string, i int, g *Game) (bool, error) {
	b, err := json.Marshal(toStored(g)) // ended: its winner written, null for a draw
	if err != nil {
		return false, err
	}
	v, err := s.run(ctx, finishScript, id, i, s.pod, string(b), s.keep.Milliseconds(), now(), s.maxKept)
	n, _ := v.(int64)
	return n == 1, err
}

// progress writes game i of match id, under way, as it stands.
func (s *redisStore) progress(ctx context.Context, id string, i int, g *Game) error {
	b, err := json.Marshal(toStored(g))
	if err != nil {
		return err
	}
	_, err = s.run(ctx, progressScript, id, i, s.pod, string(b))
	return err
}

func (s *redisStore) stop(ctx context.Context, id string, e *Error) error {
	var b []byte
	if e != nil {
		b, _ = json.Marshal(ErrorView{Code: e.Code, Message: e.Message})
	}
	_, err := s.run(ctx, stopScript, id, string(b), s.keep.Milliseconds(), now(), s.maxKept)
	return err
}

func (s *redisStore) release(ctx context.Context, id string, i int) error {
	_, err := s.run(ctx, releaseScript, id, i, s.pod)
	return err
}

func (s *redisStore) cancel(ctx context.Context, id, owner string) (bool, error) {
	v, err := s.run(ctx, cancelScript, id, owner, s.keep.Milliseconds(), now(), s.maxKept)
	n, _ := v.(int64)
	return n == 1, err
}

// live lists the matches not ended, oldest first, at most n.
func (s *redisStore) live(ctx context.Context, n int) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	return s.cl.ZRange(ctx, s.p+"live", 0, int64(n)-1).Result()
}

// storedGame is a Game as the store keeps it: its fields, its winner
// (null for a draw, or while it is played), and the players' evaluations
// its watch page reads (GET /v1/matches/{id}/games/{n}), which Game's own
// JSON leaves out.
type storedGame struct {
	plainGame
	Winner *int   `json:"winner"`
	Evals  []Line `json:"evals,omitempty"`
	Line   *Line  `json:"line,omitempty"`
}

type plainGame Game // without Game's MarshalJSON

func toStored(g *Game) storedGame {
	return storedGame{plainGame: plainGame(*g), Winner: g.Winner, Evals: g.Evals, Line: g.Line}
}

// readGame reads back a stored game, ended or under way (done).
func readGame(b string, done bool) (*Game, bool) {
	var sg storedGame
	if json.Unmarshal([]byte(b), &sg) != nil || sg.Winner != nil && (!done || *sg.Winner != 0 && *sg.Winner != 1) {
		return nil, false
	}
	g := Game(sg.plainGame)
	g.Winner, g.Done, g.Evals, g.Line = sg.Winner, done, sg.Evals, sg.Line
	return &g, true
}

// stored is a match as read back.
type stored struct {
	req     []byte
	owner   string
	planned int
	status  string
	stopped bool
	err     *ErrorView
	ended   time.Time
	games   map[int]*Game // ended
	playing map[int]*Game // under way (a live match's), as last written
}

var errStoredMatch = errors.New("match: a stored match unlike those usid writes")

// load reads match id back within caps: nil when there is none.
func (s *redisStore) load(ctx context.Context, id string, maxGames int) (*stored, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	h, err := redislease.ReadHash(ctx, s.cl, s.p+"m:"+id, metaCaps)
	if err != nil || h.Values == nil {
		return nil, err
	}
	v := h.Values
	st := &stored{req: []byte(v["req"]), owner: v["owner"], status: v["status"], stopped: v["stopped"] == "1", games: map[int]*Game{}, playing: map[int]*Game{}}
	st.planned, err = strconv.Atoi(v["planned"])
	if err != nil || st.planned < 0 || st.planned > maxGames || len(h.Over) > 0 || len(st.req) == 0 {
		return nil, errStoredMatch
	}
	if e := v["err"]; e != "" {
		st.err = &ErrorView{}
		if json.Unmarshal([]byte(e), st.err) != nil {
			return nil, errStoredMatch
		}
	}
	if ms, err := strconv.ParseInt(v["ended"], 10, 64); err == nil {
		st.ended = time.UnixMilli(ms)
	}
	ended, err := s.readGames(ctx, s.p+"g:"+id, st.planned, true)
	if err != nil {
		return nil, err
	}
	for i, g := range ended {
		st.games[i] = g
	}
	if st.status != StatusQueued && st.status != StatusRunning {
		return st, nil
	}
	// The games under way: at most one a game planned (and as many as the
	// match plays at once, but for those of a pod that died, until they
	// are claimed again), each within a stored game's bound.
	playing, err := s.readGames(ctx, s.p+"p:"+id, st.planned, false)
	if err != nil {
		return nil, err
	}
	for i, g := range playing {
		if st.games[i] == nil { // ended meanwhile: the end counts
			st.playing[i] = g
		}
	}
	return st, nil
}

// readGames reads the hash of a match's games at key (ended ones, with
// done, or those under way), each field a game's index below planned, at
// most planned of them, each within a stored game's bound.
func (s *redisStore) readGames(ctx context.Context, key string, planned int, done bool) (map[int]*Game, error) {
	h, err := redislease.ReadHash(ctx, s.cl, key, redislease.Caps{Fields: planned, Value: maxStoredGame})
	if err != nil {
		return nil, err
	}
	if len(h.Over) > 0 {
		return nil, errStoredMatch
	}
	games := make(map[int]*Game, len(h.Values))
	for k, b := range h.Values {
		i, err := strconv.Atoi(k)
		g, ok := readGame(b, done)
		if err != nil || i < 0 || i >= planned || !ok {
			return nil, errStoredMatch
		}
		games[i] = g
	}
	return games, nil
}
