package review

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/usid/usid/internal/redislease"
	"github.com/usid/usid/session"
)

// RedisConfig keeps jobs in Redis, shared by every instance using the
// same server and prefix (default RedisPrefix); see internal/redislease.
type RedisConfig = redislease.Config

// RedisPrefix is the default key prefix.
const RedisPrefix = "usid:games:"

// store is the shared job table in Redis. Keys, under the prefix:
//
//   - job:{id}, a hash: owner, req (the checked request, storedRequest),
//     status, created/started/finished (unix ms), error (errorJSON), resume
//     (unix ms: a paused job's next look at its budget), pin (the instance
//     whose WebSocket follows the job), cancel ("1": asked to end), r:{ply}
//     (a position's result, resultJSON), c:{search} (that search was
//     charged to the owner), n:{search} (how often it started); for a
//     followed job (Request.Follow), follow (its grace, ms) and seen (when
//     its owner last read it, unix ms by the Redis server's clock, so that
//     instances' clocks do not matter); cancel is "abandoned" once the
//     grace passed with nobody reading it.
//   - lease:{id}: the instance running the job, with a TTL it renews.
//   - pod:{instance}: an instance alive, with the same TTL.
//   - active (zset by creation): jobs queued, running or paused; ended
//     (zset by end): ended jobs kept; meta (hash id -> "bytes owner"),
//     bytes (hash owner -> bytes), total, count (hash owner -> active
//     jobs): the bounds of Config, counted as Manager counts them in memory.
//
// Every change that must see the bounds or a lease is one script, so that
// concurrent instances agree. The keys are computed in the scripts: one
// Redis (or one shard) holds them all.
type store struct {
	cl       *redis.Client
	maxMoves int // the moves a game may have (Caps.MaxMoves): the bounds of a record read back
	// pauseCheck is Config.PauseCheck: a paused job's longest wait.
	pauseCheck time.Duration
	p          string
	pod        string // this instance
	lease      time.Duration
	check      time.Duration
	timeout    time.Duration
}

func newStore(cfg RedisConfig) (*store, error) {
	cl, cfg, pod, err := redislease.Open(cfg, RedisPrefix, "games")
	if err != nil {
		return nil, err
	}
	return &store{cl: cl, p: cfg.Prefix, pod: pod,
		lease: cfg.Lease, check: cfg.Check, timeout: cfg.Timeout}, nil
}

func (s *store) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.timeout)
}

func (s *store) key(id string) string { return s.p + "job:" + id }

