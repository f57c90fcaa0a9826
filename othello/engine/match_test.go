package engine

import (
	"math/rand/v2"
	"testing"
	"time"
)

// The strength tests: cheap versions (10 to 40 games, 1,500 nodes a move)
// of the matches BenchmarkMatch plays at 100 ms a move, cheap enough for
// -race on a shared machine.

const testNodes = 1500

func TestEngineBeatsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	eng := EnginePlayer{Searcher: NewSearcher(1, 1), Limits: Limits{Level: MaxLevel, Nodes: testNodes, SolveEmpties: 10}}
	r := Match(eng, RandomPlayer{rng}, 10, 4, rng)
	if r.Wins < 10 {
		t.Errorf("engine vs random: %+v, want 10 wins", r)
	}
}

func TestEngineBeatsGreedy(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	eng := EnginePlayer{Searcher: NewSearcher(1, 1), Limits: Limits{Level: MaxLevel, Nodes: testNodes, SolveEmpties: 10}}
	r := Match(eng, GreedyPlayer{rng}, 20, 4, rng)
	if r.Wins < 19 {
		t.Errorf("engine vs greedy: %+v, want 19 wins or more", r)
	}
}

// TestWeakestLevelLosesToGreedy: level 0 is a beginner.
func TestWeakestLevelLosesToGreedy(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	eng := EnginePlayer{Searcher: NewSearcher(1, 2), Limits: Limits{Level: 0}}
	r := Match(eng, GreedyPlayer{rng}, 40, 4, rng)
	if r.Losses <= 20 {
		t.Errorf("level 0 vs greedy: %+v, want more than 20 losses of 40", r)
	}
}

// TestLevelsAreOrdered: a middle level beats level 0 and loses to full
// strength, most of the time.
func TestLevelsAreOrdered(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	mid := EnginePlayer{Searcher: NewSearcher(1, 3), Limits: Limits{Level: 10, SolveEmpties: 10}}
	low := EnginePlayer{Searcher: NewSearcher(1, 4), Limits: Limits{Level: 0}}
	full := EnginePlayer{Searcher: NewSearcher(1, 5), Limits: Limits{Level: MaxLevel, Nodes: testNodes, SolveEmpties: 10}}
	if r := Match(mid, low, 10, 4, rng); r.Wins < 8 {
		t.Errorf("level 10 vs level 0: %+v, want 8 wins of 10 or more", r)
	}
	if r := Match(full, mid, 10, 4, rng); r.Wins < 7 {
		t.Errorf("level 20 vs level 10: %+v, want 7 wins of 10 or more", r)
	}
}

// BenchmarkMatch plays the matches: 100 games against the random
// mover and against the greedy player at 100 ms a move, colours
// alternating, and reports the wins (go test -run '^$' -bench Match
// -benchtime 1x).
func BenchmarkMatch(b *testing.B) {
	for _, opp := range []string{"random", "greedy"} {
		b.Run(opp, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(21, 22))
			var p Player = RandomPlayer{rng}
			if opp == "greedy" {
				p = GreedyPlayer{rng}
			}
			eng := EnginePlayer{Searcher: NewSearcher(16, 1), Limits: Limits{Level: MaxLevel}, MoveTime: 100 * time.Millisecond}
			var r MatchResult
			for b.Loop() {
				r = Match(eng, p, 100, 4, rng)
			}
			b.ReportMetric(float64(r.Wins), "wins")
			b.ReportMetric(float64(r.Losses), "losses")
			b.ReportMetric(float64(r.Draws), "draws")
		})
	}
}

// BenchmarkWeakestLevel plays level 0 against the greedy player, 100 games.
func BenchmarkWeakestLevel(b *testing.B) {
	rng := rand.New(rand.NewPCG(23, 24))
	eng := EnginePlayer{Searcher: NewSearcher(1, 1), Limits: Limits{Level: 0}}
	var r MatchResult
	for b.Loop() {
		r = Match(eng, GreedyPlayer{rng}, 100, 4, rng)
	}
	b.ReportMetric(float64(r.Wins), "wins")
	b.ReportMetric(float64(r.Losses), "losses")
}
