// Package game is the seam between usid and the games it serves: a game
// (shogi, chess, othello) is its rules package plus an implementation of
// Game, registered once (package game/builtin does it for the games usid
// ships; the wiring imports it). Everything above the seam — session,
// games, play, server, probe — asks a Game or a Position and imports no
// game's package, as database/sql's users import no driver.
//
// What a game must provide:
//   - its names: the game's Name, the JSON Field its positions come in
//     ("sfen", "fen", ...), the engine Dialect that plays it, its
//     Notation (the request value that adds notation to moves, and the
//     events' field suffix), its variants;
//   - Check: a position and moves parsed and validated with stable codes
//     (internal/rules.Error), giving a Position: everything a search, a
//     game analysis or a game against the engine asks of it (side to move,
//     legality, notation, the cache key and its history rule, the end by
//     the rules, mate proofs, a Match to play on);
//   - the evaluation's side and win-rate curve, what the probe searches,
//     and a verdict for /v1/validate.
//
// Beside them, where the game has them, the optional facets: Handicaps (named
// starts), Records (its record formats read and written:
// /v1/records/parse and /v1/records/export answer what it gives), and on a
// Position, Reached (its engines are told the position reached, not the
// moves) and Forced (a move the rules force that changes nothing on the
// board, othello's pass: no engine is asked about it).
//
// Register, Named, ForDialect and All are safe for concurrent use once the
// registrations (made in init functions) are over. A Game and a Position are
// read-only and safe for concurrent use; a Match belongs to one game in
// progress and is not.
package game

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/usid/usid/internal/rules"
)

// Sides are "b" and "w" in every game: shogi's sente and gote, chess's
// Black and White, othello's Black and White. The clock of side "w" is an
// engine's wtime.
const (
	Black = "b"
	White = "w"
)

// Other is the other side.
func Other(side string) string {
	if side == Black {
		return White
	}
	return Black
}

// Game is one game's rules as usid needs them.
type Game interface {
	// Name is the game's name ("shogi"), as engines' profiles and
	// errors say it.
	Name() string
	// Field is the JSON field a client's position comes in ("sfen").
	Field() string
	// Dialects are the names of the engine protocols that play this game
	// (usi.Dialect's Name: "usi"; "uci"; "usix", "uoi"), the main one
	// first.
	Dialects() []string
	// Keyword introduces a position other than the start in a position
	// command ("sfen" in "position sfen <text> moves ...", "fen").
	Keyword() string
	// Notation is the notation a request may ask for ("kif", "san"), also
	// the suffix of the events' notation fields; "" when the game's moves
	// need none.
	Notation() string
	// Variant normalizes a position's variant ("" for the standard game),
	// or refuses one the game does not know.
	Variant(v string) (string, *rules.Error)
	// StartPosition is the start position's text.
	StartPosition(variant string) string
	// Check parses and validates start ("startpos" or the game's position
	// text, never empty) of variant (normalized) and the moves played from
	// it. A refused move's error has its index.
	Check(start, variant string, moves []string) (Position, *rules.Error)
	// Inspect is /v1/validate's verdict on start and moves (a JSON
	// object: valid, the normalized position, side_to_move, legal_moves,
	// errors, ...), with the moves' notation when notation is set.
	Inspect(start, variant string, moves []string, notation bool) any
	// FirstSide is the side that moves first from the start position; the
	// side evaluations are given from in a game analysis.
	FirstSide() string
	// WinRateScale is the scale of the win-rate curve of the game's
	// engines' centipawns: winrate(cp) = 1/(1+exp(−cp/scale)).
	WinRateScale() float64
	// Probe is what the probe searches to learn an engine of this game.
	Probe() Probe
	// Perft counts the leaf nodes of the move tree of depth from p.
	Perft(p Position, depth int) uint64
}

// Probe is the positions the probe searches (see package probe).
type Probe struct {
	// Middle is out of every opening book, so that an engine has to
	// search it and print info lines.
	Middle string
	// MateInOne is solved by any mate search.
	MateInOne string
	// StartMoves are a few moves from the start position.
	StartMoves []string
	// Won, Lost and Reversed tell the side an engine's scores are from:
	// in each, one side has clearly won (material or discs far beyond what
	// a search could doubt). In Won that side is to move, in Lost the
	// other side is; in Reversed the other side has won and is to move
	// (it tells scores fixed to one side from scores that are the same
	// whoever has won). All have moves to search.
	Won, Lost, Reversed string
}