func ms(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

// storedRequest is what an instance needs to run a job it did not start.
type storedRequest struct {
	// Game is the game's name (package game), SFEN its start in the
	// game's position text, whatever the game ("" or absent: the default
	// game). FEN is a chess start as stored before the games had one
	// seam, read as the start of the game whose positions are "fen".
	Game       string     `json:"game,omitempty"`
	SFEN       string     `json:"sfen"`
	FEN        string     `json:"fen,omitempty"`
	Variant    string     `json:"variant,omitempty"`
	Moves      []string   `json:"moves"`
	Engine     string     `json:"engine"`
	Limits     limitsJSON `json:"limits"`
	Thresholds Thresholds `json:"thresholds"`
	KIF        bool       `json:"kif,omitempty"`
	SAN        bool       `json:"san,omitempty"`
}

// sound reports whether e, read back from the store, is an error usid
// could have written: a code of lowercase letters and underscores, a
// message of at most maxMessage bytes with no control character (bidi
// overrides and the like: see session.IsControl), a ply not below 0.
func (e *errorJSON) sound() bool {
	if len(e.Code) == 0 || len(e.Code) > 64 || len(e.Message) > maxMessage || !utf8.ValidString(e.Message) || (e.Ply != nil && *e.Ply < 0) {
		return false
	}
	for _, c := range e.Code {
		if (c < 'a' || c > 'z') && c != '_' {
			return false
		}
	}
	return !strings.ContainsFunc(e.Message, session.IsControl)
}

// maxMessage bounds an error's message read back from the store.
const maxMessage = 1 << 10

// startLen is the length of the game's start, for the memory bounds.
func (r *storedRequest) startLen() int { return len(r.SFEN) + len(r.FEN) }

// resultJSON is a result as stored.
type resultJSON struct {
	B   string `json:"b,omitempty"`
	DR  uint8  `json:"dr,omitempty"` // a draw by the rules (ending)
	PV  string `json:"pv,omitempty"`
	N   int64  `json:"n,omitempty"`
	D   int32  `json:"d,omitempty"`
	S   int32  `json:"s,omitempty"`
	K   uint8  `json:"k,omitempty"`
	MS  byte   `json:"ms,omitempty"`
	E   uint8  `json:"e,omitempty"`
	C   bool   `json:"c,omitempty"`
	CM  bool   `json:"cm,omitempty"`
	BS  int32  `json:"bs,omitempty"`
	BK  uint8  `json:"bk,omitempty"`
	BMS byte   `json:"bms,omitempty"`
}

func encodeResult(r *result) string {
	b, _ := json.Marshal(resultJSON{B: r.bestmove, PV: r.pv, N: r.nodes, D: r.depth, S: r.score, K: uint8(r.kind),
		MS: r.mateSign, E: r.emulated, C: r.cached, CM: r.checkmate, DR: uint8(r.draw), BS: r.best, BK: uint8(r.bestKind), BMS: r.bestMateSign})
	return string(b)
}

func decodeResult(s string) (*result, error) {
	var x resultJSON
	if err := json.Unmarshal([]byte(s), &x); err != nil {
		return nil, err
	}
	if x.K > uint8(mateScore) || x.BK > uint8(mateScore) || int(x.DR) >= len(drawNames) || (x.DR != 0 && drawNames[x.DR] == "") || len(x.PV) > maxPV*8 || len(x.B) > 16 {
		return nil, errors.New("games: a stored result out of bounds")
	}
	return &result{bestmove: x.B, pv: x.PV, nodes: x.N, depth: x.D, score: x.S, kind: scoreKind(x.K),
		mateSign: x.MS, emulated: x.E, cached: x.C, checkmate: x.CM, draw: ending(x.DR), best: x.BS, bestKind: scoreKind(x.BK),
		bestMateSign: x.BMS}, nil
}

// record is a job as stored.
type record struct {
	owner, status, pin string
	req                storedRequest
	created, started   time.Time
	finished, resume   time.Time
	err                *errorJSON
	cancel             bool
	// follow is a followed job's grace; abandoned, nobody read it for
	// that long: it is to end cancelled (CodeAbandoned).
	follow    time.Duration
	abandoned bool
	results   map[int]*result
}

func unixMS(s string) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(n)
}

// The bounds of a job's record as read back: maxField bytes for a field
// (a result, an error, a number), maxReq bytes of request per move of
// MaxMoves and reqSlack more (the start, the limits, the thresholds),
// fieldsPerPly fields per position (r:, and c: and n: for its two
// searches) and fieldsSlack more.
const (
	maxField     = 4 << 10
	maxReq       = 8
	reqSlack     = 16 << 10
	fieldsPerPly = 5
	fieldsSlack  = 32
)

// load reads job id; nil when there is none.
func (s *store) load(ctx context.Context, id string) (*record, error) {
	// Measured on the server first (redislease.ReadHash): a hash of more
	// fields reads as absent, a field over its bound is left out.
	rh, err := redislease.ReadHash(ctx, s.cl, s.key(id), redislease.Caps{Fields: fieldsPerPly*(s.maxMoves+1) + fieldsSlack,
		Value: maxField, Named: map[string]int{"req": maxReq*s.maxMoves + reqSlack}})
	if errors.Is(err, redislease.ErrTooMany) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	h := rh.Values
	if h["owner"] == "" || h["req"] == "" {
		return nil, nil
	}
	switch h["status"] {
	case StatusQueued, StatusRunning, StatusPaused, StatusDone, StatusCancelled, StatusFailed:
	default:
		return nil, errors.New("games: a stored job of an unknown status")
	}
	r := &record{owner: h["owner"], status: h["status"], pin: h["pin"], cancel: h["cancel"] == "1", abandoned: h["cancel"] == "abandoned",
		created: unixMS(h["created"]), started: unixMS(h["started"]), finished: unixMS(h["finished"]),
		resume: unixMS(h["resume"]), results: map[int]*result{}}
	if err := json.Unmarshal([]byte(h["req"]), &r.req); err != nil {
		return nil, err
	}
	if f, err := strconv.ParseInt(h["follow"], 10, 64); err == nil && f > 0 {
		r.follow = time.Duration(f) * time.Millisecond
	}
	if e := h["error"]; e != "" {
		r.err = &errorJSON{}
		if json.Unmarshal([]byte(e), r.err) != nil || !r.err.sound() {
			r.err = nil
		}
	}
	for f, v := range h {
		if n, ok := strings.CutPrefix(f, "r:"); ok {
			ply, err := strconv.Atoi(n)
			if err != nil || ply < 0 || ply > len(r.req.Moves) {
				continue
			}
			if res, err := decodeResult(v); err == nil {
				r.results[ply] = res
			}
		}
	}
	return r, nil
}

