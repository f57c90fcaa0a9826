// The othello dialects: USI-X (USI's words over an othello board, what the
// public othello engines speak) and the UOI draft it grew from.

package usi

import (
	"fmt"
	"strconv"
	"strings"
)

// MovePass is the othello move of a side with no square to play; it is a
// move in USI-X move lists and pvs, and an answer to go ("bestmove pass").
const MovePass = "pass"

// StartOthello is the othello start position in USI-X's writing.
const StartOthello = "---------------------------OX------XO---------------------------B1"

// DialectUSIX is USI-X, othello version (Yua Hyodo's "USI-X protocol,
// othello version", spec 1), as the public othello engines speak it: USI's
// words (usi/usiok, isready, usinewgame, "position startpos|sfen <pos>
// moves ...", go, bestmove, ponderhit) over an othello board.
//
//   - A square is a file letter a-h (left to right) and a rank digit 1-8
//     (top to bottom), lower case: a1 is the top left corner. "pass" is a
//     move too, in move lists and as an answer; "bestmove resign" resigns.
//   - A position is one token without spaces (CheckOthelloPosition): the 64
//     cells a1 b1 ... h1 a2 ... h8 ('X' black, 'O' white, '-' empty), 'B' or
//     'W' for the side to move, and optionally the move number. Engines read
//     the first 65 characters and crash on a position written with spaces,
//     so the token is checked before it is sent; the othello GUIs always
//     write "moves", also before an empty list, and so does PositionLine.
//   - go has btime, wtime, binc, winc, byoyomi, nodes, infinite and ponder
//     (no movetime, depth or mate); movetime and depth, which some engines
//     take (usid's own), are sent only where the probe found them taken
//     (TriedGo); other parameters are refused.
//   - Scores are bare numbers ("info score 41.0") in the scale the engine
//     declares when asked "score_scale_and_type" ("scoretype stones min -64
//     max 64"); Engine asks after the handshake (Engine.ScoreScale).
//   - The GUIs send no gameover (engines ignore it or crash): Engine.GameOver
//     sends nothing.
//   - Engines write "id auther" and empty id values.
var DialectUSIX = &Dialect{
	Name: "usix", Hello: "usi", HelloOK: "usiok", NewGame: "usinewgame", PositionWord: "sfen",
	IsMove: IsOthelloMove, CheckPosition: CheckOthelloPosition, Byoyomi: true,
	GoParams: []string{"btime", "wtime", "binc", "winc", "byoyomi", "nodes", "infinite", "ponder"},
	TriedGo:  []string{"depth", "movetime"},
	Resign:   true, MovesAlways: true, ScoreQuery: "score_scale_and_type", BareScores: true, LooseID: true,
}

// DialectUOI is the UOI draft (Universal Othello Interface v0.0.3, 2022, by
// the author of USI-X, who later renamed it USI-X): no public engine speaks
// it, but an engine written to the draft is served.
//
//   - uoi/uoiok, uoinewgame; "score scale and type" (with spaces) is
//     answered by scoretype as in USI-X; options may come without a type
//     ("option name use_book default true": a string option).
//   - "position <ofen>" without moves (PositionOnly): the caller sends the
//     position reached, in USI-X's writing; PositionLine turns it into the
//     ofen (OFEN) and writes the start position out.
//   - Squares are transposed: the draft's letter is the row, its digit the
//     column, so its "d3" is USI-X's "c4" (TransposeSquare, applied to every
//     move read from the engine).
//   - An engine whose side must pass gets "pass <ofen>" instead of go
//     (Go.Pass).
//   - go has btime, wtime, binc, winc and infinite only.
//   - "gameover black_win|white_win|draw by resign|double_pass|abnormal
//     bstone N wstone N" (Engine.GameOverStones); "gameover win|lose|draw"
//     is not sent.
//   - "info score S pv m1 m2", "pv None" for no pv; a line starting with '#'
//     is a comment.
var DialectUOI = &Dialect{
	Name: "uoi", Hello: "uoi", HelloOK: "uoiok", NewGame: "uoinewgame",
	IsMove: IsOthelloMove, CheckPosition: CheckOthelloPosition,
	GoParams: []string{"btime", "wtime", "binc", "winc", "infinite"},
	Resign:   true, PositionOnly: true, StartPosition: StartOthello, EnginePosition: OFEN,
	EngineMove: TransposeSquare, PassCommand: true, ScoreQuery: "score scale and type", BareScores: true,
	LooseID: true, UntypedOptions: true, Comments: true, StoneGameOver: true,
}

