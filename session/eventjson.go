package session

import (
	"strconv"
	"unicode/utf8"
)

// The info event's JSON, written by hand: info events are most of what a
// session sends (one per engine line), and encoding/json's reflection,
// with its allocations, was a visible part of delivering one (issue 38).
// The bytes are exactly encoding/json's for the same event (same field
// order, omitempty, string escaping with HTML characters escaped): the
// tests compare the two on fixed and fuzzed events. Any event that is not
// a plain info (a field outside infoFields set, a score with Points) goes
// through encoding/json.

// AppendJSON appends the event's JSON (as MarshalJSON writes it) to b.
// A caller that keeps b between events encodes without allocating.
func (e *Event) AppendJSON(b []byte) ([]byte, error) {
	if e.plainInfo() {
		return e.appendInfo(b), nil
	}
	j, err := e.MarshalJSON()
	return append(b, j...), err
}

// plainInfo reports whether appendInfo writes this event: an info event
// whose fields other than the info ones are all unset. (TestEventFields
// fails when a field is added to Event without being sorted here.)
func (e *Event) plainInfo() bool {
	return e.Type == EventInfo &&
		(e.Score == nil || e.Score.Points == nil) &&
		e.Name == "" && e.USIName == "" && len(e.Restored) == 0 && e.Position == 0 && len(e.Probing) == 0 &&
		e.Move == "" && e.MoveKIF == "" && e.MoveSAN == "" && e.PonderMv == "" && len(e.Emulated) == 0 && len(e.Capped) == 0 &&
		!e.LimitedByBudget && !e.Book && !e.Unscored && e.Result == "" && len(e.Moves) == 0 && len(e.MovesKIF) == 0 &&
		len(e.MovesSAN) == 0 && e.Verified == "" && e.Code == "" && e.Message == "" && e.MoveIndex == nil &&
		e.Value == "" && e.Job == "" && e.Progress == nil && len(e.Positions) == 0 && e.Status == "" &&
		len(e.Summary) == 0 && len(e.Play) == 0
}

// appendInfo writes a plainInfo event's fields in Event's order.
func (e *Event) appendInfo(b []byte) []byte {
	b = append(b, `{"type":`...)
	b = appendJSONString(b, e.Type)
	if e.ID != "" {
		b = append(b, `,"id":`...)
		b = appendJSONString(b, e.ID)
	}
	b = appendIntField(b, `,"multipv":`, int64(e.MultiPV))
	b = appendIntField(b, `,"depth":`, int64(e.Depth))
	b = appendIntField(b, `,"seldepth":`, int64(e.SelDepth))
	if s := e.Score; s != nil {
		b = append(b, `,"score":{`...)
		n := len(b)
		if s.CP != nil {
			b = append(b, `"cp":`...)
			b = strconv.AppendInt(b, int64(*s.CP), 10)
		}
		if s.Mate != nil {
			b = appendComma(b, n)
			b = append(b, `"mate":`...)
			b = strconv.AppendInt(b, int64(*s.Mate), 10)
		}
		if s.MateSign != "" {
			b = appendComma(b, n)
			b = append(b, `"mate_sign":`...)
			b = appendJSONString(b, s.MateSign)
		}
		if s.Scale != "" {
			b = appendComma(b, n)
			b = append(b, `"scale":`...)
			b = appendJSONString(b, s.Scale)
		}
		b = append(b, '}')
	}
	if e.Bound != "" {
		b = append(b, `,"bound":`...)
		b = appendJSONString(b, e.Bound)
	}
	b = appendIntField(b, `,"nodes":`, e.Nodes)
	b = appendIntField(b, `,"nps":`, e.NPS)
	b = appendIntField(b, `,"time_ms":`, e.TimeMS)
	b = appendIntField(b, `,"hashfull":`, int64(e.Hashfull))
	b = appendStringsField(b, `,"pv":`, e.PV)
	b = appendStringsField(b, `,"pv_kif":`, e.PVKIF)
	b = appendStringsField(b, `,"pv_san":`, e.PVSAN)
	if len(e.WDL) > 0 {
		b = append(b, `,"wdl":[`...)
		for i, v := range e.WDL {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(v), 10)
		}
		b = append(b, ']')
	}
	if e.Text != "" {
		b = append(b, `,"string":`...)
		b = appendJSONString(b, e.Text)
	}
	if e.Cached {
		b = append(b, `,"cached":true`...)
	}
	return append(b, '}')
}

// appendComma separates an object's members: one is needed unless b has
// grown no further than n, the position just after the object's '{'.
func appendComma(b []byte, n int) []byte {
	if len(b) > n {
		return append(b, ',')
	}
	return b
}

func appendIntField(b []byte, key string, v int64) []byte {
	if v == 0 {
		return b // omitempty
	}
	b = append(b, key...)
	return strconv.AppendInt(b, v, 10)
}

func appendStringsField(b []byte, key string, ss []string) []byte {
	if len(ss) == 0 {
		return b // omitempty
	}
	b = append(b, key...)
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

const hexDigits = "0123456789abcdef"

// jsonSafe: the ASCII bytes a JSON string holds as they are (encoding/json's
// htmlSafeSet).
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONString quotes s as encoding/json does: HTML characters (<, >,
// &) and U+2028, U+2029 escaped as \u sequences, control characters as
// \n, \r, \t, \b, \f or \u00XX, and invalid UTF-8 as \ufffd.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