// Shared Lua: forget(jid) drops an ended job and its bytes; meta(jid) is
// its "bytes owner".
const luaCommon = `
local P = KEYS[1]
local function meta(jid)
  local m = redis.call('HGET', P..'meta', jid)
  if not m then return 0, nil end
  local b, o = string.match(m, '^(%-?%d+) (.*)$')
  return tonumber(b), o
end
local function addBytes(owner, d)
  if redis.call('HINCRBY', P..'bytes', owner, d) <= 0 then redis.call('HDEL', P..'bytes', owner) end
  redis.call('INCRBY', P..'total', d)
end
local function forget(jid)
  local b, o = meta(jid)
  redis.call('ZREM', P..'ended', jid)
  redis.call('HDEL', P..'meta', jid)
  redis.call('DEL', P..'job:'..jid)
  if o then addBytes(o, -b) end
end
`

// Lua for followed jobs (Request.Follow): nowms() is the Redis server's
// clock in ms (one clock for every instance); abandoned(k) says whether
// job k is followed and nobody read it for its grace, and marks it so
// (cancel "abandoned": it stays abandoned whoever reads it after).
const luaFollow = `
local function nowms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function abandoned(k)
  local v = redis.call('HMGET', k, 'follow', 'seen', 'cancel')
  if v[3] == 'abandoned' then return true end
  local f = tonumber(v[1] or '0') or 0
  if f <= 0 or nowms() - (tonumber(v[2] or '0') or 0) <= f then return false end
  redis.call('HSET', k, 'cancel', 'abandoned')
  return true
end
`

// startScript sweeps ended jobs past keep or past maxKept, checks the
// bounds (the client's active jobs, all active jobs, bytes: the client's
// own oldest ended jobs are forgotten first, then the oldest of whoever
// holds most), and queues the job. It returns "ok", or which bound refused
// it: "client", "jobs", "client_bytes", "bytes".
//
// ARGV: id, owner, need, maxPer, maxJobs, maxClientBytes, maxBytes, now,
// keep ms, maxKept, req, pin, follow ms (0: not followed).
var startScript = redis.NewScript(luaCommon + luaFollow + `
local id, owner, need = ARGV[1], ARGV[2], tonumber(ARGV[3])
local maxPer, maxJobs, maxCB, maxB = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local now, keep, maxKept = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
for _, jid in ipairs(redis.call('ZRANGEBYSCORE', P..'ended', '-inf', now - keep)) do forget(jid) end
local n = redis.call('ZCARD', P..'ended')
if n > maxKept then
  for _, jid in ipairs(redis.call('ZRANGE', P..'ended', 0, n - maxKept - 1)) do forget(jid) end
end
if tonumber(redis.call('HGET', P..'count', owner) or '0') >= maxPer then return 'client' end
if redis.call('ZCARD', P..'active') >= maxJobs then return 'jobs' end
local function cb(o) return tonumber(redis.call('HGET', P..'bytes', o) or '0') end
local function evict(o)
  for _, jid in ipairs(redis.call('ZRANGE', P..'ended', 0, -1)) do
    local _, jo = meta(jid)
    if jo == o then forget(jid) return true end
  end
  return false
end
while cb(owner) + need > maxCB and evict(owner) do end
if cb(owner) + need > maxCB then return 'client_bytes' end
while tonumber(redis.call('GET', P..'total') or '0') + need > maxB do
  local holder, most = nil, 0
  for _, jid in ipairs(redis.call('ZRANGE', P..'ended', 0, -1)) do
    local _, jo = meta(jid)
    if jo and cb(jo) > most then holder, most = jo, cb(jo) end
  end
  if not holder or not evict(holder) then return 'bytes' end
end
redis.call('HSET', P..'job:'..id, 'owner', owner, 'req', ARGV[11], 'status', 'queued', 'created', ARGV[8], 'pin', ARGV[12])
if tonumber(ARGV[13]) > 0 then
  redis.call('HSET', P..'job:'..id, 'follow', ARGV[13], 'seen', string.format('%d', nowms()))
end
redis.call('HSET', P..'meta', id, need..' '..owner)
addBytes(owner, need)
redis.call('HINCRBY', P..'count', owner, 1)
redis.call('ZADD', P..'active', now, id)
return 'ok'
`)