// IsOthelloMove reports whether s is an othello move in form: a square a1..h8
// in lower case, or "pass". It does not check legality.
func IsOthelloMove(s string) bool {
	return s == MovePass || isOthelloSquare(s)
}

func isOthelloSquare(s string) bool {
	return len(s) == 2 && 'a' <= s[0] && s[0] <= 'h' && '1' <= s[1] && s[1] <= '8'
}

// CheckOthelloPosition returns an error wrapping ErrBadCommand unless pos is an
// othello position token in form: 64 cells of 'X', 'O' or '-', then 'B' or
// 'W', then optionally a move number of 1 to 4 digits, with no space. It
// does not check that the position can be reached.
func CheckOthelloPosition(pos string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: othello position %q: %s", ErrBadCommand, clip(pos), why)
	}
	if len(pos) < 65 {
		return bad("want 64 cells and the side to move")
	}
	for i := 0; i < 64; i++ {
		if c := pos[i]; c != 'X' && c != 'O' && c != '-' {
			return bad(fmt.Sprintf("bad cell %q at %d", c, i))
		}
	}
	if pos[64] != 'B' && pos[64] != 'W' {
		return bad("side to move must be B or W")
	}
	if n := pos[65:]; n != "" && (len(n) > 4 || !isNumber(n)) {
		return bad("bad move number")
	}
	return nil
}

// OFEN writes an othello position token that passed CheckOthelloPosition as
// the UOI draft's ofen: the same 64 cells with white as '0' (zero), then the
// side to move, and no move number (65 characters). The cells keep their
// order: both writings list the top row first, left to right; the draft
// only names the squares otherwise (TransposeSquare).
func OFEN(pos string) string {
	b := []byte(pos[:65])
	for i := range 64 {
		if b[i] == 'O' {
			b[i] = '0'
		}
	}
	return string(b)
}

// FromOFEN reads a UOI ofen back as a USI-X position token (without a move
// number), or fails with ErrBadCommand.
func FromOFEN(ofen string) (string, error) {
	if len(ofen) != 65 {
		return "", fmt.Errorf("%w: ofen %q: want 65 characters", ErrBadCommand, clip(ofen))
	}
	b := []byte(ofen)
	for i := range 64 {
		switch b[i] {
		case '0':
			b[i] = 'O'
		case 'X', '-':
		default:
			return "", fmt.Errorf("%w: ofen %q: bad cell %q at %d", ErrBadCommand, clip(ofen), b[i], i)
		}
	}
	if b[64] != 'B' && b[64] != 'W' {
		return "", fmt.Errorf("%w: ofen %q: side to move must be B or W", ErrBadCommand, clip(ofen))
	}
	return string(b), nil
}

// transposed[i] is the square i (file i%8, rank i/8) named the other way.
var transposed = func() (t [64]string) {
	for i := range t {
		t[i] = string([]byte{'a' + byte(i/8), '1' + byte(i%8)})
	}
	return t
}()

// TransposeSquare renames a square between USI-X's naming (letter the
// column, digit the row) and the UOI draft's (letter the row, digit the
// column): "c4" and "d3" are the same square, each in the other's naming.
// It is its own inverse and leaves anything that is not a square ("pass",
// "resign") as it is. It does not allocate.
func TransposeSquare(s string) string {
	if !isOthelloSquare(s) {
		return s
	}
	return transposed[int(s[0]-'a')+8*int(s[1]-'1')]
}

// ScoreType is the kind of scale an engine's scores are in.
type ScoreType string

// Score types (USI-X, UOI). Engines write "stones" as well as the
// specification's "stone"; both read as ScoreStones.
const (
	ScoreStones ScoreType = "stone" // the final disc difference
	ScoreWP     ScoreType = "WP"    // a win probability
	ScoreOther  ScoreType = "other"
)

// ScoreScale is "scoretype <type> min <a> max <b>", the engine's answer to
// the dialect's ScoreQuery: what its bare scores (Score.Scaled) measure,
// larger meaning better for the engine, and their range.
type ScoreScale struct {
	Type     ScoreType
	Min, Max float64
}

func (ScoreScale) message() {}

func (s ScoreScale) String() string {
	return "scoretype " + string(s.Type) + " min " + formatScore(s.Min) + " max " + formatScore(s.Max)
}

// Clamp bounds a bare score to the scale. A score outside it (a won position
// reported as 10000 on a scale of ±100) becomes the scale's end it passed,
// as a bound: at least Max (LowerBound) or at most Min (UpperBound).
func (s ScoreScale) Clamp(sc Score) Score {
	if !sc.Scaled || s.Max <= s.Min {
		return sc
	}
	switch {
	case sc.Points > s.Max:
		sc.Points = s.Max
		if sc.Bound != UpperBound {
			sc.Bound = LowerBound
		}
	case sc.Points < s.Min:
		sc.Points = s.Min
		if sc.Bound != LowerBound {
			sc.Bound = UpperBound
		}
	default:
		return sc
	}
	sc.Value = roundScore(sc.Points)
	return sc
}

