package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/usid/usid/chess"
	"github.com/usid/usid/game"
	"github.com/usid/usid/shogi"
)

// runPerft counts the leaves of the legal move tree; the total is always the
// last line, after the per-move counts when --divide asks for them.
func runPerft(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("perft", flag.ContinueOnError)
	fs.SetOutput(stderr)
	depth := fs.Int("depth", 0, "depth in plies (1 or more)")
	divide := fs.Bool("divide", false, "print the count below each legal move first")
	var g gameFlags
	fs.BoolVar(&g.chess, "chess", false, "startpos is the chess start position")
	fs.BoolVar(&g.chess960, "chess960", false, "chess, castling by Chess960 rules (FEN letters X-FEN or Shredder-FEN, UCI king-takes-rook)")
	fs.StringVar(&g.name, "game", "", "the game of the position: shogi (default), chess, othello")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: usid perft --depth N [--divide] [--game shogi|chess|othello | --chess | --chess960] [position]

Counts the legal move paths N plies deep from the position (default: the
game's start) and prints the total as the last line. The position is in the
game's own protocol syntax:
  shogi    startpos moves 7g7f ... | sfen <sfen> [moves ...]
  chess    startpos (with --chess or --game chess) | fen <FEN> [moves e2e4 ...]
  othello  startpos (with --game othello) | sfen <64 cells, B|W[, number]> [moves d3 pass ...]
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	other, err := g.other()
	if err != nil {
		fmt.Fprintf(stderr, "usid perft: %v\n", err)
		return 2
	}
	if *depth < 1 || *depth > 12 {
		fmt.Fprintln(stderr, "usid perft: --depth must be between 1 and 12")
		return 2
	}
	pos := "startpos"
	if fs.NArg() > 0 {
		pos = strings.Join(fs.Args(), " ")
	}
	if other != nil {
		return otherPerft(other, pos, *depth, *divide, stdout, stderr)
	}
	if g.isChess(pos) {
		return chessPerft(pos, g.variant(), *depth, *divide, stdout, stderr)
	}
	sfen, moves, err := shogi.ParsePositionCommand(pos)
	if err != nil {
		fmt.Fprintf(stderr, "usid perft: %v\n", err)
		return 1
	}
	p, errs := shogi.Load(sfen, moves)
	if errs != nil {
		fmt.Fprintf(stderr, "usid perft: %v\n", shogi.Errors(errs))
		return 1
	}
	if !*divide {
		fmt.Fprintln(stdout, p.Perft(*depth))
		return 0
	}
	var total uint64
	for _, m := range p.LegalMoves() {
		q := *p
		q.Play(m)
		n := q.Perft(*depth - 1)
		total += n
		fmt.Fprintf(stdout, "%s: %d\n", m, n)
	}
	fmt.Fprintln(stdout, total)
	return 0
}

// otherPerft is runPerft for a position of a game other than shogi and
// chess, asked of the game.
func otherPerft(gm game.Game, pos string, depth int, divide bool, stdout, stderr io.Writer) int {
	start, moves, serr := split(gm, pos)
	if serr != nil {
		fmt.Fprintf(stderr, "usid perft: %v\n", serr)
		return 1
	}
	p, err := gm.Check(start, "", moves)
	if err != nil {
		fmt.Fprintf(stderr, "usid perft: %v\n", err)
		return 1
	}
	if !divide {
		fmt.Fprintln(stdout, gm.Perft(p, depth))
		return 0
	}
	var total uint64
	for _, m := range legalMoves(gm, p) {
		q, _ := p.Play(m)
		n := gm.Perft(q, depth-1)
		total += n
		fmt.Fprintf(stdout, "%s: %d\n", m, n)
	}
	fmt.Fprintln(stdout, total)
	return 0
}

// legalMoves are p's legal moves, as its game's verdict lists them.
func legalMoves(gm game.Game, p game.Position) []string {
	b, _ := json.Marshal(gm.Inspect(p.Text(), p.Variant(), nil, false))
	var v struct {
		LegalMoves []string `json:"legal_moves"`
	}
	json.Unmarshal(b, &v)
	return v.LegalMoves
}

// chessPerft is runPerft for a chess position.
func chessPerft(pos string, v chess.Variant, depth int, divide bool, stdout, stderr io.Writer) int {
	fen, moves, err := chess.ParsePositionCommand(pos)
	if err != nil {
		fmt.Fprintf(stderr, "usid perft: %v\n", err)
		return 1
	}
	p, errs := chess.Load(fen, moves, v)
	if errs != nil {
		fmt.Fprintf(stderr, "usid perft: %v\n", chess.Errors(errs))
		return 1
	}
	if !divide {
		fmt.Fprintln(stdout, p.Perft(depth))
		return 0
	}
	var total uint64
	for _, m := range p.LegalMoves() {
		q := *p
		q.Play(m)
		n := q.Perft(depth - 1)
		total += n
		fmt.Fprintf(stdout, "%s: %d\n", m, n)
	}
	fmt.Fprintln(stdout, total)
	return 0
}
