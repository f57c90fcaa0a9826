package usi

import (
	"math"
	"strconv"
	"strings"
)

// Message is a line from the engine, parsed by ParseMessage. The concrete
// types are ID, Option, USIOK, ReadyOK, BestMove, Checkmate, Info,
// CopyProtection, Registration and ScoreScale (values, not pointers).
// String prints the message back in canonical USI form (moves in usid's
// notation).
type Message interface {
	String() string
	message()
}

// ID is "id name <x>" or "id author <x>"; one line sets one field.
// Engine.ID merges both.
type ID struct {
	Name   string
	Author string
}

// OptionType is the type of an engine option.
type OptionType string

// Option types.
const (
	TypeCheck    OptionType = "check"
	TypeSpin     OptionType = "spin"
	TypeCombo    OptionType = "combo"
	TypeButton   OptionType = "button"
	TypeString   OptionType = "string"
	TypeFilename OptionType = "filename"
)

// Option is "option name <id> type <t> [default <x>] [min <n>] [max <n>]
// [var <v>]...", an option the engine advertises during the handshake.
// An empty default (written "<empty>") is "".
type Option struct {
	Name    string // may hold spaces, as fairy-stockfish's "Skill Level"
	Type    OptionType
	Default string
	Min     int64 // for spin, when HasMin (engines advertise up to int64's max: NodesLimit)
	Max     int64 // for spin, when HasMax
	HasMin  bool
	HasMax  bool
	Vars    []string // for combo
}

// USIOK is "usiok", the end of the handshake.
type USIOK struct{}

// ReadyOK is "readyok", the answer to "isready".
type ReadyOK struct{}

// Special best moves (Shogidokoro).
const (
	MoveResign = "resign" // the engine resigns
	MoveWin    = "win"    // the engine declares an entering-king win
)

// BestMove is "bestmove <move> [ponder <move>]" or "bestmove resign|win",
// the end of a search. Move is a USI move, MoveResign or MoveWin; Ponder is
// empty or a USI move.
type BestMove struct {
	Move   string
	Ponder string
}

// MateResult is the outcome of a "go mate" search.
type MateResult string

// Outcomes of a "go mate" search. MateFound is not a USI word: the engine
// sends the moves themselves.
const (
	MateFound          MateResult = "mate"
	NoMate             MateResult = "nomate"
	MateTimeout        MateResult = "timeout"
	MateNotImplemented MateResult = "notimplemented"
)

// Checkmate is "checkmate <moves>|nomate|timeout|notimplemented", the end of
// a "go mate" search. Moves is set only for MateFound.
type Checkmate struct {
	Result MateResult
	Moves  []string
}

// CopyProtection is "copyprotection checking|ok|error".
type CopyProtection struct{ Status string }

// Registration is "registration checking|ok|error".
type Registration struct{ Status string }

// InfoField is a bit set of the fields an info line carried.
type InfoField uint32

// Info fields.
const (
	InfoDepth InfoField = 1 << iota
	InfoSelDepth
	InfoTime
	InfoNodes
	InfoPV
	InfoMultiPV
	InfoScore
	InfoCurrMove
	InfoCurrMoveNumber
	InfoHashfull
	InfoNPS
	InfoCPULoad
	InfoString
	InfoRefutation
	InfoCurrLine
	InfoWDL
)

// Info is an "info" line: search progress. Fields tells which of the other
// fields the line carried, so that "depth 0" and "no depth" differ.
type Info struct {
	Fields         InfoField
	Depth          int
	SelDepth       int
	Time           int64 // milliseconds searched
	Nodes          int64
	NPS            int64
	MultiPV        int // 1 for the best line; 0 when absent
	Score          Score
	PV             []string
	CurrMove       string
	CurrMoveNumber int
	Hashfull       int    // per mille
	CPULoad        int    // per mille
	Text           string // "string <text>": free text to the end of the line
	Refutation     []string
	CurrLine       []string
	CurrLineCPU    int // 0 when the line named no cpu
	// WDL is UCI's "wdl <w> <d> <l>": the engine's win, draw and loss
	// chances in per mille, from its side.
	WDL [3]int
}

// Has reports whether the line carried field f.
func (in *Info) Has(f InfoField) bool { return in.Fields&f != 0 }

// Bound says whether a score is exact or a bound.
type Bound uint8