func parseScoreScale(sc *scanner, line string) (Message, error) {
	var s ScoreScale
	switch t := sc.next(); t {
	case "stone", "stones":
		s.Type = ScoreStones
	case "WP", "wp":
		s.Type = ScoreWP
	case "other":
		s.Type = ScoreOther
	default:
		return nil, syntaxError("unknown score type", line)
	}
	var haveMin, haveMax bool
	for {
		switch tok := sc.next(); tok {
		case "":
			if !haveMin || !haveMax || s.Min >= s.Max {
				return nil, syntaxError("scoretype without min < max", line)
			}
			return s, nil
		case "min":
			s.Min, haveMin = parseScoreNumber(sc.next())
		case "max":
			s.Max, haveMax = parseScoreNumber(sc.next())
		default:
			return nil, syntaxError("unknown scoretype field", line)
		}
	}
}

// maxScoreLen and maxScore bound a bare score: no engine needs more, and
// such a number prints back in no more characters than it was read from.
const (
	maxScoreLen = 24
	maxScore    = 1e15
)

// parseScoreNumber reads a bare score: an optional sign, digits, and
// optionally a point and more digits ("41", "-73.0", "10000"). Exponents,
// "inf" and "nan" are refused.
func parseScoreNumber(s string) (float64, bool) {
	if s == "" || len(s) > maxScoreLen {
		return 0, false
	}
	i := 0
	if s[0] == '-' || s[0] == '+' {
		i++
	}
	digits, point := 0, false
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case isDigit(c):
			digits++
		case c == '.' && !point:
			point = true
		default:
			return 0, false
		}
	}
	if digits == 0 {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f > maxScore || f < -maxScore {
		return 0, false
	}
	if f == 0 {
		f = 0 // no negative zero: it would print back as "-0"
	}
	return f, true
}

// formatScore prints a bare score the shortest way that reads back the same.
func formatScore(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// roundScore is a bare score as Score.Value: in hundredths, as centipawns
// are (41.0 is 4100), rounded, and within ±1e9.
func roundScore(f float64) int {
	f *= 100
	switch {
	case f > 1e9:
		return 1e9
	case f < -1e9:
		return -1e9
	case f < 0:
		return -int(-f + 0.5)
	}
	return int(f + 0.5)
}

// StoneResult is the first word of UOI's gameover: who won.
type StoneResult string

// UOI game results.
const (
	BlackWin  StoneResult = "black_win"
	WhiteWin  StoneResult = "white_win"
	StoneDraw StoneResult = "draw"
)

// StoneReason is why a UOI game ended.
type StoneReason string

// UOI game-end reasons: a resignation, two passes in a row (also a full
// board), anything else.
const (
	ByResign     StoneReason = "resign"
	ByDoublePass StoneReason = "double_pass"
	ByAbnormal   StoneReason = "abnormal"
)

// GameOverStones is UOI's "gameover <result> by <reason> bstone N wstone N".
type GameOverStones struct {
	Result       StoneResult
	Reason       StoneReason
	Black, White int // discs on the board at the end
}

// Line builds the command, or fails with ErrBadCommand.
func (g GameOverStones) Line() (string, error) {
	switch g.Result {
	case BlackWin, WhiteWin, StoneDraw:
	default:
		return "", fmt.Errorf("%w: gameover result %q, want black_win, white_win or draw", ErrBadCommand, clip(string(g.Result)))
	}
	switch g.Reason {
	case ByResign, ByDoublePass, ByAbnormal:
	default:
		return "", fmt.Errorf("%w: gameover reason %q, want resign, double_pass or abnormal", ErrBadCommand, clip(string(g.Reason)))
	}
	if g.Black < 0 || g.White < 0 || g.Black+g.White > 64 {
		return "", fmt.Errorf("%w: gameover with %d black and %d white discs", ErrBadCommand, g.Black, g.White)
	}
	return "gameover " + string(g.Result) + " by " + string(g.Reason) +
		" bstone " + strconv.Itoa(g.Black) + " wstone " + strconv.Itoa(g.White), nil
}

// isComment reports whether line is a comment in d.
func (d *Dialect) isComment(line string) bool {
	return d.Comments && strings.HasPrefix(strings.TrimLeft(line, " \t"), "#")
}
