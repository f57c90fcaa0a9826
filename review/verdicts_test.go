package review

// The verdicts benchmark (BENCHMARKS.md, "Game analysis verdicts"): from a fixed seed,
// with the real fairy-stockfish, it plays self-play games (a few seeded
// random opening moves, then every move the engine's choice at
// -verdicts.depth), plants a blunder in a copy of each (at a seeded ply, a
// legal move that a deeper search shows loses at least 1200 cp against the
// best move, searched the fair way: both positions reached, same depth,
// same side to move; then a few more self-play moves and the game ends),
// analyses every game with a Manager at -verdicts.limit, and reports
//
//   - found: the share of planted blunders judged mistake or blunder
//     (target ≥ 90%);
//   - false alarms: the share of the engine's own moves in the self-play
//     games judged mistake or blunder (target ≤ 5%);
//
// for the verdicts as games judges them and, from the same evaluations,
// for the old method (each position's evaluation differenced with the
// next one's). The test fails when the verdicts miss a target. CI runs the
// small default; the figures in BENCHMARKS.md come from
//
//	go test ./review -run TestVerdicts -count=1 -v -timeout 60m \
//	    -verdicts.games=10 -verdicts.plies=50 -verdicts.limit=default

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/usid/usid/session"
	"github.com/usid/usid/shogi"
)

var (
	verdictsGames  = flag.Int("verdicts.games", 2, "verdicts benchmark: self-play games (each also played with a planted blunder)")
	verdictsPlies  = flag.Int("verdicts.plies", 24, "verdicts benchmark: plies of a self-play game")
	verdictsSeed   = flag.Uint64("verdicts.seed", 26, "verdicts benchmark: seed of the random opening moves, blunder plies and candidates")
	verdictsDepth  = flag.Int("verdicts.depth", 8, "verdicts benchmark: depth of the self-play moves (the planted blunder is checked at depth+2)")
	verdictsLimit  = flag.String("verdicts.limit", "nodes:200000", "verdicts benchmark: the analysis limit: default (the board's, games.DefaultMoveTime per position), movetime:MS, nodes:N or depth:N")
	verdictsRandom = flag.Int("verdicts.random", 4, "verdicts benchmark: random opening plies of a self-play game")
)

// Moves a planted game goes on for after its blunder.
const afterBlunder = 4

type benchGame struct {
	moves  []string
	random int // the first plies were random, not the engine's
	// planted: the ply of the planted blunder (-1: a self-play game).
	planted int
}

func TestVerdicts(t *testing.T) {
	limits, err := parseBenchLimit(*verdictsLimit)
	if err != nil {
		t.Fatal(err)
	}
	svc := session.NewService(session.Config{Pool: shared, DefaultEngine: "fairy", AcquireTimeout: time.Minute})
	rng := rand.New(rand.NewPCG(*verdictsSeed, 26))
	var games []benchGame
	t0 := time.Now()
	for g := range *verdictsGames {
		self := selfPlay(t, svc, rng, *verdictsPlies)
		games = append(games, self)
		planted, ok := plant(t, svc, rng, self)
		if !ok {
			t.Fatalf("game %d: no ply with a move losing ≥ 1200 cp found: %s", g, strings.Join(self.moves, " "))
		}
		games = append(games, planted)
		t.Logf("game %d: %d plies, blunder %s planted at ply %d", g, len(self.moves), planted.moves[planted.planted], planted.planted)
	}
	t.Logf("generated %d games in %v", len(games), time.Since(t0).Round(time.Second))

	m := newManager(t, nil)
	var fair, old tally
	t0 = time.Now()
	searches := 0
	for i, g := range games {
		v, serr := m.Start(session.Caller{Client: "bench"}, &Request{Position: &session.Position{Moves: g.moves}, Limits: limits})
		if serr != nil {
			t.Fatalf("game %d: %v", i, serr)
		}
		v = wait(t, m, "bench", v.ID, 30*time.Minute)
		if v.Status != StatusDone {
			t.Fatalf("game %d: %s %+v", i, v.Status, v.Error)
		}
		for ply, p := range v.Positions[:len(g.moves)] {
			searches++
			if p.BestEval != nil {
				searches++
			}
			switch {
			case g.planted >= 0 && ply == g.planted:
				fair.planted(p.Judgement, ply, i)
				old.planted(oldJudgement(p, v.Positions[ply+1]), ply, i)
			case g.planted < 0 && ply >= g.random:
				fair.self(p.Judgement, ply, i)
				old.self(oldJudgement(p, v.Positions[ply+1]), ply, i)
			}
		}
	}
	took := time.Since(t0)
	t.Logf("analysed %d games (%d searches) at %s in %v", len(games), searches, *verdictsLimit, took.Round(time.Second))
	t.Logf("before (differencing consecutive positions): %s", old)
	t.Logf("after (best move's position vs played move's): %s", fair)
	t.Logf("missed planted blunders: %v; false alarms: %v", fair.missed, fair.alarms)
	// The false-alarm target is a rate, and CI's default sample is small
	// (40 moves): 3 alarms in 40 happen one run in twenty at a true rate
	// of 2%. The test fails when the count is one that a rate of 5% gives
	// less than once in 200 runs (at 40 moves: 7 or more; the old
	// side-to-move bias judged nearly half the moves); the share itself is
	// what the benchmark's larger runs report against the target.
	bound := binomialBound(fair.selfN, 0.05, 0.005)
	t.Logf("false alarms %d of %d (%.1f%%, target ≤ 5%%); the test fails at %d", fair.alarmsN, fair.selfN, 100*fair.alarmShare(), bound)
	if fair.foundShare() < 0.9 || fair.alarmsN >= bound {
		t.Errorf("targets missed: found %.1f%% (want ≥ 90%%), false alarms %d of %d (want fewer than %d, which a rate of 5%% gives less than once in 200 runs)",
			100*fair.foundShare(), fair.alarmsN, fair.selfN, bound)
	}
}

