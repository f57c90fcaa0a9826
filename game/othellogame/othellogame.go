// Package othellogame is othello behind usid's game seam (package game):
// the rules of package othello as a game.Game, played by USI-X engines
// (and by engines written to the UOI draft). Its Game and Positions are
// read-only and safe for concurrent use; a Match is not.
package othellogame

import (
	"errors"
	"strconv"
	"strings"

	"github.com/usid/usid/game"
	"github.com/usid/usid/internal/rules"
	"github.com/usid/usid/othello"
)

// Game is othello.
var Game game.Game = othelloGame{}

type othelloGame struct{}

// winRateScale is the win-rate curve of a disc difference given in
// hundredths of a disc (an engine's "score 4.1" is 410): a lead of ten
// discs is about an 85% win. Othello engines publish no curve; this one is
// a fit by eye to the WZebra-style "discs ahead" evaluation, and only
// orders the verdicts of a game analysis.
const winRateScale = 550

func (othelloGame) Name() string          { return "othello" }
func (othelloGame) Field() string         { return "othello" }
func (othelloGame) Dialects() []string    { return []string{"usix", "uoi"} }
func (othelloGame) Keyword() string       { return "sfen" }
func (othelloGame) Notation() string      { return "" }
func (othelloGame) FirstSide() string     { return game.Black }
func (othelloGame) WinRateScale() float64 { return winRateScale }

func (othelloGame) Variant(v string) (string, *rules.Error) {
	if v != "" {
		return "", rules.Newf("invalid_field", "position.variant: othello has none")
	}
	return "", nil
}

func (othelloGame) StartPosition(string) string { return othello.StartToken }

// middle is a position of the game's middle, out of the opening books:
// sixteen plies of a fixed walk through the legal moves.
var middle = func() string {
	p := othello.Startpos()
	for i := range 16 {
		ms := p.LegalMoves()
		p.Play(ms[(7*i+3)%len(ms)])
	}
	return p.Token()
}()

// decided is a board Black has won whoever moves, by the exact solution
// of its seven empties (+44 with Black to move, −48 with White to move), on
// which both sides have a move; Reversed, its colours swapped. Few empties
// and a wide margin: any engine sees it, from a greedy one to one that
// solves it. (A board of many empties is no decided position: Black's 35
// discs to 1 with 28 empties was +64 with Black to move, who takes White's
// last disc, and +28 for White to move to usid's own engine.)
const decided = "OXX-XOXX" + "X-XXXXXX" + "XOXX-XXX" + "X-OXXOOX" + "XX-XXX-X" + "X-XXXXXX" + "XXXXXXXX" + "XXXXXXXX"

func (othelloGame) Probe() game.Probe {
	// Othello has no mate search: MateInOne stays empty.
	return game.Probe{Middle: middle, StartMoves: []string{"f5", "d6"}, Won: decided + "B", Lost: decided + "W",
		Reversed: strings.NewReplacer("X", "O", "O", "X").Replace(decided) + "W"}
}

func (othelloGame) Check(start, _ string, moves []string) (game.Position, *rules.Error) {
	sp, err := othello.ParseAny(start)
	if err != nil {
		return nil, err.(*othello.Error)
	}
	if errs := sp.Validate(); errs != nil {
		return nil, errs[0]
	}
	p := &position{start: *sp, pos: *sp, moves: make([]othello.Move, 0, len(moves)), startText: "startpos"}
	if start != "startpos" {
		p.startText = sp.Token()
	}
	for i, s := range moves {
		m, err := p.pos.CheckMove(s)
		if err != nil {
			e := *err.(*othello.Error)
			e.MoveIndex = i
			return nil, &e
		}
		p.pos.Play(m)
		p.moves = append(p.moves, m)
	}
	return p, nil
}

