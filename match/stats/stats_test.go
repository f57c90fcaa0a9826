package stats

import (
	"math"
	"testing"
)

// near reports whether got prints as want at want's precision (a figure
// printed with two decimals is within 0.005 of the value).
func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol+1e-9 }

// Game counts and what cutechess-cli printed for them ("Elo difference:
// 27.9 +/- 62.4, LOS: 81.2 %"), from match logs published in engines'
// repositories: PS-Wizard/OopsMate (archive/data/results/v16_lazysmp.md,
// v15_probcut.md), Excse/arkoi_chess_engine (scores.md),
// GediminasMasaitis/Chess-Challenge-Submission (SUBMISSION-CHANGELOG.md).
// cutechess-cli prints W - L - D. Its normal quantile is an approximation
// about 0.16% below 1.959964, so that its margins are matched within 0.1,
// not 0.05; the Elo and LOS to its printed precision.
func TestFromGamesCutechess(t *testing.T) {
	for _, c := range []struct {
		src                 string
		w, l, d             int
		elo, margin, losPct float64
	}{
		{"OopsMate vs SF-2100", 45, 37, 18, 27.9, 62.4, 81.2},
		{"OopsMate vs Sayuri (lazysmp)", 99, 97, 104, 2.3, 31.8, 55.7},
		{"OopsMate vs Sayuri (probcut)", 92, 112, 96, -23.2, 32.5, 8.1},
		{"ACE Old vs ACE New", 172, 208, 620, -12.5, 13.3, 3.2},
		{"ChessChallenge1.0 vs Evil", 2, 4211, 787, -426.4, 12.1, 0.0},
		{"ChessChallenge1.1 vs 1.0", 1783, 0, 217, 496.6, 23.2, 100.0},
		{"ChessChallenge vs Dev 1.2", 338, 81, 1581, 44.9, 6.8, 100.0},
	} {
		e, ok := FromGames(Trinomial{Wins: c.w, Draws: c.d, Losses: c.l})
		if !ok || !near(e.Elo, c.elo, 0.05) || !near(e.Margin, c.margin, 0.1) || !near(100*e.LOS, c.losPct, 0.05) {
			t.Errorf("%s %d-%d-%d: got Elo %.2f ± %.2f LOS %.2f%%, want %.1f ± %.1f LOS %.1f%%",
				c.src, c.w, c.l, c.d, e.Elo, e.Margin, 100*e.LOS, c.elo, c.margin, c.losPct)
		}
	}
}

