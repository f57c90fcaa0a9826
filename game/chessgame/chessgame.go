// Package chessgame is chess behind usid's game seam (package game): the
// rules of package chess as a game.Game, standard and Chess960. Its Game and
// Positions are read-only and safe for concurrent use; a Match is not.
package chessgame

import (
	"errors"
	"strconv"

	"github.com/usid/usid/chess"
	"github.com/usid/usid/game"
	"github.com/usid/usid/internal/rules"
)

// Game is chess.
var Game game.Game = chessGame{}

type chessGame struct{}

// Variant960 is the variant name of Chess960 (Fischer random: X-FEN or
// Shredder-FEN castling rights, castling written king-takes-rook, e1h1).
const Variant960 = "chess960"

// winRateScale is the win-rate curve's scale for chess engines'
// centipawns: lichess's winning chances 2/(1+exp(−0.00368208·cp))−1,
// fitted to its players' results (https://lichess.org/page/accuracy; lila
// pull request 11148), are the win rate 1/(1+exp(−cp/271.6)).
const winRateScale = 1 / 0.00368208

func (chessGame) Name() string          { return "chess" }
func (chessGame) Field() string         { return "fen" }
func (chessGame) Dialects() []string    { return []string{"uci"} }
func (chessGame) Keyword() string       { return "fen" }
func (chessGame) Notation() string      { return "san" }
func (chessGame) FirstSide() string     { return game.White }
func (chessGame) WinRateScale() float64 { return winRateScale }

func (chessGame) Variant(v string) (string, *rules.Error) {
	switch v {
	case "", "standard":
		return "", nil
	case Variant960:
		return Variant960, nil
	}
	return "", rules.Newf("invalid_field", "position.variant %q: \"standard\" or \"chess960\"", rules.Clip(v, 40))
}

func variantOf(v string) chess.Variant {
	if v == Variant960 {
		return chess.Chess960
	}
	return chess.Standard
}

func (chessGame) StartPosition(string) string { return chess.StartFEN }

func (chessGame) Probe() game.Probe {
	return game.Probe{
		Middle:     "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP1B1PPP/R2QKB1R w KQ - 0 8",
		MateInOne:  "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", // Rd8#
		StartMoves: []string{"e2e4", "e7e5"},
		// White has no queen: Black is a queen up; Reversed, White is.
		Won:      "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR b KQkq - 0 1",
		Lost:     "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR w KQkq - 0 1",
		Reversed: "rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
	}
}

func (g chessGame) Check(start, variant string, moves []string) (game.Position, *rules.Error) {
	text := start
	if text == "startpos" {
		text = chess.StartFEN
	}
	v := variantOf(variant)
	sp, err := chess.ParseFEN(text, v)
	if err != nil {
		return nil, err.(*chess.Error)
	}
	if errs := sp.Validate(); errs != nil {
		return nil, errs[0]
	}
	p := &position{start: *sp, startText: sp.FEN(), moves: make([]chess.Move, 0, len(moves))}
	if v == chess.Standard && (start == "startpos" || p.startText == chess.StartFEN) {
		p.startText = "startpos"
	}
	p.pos = *sp
	for i, s := range moves {
		m, err := p.pos.CheckMove(s)
		if err != nil {
			e := *err.(*chess.Error)
			e.MoveIndex = i
			return nil, &e
		}
		p.pos.Play(m)
		p.moves = append(p.moves, m)
	}
	return p, nil
}

func (chessGame) Inspect(start, variant string, moves []string, notation bool) any {
	v := variantOf(variant)
	out := struct {
		chess.Verdict
		MovesSAN []string `json:"moves_san,omitempty"`
	}{Verdict: chess.Inspect(start, moves, v)}
	if notation {
		out.MovesSAN = []string{}
		if sp, errs := chess.Load(start, nil, v); errs == nil {
			for _, m := range moves {
				mv, err := sp.CheckMove(m)
				if err != nil {
					break
				}
				out.MovesSAN = append(out.MovesSAN, sp.SAN(mv))
				sp.Play(mv)
			}
		}
	}
	return out
}