// Inspect is othello's verdict, with checkmate (always false, as in_check
// is) where every game's verdict has it.
// Inspect is othello's verdict in othello's words: no in_check or
// checkmate (the game has neither), game_over and the result by the count.
func (othelloGame) Inspect(start, _ string, moves []string, _ bool) any {
	v := othello.Inspect(start, moves)
	return verdict{Valid: v.Valid, Othello: v.Othello, SideToMove: v.SideToMove, LegalMoves: v.LegalMoves,
		GameOver: v.GameOver, Result: v.Result, Errors: v.Errors}
}

// verdict is /v1/validate's answer for an othello position: othello.Verdict
// but for its in_check, always false.
type verdict struct {
	Valid      bool             `json:"valid"`
	Othello    string           `json:"othello"`
	SideToMove string           `json:"side_to_move,omitempty"`
	LegalMoves []string         `json:"legal_moves"`
	GameOver   bool             `json:"game_over"`
	Result     *othello.Result  `json:"result,omitempty"`
	Errors     []*othello.Error `json:"errors"`
}

func (othelloGame) Perft(p game.Position, depth int) uint64 {
	q := p.(*position).pos
	return q.Perft(depth)
}

// position is a checked othello position.
type position struct {
	startText string // "startpos" or the normalized token
	start     othello.Position
	moves     []othello.Move
	pos       othello.Position // after the moves
}

func (p *position) Game() game.Game          { return Game }
func (p *position) Variant() string          { return "" }
func (p *position) Start() string            { return p.startText }
func (p *position) Text() string             { return p.pos.Token() }
func (p *position) SideToMove() string       { return p.pos.SideLetter() }
func (p *position) Key() string              { return "othello " + p.pos.Key() }
func (p *position) Notate([]string) []string { return nil }
func (p *position) Match() game.Match        { return &match{pos: p.pos} }

func (p *position) Moves() []string {
	out := make([]string, len(p.moves))
	for i, m := range p.moves {
		out[i] = m.String()
	}
	return out
}

// SendReached: a move list with a pass is sent as the position reached
// (game.Reached): an engine seen (Azisai) answers illegal moves after a
// pass inside "position startpos moves ...", and none misreads the
// position itself; othello's rules need no history.
func (p *position) SendReached() bool {
	for _, m := range p.moves {
		if m == othello.Pass {
			return true
		}
	}
	return false
}

// Forced: a pass, when the side to move has no square and the game goes
// on (game.Forced).
func (p *position) Forced() string {
	if p.pos.MustPass() {
		return othello.Pass.String()
	}
	return ""
}

// Repeats: never. Every move but a pass adds a disc, and two passes in a
// row end the game, so no position comes back.
func (p *position) Repeats() bool { return false }

// NoMove: an engine's resignation, and the pass USI-X engines still
// answer once the game is over.
func (p *position) NoMove(m string) bool {
	return m == "resign" || m == "pass" && p.pos.IsOver()
}

func (p *position) CheckMove(move string) *rules.Error {
	if _, err := p.pos.CheckMove(move); err != nil {
		return err.(*othello.Error)
	}
	return nil
}

func (p *position) PonderOK(move, ponder string) bool {
	m, err := p.pos.CheckMove(move)
	if err != nil {
		return false
	}
	after := p.pos
	after.Play(m)
	_, err = after.CheckMove(ponder)
	return err == nil
}

func (p *position) CheckLine(line []string) error {
	pos := p.pos
	for i, s := range line {
		m, err := pos.CheckMove(s)
		if err != nil {
			return errors.New("move " + strconv.Itoa(i+1) + ": " + err.Error())
		}
		pos.Play(m)
	}
	return nil
}

func (p *position) Legal(line []string) int {
	pos := p.pos
	for i, s := range line {
		m, err := pos.CheckMove(s)
		if err != nil {
			return i
		}
		pos.Play(m)
	}
	return len(line)
}

func (p *position) Mate([]string, int) ([]string, string, error) {
	return nil, "", errors.New("othello has no mate")
}