// Pair counts and what fastchess printed for them (Elo ±, nElo ±, LOS and
// the SPRT's LLR with its default model, normalized Elo, alpha = beta =
// 0.05), from logs published by KSaiAkshit/eschec (docs/dev_log.md), a
// question on chess.stackexchange.com ("Meaning of output from fast-chess
// engine testing suite", 400 games), and a Water engine test log
// ("Results of Water vs Stockfish", 800 games).
func TestFromPairsFastchess(t *testing.T) {
	for _, c := range []struct {
		src                        string
		p                          Pentanomial
		elo, margin, nelo, nmargin float64
		losPct                     float64
		elo0, elo1, llr            float64 // llr compared when elo1 > elo0
	}{
		{"eschec vs eschec_pawn_masks", Pentanomial{1, 42, 106, 46, 5}, 10.43, 17.99, 19.76, 34.05, 87.23, 0, 10, 0.49},
		{"eschec_pawn_masks vs eschec_repetition_detection", Pentanomial{2, 4, 25, 15, 4}, 52.51, 43.47, 83.99, 68.10, 99.22, 0, 10, 0.58},
		{"eschec_repetition_detection vs eschec_prng_mo", Pentanomial{0, 5, 21, 24, 0}, 66.82, 33.08, 141.45, 68.10, 100.00, 0, 10, 0.85},
		{"eschec_prng_mo vs eschec_persistent_tt", Pentanomial{0, 0, 3, 40, 7}, 209.91, 30.05, 603.02, 68.10, 100.00, 0, 10, 1.45},
		{"eschec vs eschec_dynamic_lmr", Pentanomial{0, 2, 8, 11, 1}, 88.74, 56.57, 169.90, 102.66, 99.94, 0, 100, 3.10},
		{"chess.stackexchange ChessEngine vs ChessEngine_Bugless", Pentanomial{4, 3, 34, 42, 117}, 277.00, 40.90, 345.17, 34.05, 100.00, 0, 0, 0},
		{"Water vs Stockfish", Pentanomial{68, 41, 143, 55, 93}, 27.85, 23.18, 29.10, 24.08, 99.11, 0, 0, 0},
	} {
		e, ok := FromPairs(c.p)
		if !ok || !near(e.Elo, c.elo, 0.005) || !near(e.Margin, c.margin, 0.005) || !near(e.NElo, c.nelo, 0.005) ||
			!near(e.NEloMargin, c.nmargin, 0.005) || !near(100*e.LOS, c.losPct, 0.005) {
			t.Errorf("%s %v: got Elo %.2f ± %.2f nElo %.2f ± %.2f LOS %.2f%%, want %.2f ± %.2f nElo %.2f ± %.2f LOS %.2f%%",
				c.src, c.p, e.Elo, e.Margin, e.NElo, e.NEloMargin, 100*e.LOS, c.elo, c.margin, c.nelo, c.nmargin, c.losPct)
		}
		if c.elo1 > c.elo0 {
			if got := (SPRT{Elo0: c.elo0, Elo1: c.elo1, Alpha: 0.05, Beta: 0.05}).LLR(c.p); !near(got, c.llr, 0.005) {
				t.Errorf("%s %v [%g, %g]: got LLR %.3f, want %.2f", c.src, c.p, c.elo0, c.elo1, got, c.llr)
			}
		}
	}
}

// LLRs of the GSPRT on pairs in normalized Elo published as test figures:
// MortenLohne/racetrack (src/tests/sprt_tests.rs, alpha 0.05, beta 0.10;
// its bins are LL, LD, DD+WL, WD, WW), and a fastchess log quoted in
// heofthetea/dhbw (semester-5/thunfisch/SPRT.md: 78 games, Ptnml [0, 0, 2,
// 0, 37], "LLR: 2.96 (100.6%) (-2.94, 2.94) [0.00, 20.00]", "H1 was
// accepted").
func TestLLRPublished(t *testing.T) {
	for _, c := range []struct {
		p                Pentanomial
		elo0, elo1, beta float64
		llr              float64
	}{
		{Pentanomial{440, 2910, 5170, 2888, 455}, 0, 5, 0.10, -2.27},
		{Pentanomial{142, 620, 1122, 699, 188}, 0, 5, 0.10, 2.99},
		{Pentanomial{349, 1561, 3340, 1604, 359}, -5, 0, 0.10, 2.90},
		{Pentanomial{98, 382, 674, 369, 71}, -5, 0, 0.10, -1.11},
		{Pentanomial{0, 0, 2, 0, 37}, 0, 20, 0.05, 2.96},
	} {
		s := SPRT{Elo0: c.elo0, Elo1: c.elo1, Alpha: 0.05, Beta: c.beta}
		if got := s.LLR(c.p); !near(got, c.llr, 0.005) {
			t.Errorf("%v [%g, %g]: got LLR %.3f, want %.2f", c.p, c.elo0, c.elo1, got, c.llr)
		}
	}
	// The logistic model: a fastchess match quoted in a public
	// repository's test of its SPRT tooling (the code index names no
	// repository for it): ("60 games of the engine against itself at
	// 1+0.01 under -sprt elo0=0 elo1=10 alpha=0.05 beta=0.05
	// model=logistic", Ptnml(0-2) [2, 3, 14, 3, 8], LLR 0.44).
	if got := (SPRT{Elo0: 0, Elo1: 10, Alpha: 0.05, Beta: 0.05, Model: Logistic}).LLR(Pentanomial{2, 3, 14, 3, 8}); !near(got, 0.44, 0.005) {
		t.Errorf("logistic [2 3 14 3 8] [0, 10]: got LLR %.3f, want 0.44", got)
	}
	// The last one decided H1; bounds as fastchess prints them.
	s := SPRT{Elo0: 0, Elo1: 20, Alpha: 0.05, Beta: 0.05}
	lo, hi := s.Bounds()
	if !near(lo, -2.94, 0.005) || !near(hi, 2.94, 0.005) {
		t.Errorf("bounds: got (%.3f, %.3f), want (-2.94, 2.94)", lo, hi)
	}
	if got := s.Decide(s.LLR(Pentanomial{0, 0, 2, 0, 37})); got != H1 {
		t.Errorf("decision: got %q, want H1", got)
	}
	if got := s.Decide(-3); got != H0 {
		t.Errorf("decision at -3: got %q, want H0", got)
	}
	if got := s.Decide(0); got != "" {
		t.Errorf("decision at 0: got %q, want none", got)
	}
}