func (chessGame) Perft(p game.Position, depth int) uint64 {
	q := p.(*position).pos
	return q.Perft(depth)
}

// position is a checked chess position.
type position struct {
	startText string // "startpos" or the normalized FEN
	start     chess.Position
	moves     []chess.Move
	pos       chess.Position // after the moves
}

func (p *position) Game() game.Game      { return Game }
func (p *position) Start() string        { return p.startText }
func (p *position) Text() string         { return p.pos.FEN() }
func (p *position) Moves() []string      { return rules.Strings(p.moves) }
func (p *position) NoMove(m string) bool { return m == "(none)" }
func (p *position) chess960() bool       { return p.start.Variant() == chess.Chess960 }
func (p *position) Ending() game.Ending  { return ending(chess.GameEnding(&p.start, p.moves)) }
func (p *position) Match() game.Match    { return newMatch(p) }
func (p *position) SideToMove() string   { return side(p.pos.Turn()) }
func side(c chess.Color) string {
	if c == chess.White {
		return game.White
	}
	return game.Black
}

func (p *position) Variant() string {
	if p.chess960() {
		return Variant960
	}
	return ""
}

func ending(e chess.Ending) game.Ending {
	switch e {
	case chess.EndCheckmate:
		return game.EndCheckmate
	case chess.EndStalemate:
		return game.EndStalemate
	case chess.EndInsufficientMaterial:
		return game.EndMaterial
	case chess.EndRepetition:
		return game.EndRepetition
	case chess.EndFiftyMoves:
		return game.EndFifty
	}
	return game.EndNone
}

// Key: the FEN without the move number. The 50-move counter stays in:
// engines scale their evaluation by it (Stockfish does), so two positions
// that differ in it are two questions. The en-passant square is in only
// where a pawn can take on it (chess.Position.RepetitionKey): after 1.e4
// the position is the one without e3 in every way an engine can see (the
// same legal moves, the same future), and stockfish itself drops such a
// square ("position fen ... b KQkq e3 0 1" then "d" prints "- 0 1").
func (p *position) Key() string {
	g := "chess "
	if p.chess960() {
		g = "chess960 " // the same FEN, other castling rules
	}
	return g + p.pos.RepetitionKey() + " " + strconv.Itoa(p.pos.Halfmove())
}

// Repeats: only the positions since the last capture or pawn move can come
// back, and they are compared as the rules of repetition compare them
// (chess.Position.RepetitionKey: an en-passant square no pawn can use is
// no difference).
func (p *position) Repeats() bool {
	if len(p.moves) < 4 {
		return false
	}
	seen := map[string]struct{}{}
	pos := p.start
	for i := 0; ; i++ {
		k := pos.RepetitionKey()
		if _, dup := seen[k]; dup {
			return true
		}
		seen[k] = struct{}{}
		if i == len(p.moves) {
			return false
		}
		pos.Play(p.moves[i])
	}
}