// Score bounds.
const (
	Exact      Bound = iota
	LowerBound       // "lowerbound": the score is at least this
	UpperBound       // "upperbound": the score is at most this
)

// Score is "score cp <x>" or "score mate <y>|+|-", from the engine's side.
type Score struct {
	Mate bool // Value counts plies to mate; negative: the engine is mated
	// Value is centipawns, or plies to mate when Mate; for a Scaled score,
	// Points in hundredths, rounded ("score 4.1" is 410, as centipawns are
	// hundredths of a pawn).
	Value int
	// Scaled: a bare score ("score 41.0", USI-X and UOI), Points in the
	// engine's declared scale (Engine.ScoreScale), larger better for the
	// engine. Engine clamps it to that scale (ScoreScale.Clamp).
	Scaled bool
	Points float64
	// MateSign is '+' or '-' for "score mate +" and "score mate -": the
	// engine sees a mate but not its length. Value is then 0.
	MateSign byte
	Bound    Bound
}

func (ID) message()             {}
func (Option) message()         {}
func (USIOK) message()          {}
func (ReadyOK) message()        {}
func (BestMove) message()       {}
func (Checkmate) message()      {}
func (Info) message()           {}
func (CopyProtection) message() {}
func (Registration) message()   {}

// ParseMessage parses one line from the engine. Leading unknown words are
// skipped, as USI asks ("joho debug on" is "debug on"); so are unknown tokens
// inside a line (fairy-stockfish's "tbhits 0"). Any run of spaces, tabs and
// other control characters separates tokens, and a trailing CR is ignored. A
// line with no known message, or a message that cannot be made sense of
// (a bestmove without a move), returns an error wrapping ErrSyntax.
func ParseMessage(line string) (Message, error) { return DialectUSI.ParseMessage(line) }

// ParseMessage parses one line from an engine of dialect d, as the package
// ParseMessage does for USI. In UCI, "uciok" is the USIOK message, moves
// are UCI moves, "bestmove (none)" (or "0000") has the move MoveNone, and
// there is no "checkmate". The othello dialects' differences (bare scores,
// scoretype, pass and resign, loose id lines, untyped options, comments,
// UOI's squares renamed into USI-X's) are the Dialect's fields.
func (d *Dialect) ParseMessage(line string) (Message, error) {
	if d.isComment(line) {
		return nil, syntaxError("a comment", line)
	}
	sc := scanner{s: line, d: d}
	for {
		tok := sc.next()
		switch tok {
		case "":
			return nil, syntaxError("no USI message", line)
		case "info":
			return parseInfo(&sc), nil
		case "bestmove":
			return parseBestMove(&sc, line, d)
		case "checkmate":
			if !d.MateInMoves {
				return parseCheckmate(&sc, line)
			}
		case "id":
			return parseID(&sc, line, d.LooseID)
		case "option":
			return parseOption(&sc, line, d.UntypedOptions)
		case "scoretype":
			if d.ScoreQuery != "" {
				return parseScoreScale(&sc, line)
			}
		case d.HelloOK:
			return USIOK{}, nil
		case "readyok":
			return ReadyOK{}, nil
		case "copyprotection":
			if s, ok := parseStatus(&sc); ok {
				return CopyProtection{Status: s}, nil
			}
			return nil, syntaxError("copyprotection status is not checking, ok or error", line)
		case "registration":
			if s, ok := parseStatus(&sc); ok {
				return Registration{Status: s}, nil
			}
			return nil, syntaxError("registration status is not checking, ok or error", line)
		}
	}
}

type syntaxErr struct{ msg, line string }

func (e *syntaxErr) Error() string {
	return "usi: unrecognized engine message: " + e.msg + ": " + strconv.Quote(clip(e.line))
}
func (e *syntaxErr) Unwrap() error { return ErrSyntax }

func syntaxError(msg, line string) error { return &syntaxErr{msg, line} }

// scanner splits a line into tokens without allocating: tokens are substrings
// of the line. Every byte up to ' ' separates tokens.
type scanner struct {
	s string
	i int
	d *Dialect
}

// move consumes the next token if it is a move of the dialect, and returns
// it in usid's notation.
func (sc *scanner) move() (string, bool) {
	i := sc.i
	tok := sc.next()
	if !sc.d.IsMove(tok) {
		sc.i = i
		return "", false
	}
	if sc.d.EngineMove != nil {
		tok = sc.d.EngineMove(tok)
	}
	return tok, true
}