// The edges: no games, all wins, all draws.
func TestEdges(t *testing.T) {
	if _, ok := FromGames(Trinomial{}); ok {
		t.Error("no games: got an estimate")
	}
	if _, ok := FromPairs(Pentanomial{}); ok {
		t.Error("no pairs: got an estimate")
	}
	e, _ := FromGames(Trinomial{Wins: 10})
	if !math.IsInf(e.Elo, 1) || !(e.LOS > 0.999) {
		t.Errorf("all wins: got Elo %v LOS %v, want +Inf and above 0.999", e.Elo, e.LOS)
	}
	// All won: the interval's lower end is the exact binomial bound,
	// 0.025^(1/n) of the units won: 17 pairs, 0.8049 (+246.2 Elo); 10
	// games, 0.6915 (+140.2). All lost: the mirror image.
	for _, c := range []struct {
		e      Estimate
		lo, hi float64
	}{
		{must(FromPairs(Pentanomial{0, 0, 0, 0, 17})), 246.2, math.Inf(1)},
		{must(FromGames(Trinomial{Wins: 10})), 140.2, math.Inf(1)},
		{must(FromGames(Trinomial{Losses: 10})), math.Inf(-1), -140.2},
	} {
		if near := func(a, b float64) bool { return a == b || math.Abs(a-b) < 0.05 }; !near(c.e.Lo, c.lo) || !near(c.e.Hi, c.hi) {
			t.Errorf("score %v: got interval %.2f..%.2f, want %.1f..%.1f", c.e.Score, c.e.Lo, c.e.Hi, c.lo, c.hi)
		}
	}
	e, _ = FromPairs(Pentanomial{0, 0, 6, 0, 0})
	if e.Elo != 0 || e.LOS != 0.5 || e.Margin != 0 {
		t.Errorf("all draws: got Elo %v ± %v LOS %v, want 0 ± 0, 0.5", e.Elo, e.Margin, e.LOS)
	}
	if got := (SPRT{Elo0: 0, Elo1: 5, Alpha: 0.05, Beta: 0.05}).LLR(Pentanomial{}); got != 0 {
		t.Errorf("LLR of nothing: got %v, want 0", got)
	}
	for _, s := range []SPRT{{0, 0, 0.05, 0.05, ""}, {0, 5, 0, 0.05, ""}, {0, 5, 0.05, 0.5, ""}, {5, 0, 0.05, 0.05, ""}, {0, 5, 0.05, 0.05, "bayesian"}} {
		if s.Check() == nil {
			t.Errorf("%+v: accepted", s)
		}
	}
}

func must(e Estimate, ok bool) Estimate {
	if !ok {
		panic("no estimate")
	}
	return e
}