// binomialBound is the smallest k with P(X ≥ k) ≤ alpha for X ~ Binomial(n, p):
// a count of k or more says the rate is above p, wrong at most alpha of the time.
func binomialBound(n int, p, alpha float64) int {
	pk := math.Pow(1-p, float64(n)) // P(X = 0)
	below := 0.0                    // P(X < k)
	for k := 0; k <= n; k++ {
		if 1-below <= alpha {
			return k
		}
		below += pk
		pk *= float64(n-k) / float64(k+1) * p / (1 - p)
	}
	return n + 1
}

// tally counts judgements of planted blunders and of self-play moves.
type tally struct {
	plantedN, found int
	selfN, alarmsN  int
	missed, alarms  []string // game:ply
}

func severe(j string) bool { return j == JudgementMistake || j == JudgementBlunder }

func (c *tally) planted(j string, ply, game int) {
	c.plantedN++
	if severe(j) {
		c.found++
	} else {
		c.missed = append(c.missed, fmt.Sprintf("%d:%d(%s)", game, ply, j))
	}
}

func (c *tally) self(j string, ply, game int) {
	c.selfN++
	if severe(j) {
		c.alarmsN++
		c.alarms = append(c.alarms, fmt.Sprintf("%d:%d(%s)", game, ply, j))
	}
}

func (c *tally) foundShare() float64 { return float64(c.found) / float64(max(1, c.plantedN)) }
func (c *tally) alarmShare() float64 { return float64(c.alarmsN) / float64(max(1, c.selfN)) }

func (c tally) String() string {
	return fmt.Sprintf("planted blunders found %d/%d = %.1f%%, self-play moves judged mistake or blunder %d/%d = %.1f%%",
		c.found, c.plantedN, 100*c.foundShare(), c.alarmsN, c.selfN, 100*c.alarmShare())
}

// oldJudgement is the judgement the old method gave: the mover's score in
// the position it moved from against its score in the next position (the
// opponent to move), with the old thresholds (the same win-rate drops).
func oldJudgement(p, next *Ply) string {
	if p.Eval == nil || next.Eval == nil {
		return ""
	}
	before, after := p.Eval, next.Eval
	if p.SideToMove == "w" {
		before, after = negate(before), negate(after)
	}
	_, j := Judge(before, after, DefaultThresholds())
	return j
}

func parseBenchLimit(s string) (*session.Limits, error) {
	if s == "default" {
		return nil, nil
	}
	kind, n, ok := strings.Cut(s, ":")
	v, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil || v <= 0 {
		return nil, fmt.Errorf("-verdicts.limit %q: default, movetime:MS, nodes:N or depth:N", s)
	}
	switch kind {
	case "movetime":
		return &session.Limits{MoveTimeMS: v}, nil
	case "nodes":
		return &session.Limits{Nodes: v}, nil
	case "depth":
		return &session.Limits{Depth: int(v)}, nil
	}
	return nil, fmt.Errorf("-verdicts.limit %q: default, movetime:MS, nodes:N or depth:N", s)
}

// benchSearch searches the position after moves at depth.
func benchSearch(t *testing.T, svc *session.Service, moves []string, depth int) *session.AnalyzeResult {
	t.Helper()
	// A new game per search, as the games were generated when the targets
	// were set: the same seed gives the same games whatever the engine
	// searched before (one-shot analyses otherwise keep its hash).
	ctx := session.WithCaller(t.Context(), session.Caller{FreshGame: true})
	res, err := svc.Analyze(ctx, &session.Request{Position: &session.Position{Moves: moves}, Limits: &session.Limits{Depth: depth}})
	if err != nil {
		t.Fatalf("search after %v: %v", moves, err)
	}
	return res
}