// Position is a checked position: a start, the moves played from it, and
// the position they reach. Its methods do not change it.
type Position interface {
	Game() Game
	// Variant is the normalized variant ("" for the standard game).
	Variant() string
	// Start is the start as an engine is told it: "startpos" or the
	// normalized position text. Moves are the moves from it, normalized.
	Start() string
	Moves() []string
	// Text is the final position's normalized text.
	Text() string
	// SideToMove is "b" or "w".
	SideToMove() string
	// Key is the final position in the evaluation cache's key: what the
	// rules count (board, side to move, hands; castling, en passant),
	// never the move number; prefixed with the game and variant.
	Key() string
	// Repeats: a position occurs twice in the history (the start and the
	// position after each move), which can change an engine's answer.
	Repeats() bool
	// CheckMove tells whether move is legal in the final position.
	CheckMove(move string) *rules.Error
	// PonderOK: ponder is legal after move.
	PonderOK(move, ponder string) bool
	// CheckLine: every move of line is legal in turn from the final position.
	CheckLine(line []string) error
	// Legal is how many of line's first moves are legal in turn from the
	// final position: an engine's line is shown to clients cut there
	// (the rest is no line of the game).
	Legal(line []string) int
	// Notate writes moves from the final position in the game's
	// notation, cut short at the first illegal one (nil when the game
	// has no notation).
	Notate(line []string) []string
	// NoMove is a best move that means the engine has none to play
	// (resign, win, "(none)").
	NoMove(move string) bool
	// Mate checks a mate search's answer: line is legal and mates
	// within plies (-1: unknown), or the game finishes it to a forced
	// mate within plies. It returns the whole line and how it was proven.
	Mate(line []string, plies int) (full []string, proof string, err error)
	// Ending is how the game ends by the rules at the final position,
	// the history counted: "" while it goes on.
	Ending() Ending
	// Play is the position after move, or why move is illegal.
	Play(move string) (Position, *rules.Error)
	// Match starts a game in progress from this position.
	Match() Match
}

// Handicaps is what a game with handicap starts provides beside Game.
type Handicaps interface {
	// HandicapStart is the start position of the handicap named name,
	// or "" for a name the game does not know (and for the even game).
	HandicapStart(name string) string
}

// Reached is what a position provides whose engines must be told the
// position it reached rather than its start and moves (othello's engines
// misplay a pass inside a move list).
type Reached interface {
	SendReached() bool
}

// Forced is what a position provides whose side to move may be left one
// move that changes nothing on the board (othello's pass when it has no
// square): no engine is asked about such a position (the UOI draft tells
// its engines "pass" rather than "go"); it is worth what the position
// after that move is worth, to the other side.
type Forced interface {
	// Forced is that move when it is the only one, else "".
	Forced() string
}

// Lister is what a position provides whose legal moves can be listed: a
// beginner level's random moves (session.Request.Random) are drawn from
// them.
type Lister interface {
	// LegalMoves are the legal moves of the final position, as engines
	// write them.
	LegalMoves() []string
}

// ForcedMove is p's forced move (Forced), or "".
func ForcedMove(p Position) string {
	if f, ok := p.(Forced); ok {
		return f.Forced()
	}
	return ""
}

// Records is what a game whose records usid reads and writes provides
// beside Game: POST /v1/records/parse and /v1/records/export, and the
// games read from a record (a game analysis), ask it.
type Records interface {
	// Claims tells whether text looks like a record of this game (the
	// default game's records are read when no other game claims a text).
	Claims(text string) bool
	// ReadMain reads the first game of a record: its start ("startpos"
	// or a position text), variant and main line.
	ReadMain(text string, maxMoves int) (start, variant string, moves []string, err *RecordError)
	// Formats are the record formats the game reads (a request's
	// "format"); Export writes the first.
	Formats() []string
	// Parse reads a record of format ("": the game tells its formats
	// apart) into /v1/records/parse's answer (a JSON object: format,
	// position, the final position, header, plies, ...), every move of
	// every line checked; maxMoves bounds all lines together.
	Parse(data []byte, format string, maxMoves int) (any, *RecordError)
	// Export writes g as the game's record: /v1/records/export's answer
	// (a JSON object: the record's text in a field named by its format,
	// "kif", "pgn", ...). Every move of every line is checked (the
	// error's MoveIndex is the move's index in its line); maxMoves bounds
	// all lines together.
	Export(g *RecordGame, maxMoves int) (any, *RecordError)
}

