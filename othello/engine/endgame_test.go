package engine

import (
	"bufio"
	"math/bits"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/usid/usid/othello"
)

// minimax is the final margin by plain negamax over every move: the
// reference the solver must agree with.
func minimax(b Board) int {
	mv := Moves(b.P, b.O)
	if mv == 0 {
		if Moves(b.O, b.P) == 0 {
			return b.FinalScore()
		}
		return -minimax(b.Pass())
	}
	best := -100
	for ; mv != 0; mv &= mv - 1 {
		sq := bits.TrailingZeros64(mv)
		best = max(best, -minimax(b.Play(sq, Flips(b.P, b.O, sq))))
	}
	return best
}

// endPositions returns positions of random games with at most maxEmpties
// empty squares, the side to move having a move.
func endPositions(seed uint64, n, maxEmpties int) []Board {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []Board
	for len(out) < n {
		var cands []Board
		randomGame(rng, func(b Board, _ *othello.Position) {
			if b.NumEmpties() <= maxEmpties && Moves(b.P, b.O) != 0 {
				cands = append(cands, b)
			}
		})
		if len(cands) > 0 {
			out = append(out, cands[rng.IntN(len(cands))])
		}
	}
	return out
}

// TestSolveAgreesWithMinimax checks the solver's score, and that its move
// reaches that score, against plain minimax on random endgames of up to 10
// empties, through Search as the protocol calls it.
func TestSolveAgreesWithMinimax(t *testing.T) {
	z := NewSearcher(1, 1)
	for i, b := range endPositions(3, 60, 10) {
		want := minimax(b)
		res := z.Search(b, Limits{Level: MaxLevel, SolveEmpties: 20}, new(Control), nil)
		if !res.Exact || res.Score != want {
			t.Fatalf("position %d %+v: score %d (exact %v), want %d", i, b, res.Score, res.Exact, want)
		}
		if got := -minimax(b.Play(res.Move, Flips(b.P, b.O, res.Move))); got != want {
			t.Fatalf("position %d %+v: move %s reaches %d, want %d", i, b, othello.Square(res.Move), got, want)
		}
		// The solver's windows: a null window tells the side of the score.
		s := &searcher{tt: z.tt, ctl: new(Control)}
		n := b.NumEmpties()
		for _, w := range []int{-2, 0, 3} {
			v := s.solve(b, w, w+1, n, false)
			if (v > w) != (want > w) {
				t.Fatalf("position %d: null window at %d gives %d, exact %d", i, w, v, want)
			}
		}
	}
}

// ffoPosition is one line of testdata/ffo.tsv.
type ffoPosition struct {
	num   int
	board Board
	score int
	best  []string
}

func loadFFO(t testing.TB) []ffoPosition {
	f, err := os.Open("testdata/ffo.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []ffoPosition
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		c := strings.Split(line, "\t")
		p, err := othello.ParsePosition(c[1])
		if err != nil {
			t.Fatal(err)
		}
		num, _ := strconv.Atoi(c[0])
		score, _ := strconv.Atoi(c[2])
		out = append(out, ffoPosition{num, boardOf(p), score, strings.Fields(c[3])})
	}
	return out
}

// solveFFO solves one FFO position and checks its score and move.
func solveFFO(t testing.TB, z *Searcher, p ffoPosition) (time.Duration, uint64) {
	start := time.Now()
	res := z.Search(p.board, Limits{Level: MaxLevel, SolveEmpties: 30}, new(Control), nil)
	d := time.Since(start)
	if !res.Exact || res.Score != p.score || !slices.Contains(p.best, moveName(res.Move)) {
		t.Errorf("FFO #%d: %s %d (exact %v), want %v %d", p.num, moveName(res.Move), res.Score, res.Exact, p.best, p.score)
	}
	return d, res.Nodes
}

// cpuTime is the CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFFO solves FFO #40-#44 exactly and reports each one's time.
func BenchmarkFFO(b *testing.B) {
	for _, p := range loadFFO(b) {
		b.Run("ffo"+strconv.Itoa(p.num), func(b *testing.B) {
			z := NewSearcher(64, 1)
			var nodes uint64
			cpu := cpuTime()
			for b.Loop() {
				z.Clear()
				_, nodes = solveFFO(b, z, p)
			}
			b.ReportMetric(float64(nodes), "nodes")
			// CPU seconds per solve: on a shared machine the wall time
			// (ns/op) counts other processes' turns too.
			b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// TestFFO40 solves FFO #40 (20 empties): exactly (+38 by a2) in a normal
// build, about two seconds; under the race detector, ten times slower, it
// proves the win alone (a null window around 0), which takes a fraction
// of that. BenchmarkFFO solves #40-#44 exactly.
func TestFFO40(t *testing.T) {
	p := loadFFO(t)[0]
	if p.num != 40 {
		t.Fatalf("testdata/ffo.tsv starts with #%d", p.num)
	}
	z := NewSearcher(16, 1)
	if !raceBuild {
		solveFFO(t, z, p)
		return
	}
	s := &searcher{tt: z.tt, ctl: new(Control)}
	if v := s.solve(p.board, 0, 1, p.board.NumEmpties(), false); v <= 0 {
		t.Errorf("FFO #40: the win/loss search gives %d, want a win (> 0)", v)
	}
}
