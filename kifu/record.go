package kifu

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/usid/usid/shogi"
	"golang.org/x/text/encoding/japanese"
)

// Format names a record format.
type Format string

const (
	FormatKIF  Format = "kif"
	FormatKI2  Format = "ki2"
	FormatCSA  Format = "csa"
	FormatUSI  Format = "usi"
	FormatSFEN Format = "sfen"
)

// Codes of this package, for records that cannot be read. Illegal positions
// and moves carry the codes of package shogi instead.
const (
	// CodeRecordEncoding: the text is neither UTF-8 nor Shift_JIS.
	CodeRecordEncoding shogi.Code = "record_encoding"
	// CodeRecordFormat: the text is in none of the formats (or empty).
	CodeRecordFormat shogi.Code = "record_format"
	// CodeRecordSyntax: a line the format does not allow.
	CodeRecordSyntax shogi.Code = "record_syntax"
	// CodeRecordTooLong: more moves (all lines together) than allowed.
	CodeRecordTooLong shogi.Code = "record_too_long"
	// CodeMoveNotation: a move's written piece is not the piece that moves,
	// or (KI2) no legal move fits the notation.
	CodeMoveNotation shogi.Code = "move_notation"
	// CodeMoveAmbiguous: a KI2 move fits several legal moves.
	CodeMoveAmbiguous shogi.Code = "move_ambiguous"
)

// Error is why a record was refused.
type Error struct {
	// Line is the 1-based line of the text where the problem is; 0 when it
	// is about the text as a whole (its encoding, its format).
	Line    int
	Code    shogi.Code
	Message string
	// MoveIndex is the index (from 0) of the refused move in its line (the
	// main line, or a variation from its first move), or -1.
	MoveIndex int
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s: %s", e.Line, e.Code, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func errorf(line int, code shogi.Code, format string, args ...any) *Error {
	return &Error{Line: line, Code: code, Message: fmt.Sprintf(format, args...), MoveIndex: -1}
}

// End says how a line ended, when the record says so.
type End string

const (
	EndResign      End = "resign"       // 投了, %TORYO
	EndAbort       End = "abort"        // 中断, %CHUDAN
	EndRepetition  End = "repetition"   // 千日手, %SENNICHITE
	EndImpasse     End = "impasse"      // 持将棋, %JISHOGI
	EndTimeUp      End = "time_up"      // 切れ負け, %TIME_UP
	EndIllegalWin  End = "illegal_win"  // 反則勝ち, %+ILLEGAL_ACTION / %-ILLEGAL_ACTION
	EndIllegalLoss End = "illegal_loss" // 反則負け, %ILLEGAL_MOVE
	EndMate        End = "mate"         // 詰み, %TSUMI
	EndNoMate      End = "no_mate"      // 不詰, %FUZUMI
	EndDeclareWin  End = "declare_win"  // 入玉勝ち, %KACHI
	EndDraw        End = "draw"         // 引き分け, %HIKIWAKE
)

// Field is one header line: KIF's "key：value", CSA's "$KEY:value" or
// "N+name".
type Field struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Eval is an engine's evaluation of the position after a move, from Black's
// side, for ExportKIF.
type Eval struct {
	CP     *int     // centipawns, from Black's side
	Mate   *int     // moves to mate: positive when Black mates
	Depth  int      // 0 if unknown
	PV     []string // USI moves from the position after the move
	Engine string   // optional
}

// Move is one move of a line.
type Move struct {
	USI string // the move in USI notation, checked legal
	// Line is the line of the text the move was read from (0 for a record
	// built in code).
	Line int
	// Comment is the text of the comment lines after the move, joined by
	// "\n", without their leading "*" (KIF, KI2) or "'" (CSA).
	Comment string
	// TimeMS is the time the move took in milliseconds, or -1 if unknown.
	TimeMS int64
	// Variations are alternatives to this move: each a line that starts
	// with a move played instead of this one.
	Variations [][]Move
	// Eval is written by ExportKIF as "#評価値" comment lines; Parse never
	// sets it.
	Eval *Eval
}

// Record is a game record.
type Record struct {
	Format Format
	// Header holds the header lines in their order, as written.
	Header []Field
	// Black and White are the players (先手/下手 and 後手/上手; CSA N+ and
	// N-), Event the event (棋戦, $EVENT), Date the start date as written
	// (開始日時 or 対局日, $START_TIME), Handicap the KIF 手合割 name of the
	// start position ("平手" for the standard start; empty for a start that
	// is no standard handicap).
	Black, White, Event, Date, Handicap string
	// StartSFEN is the canonical SFEN of the start position.
	StartSFEN string
	// Comment is the text of comment lines before the first move.
	Comment string
	// Moves is the main line: the game.
	Moves []Move
	// End is how the main line ended, if the record says; EndPly the ply of
	// that line where it ended is len(Moves).
	End End
}

// USIMoves returns the main line's moves in USI notation.
func (r *Record) USIMoves() []string {
	out := make([]string, len(r.Moves))
	for i, m := range r.Moves {
		out[i] = m.USI
	}
	return out
}

// Final returns the position after the main line.
func (r *Record) Final() (*shogi.Position, error) {
	p, errs := shogi.Load(r.StartSFEN, r.USIMoves())
	if errs != nil {
		return nil, errs[0]
	}
	return p, nil
}

