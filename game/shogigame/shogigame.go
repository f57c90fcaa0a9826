// Package shogigame is shogi behind usid's game seam (package game): the
// rules of package shogi as a game.Game. Its Game and Positions are
// read-only and safe for concurrent use; a Match is not.
package shogigame

import (
	"bytes"
	"strconv"

	"github.com/usid/usid/game"
	"github.com/usid/usid/internal/rules"
	"github.com/usid/usid/kifu"
	"github.com/usid/usid/shogi"
)

// Game is shogi.
var Game game.Game = shogiGame{}

type shogiGame struct{}

// winRateScale is the win-rate curve of the shogi engines' centipawns
// (the scale Ponanza's and YaneuraOu's authors give: 600).
const winRateScale = 600

func (shogiGame) Name() string          { return "shogi" }
func (shogiGame) Field() string         { return "sfen" }
func (shogiGame) Dialects() []string    { return []string{"usi"} }
func (shogiGame) Keyword() string       { return "sfen" }
func (shogiGame) Notation() string      { return "kif" }
func (shogiGame) FirstSide() string     { return game.Black }
func (shogiGame) WinRateScale() float64 { return winRateScale }

func (shogiGame) Variant(v string) (string, *rules.Error) {
	if v != "" {
		return "", rules.Newf("invalid_field", "position.variant is for chess positions (fen)")
	}
	return "", nil
}

func (shogiGame) StartPosition(string) string {
	return "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"
}

func (shogiGame) Probe() game.Probe {
	return game.Probe{
		Middle:     "3g1ksnl/lrs3gb1/nppp1p+Bpp/p3p1p2/3P5/2P6/PP2PPPPP/4GG1R1/LNS1K1SNL w - 18",
		MateInOne:  "4k4/9/4P4/9/9/9/9/9/9 b G2r2b3g4s4n4l17p 1", // G*5b
		StartMoves: []string{"7g7f", "3c3d"},
		// Black has both rooks and both bishops (two of them in hand);
		// Reversed, White has.
		Won:      "lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b RB 1",
		Lost:     "lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w RB 1",
		Reversed: "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/9/LNSGKGSNL w rb 1",
	}
}

func (g shogiGame) Check(start, _ string, moves []string) (game.Position, *rules.Error) {
	sp, errs := shogi.Load(start, nil)
	if errs != nil {
		return nil, errs[0]
	}
	p := &position{startText: start, start: *sp, pos: *sp, moves: make([]shogi.Move, 0, len(moves))}
	if start != "startpos" {
		p.startText = sp.SFEN()
	}
	for i, s := range moves {
		m, err := p.pos.CheckMove(s)
		if err != nil {
			e := *err.(*shogi.Error)
			e.MoveIndex = i
			return nil, &e
		}
		p.pos.Play(m)
		p.moves = append(p.moves, m)
	}
	return p, nil
}

func (shogiGame) Inspect(start, _ string, moves []string, notation bool) any {
	v := struct {
		shogi.Verdict
		MovesKIF []string `json:"moves_kif,omitempty"`
	}{Verdict: shogi.Inspect(start, moves)}
	if notation {
		if sp, errs := shogi.Load(start, nil); errs == nil {
			v.MovesKIF, _ = sp.KIFLine(moves, shogi.NoSquare)
		}
		if v.MovesKIF == nil {
			v.MovesKIF = []string{}
		}
	}
	return v
}

func (shogiGame) Perft(p game.Position, depth int) uint64 {
	q := p.(*position).pos
	return q.Perft(depth)
}

// position is a checked shogi position.
type position struct {
	startText string // "startpos" or the normalized SFEN
	start     shogi.Position
	moves     []shogi.Move
	pos       shogi.Position // after the moves
}

func (p *position) Game() game.Game { return Game }
func (p *position) Variant() string { return "" }
func (p *position) Start() string   { return p.startText }
func (p *position) Text() string    { return p.pos.SFEN() }
func (p *position) Moves() []string { return rules.Strings(p.moves) }
func (p *position) NoMove(m string) bool {
	return m == "resign" || m == "win"
}

func (p *position) SideToMove() string {
	if p.pos.Turn() == shogi.White {
		return game.White
	}
	return game.Black
}

func (p *position) lastTo() shogi.Square {
	if len(p.moves) == 0 {
		return shogi.NoSquare
	}
	return p.moves[len(p.moves)-1].To
}

// Key: the SFEN without the move number.
func (p *position) Key() string {
	sfen := p.pos.SFEN()
	return sfen[:bytes.LastIndexByte([]byte(sfen), ' ')]
}

// Repeats: in shogi no move is irreversible (captured pieces come back as
// drops), so the whole history counts.
func (p *position) Repeats() bool {
	if len(p.moves) < 4 { // a position comes back after four plies at the soonest
		return false
	}
	seen := make(map[string]struct{}, len(p.moves)+1)
	pos := p.start
	var buf []byte
	for i := 0; ; i++ {
		buf = pos.AppendSFEN(buf[:0])
		buf = buf[:bytes.LastIndexByte(buf, ' ')] // without the move number
		if _, dup := seen[string(buf)]; dup {
			return true
		}
		seen[string(buf)] = struct{}{}
		if i == len(p.moves) {
			return false
		}
		pos.Play(p.moves[i])
	}
}

