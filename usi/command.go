package usi

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Command is a message from the GUI (us) to the engine. Line validates every
// value and returns the command as one line without the trailing newline, or
// an error wrapping ErrBadCommand. A line from Line never contains a control
// character, so it cannot smuggle a second command to the engine.
type Command interface {
	Line() (string, error)
}

// USI is "usi", the first command: the engine answers with id, option and usiok.
type USI struct{}

// Debug is "debug on" or "debug off".
type Debug struct{ On bool }

// IsReady is "isready", answered by "readyok".
type IsReady struct{}

// SetOption is "setoption name <Name> [value <Value>]". An empty Value sends
// no value clause, as for a button; to set a string option to the empty
// string, use the value "<empty>" (or Engine.SetOption, which does that).
//
// USI forbids spaces in option names, but fairy-stockfish uses them ("Skill
// Level"), so single inner spaces are accepted; the word "value" is not, in
// the name, because the engine would take it for the start of the value.
type SetOption struct {
	Name  string
	Value string
}

// Register is "register later" or "register name <Name> code <Code>".
type Register struct {
	Later bool
	Name  string
	Code  string
}

// USINewGame is "usinewgame" (the dialect's new-game word: "ucinewgame" in UCI).
type USINewGame struct{}

// Position is "position startpos|sfen <SFEN> [moves <Moves>...]" (USI) or
// "position startpos|fen <FEN> [moves ...]" (UCI). An empty SFEN (FEN), or
// "startpos", means the starting position; only the field of the engine's
// dialect may be set.
type Position struct {
	SFEN  string
	FEN   string
	Moves []string
}

// NewPosition is a position command's payload in the dialect whose
// position keyword is word ("fen": UCI's FEN; any other: the SFEN field,
// which also carries an othello position token).
func NewPosition(word, start string, moves []string) Position {
	if word == DialectUCI.PositionWord {
		return Position{FEN: start, Moves: moves}
	}
	return Position{SFEN: start, Moves: moves}
}

// StartSFEN is the start position (USI's "startpos") written as SFEN, for
// engines that misread "startpos".
const StartSFEN = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"

// Go is "go" with its parameters. Zero values are not sent, except for the
// clock (see Clock), so Go{} is a plain "go". Times are sent in whole
// milliseconds.
type Go struct {
	Ponder    bool   // "go ponder": search on the opponent's time until ponderhit or stop
	Clock     *Clock // btime/wtime and byoyomi or binc/winc
	MovesToGo int
	Depth     int
	Nodes     int64
	MoveTime  time.Duration
	Infinite  bool
	// Mate asks for a mate search: in USI "go mate <ms>", or "go mate
	// infinite" when MateTime is 0, answered by "checkmate"; in UCI "go
	// mate <MateMoves>", answered by bestmove. It cannot be combined with
	// the other parameters.
	Mate        bool
	MateTime    time.Duration
	MateMoves   int
	SearchMoves []string
	// Pass says that the side to move has no square to play and must pass
	// (othello; the caller's rules know). In a dialect with a pass command
	// (UOI) Engine.Go sends "pass <position>" instead of position and go,
	// and the search ends at once with "bestmove pass"; elsewhere it
	// changes nothing (a USI-X engine answers "bestmove pass" itself).
	Pass bool
}

// Clock is the time part of a go command. BTime and WTime are always sent.
// Following Shogidokoro, byoyomi and increments are never sent together: with
// an increment "binc <ms> winc <ms>" is sent, otherwise "byoyomi <ms>" (also
// when it is 0).
type Clock struct {
	BTime, WTime time.Duration
	Byoyomi      time.Duration
	BInc, WInc   time.Duration
}

// Stop is "stop".
type Stop struct{}

// PonderHit is "ponderhit".
type PonderHit struct{}

// GameResult is the word after "gameover", from the engine's point of view.
type GameResult string

// Game results.
const (
	Win  GameResult = "win"
	Lose GameResult = "lose"
	Draw GameResult = "draw"
)

// GameOver is "gameover win|lose|draw".
type GameOver struct{ Result GameResult }

// Quit is "quit".
type Quit struct{}

func (USI) Line() (string, error)        { return "usi", nil }
func (IsReady) Line() (string, error)    { return "isready", nil }
func (USINewGame) Line() (string, error) { return "usinewgame", nil }
func (Stop) Line() (string, error)       { return "stop", nil }
func (PonderHit) Line() (string, error)  { return "ponderhit", nil }
func (Quit) Line() (string, error)       { return "quit", nil }

func (d Debug) Line() (string, error) {
	if d.On {
		return "debug on", nil
	}
	return "debug off", nil
}

func (g GameOver) Line() (string, error) {
	switch g.Result {
	case Win, Lose, Draw:
		return "gameover " + string(g.Result), nil
	}
	return "", fmt.Errorf("%w: gameover result %q, want win, lose or draw", ErrBadCommand, clip(string(g.Result)))
}

func (o SetOption) Line() (string, error) {
	if err := checkText("option name", o.Name); err != nil {
		return "", err
	}
	// The engine reads the name up to the word "value", word by word:
	// whitespace other than single spaces between words (runs, a leading
	// or trailing one, Unicode spaces such as U+00A0) would be folded or
	// split on, so the name would not be the one we meant.
	if hasWord(o.Name, "value") || strings.Join(strings.Fields(o.Name), " ") != o.Name {
		return "", fmt.Errorf("%w: option name %q contains the word value, or whitespace other than single spaces between words", ErrBadCommand, clip(o.Name))
	}
	if o.Value == "" {
		return "setoption name " + o.Name, nil
	}
	if err := checkText("option value", o.Value); err != nil {
		return "", err
	}
	return "setoption name " + o.Name + " value " + o.Value, nil
}

func (r Register) Line() (string, error) {
	if r.Later {
		if r.Name != "" || r.Code != "" {
			return "", fmt.Errorf("%w: register later takes no name or code", ErrBadCommand)
		}
		return "register later", nil
	}
	if r.Name == "" && r.Code == "" {
		return "", fmt.Errorf("%w: register needs later, a name or a code", ErrBadCommand)
	}
	var b strings.Builder
	b.WriteString("register")
	if r.Name != "" {
		if err := checkText("register name", r.Name); err != nil {
			return "", err
		}
		if hasWord(r.Name, "code") {
			return "", fmt.Errorf("%w: register name %q contains the word code", ErrBadCommand, clip(r.Name))
		}
		b.WriteString(" name ")
		b.WriteString(r.Name)
	}
	if r.Code != "" {
		if err := checkText("register code", r.Code); err != nil {
			return "", err
		}
		b.WriteString(" code ")
		b.WriteString(r.Code)
	}
	return b.String(), nil
}

// Line builds the USI position command (see Dialect.PositionLine).
func (p Position) Line() (string, error) { return DialectUSI.PositionLine(p) }

// Line builds the USI go command (see Dialect.GoLine).
func (g Go) Line() (string, error) { return DialectUSI.GoLine(g) }

// appendMillis appends " <d in whole milliseconds>".
func appendMillis(b []byte, d time.Duration) []byte {
	return strconv.AppendInt(append(b, ' '), d.Milliseconds(), 10)
}
