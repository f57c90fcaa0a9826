package quota

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// UsageRecord is the fair queue's record of clients' recent engine time,
// shared in Redis by every usid using the same server (pool.UsageExchange):
// one hash per engine kind and client (v: seconds, t: Redis's TIME when v
// was counted), expiring ten half-lives after its last addition, when what
// it holds has decayed below a thousandth. Safe for concurrent use; it uses
// the Redis store's client and is closed with it.
type UsageRecord struct {
	r      *Redis
	prefix string
}

// UsageRecord returns the shared usage record kept next to r's balances,
// under prefix (default "usid:fair:").
func (r *Redis) UsageRecord(prefix string) *UsageRecord {
	if prefix == "" {
		prefix = "usid:fair:"
	}
	return &UsageRecord{r: r, prefix: prefix}
}

// usageScript adds to some clients' records and reads others', each
// decayed to Redis's clock, in one step. KEYS: the records; the first
// ARGV[2] of them are added ARGV[2+i] seconds. ARGV[1]: the half-life in
// seconds. It returns every key's value, as strings.
var usageScript = redis.NewScript(`
local now = redis.call('TIME')
local t = tonumber(now[1]) + tonumber(now[2]) / 1e6
local hl, nadd = tonumber(ARGV[1]), tonumber(ARGV[2])
local function get(k)
  local v = redis.call('HMGET', k, 'v', 't')
  local x, at = tonumber(v[1]), tonumber(v[2])
  if x == nil or at == nil then return 0 end
  return x * 2 ^ (-(t - at) / hl)
end
local out = {}
for i = 1, #KEYS do
  local v = get(KEYS[i])
  if i <= nadd then
    v = v + tonumber(ARGV[2 + i])
    redis.call('HSET', KEYS[i], 'v', string.format('%.17g', v), 't', string.format('%.17g', t))
    redis.call('PEXPIRE', KEYS[i], math.ceil(hl * 10000))
  end
  out[i] = string.format('%.17g', v)
end
return out
`)

// Exchange implements pool.UsageExchange.
func (u *UsageRecord) Exchange(ctx context.Context, kind string, halfLife time.Duration, add map[string]float64, ask []string) (map[string]float64, error) {
	if !u.r.up() {
		return nil, errors.New("quota: redis is left alone after a failure")
	}
	keys := make([]string, 0, len(add)+len(ask))
	ids := make([]string, 0, len(add)+len(ask))
	args := []any{strconv.FormatFloat(halfLife.Seconds(), 'g', -1, 64), len(add)}
	for id, sec := range add {
		keys, ids = append(keys, u.prefix+kind+":"+id), append(ids, id)
		args = append(args, strconv.FormatFloat(sec, 'g', -1, 64))
	}
	for _, id := range ask {
		if _, dup := add[id]; !dup {
			keys, ids = append(keys, u.prefix+kind+":"+id), append(ids, id)
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	res, err := usageScript.Run(ctx, u.r.cl, keys, args...).StringSlice()
	if err != nil {
		return nil, err
	}
	if len(res) != len(ids) {
		return nil, errors.New("quota: unexpected answer from the usage script")
	}
	out := make(map[string]float64, len(ids))
	for i, id := range ids {
		v, err := strconv.ParseFloat(res[i], 64)
		if err != nil {
			return nil, err
		}
		out[id] = v
	}
	return out, nil
}
