package pgn

import (
	"fmt"
	"time"

	"github.com/usid/usid/chess"
)

// Codes of this package's errors; moves and start positions refused by the
// rules carry package chess's codes.
const (
	CodeSyntax  chess.Code = "pgn_syntax"      // a token or structure PGN does not have
	CodeTag     chess.Code = "pgn_tag"         // a malformed or repeated tag pair
	CodeResult  chess.Code = "pgn_result"      // the termination marker contradicts the Result tag
	CodeVariant chess.Code = "pgn_variant"     // a Variant tag other than standard chess or Chess960
	CodeEmpty   chess.Code = "pgn_empty"       // no game in the text
	CodeTooLong chess.Code = "record_too_long" // a game has more moves, all lines together, than allowed
)

// MaxDepth bounds how deep variations nest.
const MaxDepth = 64

// DefaultMaxPlies bounds the moves of a game, all its lines together,
// when ParseMax is given no bound.
const DefaultMaxPlies = 10000

// Game is one game: its tags, where it starts, its moves and result.
type Game struct {
	Tags []Tag // in the order read
	// Comment is a comment before the first move (or of a game without moves).
	Comment string
	Moves   []Ply  // the main line
	Result  string // "1-0", "0-1", "1/2-1/2" or "*"
}

// Tag is a tag pair such as [White "Carlsen"].
type Tag struct {
	Name, Value string
}

// Ply is one move of a line, with what the text says about it.
type Ply struct {
	Move chess.Move
	SAN  string // canonical SAN, whatever the text wrote
	// Before is a comment before the move; only the first move of a
	// variation has one (elsewhere a comment belongs to the move before).
	Before string
	// Comment is the text of the comments after the move, joined by a
	// space, without the commands read into Clock, Elapsed and Eval.
	Comment string
	NAGs    []int
	Clock   *time.Duration // [%clk]: the mover's clock after the move
	Elapsed *time.Duration // [%emt]: the time the move took
	Eval    *Eval          // [%eval]: the position after the move
	// Variations are alternatives to this move, each a line from the
	// position before it.
	Variations [][]Ply
}

// Tag returns the value of the named tag, or "".
func (g *Game) Tag(name string) string {
	for _, t := range g.Tags {
		if t.Name == name {
			return t.Value
		}
	}
	return ""
}

// Variant returns the chess variant the Variant tag asks for.
func (g *Game) Variant() (chess.Variant, error) {
	switch v := g.Tag("Variant"); v {
	case "", "Standard", "standard", "Chess", "chess", "From Position", "from position":
		return chess.Standard, nil
	case "Chess960", "chess960", "chess 960", "Chess 960", "Fischerandom", "fischerandom":
		return chess.Chess960, nil
	default:
		return 0, fmt.Errorf("variant %q is not standard chess or Chess960", v)
	}
}

// Start returns the position the game starts from: the FEN tag's, or the
// standard start.
func (g *Game) Start() (*chess.Position, []*chess.Error) {
	v, err := g.Variant()
	if err != nil {
		return nil, []*chess.Error{{Code: CodeVariant, Message: err.Error(), MoveIndex: -1}}
	}
	fen := g.Tag("FEN")
	if fen == "" {
		if v == chess.Standard {
			p := *standardStart
			return &p, nil
		}
		fen = chess.StartFEN
	}
	return chess.Load(fen, nil, v)
}

// standardStart is the standard start, read once rather than per game: a
// text of many short games would spend most of its time reading it.
var standardStart = chess.Startpos()

// Error is why a text is refused.
type Error struct {
	Line      int // 1-based line of the bad token
	Game      int // index (from 0) of the game in the text
	Code      chess.Code
	Message   string
	MoveIndex int // index of the refused move in its line, or -1
}

func (e *Error) Error() string {
	if e.MoveIndex >= 0 {
		return fmt.Sprintf("line %d: %s: move %d: %s", e.Line, e.Code, e.MoveIndex, e.Message)
	}
	return fmt.Sprintf("line %d: %s: %s", e.Line, e.Code, e.Message)
}