// claimScript takes the oldest job nobody holds (queued, a paused one
// whose time has come, or a running one whose lease ran out) under a
// lease for ARGV[1], skipping jobs pinned to another live instance. It
// returns the job's id, or false. A followed job nobody read for its
// grace is marked abandoned as it is taken (the taker ends it at once).
//
// A paused job's resume further ahead than ARGV[4] ms (the longest pause
// and a minute for instances' clocks) is no time usid wrote: it is due.
//
// ARGV: pod, lease ms, now, longest pause ms.
var claimScript = redis.NewScript(luaCommon + luaFollow + `
local pod, now = ARGV[1], tonumber(ARGV[3])
for _, id in ipairs(redis.call('ZRANGE', P..'active', 0, -1)) do
  local k = P..'job:'..id
  if redis.call('EXISTS', P..'lease:'..id) == 0 then
    local v = redis.call('HMGET', k, 'status', 'pin', 'resume')
    local r = tonumber(v[3] or '0') or 0
    local ok = v[1] == 'queued' or v[1] == 'running' or (v[1] == 'paused' and (r <= now or r > now + tonumber(ARGV[4])))
    if ok and v[2] and v[2] ~= '' and v[2] ~= pod and redis.call('EXISTS', P..'pod:'..v[2]) == 1 then ok = false end
    if ok then
      redis.call('SET', P..'lease:'..id, pod, 'PX', ARGV[2])
      redis.call('HSET', k, 'status', 'running')
      redis.call('HSETNX', k, 'started', ARGV[3])
      redis.call('HDEL', k, 'resume', 'error')
      abandoned(k)
      return id
    end
  end
end
return false
`)

// luaHold keeps ARGV[2]'s lease on job ARGV[1] for ARGV[3] ms: false when
// another instance holds it. A lease that ran out (this instance was too
// slow to renew it) while nobody took the job is taken again, if the job
// is still under way: the work goes on where it is, none is done twice.
const luaHold = `
local P, id, pod = KEYS[1], ARGV[1], ARGV[2]
local lk = P..'lease:'..id
local function hold()
  local cur = redis.call('GET', lk)
  if cur == pod then
    redis.call('PEXPIRE', lk, ARGV[3])
    return true
  end
  if cur or not redis.call('ZSCORE', P..'active', id) then return false end
  redis.call('SET', lk, pod, 'PX', ARGV[3])
  redis.call('HSET', P..'job:'..id, 'status', 'running')
  return true
end
`

// renewScript renews ARGV[2]'s lease on job ARGV[1]: -1 when another
// instance holds it (or the job ended meanwhile), else 1 when the job is
// to be cancelled (its owner asked), 2 when it is followed and nobody
// read it for its grace (abandoned), 0 neither. ARGV: id, pod, lease ms.
var renewScript = redis.NewScript(luaHold + luaFollow + `
if not hold() then return -1 end
local k = P..'job:'..id
if redis.call('HGET', k, 'cancel') == '1' then return 1 end
if abandoned(k) then return 2 end
return 0
`)

// touchScript notes that owner ARGV[2] read job ARGV[1]: a followed job
// under way starts its grace again (not once abandoned). ARGV: id, owner.
var touchScript = redis.NewScript(luaFollow + `
local k = KEYS[1]..'job:'..ARGV[1]
local v = redis.call('HMGET', k, 'owner', 'follow', 'finished', 'cancel')
if v[1] ~= ARGV[2] or not v[2] or v[3] or v[4] == 'abandoned' then return 0 end
redis.call('HSET', k, 'seen', string.format('%d', nowms()))
return 1
`)

// putScript stores a position's result, for the lease holder only.
// ARGV: id, pod, lease ms, ply, result.
var putScript = redis.NewScript(luaHold + `
if not hold() then return 0 end
redis.call('HSETNX', P..'job:'..id, 'r:'..ARGV[4], ARGV[5])
return 1
`)