func (sc *scanner) skipSpace() {
	for sc.i < len(sc.s) && sc.s[sc.i] <= ' ' {
		sc.i++
	}
}

// next returns the next token, or "" at the end of the line.
func (sc *scanner) next() string {
	s, i := sc.s, sc.i // locals: the loops below are the parser's hot path
	for i < len(s) && s[i] <= ' ' {
		i++
	}
	start := i
	for i < len(s) && s[i] > ' ' {
		i++
	}
	sc.i = i
	return s[start:i]
}

// peek returns the next token without consuming it.
func (sc *scanner) peek() string {
	i := sc.i
	tok := sc.next()
	sc.i = i
	return tok
}

// rest returns the rest of the line without surrounding whitespace.
func (sc *scanner) rest() string {
	sc.skipSpace()
	end := len(sc.s)
	for end > sc.i && sc.s[end-1] <= ' ' {
		end--
	}
	r := sc.s[sc.i:end]
	sc.i = len(sc.s)
	return r
}

// moves consumes tokens while they are USI moves. Sequences (pv, refutation,
// currline) end at the end of the line in practice; stopping at the first
// non-move also drops markers such as YaneuraOu's "rep_draw" and lets a known
// keyword after the moves still be read.
func (sc *scanner) moves() []string {
	var out []string
	for {
		tok, ok := sc.move()
		if !ok {
			return out
		}
		if out == nil {
			out = make([]string, 0, sc.maxMovesLeft())
		}
		out = append(out, tok)
	}
}

// maxMovesLeft bounds the number of moves left on the line (a move and its
// separator take at least 5 bytes), to size a slice in one allocation. The
// cap keeps a long line of junk from reserving a huge slice.
func (sc *scanner) maxMovesLeft() int {
	return min((len(sc.s)-sc.i)/5+1, 64)
}

// parseInt parses a decimal integer with an optional sign, without the
// allocations strconv makes for errors. It takes the whole int64 range
// (engines advertise spin options up to 9223372036854775807) and refuses
// anything that would overflow.
func parseInt(s string) (int64, bool) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" || len(s) > 19 {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0') // 19 digits fit in a uint64
	}
	switch {
	case !neg && n > math.MaxInt64, neg && n > math.MaxInt64+1:
		return 0, false
	case neg:
		return -int64(n), true // for MinInt64, two's complement gives it back
	}
	return int64(n), true
}

// number consumes the next token if it is a non-negative integer.
func (sc *scanner) number() (int64, bool) {
	i := sc.i
	tok := sc.next()
	if n, ok := parseInt(tok); ok && tok[0] != '-' {
		return n, true
	}
	sc.i = i
	return 0, false
}

func parseInfo(sc *scanner) Info {
	var in Info
	for {
		tok := sc.next()
		// A field whose value is missing or malformed is left unset and the
		// token that followed it is read as the next field.
		switch tok {
		case "":
			return in
		case "depth":
			if n, ok := sc.number(); ok {
				in.Depth, in.Fields = int(n), in.Fields|InfoDepth
			}
		case "seldepth":
			if n, ok := sc.number(); ok {
				in.SelDepth, in.Fields = int(n), in.Fields|InfoSelDepth
			}
		case "time":
			if n, ok := sc.number(); ok {
				in.Time, in.Fields = n, in.Fields|InfoTime
			}
		case "nodes":
			if n, ok := sc.number(); ok {
				in.Nodes, in.Fields = n, in.Fields|InfoNodes
			}
		case "nps":
			if n, ok := sc.number(); ok {
				in.NPS, in.Fields = n, in.Fields|InfoNPS
			}
		case "multipv":
			if n, ok := sc.number(); ok {
				in.MultiPV, in.Fields = int(n), in.Fields|InfoMultiPV
			}
		case "currmovenumber":
			if n, ok := sc.number(); ok {
				in.CurrMoveNumber, in.Fields = int(n), in.Fields|InfoCurrMoveNumber
			}
		case "hashfull":
			if n, ok := sc.number(); ok {
				in.Hashfull, in.Fields = int(n), in.Fields|InfoHashfull
			}
		case "cpuload":
			if n, ok := sc.number(); ok {
				in.CPULoad, in.Fields = int(n), in.Fields|InfoCPULoad
			}
		case "score":
			parseScore(sc, &in)
		case "lowerbound":
			in.Score.Bound = LowerBound
		case "upperbound":
			in.Score.Bound = UpperBound
		case "pv":
			if sc.d.BareScores && sc.peek() == "None" {
				sc.next() // UOI: a score without a pv
				continue
			}
			in.PV, in.Fields = sc.moves(), in.Fields|InfoPV
		case "currmove":
			if m, ok := sc.move(); ok {
				in.CurrMove, in.Fields = m, in.Fields|InfoCurrMove
			}
		case "refutation":
			in.Refutation, in.Fields = sc.moves(), in.Fields|InfoRefutation
		case "currline":
			in.CurrLineCPU = 0
			if n, ok := sc.number(); ok {
				in.CurrLineCPU = int(n)
			}
			in.CurrLine, in.Fields = sc.moves(), in.Fields|InfoCurrLine
		case "string":
			in.Text, in.Fields = sc.rest(), in.Fields|InfoString
		case "wdl":
			i := sc.i
			var w [3]int
			ok := true
			for k := range w {
				n, good := sc.number()
				w[k], ok = int(n), ok && good
			}
			if ok {
				in.WDL, in.Fields = w, in.Fields|InfoWDL
			} else {
				sc.i = i
			}
		}
	}
}