func (p *position) CheckMove(move string) *rules.Error {
	if _, err := p.pos.CheckMove(move); err != nil {
		return err.(*shogi.Error)
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
	_, err := p.pos.KIFLine(line, p.lastTo())
	return err
}

func (p *position) Legal(line []string) int {
	out, _ := p.pos.KIFLine(line, p.lastTo())
	return len(out)
}

func (p *position) Notate(line []string) []string {
	out, _ := p.pos.KIFLine(line, p.lastTo())
	return out
}

// Mate verifies a tsume line (shogi.Position.VerifyMateLine): the
// engine's line is the whole answer; plies is not needed.
func (p *position) Mate(line []string, _ int) ([]string, string, error) {
	proof, err := p.pos.VerifyMateLine(line)
	if err != nil {
		return nil, "", err
	}
	return line, string(proof), nil
}

func (p *position) Ending() game.Ending {
	if len(p.pos.LegalMoves()) == 0 {
		return game.EndCheckmate // in shogi, having no move is losing (a pawn-drop mate aside, never a stalemate)
	}
	return game.EndNone
}

func (p *position) Match() game.Match {
	m := &match{pos: p.pos, lastTo: p.lastTo(), first: p.start.Turn()}
	// The history from the start, for 千日手.
	q := p.start
	m.hist = newHistory(&q)
	for _, mv := range p.moves {
		q.Play(mv)
		m.hist.add(&q)
	}
	return m
}

// match: the rules of the end are checkmate, 千日手 (perpetual check
// loses), 入玉宣言.
type match struct {
	pos    shogi.Position
	lastTo shogi.Square
	hist   *history
	first  shogi.Color // the side to move at the start of the history
}

func side(c shogi.Color) string { return "bw"[c : c+1] }

func color(s string) shogi.Color {
	if s == game.White {
		return shogi.White
	}
	return shogi.Black
}

func (m *match) Turn() string { return side(m.pos.Turn()) }

func (m *match) Check(move string) (string, *rules.Error) {
	mv, err := m.pos.CheckMove(move)
	if err != nil {
		return "", err.(*shogi.Error)
	}
	return m.pos.KIF(mv, m.lastTo), nil
}

func (m *match) Play(move string) *game.Result {
	mv, _ := m.pos.CheckMove(move) // checked by the caller
	mover := m.pos.Turn()
	m.pos.Play(mv)
	m.lastTo = mv.To
	m.hist.add(&m.pos)
	if len(m.pos.LegalMoves()) == 0 {
		return &game.Result{Winner: side(mover), Reason: "checkmate", End: "mate"}
	}
	first := m.first
	if rep, checker := m.hist.repetition(func(i int) shogi.Color { return first ^ shogi.Color((i-1)&1) }); rep {
		if checker == noColor {
			return &game.Result{Reason: "repetition", End: "repetition"}
		}
		// The record's ending is worded from the side to move.
		end := "illegal_win"
		if shogi.Color(checker) == m.pos.Turn() {
			end = "illegal_loss"
		}
		return &game.Result{Winner: side(shogi.Color(checker) ^ 1), Reason: "perpetual_check", End: end}
	}
	return nil
}

func (m *match) Over() *game.Result {
	if len(m.pos.LegalMoves()) == 0 {
		return &game.Result{Winner: side(m.pos.Turn() ^ 1), Reason: "checkmate", End: "mate"}
	}
	return nil
}

func (m *match) Declare(s string) *game.Result {
	c := color(s)
	ok, points, why := declarationPoints(&m.pos, c)
	if ok {
		return &game.Result{Winner: side(c), Reason: "declaration", End: "declare_win", Detail: strconv.Itoa(points) + " points"}
	}
	return &game.Result{Winner: side(c ^ 1), Reason: "illegal_declaration", End: "illegal_loss", Detail: why}
}

func (m *match) CannotWin(string) bool           { return false }
func (m *match) RecordEnd(r *game.Result) string { return r.End }

func (p *position) Play(move string) (game.Position, *rules.Error) {
	m, err := p.pos.CheckMove(move)
	if err != nil {
		return nil, err.(*shogi.Error)
	}
	q := *p
	q.moves = append(make([]shogi.Move, 0, len(p.moves)+1), p.moves...)
	q.moves = append(q.moves, m)
	q.pos.Play(m)
	return &q, nil
}

// HandicapStart is the start of a handicap (駒落ち) by its Japanese name
// (香落ち, 二枚落ち, ...), as KIF's 手合割 names it.
func (shogiGame) HandicapStart(name string) string {
	if name == "平手" {
		return ""
	}
	return kifu.HandicapSFEN(name)
}