// selfPlay plays a game: random opening plies, then the engine's moves.
// It ends early at checkmate or when the engine resigns or declares.
func selfPlay(t *testing.T, svc *session.Service, rng *rand.Rand, plies int) benchGame {
	pos := shogi.Startpos()
	g := benchGame{planted: -1}
	for len(g.moves) < plies {
		legal := pos.LegalMoves()
		if len(legal) == 0 {
			break
		}
		var mv shogi.Move
		if len(g.moves) < *verdictsRandom {
			mv = legal[rng.IntN(len(legal))]
			g.random++
		} else {
			res := benchSearch(t, svc, g.moves, *verdictsDepth)
			m, err := pos.CheckMove(res.BestMove)
			if err != nil {
				break // resign or win
			}
			mv = m
		}
		pos.Play(mv)
		g.moves = append(g.moves, mv.String())
	}
	return g
}

// plant copies self with a blunder at a seeded ply: the first candidate
// (major pieces' moves first, in seeded order) that loses ≥ 1200 cp
// against the best move at depth+2, the two positions reached compared
// (same side to move), in a position the mover has not already won or
// lost (|best| ≤ 1000 cp). Then afterBlunder self-play plies.
func plant(t *testing.T, svc *session.Service, rng *rand.Rand, self benchGame) (benchGame, bool) {
	deep := *verdictsDepth + 2
	lo := self.random + 2
	plies := make([]int, 0, len(self.moves))
	for p := lo; p < len(self.moves); p++ {
		plies = append(plies, p)
	}
	rng.Shuffle(len(plies), func(i, j int) { plies[i], plies[j] = plies[j], plies[i] })
	for _, ply := range plies[:min(len(plies), 6)] {
		prefix := self.moves[:ply]
		pos, errs := shogi.Load("startpos", prefix)
		if errs != nil {
			t.Fatal(errs)
		}
		res := benchSearch(t, svc, prefix, deep)
		best := res.BestMove
		if _, err := pos.CheckMove(best); err != nil {
			continue
		}
		bestScore := moverCP(benchSearch(t, svc, append(slices.Clone(prefix), best), deep))
		if bestScore == nil || *bestScore > 1000 || *bestScore < -1000 {
			continue
		}
		legal := pos.LegalMoves()
		rng.Shuffle(len(legal), func(i, j int) { legal[i], legal[j] = legal[j], legal[i] })
		major := func(m shogi.Move) bool {
			if m.IsDrop() {
				return false
			}
			k := pos.At(m.From).Kind()
			return k.Base() == shogi.Rook || k.Base() == shogi.Bishop
		}
		slices.SortStableFunc(legal, func(a, b shogi.Move) int {
			switch ma, mb := major(a), major(b); {
			case ma && !mb:
				return -1
			case mb && !ma:
				return 1
			}
			return 0
		})
		for _, c := range legal[:min(len(legal), 24)] {
			if c.String() == best {
				continue
			}
			after := append(slices.Clone(prefix), c.String())
			s := moverCP(benchSearch(t, svc, after, deep))
			if s != nil && *s > *bestScore-1200 {
				continue
			}
			// s nil: a mate against the mover (or no score): lost.
			g := benchGame{moves: after, random: self.random, planted: ply}
			p, _ := shogi.Load("startpos", after)
			for range afterBlunder {
				if len(p.LegalMoves()) == 0 {
					break
				}
				r := benchSearch(t, svc, g.moves, *verdictsDepth)
				m, err := p.CheckMove(r.BestMove)
				if err != nil {
					break
				}
				p.Play(m)
				g.moves = append(g.moves, m.String())
			}
			return g, true
		}
	}
	return benchGame{}, false
}

// moverCP is the score, in cp from the side that just moved, of a search
// of the position its move reached; nil for a mate against it, or no
// score. A mate for it counts as 30000.
func moverCP(res *session.AnalyzeResult) *int {
	if len(res.Lines) == 0 || res.Lines[0].Score == nil {
		return nil
	}
	s := negate(res.Lines[0].Score)
	switch {
	case s.Mate != nil && WinRate(s) == 1:
		v := 30000
		return &v
	case s.Mate != nil || s.CP == nil:
		return nil
	}
	return s.CP
}

func TestBinomialBound(t *testing.T) {
	for _, c := range []struct {
		n    int
		p, a float64
		want int
	}{
		{40, 0.05, 0.005, 7}, // P(X ≥ 7) = 0.0033, P(X ≥ 6) = 0.0138
		{288, 0.05, 0.005, 26},
		{10, 0.5, 0.001, 10},  // P(X = 10) = 0.00098
		{10, 0.5, 0.0001, 11}, // no count is that rare: the test cannot fail on the rate
	} {
		if got := binomialBound(c.n, c.p, c.a); got != c.want {
			t.Errorf("binomialBound(%d, %v, %v) = %d, want %d", c.n, c.p, c.a, got, c.want)
		}
	}
}