func parseScore(sc *scanner, in *Info) {
	i := sc.i
	kind, val := sc.next(), sc.next()
	switch kind {
	case "cp":
		if n, ok := parseInt(val); ok {
			in.Score = Score{Value: int(n), Bound: in.Score.Bound}
			in.Fields |= InfoScore
			return
		}
	case "mate":
		if val == "+" || val == "-" {
			in.Score = Score{Mate: true, MateSign: val[0], Bound: in.Score.Bound}
			in.Fields |= InfoScore
			return
		}
		if n, ok := parseInt(val); ok {
			in.Score = Score{Mate: true, Value: int(n), Bound: in.Score.Bound}
			in.Fields |= InfoScore
			return
		}
	}
	if sc.d.BareScores {
		if f, ok := parseScoreNumber(kind); ok {
			sc.i = i
			sc.next()
			in.Score = Score{Scaled: true, Points: f, Value: roundScore(f), Bound: in.Score.Bound}
			in.Fields |= InfoScore
			return
		}
	}
	sc.i = i // not a score: read the tokens again as fields
}

func parseBestMove(sc *scanner, line string, d *Dialect) (Message, error) {
	m, ok := sc.move()
	if !ok {
		m = sc.next()
	}
	switch {
	case ok:
	case (d.GameOver || d.Resign) && m == MoveResign, d.GameOver && m == MoveWin:
	case !d.GameOver && (m == MoveNone || m == "0000"):
		m = MoveNone
	default:
		return nil, syntaxError("bestmove without a move", line)
	}
	bm := BestMove{Move: m}
	for {
		switch sc.next() {
		case "":
			return bm, nil
		case "ponder":
			if p, ok := sc.move(); ok {
				bm.Ponder = p
			}
		}
	}
}

func parseCheckmate(sc *scanner, line string) (Message, error) {
	switch tok := sc.peek(); MateResult(tok) {
	case NoMate, MateTimeout, MateNotImplemented:
		return Checkmate{Result: MateResult(tok)}, nil
	}
	moves := sc.moves()
	if len(moves) == 0 {
		return nil, syntaxError("checkmate without moves or result", line)
	}
	// A mate line is the whole answer: anything after it (a "resign", a
	// token that is not a move) makes the answer unreadable, not shorter.
	if sc.peek() != "" {
		return nil, syntaxError("data after the mate line", line)
	}
	return Checkmate{Result: MateFound, Moves: moves}, nil
}

// parseID reads an id line; loose, "id auther" is the author and an empty
// value is an ID that says nothing.
func parseID(sc *scanner, line string, loose bool) (Message, error) {
	field := sc.next()
	if loose && field == "auther" {
		field = "author"
	}
	if field != "name" && field != "author" {
		return nil, syntaxError("unknown id field", line)
	}
	val := sc.rest()
	switch {
	case val == "" && !loose:
		return nil, syntaxError("empty id", line)
	case field == "name":
		return ID{Name: val}, nil
	}
	return ID{Author: val}, nil
}