// Ending: the game is over when neither side can move; the disc count
// decides it.
func (p *position) Ending() game.Ending {
	r, over := p.pos.Outcome()
	if !over {
		return game.EndNone
	}
	return endingFor(r, p.pos.Turn())
}

func endingFor(r othello.Result, turn othello.Color) game.Ending {
	switch {
	case r.Winner == othello.Draw:
		return game.EndDraw
	case (r.Winner == othello.BlackWins) == (turn == othello.Black):
		return game.EndWon
	}
	return game.EndLost
}

func (p *position) Play(move string) (game.Position, *rules.Error) {
	m, err := p.pos.CheckMove(move)
	if err != nil {
		return nil, err.(*othello.Error)
	}
	q := *p
	q.moves = append(make([]othello.Move, 0, len(p.moves)+1), p.moves...)
	q.moves = append(q.moves, m)
	q.pos.Play(m)
	return &q, nil
}

// match: the game ends when neither side can move, won by the side with
// more discs.
type match struct{ pos othello.Position }

func (m *match) Turn() string { return m.pos.SideLetter() }

func (m *match) Check(move string) (string, *rules.Error) {
	mv, err := m.pos.CheckMove(move)
	if err != nil {
		return "", err.(*othello.Error)
	}
	return m.pos.Notate(mv), nil
}

func (m *match) Play(move string) *game.Result {
	mv, _ := m.pos.CheckMove(move) // checked by the caller
	m.pos.Play(mv)
	return m.Over()
}

func (m *match) Over() *game.Result {
	r, over := m.pos.Outcome()
	if !over {
		return nil
	}
	res := &game.Result{Reason: "discs", Detail: strconv.Itoa(r.Black) + "-" + strconv.Itoa(r.White)}
	switch r.Winner {
	case othello.BlackWins:
		res.Winner = game.Black
	case othello.WhiteWins:
		res.Winner = game.White
	}
	return res
}

func (m *match) Declare(string) *game.Result { return nil }
func (m *match) CannotWin(string) bool       { return false }

// RecordEnd is the final score as othello records write it, Black's
// first ("36-28"), or the winner of a game ended otherwise ("B+", "W+"),
// or "*" for a game aborted without one.
func (m *match) RecordEnd(r *game.Result) string {
	switch {
	case r.Reason == "discs":
		return r.Detail
	case r.Winner == game.Black:
		return "B+"
	case r.Winner == game.White:
		return "W+"
	case r.Reason == "aborted":
		return "*"
	}
	return "draw"
}

// Claims: a transcript is squares one after the other, letter a–h and
// digit 1–8, maybe spaced, which no shogi or chess record is.
func (othelloGame) Claims(text string) bool {
	t := strings.Join(strings.Fields(text), "")
	if len(t) < 2 || len(t)%2 != 0 {
		return false
	}
	for i := 0; i < len(t); i += 2 {
		c, d := t[i]|0x20, t[i+1]
		if c < 'a' || c > 'h' || d < '1' || d > '8' {
			return false
		}
	}
	return true
}

// ReadMain reads a move transcript from the start; the passes it leaves
// out are put back.
func (othelloGame) ReadMain(text string, maxMoves int) (string, string, []string, *game.RecordError) {
	ms, err := othello.ParseTranscript(nil, text)
	if err != nil {
		e, ok := err.(*othello.Error)
		if !ok {
			return "", "", nil, &game.RecordError{Code: "move_syntax", Message: err.Error(), MoveIndex: -1}
		}
		return "", "", nil, &game.RecordError{Code: string(e.Code), Message: e.Message, MoveIndex: e.MoveIndex}
	}
	if len(ms) > maxMoves {
		return "", "", nil, &game.RecordError{Code: "record_too_long", Message: "the game has " + strconv.Itoa(len(ms)) + " moves; at most " + strconv.Itoa(maxMoves), MoveIndex: -1}
	}
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.String()
	}
	return "startpos", "", out, nil
}
