package pgn

import (
	"strconv"
	"strings"
	"time"
)

// Comment commands are the bracketed "[%name args]" that lichess,
// python-chess and ChessBase put in a move's comment: the clock after the
// move ([%clk 0:03:00]), the engine's evaluation of the position after it
// ([%eval 0.17], [%eval #-3], [%eval 0.17,22] with a depth) and the time the
// move took ([%emt 0:00:12]). Those read into a Ply's fields; any other
// command, or one whose arguments are not as written here, stays in the
// comment's text as it is (lichess's arrows [%cal ...] do).

// Eval is an evaluation of the position after a move, from White's side:
// centipawns or a mate in moves (negative: Black mates).
type Eval struct {
	CP    *int
	Mate  *int
	Depth int // 0: not said
}

// takeCommands splits a move's comment into the commands it reads and the
// rest of the text: the pieces around the commands, trimmed, joined by a
// space. It reads the text once: a "[%" whose "]" is far away is looked
// for once, not once per "[%" (a comment of many "[%" would be quadratic).
func takeCommands(text string, p *Ply) string {
	if !strings.Contains(text, "[%") {
		return text
	}
	var rest []string
	from, i, close := 0, 0, -1
	for {
		k := strings.Index(text[i:], "[%")
		if k < 0 {
			break
		}
		i += k
		if close < i {
			c := strings.IndexByte(text[i:], ']')
			if c < 0 {
				break // no command can close
			}
			close = i + c
		}
		if readCommand(text[i+2:close], p) {
			if s := strings.TrimSpace(text[from:i]); s != "" {
				rest = append(rest, s)
			}
			from, i = close+1, close+1
			continue
		}
		i += 2
	}
	if s := strings.TrimSpace(text[from:]); s != "" {
		rest = append(rest, s)
	}
	return strings.Join(rest, " ")
}

// readCommand reads "name args" (the inside of "[%name args]") into p and
// reports whether it is one of the commands read.
func readCommand(c string, p *Ply) bool {
	name, arg, ok := strings.Cut(c, " ")
	if !ok || arg == "" || strings.ContainsAny(arg, " \t\r\n") {
		return false
	}
	switch name {
	case "clk", "emt":
		d, ok := readClock(arg)
		if !ok {
			return false
		}
		if name == "clk" {
			p.Clock = &d
		} else {
			p.Elapsed = &d
		}
		return true
	case "eval":
		e, ok := readEval(arg)
		if ok {
			p.Eval = &e
		}
		return ok
	}
	return false
}

// maxClock bounds a clock or a move's time (CSA's 10^9 s).
const maxClock = 1_000_000_000 * time.Second

// readClock reads H:MM:SS with an optional fraction of up to three digits
// (0:03:00, 1:05:02.5).
func readClock(s string) (time.Duration, bool) {
	hms, frac, hasFrac := strings.Cut(s, ".")
	parts := strings.Split(hms, ":")
	if len(parts) != 3 || len(parts[1]) != 2 || len(parts[2]) != 2 || hasFrac && (frac == "" || len(frac) > 3) {
		return 0, false
	}
	h, okH := digits(parts[0], 6)
	m, okM := digits(parts[1], 2)
	sec, okS := digits(parts[2], 2)
	if !okH || !okM || !okS || m > 59 || sec > 59 {
		return 0, false
	}
	d := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second
	if hasFrac {
		f, ok := digits(frac, 3)
		if !ok {
			return 0, false
		}
		for n := len(frac); n < 3; n++ {
			f *= 10
		}
		d += time.Duration(f) * time.Millisecond
	}
	return d, d <= maxClock
}

// digits reads 1..n decimal digits.
func digits(s string, n int) (int, bool) {
	if s == "" || len(s) > n {
		return 0, false
	}
	v := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		v = v*10 + int(s[i]-'0')
	}
	return v, true
}

// maxEvalCP bounds a centipawn evaluation (±1000 pawns), maxMate a mate
// distance.
const (
	maxEvalCP = 100000
	maxMate   = 1000
	maxDepth  = 1000
)

// readEval reads 0.17, -1.5, #3, #-3, each optionally ",depth". A pawn
// value has at most two decimals (centipawns): a finer one stays text.
func readEval(s string) (Eval, bool) {
	var e Eval
	v, depth, hasDepth := strings.Cut(s, ",")
	if hasDepth {
		d, ok := digits(depth, 4)
		if !ok || d == 0 || d > maxDepth {
			return e, false
		}
		e.Depth = d
	}
	if m, ok := strings.CutPrefix(v, "#"); ok {
		neg := strings.HasPrefix(m, "-")
		n, ok := digits(strings.TrimPrefix(m, "-"), 4)
		// #0: mated (the side to move has no move); no -0, no leading zeros.
		if !ok || n > maxMate || neg && m[1] == '0' || !neg && len(m) > 1 && m[0] == '0' {
			return e, false
		}
		if neg {
			n = -n
		}
		e.Mate = &n
		return e, true
	}
	neg := strings.HasPrefix(v, "-")
	v = strings.TrimPrefix(strings.TrimPrefix(v, "-"), "+")
	whole, frac, _ := strings.Cut(v, ".")
	w, ok := digits(whole, 4)
	if !ok || len(whole) > 1 && whole[0] == '0' || len(frac) > 2 || strings.Contains(v, ".") && frac == "" {
		return e, false
	}
	f := 0
	if frac != "" {
		if f, ok = digits(frac, 2); !ok {
			return e, false
		}
		if len(frac) == 1 {
			f *= 10
		}
	}
	cp := w*100 + f
	if cp > maxEvalCP {
		return e, false
	}
	if neg {
		cp = -cp
	}
	e.CP = &cp
	return e, true
}

// commands writes p's commands as lichess does: eval, then clock, then the
// move's time.
func commands(p *Ply) []string {
	var out []string
	if e := p.Eval; e != nil {
		v := ""
		if e.Mate != nil {
			v = "#" + strconv.Itoa(*e.Mate)
		} else if e.CP != nil {
			cp := *e.CP
			sign := ""
			if cp < 0 {
				sign, cp = "-", -cp
			}
			v = sign + strconv.Itoa(cp/100) + "." + strconv.Itoa(cp%100/10) + strconv.Itoa(cp%10)
		}
		if v != "" {
			if e.Depth > 0 {
				v += "," + strconv.Itoa(e.Depth)
			}
			out = append(out, "[%eval "+v+"]")
		}
	}
	if p.Clock != nil {
		out = append(out, "[%clk "+clockText(*p.Clock)+"]")
	}
	if p.Elapsed != nil {
		out = append(out, "[%emt "+clockText(*p.Elapsed)+"]")
	}
	return out
}

// clockText writes H:MM:SS, with the milliseconds when there are any
// (trailing zeros left out: 1:05:02.5).
func clockText(d time.Duration) string {
	ms := d.Milliseconds()
	s := strconv.FormatInt(ms/3_600_000, 10) + ":" + two(ms/60_000%60) + ":" + two(ms/1000%60)
	if f := ms % 1000; f != 0 {
		s += strings.TrimRight("."+strconv.FormatInt(1000+f, 10)[1:], "0")
	}
	return s
}

func two(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}