// endScript ends a job held by ARGV[2]: its status, its end, why, its
// bytes from the worst case to what it holds; it is kept until swept. A
// job ends done only with every position's result stored (ARGV[8] the
// last ply): else it answers 2 and stays as it was, for the holder to
// store what is missing (a write Redis did not take) or hand it back.
// ARGV: id, pod, status, now, error, real bytes, ttl ms, last ply.
var endScript = redis.NewScript(luaCommon + `
local id, k, lk = ARGV[1], P..'job:'..ARGV[1], P..'lease:'..ARGV[1]
if redis.call('GET', lk) ~= ARGV[2] then return 0 end
if ARGV[3] == 'done' then
  for ply = 0, tonumber(ARGV[8]) do
    if redis.call('HEXISTS', k, 'r:'..ply) == 0 then return 2 end
  end
end
redis.call('DEL', lk)
if not redis.call('ZSCORE', P..'active', id) then return 0 end
local b, o = meta(id)
local real = tonumber(ARGV[6])
if o then
  addBytes(o, real - b)
  redis.call('HSET', P..'meta', id, real..' '..o)
  if redis.call('HINCRBY', P..'count', o, -1) <= 0 then redis.call('HDEL', P..'count', o) end
end
redis.call('ZREM', P..'active', id)
redis.call('ZADD', P..'ended', ARGV[4], id)
redis.call('HSET', k, 'status', ARGV[3], 'finished', ARGV[4], 'error', ARGV[5])
redis.call('HDEL', k, 'pin', 'resume')
redis.call('PEXPIRE', k, ARGV[7])
return 1
`)

// releaseScript hands a job held by ARGV[2] back: queued (a drain) or
// paused until ARGV[4] (its owner's engine time is spent, ARGV[5] why).
// A job pinned to its instance stays pinned when ARGV[6] is 1 (a pause:
// its WebSocket still follows it).
// ARGV: id, pod, status, resume, error, keep pin.
var releaseScript = redis.NewScript(`
local k, lk = KEYS[1]..'job:'..ARGV[1], KEYS[1]..'lease:'..ARGV[1]
if redis.call('GET', lk) ~= ARGV[2] then return 0 end
redis.call('DEL', lk)
redis.call('HSET', k, 'status', ARGV[3], 'resume', ARGV[4], 'error', ARGV[5])
if ARGV[6] ~= '1' then redis.call('HDEL', k, 'pin') end
return 1
`)

// cancelScript asks job ARGV[1] of owner ARGV[2] to end: "nf" (not the
// owner's, or gone), "ended" (nothing to do), "held" (its holder will see
// the flag), or "claimed": nobody held it, and ARGV[3] now does, to end it.
// A queued job pinned to a live instance is left to it, like a held one.
// ARGV: id, owner, pod, lease ms.
var cancelScript = redis.NewScript(`
local P, id = KEYS[1], ARGV[1]
local k = P..'job:'..id
local v = redis.call('HMGET', k, 'owner', 'pin')
if v[1] ~= ARGV[2] then return 'nf' end
if not redis.call('ZSCORE', P..'active', id) then return 'ended' end
redis.call('HSET', k, 'cancel', '1')
if v[2] and v[2] ~= '' and v[2] ~= ARGV[3] and redis.call('EXISTS', P..'pod:'..v[2]) == 1 then return 'held' end
if redis.call('SET', P..'lease:'..id, ARGV[3], 'NX', 'PX', ARGV[4]) then return 'claimed' end
return 'held'
`)

func (s *store) run(sc *redis.Script, args ...any) (any, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	return sc.Run(ctx, s.cl, []string{s.p}, args...).Result()
}

// runRetry is run for a change that must not be lost (a position's result,
// a job's end or hand-back): a failure to reach Redis is tried again, with
// a growing pause, for up to twice the lease (an outage of a few seconds:
// the lease is still this instance's, or nobody took it meanwhile). Only
// then is the error returned.
func (s *store) runRetry(sc *redis.Script, args ...any) (any, error) {
	giveUp := time.Now().Add(2 * s.lease)
	pause := 50 * time.Millisecond
	for {
		v, err := s.run(sc, args...)
		if err == nil || errors.Is(err, redis.Nil) || time.Now().Add(pause).After(giveUp) {
			return v, err
		}
		time.Sleep(pause)
		pause = min(2*pause, time.Second)
	}
}

func (s *store) start(j *job, need int64, cfg *Config, now time.Time, pin bool) (string, error) {
	sr := storedRequest{Engine: j.engine,
		Limits: limitsJSON{MoveTimeMS: j.limits.MoveTimeMS, Depth: j.limits.Depth, Nodes: j.limits.Nodes}, Thresholds: j.th}
	j.g.store(&sr)
	if j.notation {
		n := j.g.g.Notation()
		sr.KIF, sr.SAN = n == "kif", n == "san"
	}
	req, _ := json.Marshal(sr)
	p := ""
	if pin {
		p = s.pod
	}
	v, err := s.run(startScript, j.id, j.client, need, cfg.MaxPerClient, cfg.MaxJobs, cfg.MaxBytesPerClient, cfg.MaxBytes,
		now.UnixMilli(), cfg.Keep.Milliseconds(), cfg.MaxKept, string(req), p, j.follow.Milliseconds())
	str, _ := v.(string)
	return str, err
}