// RecordGame is a game to write as a record, as /v1/records/export takes
// it: what /v1/records/parse answers, from a position of the game.
type RecordGame struct {
	// Start is the game's position text ("" or "startpos": the start),
	// from the request's field of the game (sfen, fen, ...); Variant is
	// normalized by the game's Variant.
	Start   string        `json:"-"`
	Variant string        `json:"variant"`
	Header  *RecordHeader `json:"header"`
	Comment string        `json:"comment"`
	// End is the record's word for the game's end (KIF's resign, a PGN
	// result, ...), or "".
	End   string      `json:"end"`
	Plies []RecordPly `json:"plies"`
	// Final is the position the main line reaches as parse answers it
	// (its final_<field>), or "": checked by Export, not written.
	Final string `json:"-"`
}

// RecordHeader is a record's header as /v1/records/parse answers it and
// /v1/records/export takes it.
type RecordHeader struct {
	Black    string        `json:"black,omitempty"`
	White    string        `json:"white,omitempty"`
	Event    string        `json:"event,omitempty"`
	Date     string        `json:"date,omitempty"`
	Handicap string        `json:"handicap,omitempty"`
	Fields   []RecordField `json:"fields"`
}

// RecordField is a header line (a KIF key, a PGN tag).
type RecordField struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// RecordPly is a move to write, with what the record says of it: a ply of
// /v1/records/parse's answer as it is.
type RecordPly struct {
	Move    string `json:"move"`
	Comment string `json:"comment"`
	// CommentBefore is a comment before a variation's first move (PGN's
	// "({a comment} 1... d5)").
	CommentBefore string `json:"comment_before"`
	TimeMS        *int64 `json:"time_ms"`
	// ClockMS is the mover's clock after the move (PGN's [%clk]).
	ClockMS *int64      `json:"clock_ms"`
	Eval    *RecordEval `json:"eval"`
	// NAGs are PGN's annotation glyphs ($1 = !, ... $6 = ?!, $18, ...).
	NAGs       []int         `json:"nags"`
	Variations [][]RecordPly `json:"variations"`
	// The move in the game's notation, as parse answers it: chess's SAN,
	// shogi's KIF. The move is what is written; a notation is checked
	// against it (CodeRecordMismatch when it names another move), and a
	// notation of another game is refused.
	SAN string `json:"san"`
	KIF string `json:"kif"`
	// Line is the line of the text parse read the move from: read, and
	// not written (a record written anew has its own lines).
	Line int `json:"line"`
}

// CodeRecordMismatch refuses a record to write whose parts disagree: a
// ply's notation naming another move than its move, a position whose
// moves are not the plies', a final position not the one the moves reach.
const CodeRecordMismatch = "record_mismatch"

// Mismatch is a CodeRecordMismatch error.
func Mismatch(moveIndex int, format string, args ...any) *RecordError {
	return &RecordError{Code: CodeRecordMismatch, Message: fmt.Sprintf(format, args...), MoveIndex: moveIndex}
}

// RecordEval is an engine's evaluation of the position after a move, from
// the side that moves first (the game's FirstSide).
type RecordEval struct {
	CP     *int     `json:"cp"`
	Mate   *int     `json:"mate"`
	Depth  int      `json:"depth"`
	PV     []string `json:"pv"`
	Engine string   `json:"engine"`
}

// MaxTimeMS bounds a ply's time in a record to write (10^9 s, CSA's
// bound).
const MaxTimeMS = 1_000_000_000_000

// RecordPosition is a position in a record's answer, in the JSON shape of
// the API's positions: {"<the game's field>": start, "moves": [...],
// "variant"?}.
type RecordPosition struct {
	Field, Start string
	Moves        []string
	Variant      string
}

func (p RecordPosition) MarshalJSON() ([]byte, error) {
	moves := p.Moves
	if moves == nil {
		moves = []string{}
	}
	b := make([]byte, 0, 32+len(p.Start)+8*len(moves))
	b = append(b, '{')
	b = appendField(b, p.Field, p.Start)
	b = append(b, ',')
	b = appendField(b, "moves", moves)
	if p.Variant != "" {
		b = append(b, ',')
		b = appendField(b, "variant", p.Variant)
	}
	return append(b, '}'), nil
}

func appendField(b []byte, k string, v any) []byte {
	kb, _ := json.Marshal(k)
	vb, _ := json.Marshal(v) // strings and string slices
	b = append(b, kb...)
	b = append(b, ':')
	return append(b, vb...)
}