func parseStatus(sc *scanner) (string, bool) {
	switch s := sc.next(); s {
	case "checking", "ok", "error":
		return s, true
	}
	return "", false
}

func isOptionType(s string) bool {
	switch OptionType(s) {
	case TypeCheck, TypeSpin, TypeCombo, TypeButton, TypeString, TypeFilename:
		return true
	}
	return false
}

// isOptionKeyword reports whether tok starts a new clause of an option line.
func isOptionKeyword(tok string) bool {
	return tok == "default" || tok == "min" || tok == "max" || tok == "var"
}

// words collects tokens up to the next option keyword (or the end of the
// line), joined by single spaces.
func (sc *scanner) words() string {
	var b strings.Builder
	for {
		tok := sc.peek()
		if tok == "" || isOptionKeyword(tok) {
			return b.String()
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(sc.next())
	}
}

func parseOption(sc *scanner, line string, untyped bool) (Message, error) {
	if sc.next() != "name" {
		return nil, syntaxError("option without name", line)
	}
	// The name runs up to the first "type" that is followed by a known type:
	// fairy-stockfish sends names with spaces ("Debug Log File"). Untyped
	// (UOI), "default" may end it instead: a string option.
	var name strings.Builder
	var typ string
	for {
		i := sc.i
		tok := sc.next()
		if tok == "" {
			return nil, syntaxError("option without type", line)
		}
		if tok == "type" && isOptionType(sc.peek()) {
			typ = sc.next()
			break
		}
		if untyped && tok == "default" {
			typ, sc.i = string(TypeString), i
			break
		}
		if name.Len() > 0 {
			name.WriteByte(' ')
		}
		name.WriteString(tok)
	}
	if name.Len() == 0 {
		return nil, syntaxError("option with an empty name", line)
	}
	o := Option{Name: name.String(), Type: OptionType(typ)}
	for {
		switch sc.next() {
		case "":
			return o, nil
		case "default":
			if o.Type == TypeString || o.Type == TypeFilename {
				o.Default = sc.rest() // a path or text may hold spaces
			} else {
				o.Default = sc.words()
			}
			if o.Default == "<empty>" {
				o.Default = ""
			}
		case "min":
			if n, ok := parseInt(sc.peek()); ok {
				sc.next()
				o.Min, o.HasMin = n, true
			}
		case "max":
			if n, ok := parseInt(sc.peek()); ok {
				sc.next()
				o.Max, o.HasMax = n, true
			}
		case "var":
			o.Vars = append(o.Vars, sc.words())
		}
	}
}

// String methods print messages back in canonical form.

func (m ID) String() string {
	if m.Name != "" {
		return "id name " + m.Name
	}
	return "id author " + m.Author
}

func (o Option) String() string {
	var b strings.Builder
	b.WriteString("option name ")
	b.WriteString(o.Name)
	b.WriteString(" type ")
	b.WriteString(string(o.Type))
	text := o.Type == TypeString || o.Type == TypeFilename
	if !text && o.Default != "" {
		b.WriteString(" default ")
		b.WriteString(o.Default)
	}
	if o.HasMin {
		b.WriteString(" min ")
		b.WriteString(strconv.FormatInt(o.Min, 10))
	}
	if o.HasMax {
		b.WriteString(" max ")
		b.WriteString(strconv.FormatInt(o.Max, 10))
	}
	for _, v := range o.Vars {
		b.WriteString(" var ")
		b.WriteString(v)
	}
	if text {
		// Last, because a text default runs to the end of the line.
		b.WriteString(" default ")
		if o.Default == "" {
			b.WriteString("<empty>")
		} else {
			b.WriteString(o.Default)
		}
	}
	return b.String()
}

func (USIOK) String() string   { return "usiok" }
func (ReadyOK) String() string { return "readyok" }

func (m BestMove) String() string {
	if m.Ponder != "" {
		return "bestmove " + m.Move + " ponder " + m.Ponder
	}
	return "bestmove " + m.Move
}

func (m Checkmate) String() string {
	if m.Result == MateFound {
		return "checkmate " + strings.Join(m.Moves, " ")
	}
	return "checkmate " + string(m.Result)
}

func (m CopyProtection) String() string { return "copyprotection " + m.Status }
func (m Registration) String() string   { return "registration " + m.Status }

func (in Info) String() string {
	b := make([]byte, 0, 128)
	b = append(b, "info"...)
	num := func(f InfoField, key string, v int64) {
		if in.Fields&f != 0 {
			b = append(b, ' ')
			b = append(b, key...)
			b = append(b, ' ')
			b = strconv.AppendInt(b, v, 10)
		}
	}
	seq := func(moves []string) {
		for _, m := range moves {
			b = append(b, ' ')
			b = append(b, m...)
		}
	}
	num(InfoDepth, "depth", int64(in.Depth))
	num(InfoSelDepth, "seldepth", int64(in.SelDepth))
	num(InfoMultiPV, "multipv", int64(in.MultiPV))
	if in.Has(InfoScore) {
		switch {
		case in.Score.Scaled:
			b = append(append(b, " score "...), formatScore(in.Score.Points)...)
		case !in.Score.Mate:
			b = strconv.AppendInt(append(b, " score cp "...), int64(in.Score.Value), 10)
		case in.Score.MateSign != 0:
			b = append(append(b, " score mate "...), in.Score.MateSign)
		default:
			b = strconv.AppendInt(append(b, " score mate "...), int64(in.Score.Value), 10)
		}
	}
	switch in.Score.Bound {
	case LowerBound:
		b = append(b, " lowerbound"...)
	case UpperBound:
		b = append(b, " upperbound"...)
	}
	if in.Has(InfoCurrMove) {
		b = append(append(b, " currmove "...), in.CurrMove...)
	}
	num(InfoCurrMoveNumber, "currmovenumber", int64(in.CurrMoveNumber))
	num(InfoNodes, "nodes", in.Nodes)
	num(InfoNPS, "nps", in.NPS)
	num(InfoHashfull, "hashfull", int64(in.Hashfull))
	num(InfoCPULoad, "cpuload", int64(in.CPULoad))
	num(InfoTime, "time", in.Time)
	if in.Has(InfoWDL) {
		b = append(b, " wdl"...)
		for _, v := range in.WDL {
			b = strconv.AppendInt(append(b, ' '), int64(v), 10)
		}
	}
	if in.Has(InfoRefutation) {
		b = append(b, " refutation"...)
		seq(in.Refutation)
	}
	if in.Has(InfoCurrLine) {
		b = append(b, " currline"...)
		if in.CurrLineCPU != 0 {
			b = strconv.AppendInt(append(b, ' '), int64(in.CurrLineCPU), 10)
		}
		seq(in.CurrLine)
	}
	if in.Has(InfoPV) {
		b = append(b, " pv"...)
		seq(in.PV)
	}
	if in.Has(InfoString) {
		// Last: the string runs to the end of the line.
		b = append(b, " string"...)
		if in.Text != "" {
			b = append(append(b, ' '), in.Text...)
		}
	}
	return string(b)
}

// FromOtherSide is the score as the other side sees it: its number
// negated (a bare score reflected within scale, when there is one: a win
// probability p of 0..100 becomes 100−p), a mate's sign turned, its bound
// turned (at least x is at most −x). An engine whose scores are from the
// side that just moved (package probe learns it) has them turned so.
func (s Score) FromOtherSide(scale *ScoreScale) Score {
	s.Value = -s.Value
	switch s.MateSign {
	case '+':
		s.MateSign = '-'
	case '-':
		s.MateSign = '+'
	}
	if s.Scaled {
		if scale != nil && scale.Max > scale.Min {
			s.Points = scale.Min + scale.Max - s.Points
		} else {
			s.Points = -s.Points
		}
		s.Value = roundScore(s.Points)
	}
	switch s.Bound {
	case LowerBound:
		s.Bound = UpperBound
	case UpperBound:
		s.Bound = LowerBound
	}
	return s
}

// FromOtherSide is the line as the other side sees it: its score
// (Score.FromOtherSide) and its win and loss chances swapped.
func (in *Info) FromOtherSide(scale *ScoreScale) {
	if in.Has(InfoScore) {
		in.Score = in.Score.FromOtherSide(scale)
	}
	if in.Has(InfoWDL) {
		in.WDL[0], in.WDL[2] = in.WDL[2], in.WDL[0]
	}
}