func (p *position) CheckMove(move string) *rules.Error {
	if _, err := p.pos.CheckMove(move); err != nil {
		return err.(*chess.Error)
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

// LegalMoves lists the final position's moves (game.Lister).
func (p *position) LegalMoves() []string { return rules.Strings(p.pos.LegalMoves()) }

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

func (p *position) Notate(line []string) []string {
	pos := p.pos
	out := make([]string, 0, len(line))
	for _, s := range line {
		m, err := pos.CheckMove(s)
		if err != nil {
			break
		}
		out = append(out, pos.SAN(m))
		pos.Play(m)
	}
	return out
}

// mateBudget bounds the positions usid searches to finish a mate line an
// engine cut short (chess.FindMate).
const mateBudget = 2_000_000

// Mate checks a chess mate search's answer and returns the whole line:
// the engine's moves are legal, and they end in checkmate within plies (the
// mate it announced) or usid finishes them to a forced mate within what is
// left (engines stop their lines early: Stockfish's "go mate" answers with a
// line of two plies for a mate in two).
func (p *position) Mate(pv []string, plies int) ([]string, string, error) {
	pos := p.pos
	line := append([]string(nil), pv...)
	for i, s := range pv {
		m, err := pos.CheckMove(s)
		if err != nil {
			return nil, "", errors.New("move " + strconv.Itoa(i+1) + ": " + err.Error())
		}
		pos.Play(m)
	}
	if pos.IsCheckmate() {
		return line, "line", nil
	}
	left := plies - len(pv)
	if left <= 0 {
		return nil, "", errors.New("the line does not end in checkmate")
	}
	if len(pv)%2 == 0 { // the mating side to move
		rest, ok := pos.FindMate(left, mateBudget)
		if !ok {
			return nil, "", errors.New("no mate in the " + strconv.Itoa(left) + " plies the line leaves")
		}
		return append(line, rules.Strings(rest)...), "line", nil
	}
	// The defender to move: every reply must be mated in what is left.
	var first []string
	for _, d := range pos.LegalMoves() {
		q := pos
		q.Play(d)
		rest, ok := q.FindMate(left-1, mateBudget)
		if !ok {
			return nil, "", errors.New("the defender's " + d.String() + " escapes the mate announced")
		}
		if first == nil {
			first = append([]string{d.String()}, rules.Strings(rest)...)
		}
	}
	if first == nil {
		return nil, "", errors.New("the line ends in stalemate")
	}
	return append(line, first...), "line", nil
}

// match: the rules of the end are those of chess (chess.Game):
// checkmate, stalemate, insufficient material, the same position a third
// time, fifty moves without a capture or a pawn move; the server applies
// the draws at once, as online play does. A loss on time against a side
// left with its king alone is a draw (FIDE Laws 6.9: it cannot mate).
type match struct{ g *chess.Game }

func newMatch(p *position) *match {
	m := &match{g: chess.NewGame(&p.start)}
	for _, mv := range p.moves {
		m.g.Play(mv)
	}
	return m
}

func (m *match) Turn() string { return side(m.g.Position().Turn()) }

func (m *match) Check(move string) (string, *rules.Error) {
	pos := m.g.Position()
	mv, err := pos.CheckMove(move)
	if err != nil {
		return "", err.(*chess.Error)
	}
	return pos.SAN(mv), nil
}

func (m *match) Play(move string) *game.Result {
	mover := m.Turn()
	mv, _ := m.g.Position().CheckMove(move) // checked by the caller
	m.g.Play(mv)
	return m.ending(mover)
}

func (m *match) Over() *game.Result { return m.ending(game.Other(m.Turn())) }

// ending is the game's end by the rules now, mover having moved last.
func (m *match) ending(mover string) *game.Result {
	switch e := m.g.Ending(); e {
	case "":
		return nil
	case chess.EndCheckmate:
		return &game.Result{Winner: mover, Reason: "checkmate"}
	default:
		return &game.Result{Reason: string(e)} // stalemate, insufficient_material, repetition, fifty_moves
	}
}

func (m *match) Declare(string) *game.Result { return nil }

func (m *match) CannotWin(s string) bool {
	pos := m.g.Position()
	for sq := chess.Square(0); sq < 64; sq++ {
		if pc := pos.At(sq); pc != chess.NoPiece && side(pc.Color()) == s && pc.Kind() != chess.King {
			return false
		}
	}
	return true
}

// RecordEnd is the PGN result: 1-0, 0-1, 1/2-1/2 for a draw, * for a game
// aborted without a winner.
func (m *match) RecordEnd(r *game.Result) string {
	switch {
	case r.Winner == game.White:
		return "1-0"
	case r.Winner == game.Black:
		return "0-1"
	case r.Reason == "aborted":
		return "*"
	}
	return "1/2-1/2"
}

func (p *position) Play(move string) (game.Position, *rules.Error) {
	m, err := p.pos.CheckMove(move)
	if err != nil {
		return nil, err.(*chess.Error)
	}
	q := *p
	q.moves = append(make([]chess.Move, 0, len(p.moves)+1), p.moves...)
	q.moves = append(q.moves, m)
	q.pos.Play(m)
	return &q, nil
}
