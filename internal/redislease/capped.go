package redislease

import (
	"context"
	"errors"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// Capped reads: anyone able to write to the Redis can store anything
// there, so every hash usid reads back is measured on the server first
// and nothing over its bounds is ever sent (a 20 MB value costs Redis an
// HSTRLEN, not usid 20 MB and its parsing).

// Caps bound a hash as ReadHash reads it back.
type Caps struct {
	Fields int            // at most this many fields (more: ErrTooMany, nothing read)
	Value  int            // bytes of a field's value
	Named  map[string]int // other bounds for these fields
}

// ErrTooMany is ReadHash's answer for a hash of more fields than its Caps.
var ErrTooMany = errors.New("a stored hash of more fields than usid writes")

// Hash is what ReadHash read: the fields within their bounds, and the
// names of those over them (their values were not sent).
type Hash struct {
	Values map[string]string
	Over   []string
}

// maxFieldName bounds a field's name: longer names are left out.
const maxFieldName = 32

// capsScript reads hash KEYS[1]. ARGV: the most fields, a value's bound,
// the number n of named bounds, n pairs (field, bound), then the fields to
// read (none: every field). Answer: 0 (no such hash), 1 (too many fields)
// or 2 followed by (field, value) pairs, value false for a field over its
// bound; missing fields and names over 32 bytes are left out.
var capsScript = redis.NewScript(`
local k = KEYS[1]
if redis.call('TYPE', k).ok ~= 'hash' then return {0} end
if redis.call('HLEN', k) > tonumber(ARGV[1]) then return {1} end
local def, n = tonumber(ARGV[2]), tonumber(ARGV[3])
local caps = {}
for i = 4, 3 + 2 * n, 2 do caps[ARGV[i]] = tonumber(ARGV[i + 1]) end
local names = {}
for i = 4 + 2 * n, #ARGV do names[#names + 1] = ARGV[i] end
if #names == 0 then names = redis.call('HKEYS', k) end
local out = {2}
for _, f in ipairs(names) do
  local len = redis.call('HSTRLEN', k, f)
  if string.len(f) <= ` + strconv.Itoa(maxFieldName) + ` and (len > 0 or redis.call('HEXISTS', k, f) == 1) then
    out[#out + 1] = f
    if len <= (caps[f] or def) then out[#out + 1] = redis.call('HGET', k, f) else out[#out + 1] = false end
  end
end
return out
`)

// ReadHash reads fields of hash key (every field when none are named)
// within caps. A missing key (or one not a hash) reads as nil Values.
func ReadHash(ctx context.Context, c redis.Scripter, key string, caps Caps, fields ...string) (Hash, error) {
	args := make([]any, 0, 3+2*len(caps.Named)+len(fields))
	args = append(args, caps.Fields, caps.Value, len(caps.Named))
	for f, n := range caps.Named {
		args = append(args, f, n)
	}
	for _, f := range fields {
		args = append(args, f)
	}
	v, err := capsScript.Run(ctx, c, []string{key}, args...).Slice()
	if err != nil {
		return Hash{}, err
	}
	var h Hash
	if len(v) == 0 {
		return h, nil
	}
	switch n, _ := v[0].(int64); n {
	case 0:
		return h, nil
	case 1:
		return h, ErrTooMany
	}
	h.Values = make(map[string]string, (len(v)-1)/2)
	for i := 1; i+1 < len(v); i += 2 {
		f, _ := v[i].(string)
		if s, ok := v[i+1].(string); ok {
			h.Values[f] = s
		} else {
			h.Over = append(h.Over, f)
		}
	}
	return h, nil
}