// RecordsFor is the game that reads records of format, with its Records,
// or nil.
func RecordsFor(format string) (Game, Records) {
	for _, g := range All() {
		if r, ok := g.(Records); ok && slices.Contains(r.Formats(), format) {
			return g, r
		}
	}
	return nil, nil
}

// RecordError is a record refused, with a stable code.
type RecordError struct {
	Code      string
	Message   string
	Line      int // 1-based line of the record at fault, or 0
	MoveIndex int // index of the refused move, or -1
}

func (e *RecordError) Error() string { return e.Code + ": " + e.Message }

// RecordsOf is the game whose records text looks like, with its Records:
// the first other game that claims it, else the default game, if it reads
// records.
func RecordsOf(text string) (Game, Records) {
	all := All()
	for i := len(all) - 1; i >= 0; i-- { // the default game last
		if r, ok := all[i].(Records); ok && (i == 0 || r.Claims(text)) {
			return all[i], r
		}
	}
	return nil, nil
}

// Ending is a way a game ends by the rules.
type Ending string

// The endings of games.
const (
	EndNone       Ending = ""
	EndCheckmate  Ending = "checkmate"
	EndStalemate  Ending = "stalemate"
	EndMaterial   Ending = "insufficient_material"
	EndRepetition Ending = "repetition"
	EndFifty      Ending = "fifty_moves"
	// Games decided by counting (othello's discs when neither side can
	// move): the side to move has lost, has won, or it is a draw.
	EndLost Ending = "lost"
	EndWon  Ending = "won"
	EndDraw Ending = "draw"
)

// Result is how a game in progress ended.
type Result struct {
	Winner string // "b", "w", or "" for a draw or an aborted game
	Reason string // checkmate, resign, time, repetition, perpetual_check, ...
	// End is the record's word for the end, where the game's record
	// has one (KIF's mate, illegal_win, ...).
	End    string
	Detail string
}

// Match is a game in progress: its position, its history, the rules of
// its end. It is not safe for concurrent use.
type Match interface {
	// Turn is the side to move.
	Turn() string
	// Check tells whether move is legal for the side to move: its
	// notation, or why not.
	Check(move string) (string, *rules.Error)
	// Play plays a checked move and says how the game ends by the rules
	// after it, or nil while it goes on.
	Play(move string) *Result
	// Over is how the game ends by the rules in the current position, or nil.
	Over() *Result
	// Declare judges a declaration of a win by side (shogi's 入玉宣言);
	// nil: the game has none.
	Declare(side string) *Result
	// CannotWin: side has no way to win on the board (a loss on time
	// against it is a draw).
	CannotWin(side string) bool
	// RecordEnd is the ending of a game that ended as r, as the game's
	// record writes it (KIF's words, a PGN result).
	RecordEnd(r *Result) string
}

var (
	mu    sync.RWMutex
	games []Game
)

// Register adds g; the first registered is the default game (a position
// that names none is of it). It panics on a second game of the same name,
// field or dialect: registrations are made by init functions.
func Register(g Game) {
	mu.Lock()
	defer mu.Unlock()
	for _, h := range games {
		if h.Name() == g.Name() || h.Field() == g.Field() || slices.ContainsFunc(g.Dialects(), func(d string) bool { return slices.Contains(h.Dialects(), d) }) {
			panic("game: " + g.Name() + " registered twice")
		}
	}
	games = append(games, g)
}

// All is the registered games, the default first.
func All() []Game {
	mu.RLock()
	defer mu.RUnlock()
	return slices.Clone(games)
}

// Default is the first registered game, or nil.
func Default() Game {
	mu.RLock()
	defer mu.RUnlock()
	if len(games) == 0 {
		return nil
	}
	return games[0]
}

// Named is the game named name, or nil.
func Named(name string) Game {
	return find(func(g Game) bool { return g.Name() == name })
}

// ByField is the game whose positions come in JSON field f, or nil.
func ByField(f string) Game {
	return find(func(g Game) bool { return g.Field() == f })
}

// ForDialect is the game engines of dialect d play, or nil.
func ForDialect(d string) Game {
	return find(func(g Game) bool { return slices.Contains(g.Dialects(), d) })
}

func find(ok func(Game) bool) Game {
	mu.RLock()
	defer mu.RUnlock()
	for _, g := range games {
		if ok(g) {
			return g
		}
	}
	return nil
}