// claim takes the next job nobody holds; "" when there is none.
func (s *store) claim() (string, error) {
	v, err := s.run(claimScript, s.pod, s.lease.Milliseconds(), time.Now().UnixMilli(), (s.pauseCheck + time.Minute).Milliseconds())
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	str, _ := v.(string)
	return str, err
}

// renew renews the leases of ids and says, for each, whether it is lost
// (-1), to be cancelled (1), abandoned (2) or none of these (0); it marks
// this instance alive.
func (s *store) renew(ids []string) ([]int64, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	pipe := s.cl.Pipeline()
	pipe.Set(ctx, s.p+"pod:"+s.pod, "1", s.lease)
	cmds := make([]*redis.Cmd, len(ids))
	for i, id := range ids {
		cmds[i] = renewScript.Run(ctx, pipe, []string{s.p}, id, s.pod, s.lease.Milliseconds())
	}
	if _, err := pipe.Exec(ctx); err != nil {
		// A script not yet loaded answers NOSCRIPT in a pipeline: load it
		// and try again once.
		if !strings.HasPrefix(err.Error(), "NOSCRIPT") {
			return nil, err
		}
		renewScript.Load(ctx, s.cl)
		return s.renew(ids)
	}
	out := make([]int64, len(ids))
	for i, c := range cmds {
		out[i], _ = c.Int64()
	}
	return out, nil
}

// touch notes that owner read job id (a followed job's grace starts
// again).
func (s *store) touch(id, owner string) error {
	_, err := s.run(touchScript, id, owner)
	return err
}

// gone marks this instance gone: its pinned jobs are free for others.
func (s *store) gone() {
	ctx, cancel := s.ctx()
	defer cancel()
	s.cl.Del(ctx, s.p+"pod:"+s.pod)
}

func (s *store) put(id string, ply int, r *result) (bool, error) {
	v, err := s.runRetry(putScript, id, s.pod, s.lease.Milliseconds(), ply, encodeResult(r))
	n, _ := v.(int64)
	return n == 1, err
}

func errJSON(why *errorJSON) string {
	if why == nil {
		return ""
	}
	b, _ := json.Marshal(why)
	return string(b)
}

// errIncomplete is end's answer when a job would end done with a
// position's result missing from the store.
var errIncomplete = errors.New("games: a position's result is missing from the store")

// end records job id's end (plies: its last ply); errIncomplete when the
// status is done and a result is missing from the store.
func (s *store) end(id, status string, why *errorJSON, real int64, keep time.Duration, plies int) error {
	now := time.Now()
	v, err := s.runRetry(endScript, id, s.pod, status, now.UnixMilli(), errJSON(why), real, (keep + time.Minute).Milliseconds(), plies)
	if n, _ := v.(int64); err == nil && n == 2 {
		return errIncomplete
	}
	return err
}

func (s *store) release(id, status string, resume time.Time, why *errorJSON, keepPin bool) error {
	r := ""
	if !resume.IsZero() {
		r = ms(resume)
	}
	pin := "0"
	if keepPin {
		pin = "1"
	}
	_, err := s.runRetry(releaseScript, id, s.pod, status, r, errJSON(why), pin)
	return err
}

func (s *store) cancel(id, owner string) (string, error) {
	v, err := s.run(cancelScript, id, owner, s.pod, s.lease.Milliseconds())
	str, _ := v.(string)
	return str, err
}

// charge marks search key of job id as charged to its owner; false when
// it was already (the search is done again after a loss: free).
func (s *store) charge(id, key string) bool {
	ctx, cancel := s.ctx()
	defer cancel()
	pipe := s.cl.TxPipeline()
	first := pipe.HSetNX(ctx, s.key(id), "c:"+key, "1")
	pipe.HIncrBy(ctx, s.key(id), "n:"+key, 1)
	if _, err := pipe.Exec(ctx); err != nil {
		return true // Redis failed: charge as without it
	}
	return first.Val()
}

// uncharge forgets a charge that was refused (the budget was spent).
func (s *store) uncharge(id, key string) {
	ctx, cancel := s.ctx()
	defer cancel()
	s.cl.HDel(ctx, s.key(id), "c:"+key)
}

func (s *store) close() error { return s.cl.Close() }