// CountMoves returns the number of moves of all lines.
func (r *Record) CountMoves() int { return countMoves(r.Moves) }

func countMoves(line []Move) int {
	n := len(line)
	for _, m := range line {
		for _, v := range m.Variations {
			n += countMoves(v)
		}
	}
	return n
}

// Options tune Parse.
type Options struct {
	// Format forces a format; empty detects it.
	Format Format
	// MaxMoves bounds the moves of all lines together (0: 10000).
	MaxMoves int
}

// DefaultMaxMoves is Options.MaxMoves when it is 0.
const DefaultMaxMoves = 10000

// MaxTimeMS is the longest time a move may take, in every format read and
// written (CSA's bound: 10^9 seconds).
const MaxTimeMS = 1e12

// Decode returns data as UTF-8 text: UTF-8 as it is (without a byte order
// mark), anything else read as Shift_JIS (Windows code page 932).
func Decode(data []byte) (string, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if utf8.Valid(data) {
		return string(data), nil
	}
	out, err := japanese.ShiftJIS.NewDecoder().Bytes(data)
	if err != nil || bytes.ContainsRune(out, utf8.RuneError) {
		return "", errorf(0, CodeRecordEncoding, "the text is neither UTF-8 nor Shift_JIS")
	}
	return string(out), nil
}

// splitLines splits text into lines without their line ends (LF, CRLF or
// CR).
func splitLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.Split(s, "\n")
}

// Parse reads a game record.
func Parse(data []byte, opt Options) (*Record, error) {
	text, err := Decode(data)
	if err != nil {
		return nil, err
	}
	lines := splitLines(text)
	f := opt.Format
	if f == "" {
		f = Detect(lines)
	}
	max := opt.MaxMoves
	if max <= 0 {
		max = DefaultMaxMoves
	}
	var r *Record
	var perr *Error
	switch f {
	case FormatKIF, FormatKI2:
		r, perr = parseKIF(lines, f, max)
	case FormatCSA:
		r, perr = parseCSA(lines, max)
	case FormatUSI, FormatSFEN:
		r, perr = parseUSI(lines, max)
	case "":
		return nil, errorf(0, CodeRecordFormat, "not a game record: no KIF, KI2, CSA, USI or SFEN found")
	default:
		return nil, errorf(0, CodeRecordFormat, "unknown format %q", f)
	}
	if perr != nil {
		return nil, perr
	}
	if r.Handicap == "" {
		r.Handicap = handicapOf(r.StartSFEN)
	}
	return r, nil
}

// Detect names the format of a record's lines, or "" if it finds none.
func Detect(lines []string) Format {
	first := ""
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" {
			first = t
			break
		}
	}
	if first == "" {
		return ""
	}
	w := strings.Fields(first)[0]
	switch {
	case w == "position" || w == "startpos" || w == "sfen":
		return FormatUSI
	case strings.Count(w, "/") == 8 && len(strings.Fields(first)) >= 3:
		return FormatSFEN
	}
	csa, ki2, bod := false, false, false
	for _, l := range lines {
		t := strings.TrimLeft(l, " \t　")
		switch {
		case strings.HasPrefix(t, "手数----") || isKIFMoveLine(t):
			return FormatKIF
		case isCSALine(l):
			csa = true
		case strings.ContainsAny(t, "▲△☗☖") && ki2MoveStart(t):
			ki2 = true
		case strings.HasPrefix(t, "|") || strings.HasPrefix(t, "+---"):
			bod = true
		}
	}
	switch {
	case csa:
		return FormatCSA
	case ki2:
		return FormatKI2
	case bod:
		return FormatKIF
	}
	return ""
}

// isKIFMoveLine: a move number, spaces, then a move or a terminal word.
func isKIFMoveLine(t string) bool {
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 || i == len(t) || (t[i] != ' ' && t[i] != '\t') {
		return false
	}
	rest := strings.TrimLeft(t[i:], " \t　")
	r, _ := utf8.DecodeRuneInString(rest)
	return strings.ContainsRune("１２３４５６７８９123456789同", r) || endOfKIF(rest) != ""
}

func ki2MoveStart(t string) bool {
	for _, m := range []string{"▲", "△", "☗", "☖"} {
		if i := strings.Index(t, m); i >= 0 {
			r, _ := utf8.DecodeRuneInString(t[i+len(m):])
			if strings.ContainsRune("１２３４５６７８９123456789同", r) {
				return true
			}
		}
	}
	return false
}

func isCSALine(l string) bool {
	switch {
	case l == "PI" || strings.HasPrefix(l, "PI") && len(l) >= 6 && isDigit(l[2]),
		len(l) >= 2 && l[0] == 'P' && (l[1] >= '1' && l[1] <= '9' || l[1] == '+' || l[1] == '-'),
		strings.HasPrefix(l, "V2") || strings.HasPrefix(l, "V3"),
		strings.HasPrefix(l, "N+") || strings.HasPrefix(l, "N-"),
		len(l) >= 7 && (l[0] == '+' || l[0] == '-') && isDigit(l[1]) && isDigit(l[2]) && isDigit(l[3]) && isDigit(l[4]),
		len(l) >= 3 && l[0] == '%' && l[1] >= 'A' && l[1] <= 'Z':
		return true
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
