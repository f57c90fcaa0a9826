// Command gen writes the othello package's test corpus (testdata/*.tsv) from
// a deliberately naive reference implementation (naive.go: an 8×8 array,
// moves found by walking each direction), which shares no code with package
// othello. Run from the repository root:
//
//	go run ./othello/internal/gen -out othello/testdata
//
// (or go test ./othello/internal/gen -update). Its test checks the files in
// testdata are what it writes, so a corpus edited by hand, or a reference
// changed without regenerating, fails.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	out := flag.String("out", "othello/testdata", "the directory to write the corpus to")
	flag.Parse()
	for name, data := range generate() {
		if err := os.WriteFile(filepath.Join(*out, name), data, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// published are the published perft counts from the start (depths 1–7); the
// reference must reproduce them before its other counts are trusted.
var published = []uint64{4, 12, 56, 244, 1396, 8200, 55092}

// game is a random game played to its end.
type game struct {
	moves  []string
	boards []board // boards[i] is the board before moves[i]; the last one is the end
}

func randomGame(rng *rand.Rand) game {
	b := start()
	var g game
	for {
		g.boards = append(g.boards, b)
		ms := b.legal()
		if len(ms) == 0 {
			return g
		}
		m := ms[rng.IntN(len(ms))]
		g.moves = append(g.moves, m)
		b.play(m)
	}
}

type corpus struct {
	buf bytes.Buffer
}

// legalRow writes a row expected to load: the position reached, its legal
// moves, its result if the game is over.
func (c *corpus) legalRow(label, pos string, moves []string) {
	b, code := parse(pos)
	if code != "" || len(b.ruleCodes()) > 0 {
		log.Fatalf("%s: %s is not legal to the reference (%s %v)", label, pos, code, b.ruleCodes())
	}
	for i, m := range moves {
		if code := b.moveCode(m); code != "" {
			log.Fatalf("%s: move %d %s refused: %s", label, i, m, code)
		}
		b.play(m)
	}
	res := ""
	legal := b.legal()
	if len(legal) == 0 {
		res = b.result()
	}
	fmt.Fprintf(&c.buf, "legal\t%s\t%s\t%s\t%s\t%s\t%s\n", label, pos, strings.Join(moves, " "), b.token(), strings.Join(legal, " "), res)
}

// badRow writes a row expected to be refused with the codes the reference
// finds (code@index for a move), checking they include want.
func (c *corpus) badRow(want, label, pos string, moves []string) {
	b, code := parse(pos)
	var got []string
	reached := ""
	switch {
	case code != "":
		got = []string{code}
	case len(b.ruleCodes()) > 0:
		got, reached = b.ruleCodes(), b.token()
	default:
		for i, m := range moves {
			if code := b.moveCode(m); code != "" {
				got = []string{fmt.Sprintf("%s@%d", code, i)}
				break
			}
			b.play(m)
		}
		reached = b.token()
	}
	if len(got) == 0 {
		log.Fatalf("%s: %s %v is legal to the reference; want %s", label, pos, moves, want)
	}
	if !strings.Contains(strings.Join(got, ","), want) {
		log.Fatalf("%s: %s %v: the reference says %v; want %s", label, pos, moves, got, want)
	}
	fmt.Fprintf(&c.buf, "%s\t%s\t%s\t%s\t%s\t\t\n", strings.Join(got, ","), label, pos, strings.Join(moves, " "), reached)
}

func generate() map[string][]byte {
	s := start()
	for i, want := range published {
		if got := s.perft(i + 1); got != want {
			log.Fatalf("reference perft(%d) = %d, want the published %d", i+1, got, want)
		}
	}
	rng := rand.New(rand.NewPCG(36, 2026))
	var games []game
	for i := 0; i < 1500; i++ {
		games = append(games, randomGame(rng))
	}

	var seeds, passes, overEarly, overFull []board
	var passGames []int
	for gi, g := range games {
		end := g.boards[len(g.boards)-1]
		x, o := end.discs()
		if x+o < 64 && len(overEarly) < 12 {
			overEarly = append(overEarly, end)
		}
		if x+o == 64 && len(overFull) < 4 {
			overFull = append(overFull, end)
		}
		for i, m := range g.moves {
			if m == "pass" && len(passes) < 16 {
				passes = append(passes, g.boards[i])
				if len(passGames) < 8 && (len(passGames) == 0 || passGames[len(passGames)-1] != gi) {
					passGames = append(passGames, gi)
				}
			}
		}
		if gi < 40 {
			seeds = append(seeds, g.boards[rng.IntN(len(g.boards)-1)])
		}
	}
	if len(passes) < 16 || len(passGames) < 4 || len(overEarly) < 12 || len(overFull) < 4 {
		log.Fatalf("too few special positions: %d passes in %d games, %d early ends, %d full boards", len(passes), len(passGames), len(overEarly), len(overFull))
	}
	var wipe board
	if !findWipeout(start(), 9, &wipe) {
		log.Fatal("no wipe-out found")
	}

	var c corpus
	c.buf.WriteString("# expect\tlabel\tposition\tmoves\treached\tlegal_moves\tresult\n")
	c.buf.WriteString("# Written by othello/internal/gen (the naive reference); do not edit. See README.md.\n")
	c.legalRow("start", "startpos", nil)
	st := start()
	c.legalRow("start-token", st.token(), nil)
	c.legalRow("start-ofen", st.ofen(), nil)
	for i, b := range seeds {
		c.legalRow(fmt.Sprintf("seed%d", i), b.token(), nil)
	}
	for i, b := range seeds[:8] {
		c.legalRow(fmt.Sprintf("seed%d-ofen", i), b.ofen(), nil)
		c.legalRow(fmt.Sprintf("seed%d-no-number", i), b.token()[:65], nil)
	}
	for i, b := range passes {
		c.legalRow(fmt.Sprintf("must-pass%d", i), b.token(), nil)
		c.legalRow(fmt.Sprintf("must-pass%d-then-pass", i), b.token(), []string{"pass"})
	}
	for i, b := range overEarly {
		c.legalRow(fmt.Sprintf("over-early%d", i), b.token(), nil)
	}
	for i, b := range overFull {
		c.legalRow(fmt.Sprintf("over-full%d", i), b.token(), nil)
	}
	c.legalRow("wipe-out", wipe.token(), nil)
	for i, gi := range passGames {
		c.legalRow(fmt.Sprintf("game%d-with-passes", i), "startpos", games[gi].moves)
	}
	for i := 0; i < 4; i++ {
		c.legalRow(fmt.Sprintf("game%d", 100+i), "startpos", games[100+i].moves)
	}

	// Damaged positions: syntax, then the rules of a position.
	for i, b := range seeds[:12] {
		t, label := b.token(), fmt.Sprintf("seed%d-", i)
		c.badRow("othello_length", label+"cut", t[:63], nil)
		c.badRow("othello_cell", label+"bad-cell", t[:i]+"Y"+t[i+1:], nil)
		c.badRow("othello_cell", label+"lower-case", strings.ToLower(t[:64])+t[64:], nil)
		c.badRow("othello_side", label+"side", t[:64]+"b"+t[65:], nil)
		c.badRow("othello_move_number", label+"move-number-0", t[:65]+"0", nil)
		c.badRow("othello_move_number", label+"move-number-spaced", t[:65]+" 1", nil)
		c.badRow("othello_move_number", label+"move-number-long", t[:65]+"10000", nil)
		c.badRow("othello_length", label+"ofen-with-number", b.ofen()+"1", nil)
		if mixed := strings.Replace(b.ofen(), "0", "O", 1); strings.Contains(mixed, "0") {
			c.badRow("othello_cell", label+"ofen-mixed-O-and-0", mixed, nil)
		}
		for _, sq := range []int{27, 28, 35, 36} {
			if t[sq] != '-' {
				c.badRow("centre_empty", fmt.Sprintf("%scentre-%d-emptied", label, sq), t[:sq]+"-"+t[sq+1:], nil)
				break
			}
		}
		if sq := lonelySquare(b); sq >= 0 {
			c.badRow("isolated_disc", label+"lonely-disc", t[:sq]+"X"+t[sq+1:], nil)
		}
	}
	// Damaged moves.
	for i, b := range seeds[:12] {
		t, label := b.token(), fmt.Sprintf("seed%d-", i)
		legal := b.legal()
		c.badRow("move_syntax", label+"upper-case", t, []string{strings.ToUpper(legal[0])})
		c.badRow("move_syntax", label+"off-board", t, []string{legal[0], "i9"})
		c.badRow("pass_not_allowed", label+"pass", t, []string{"pass"})
		c.badRow("occupied", label+"occupied", t, []string{legal[0], "d4"})
		if sq := emptyNotLegal(b); sq != "" {
			c.badRow("flips_nothing", label+"flips-nothing", t, []string{sq})
		}
	}
	for i, b := range passes {
		label := fmt.Sprintf("must-pass%d-", i)
		c.badRow("wrong_side", label+"square-of-the-opponent", b.token(), []string{b.squares(other(b.side))[0]})
	}
	for i, b := range overEarly[:6] {
		label := fmt.Sprintf("over-early%d-", i)
		c.badRow("game_over", label+"pass", b.token(), []string{"pass"})
		c.badRow("game_over", label+"square", b.token(), []string{"a1"})
	}
	for i, gi := range passGames[:4] {
		g := games[gi]
		moves := append([]string(nil), g.moves...)
		for j, m := range moves {
			if m == "pass" {
				moves = append(moves[:j], moves[j+1:]...)
				break
			}
		}
		c.badRow("wrong_side", fmt.Sprintf("game%d-pass-left-out", i), "startpos", moves)
		c.badRow("game_over", fmt.Sprintf("game%d-move-after-end", i), "startpos", append(append([]string(nil), g.moves...), "pass"))
	}

	// Perft of positions along random games, passes and ends among them.
	var perft bytes.Buffer
	perft.WriteString("# position\tperft(1)\tperft(2)\tperft(3)\n")
	perft.WriteString("# Written by othello/internal/gen (the naive reference); do not edit. See README.md.\n")
	var pp []board
	pp = append(pp, seeds[:24]...)
	pp = append(pp, passes[:6]...)
	pp = append(pp, overEarly[0], wipe)
	for _, b := range pp {
		fmt.Fprintf(&perft, "%s\t%d\t%d\t%d\n", b.token(), b.perft(1), b.perft(2), b.perft(3))
	}

	// Transcripts of whole games: the squares only, passes left out.
	var tr bytes.Buffer
	tr.WriteString("# transcript\tmoves (USI-X, passes included)\tfinal token\tresult\n")
	tr.WriteString("# Written by othello/internal/gen (the naive reference); do not edit. See README.md.\n")
	for i, gi := range append(append([]int(nil), passGames...), 200, 201, 202, 203) {
		g := games[gi]
		var sq []string
		for _, m := range g.moves {
			if m != "pass" {
				sq = append(sq, m)
			}
		}
		text := strings.Join(sq, "")
		if i%2 == 1 {
			text = strings.ToUpper(text)
		}
		end := g.boards[len(g.boards)-1]
		fmt.Fprintf(&tr, "%s\t%s\t%s\t%s\n", text, strings.Join(g.moves, " "), end.token(), end.result())
	}
	return map[string][]byte{"positions.tsv": c.buf.Bytes(), "perft-random.tsv": perft.Bytes(), "transcripts.tsv": tr.Bytes()}
}

// findWipeout searches the game tree depth-first for a game in which one
// side loses its last disc.
func findWipeout(b board, depth int, out *board) bool {
	x, o := b.discs()
	if x == 0 || o == 0 {
		*out = b
		return true
	}
	if depth == 0 {
		return false
	}
	for _, m := range b.legal() {
		q := b
		q.play(m)
		if findWipeout(q, depth-1, out) {
			return true
		}
	}
	return false
}

// lonelySquare returns the index of an empty cell with no disc around it, or -1.
func lonelySquare(b board) int {
	for r := 0; r < 8; r++ {
		for c := 0; c < 8; c++ {
			if b.cell[r][c] != '-' {
				continue
			}
			alone := true
			for _, d := range dirs {
				rr, cc := r+d[0], c+d[1]
				if rr >= 0 && rr < 8 && cc >= 0 && cc < 8 && b.cell[rr][cc] != '-' {
					alone = false
				}
			}
			if alone {
				return r*8 + c
			}
		}
	}
	return -1
}

// emptyNotLegal returns an empty square where neither side may play, or "".
func emptyNotLegal(b board) string {
	for r := 0; r < 8; r++ {
		for c := 0; c < 8; c++ {
			if b.cell[r][c] == '-' && len(b.flips(b.side, r, c)) == 0 {
				return name(r, c)
			}
		}
	}
	return ""
}
