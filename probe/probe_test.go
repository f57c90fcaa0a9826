package probe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/othello/engine"
	"github.com/usid/usid/usi"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "othello-engine" {
		// usid's own othello engine: this test binary serves as it, as
		// usid's binary does for "usid othello-engine".
		if err := engine.ServeUSIX(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "othello-engine:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	fakeengine.RunIfRequested()
	os.Exit(m.Run())
}

// starter starts path with env as a probe's spare engine, with short
// timeouts so that misbehaving fakes cost little (yet long enough for a
// well-behaved one on a loaded machine).
func starter(path string, env []string) func(context.Context) (*usi.Engine, error) {
	return func(ctx context.Context) (*usi.Engine, error) {
		return usi.Start(ctx, usi.Config{Path: path, Env: env, StopTimeout: 3 * time.Second, QuitTimeout: time.Second, USIOKTimeout: 30 * time.Second})
	}
}

func probeFake(t *testing.T, mode string) *Profile {
	t.Helper()
	p, err := Run(t.Context(), Config{Start: starter(fakeengine.Path(), fakeengine.Env(mode))})
	if err != nil {
		t.Fatalf("%s: Run: %v", mode, err)
	}
	return p
}

// TestFakeDialects: each behaviour the probe must tell apart, on a fake
// engine that shows it.
func TestFakeDialects(t *testing.T) {
	for _, tt := range []struct {
		mode  string
		check func(p *Profile) string // "" when the profile is right
	}{
		{fakeengine.Normal, func(p *Profile) string {
			if p.Goes("depth") != Native || p.Goes("nodes") != Native || p.Checkmate || p.MateOnly || !p.ReadyBetweenLeases || p.MultiPVOption != "MultiPV" || len(p.Avoid) != 0 {
				return "want native depth and nodes, no mate search, cheap isready, MultiPV, nothing avoided"
			}
			return ""
		}},
		{fakeengine.AbortOn + "=depth_nodes_binc", func(p *Profile) string {
			if p.Goes("depth") != Emulated || p.Goes("nodes") != Emulated || p.Goes("binc") != Unsupported || p.Goes("winc") != Unsupported {
				return "want depth and nodes emulated, binc/winc unsupported"
			}
			if !strings.Contains(p.Notes["depth"], "unknown option in go depth") {
				return "the note on depth lacks the engine's own words"
			}
			return ""
		}},
		{fakeengine.IgnoreMoveTime, func(p *Profile) string {
			if p.Goes("movetime") != Emulated || !strings.Contains(p.Notes["movetime"], "did not end the search") {
				return "want movetime emulated: it never ends by itself"
			}
			return ""
		}},
		{fakeengine.ShortMoveTime, func(p *Profile) string {
			if p.Goes("movetime") != Emulated || !strings.Contains(p.Notes["movetime"], "answered after") {
				return "want movetime emulated: it answers far too early"
			}
			return ""
		}},
		{fakeengine.MateBestMove, func(p *Profile) string {
			if p.Checkmate || !strings.Contains(p.Notes["checkmate"], "bestmove") {
				return "want no mate search (it answers go mate with bestmove)"
			}
			return ""
		}},
		{fakeengine.Normal, func(p *Profile) string { // checkmate notimplemented
			if p.Checkmate || !strings.Contains(p.Notes["checkmate"], "notimplemented") {
				return "want no mate search (checkmate notimplemented)"
			}
			return ""
		}},
		{fakeengine.MateLine + "=G*5b", func(p *Profile) string {
			if !p.Checkmate || p.AfterMate != AfterMateOK || p.MateOnly {
				return "want a mate search that leaves the engine usable"
			}
			return ""
		}},
		{fakeengine.MateLine + "=G*5a", func(p *Profile) string {
			if p.Checkmate || !strings.Contains(p.Notes["checkmate"], "false mate") {
				return "want a false mate line refused"
			}
			return ""
		}},
		{fakeengine.MateOnly, func(p *Profile) string {
			if !p.MateOnly || !p.Checkmate || p.Goes("depth") != Unsupported {
				return "want a mate-only engine"
			}
			return ""
		}},
		{fakeengine.SlowReady + "=600ms", func(p *Profile) string {
			if p.ReadyBetweenLeases || p.ReadyAgainMS < 500 {
				return "want isready measured as costly and kept out of leases"
			}
			return ""
		}},
		{fakeengine.StrictOrder, func(p *Profile) string {
			if p.Goes("depth") != Native || p.MateOnly {
				return "want a working engine: isready never follows usinewgame"
			}
			return ""
		}},
		{fakeengine.ReadyTwice, func(p *Profile) string {
			if p.Goes("depth") != Native || p.MateOnly || !p.ReadyBetweenLeases || len(p.Avoid) != 0 {
				return "want a working engine: never two isready in a row"
			}
			return ""
		}},
		{fakeengine.OneReady, func(p *Profile) string {
			if p.Goes("depth") != Native || p.ReadyBetweenLeases || !p.Avoids(AvoidReadyAfterGameOver) {
				return "want a working engine that gets no isready after a game"
			}
			if n := p.Notes[AvoidReadyAfterGameOver]; !strings.Contains(n, "exits on isready after gameover") || !strings.Contains(n, "bye: one isready is enough") {
				return "the finding lacks the step or the engine's last words"
			}
			return ""
		}},
		{fakeengine.StartposHang, func(p *Profile) string {
			if p.Goes("depth") != Native || !p.Avoids(AvoidStartposAfterSFEN) || !strings.Contains(p.Notes[AvoidStartposAfterSFEN], "hangs on") {
				return "want startpos after sfen avoided: the engine hangs on it"
			}
			return ""
		}},
		{fakeengine.AnalyseMode, func(p *Profile) string {
			if p.Goes("depth") != Native || !p.ReportsDepth || p.MateOnly {
				return "want an engine probed in analysis mode (out of its book: it searches)"
			}
			return ""
		}},
		{fakeengine.NoDepth, func(p *Profile) string {
			if p.ReportsDepth || p.ReportsNodes {
				return "want no depth and no nodes reported"
			}
			return ""
		}},
	} {
		p := probeFake(t, tt.mode)
		if why := tt.check(p); why != "" {
			t.Errorf("%s: %s; got go %v checkmate %v after_mate %s mate_only %v isready %dms notes %v", tt.mode, why, p.Go, p.Checkmate, p.AfterMate, p.MateOnly, p.ReadyAgainMS, p.Notes)
		}
		if p.Sources["depth"] != SourceProbed || p.Sources["checkmate"] != SourceProbed {
			t.Errorf("%s: sources %v, want probed", tt.mode, p.Sources)
		}
	}
}

// TestDeafAfterMate: an engine that answers no go after a mate search is to
// be replaced after each one; one that keeps answering is not.
func TestDeafAfterMate(t *testing.T) {
	p := probeFake(t, fakeengine.DeafAfterMate)
	if !p.Checkmate || p.AfterMate != AfterMateRecycle || p.Sources["after_mate"] != SourceProbed {
		t.Errorf("deaf after mate: checkmate %v, after_mate %s (%s)", p.Checkmate, p.AfterMate, p.Notes["after_mate"])
	}
	p = probeFake(t, fakeengine.MateLine+"=G*5b")
	if p.AfterMate != AfterMateOK {
		t.Errorf("after_mate %s for a fake that keeps answering", p.AfterMate)
	}
}

// TestCannotStart: an engine that prints an error and exits, and a chess
// engine, fail with their own words.
func TestCannotStart(t *testing.T) {
	_, err := Run(t.Context(), Config{Start: starter(fakeengine.Path(), fakeengine.Env(fakeengine.StdoutError))})
	if !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), "failed to read nn.bin") {
		t.Errorf("stdout-error: %v, want ErrStart with the engine's words", err)
	}
	_, err = Run(t.Context(), Config{Start: starter(fakeengine.Path(), fakeengine.Env(fakeengine.UCI))})
	if !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), "Unknown command") {
		t.Errorf("uci probed as USI: %v, want ErrStart with the engine's words", err)
	}
}

// TestDetect: the dialect is learned from the engine's answer; an engine
// that speaks both (fairy-stockfish) answers usi first and is a USI engine.
func TestDetect(t *testing.T) {
	need(t, "/usr/games/fairy-stockfish", "fairy-stockfish")
	need(t, "/usr/games/stockfish", "stockfish")
	for _, tt := range []struct {
		cfg  usi.Config
		want *usi.Dialect
	}{
		{usi.Config{Path: fakeengine.Path(), Env: fakeengine.Env(fakeengine.UCI)}, usi.DialectUCI},
		{usi.Config{Path: fakeengine.Path(), Env: fakeengine.Env(fakeengine.Normal)}, usi.DialectUSI},
		{usi.Config{Path: "/usr/games/stockfish"}, usi.DialectUCI},
		{usi.Config{Path: "/usr/games/fairy-stockfish"}, usi.DialectUSI},
	} {
		d, err := usi.Detect(t.Context(), tt.cfg, 30*time.Second)
		if err != nil || d != tt.want {
			t.Errorf("%s %v: got %v, %v, want %s", tt.cfg.Path, tt.cfg.Env[len(tt.cfg.Env)-1:], d, err, tt.want.Name)
		}
	}
	_, err := usi.Detect(t.Context(), usi.Config{Path: fakeengine.Path(), Env: fakeengine.Env(fakeengine.NoUSIOK)}, 3*time.Second)
	if err == nil {
		t.Error("an engine answering neither: no error")
	}
}

// TestProbeUCI: a chess engine is probed with chess positions and its
// findings (mates answered by bestmove, variants) are in its profile.
func TestProbeUCI(t *testing.T) {
	need(t, "/usr/games/fairy-stockfish", "fairy-stockfish")
	need(t, "/usr/games/stockfish", "stockfish")
	for _, path := range []string{"/usr/games/stockfish", "/usr/games/fairy-stockfish"} {
		start := func(ctx context.Context) (*usi.Engine, error) {
			return usi.Start(ctx, usi.Config{Path: path, Dialect: usi.DialectUCI})
		}
		p, err := Run(t.Context(), Config{Start: start, Dialect: usi.DialectUCI})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if p.Protocol != "uci" || p.Game() != "chess" || !p.Checkmate || p.MateOnly || p.Goes("nodes") != Native ||
			p.Goes("movetime") != Native || p.Goes("byoyomi") != Unsupported || p.MultiPVOption != "MultiPV" || p.HashOption != "Hash" || !p.Chess960 {
			t.Errorf("%s: profile %+v", path, p)
		}
		if p.ScoreSide != ScoreSideToMove || p.Sources["score_side"] != SourceProbed {
			t.Errorf("%s: score side %q (%s), want %s", path, p.ScoreSide, p.Notes["score_side"], ScoreSideToMove)
		}
		if path == "/usr/games/fairy-stockfish" && !slices.Contains(p.Variants, "chess") {
			t.Errorf("fairy-stockfish: variants %v, want chess among them", p.Variants)
		}
	}
	// The fake's mate answer is checked by the rules.
	start := func(ctx context.Context) (*usi.Engine, error) {
		return usi.Start(ctx, usi.Config{Path: fakeengine.Path(), Env: fakeengine.Env(fakeengine.UCIFalseMate), Dialect: usi.DialectUCI})
	}
	p, err := Run(t.Context(), Config{Start: start, Dialect: usi.DialectUCI})
	if err != nil || p.Checkmate || !strings.Contains(p.Notes["checkmate"], "checkmate") {
		t.Errorf("false mate: %v, checkmate %v (%s), want no mate search", err, p.Checkmate, p.Notes["checkmate"])
	}
}

func need(t *testing.T, path, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(path); err != nil {
		t.Fatalf("%s is missing: apt-get install %s (or make test-deps)", path, pkg)
	}
}

// TestRealEngines probes Debian's engines afresh (no cache).
func TestRealEngines(t *testing.T) {
	need(t, "/usr/games/fairy-stockfish", "fairy-stockfish")
	need(t, "/usr/games/gpsusi", "gpsshogi")
	fairy, err := Run(t.Context(), Config{Start: starter("/usr/games/fairy-stockfish", nil)})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"depth", "nodes", "movetime", "binc"} {
		if fairy.Goes(g) != Native {
			t.Errorf("fairy-stockfish: %s %s (%s), want native", g, fairy.Goes(g), fairy.Notes[g])
		}
	}
	if fairy.Checkmate || fairy.MultiPVOption != "MultiPV" || fairy.HashOption != "Hash" || !fairy.ReportsDepth {
		t.Errorf("fairy-stockfish: checkmate %v, multipv %q, hash %q, reports depth %v", fairy.Checkmate, fairy.MultiPVOption, fairy.HashOption, fairy.ReportsDepth)
	}
	gps, err := Run(t.Context(), Config{Start: func(ctx context.Context) (*usi.Engine, error) {
		return usi.Start(ctx, usi.Config{Path: "/usr/games/gpsusi", USIOKTimeout: 2 * time.Minute}) // a bound for a loaded machine
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"depth", "nodes", "movetime"} {
		if gps.Goes(g) != Emulated {
			t.Errorf("gpsusi: %s %s, want emulated (it aborts on it)", g, gps.Goes(g))
		}
	}
	if gps.Goes("binc") != Unsupported || !gps.Checkmate || gps.AfterMate != AfterMateOK || gps.MateOnly {
		t.Errorf("gpsusi: binc %s, checkmate %v, after mate %s, mate only %v", gps.Goes("binc"), gps.Checkmate, gps.AfterMate, gps.MateOnly)
	}
	// gpsusi plays "position startpos moves ..." on the previous SFEN board
	// and loops for ever: the REST sequence mate (an SFEN) then an analysis
	// from the start killed it.
	if !gps.Avoids(AvoidStartposAfterSFEN) || fairy.Avoids(AvoidStartposAfterSFEN) {
		t.Errorf("startpos after sfen avoided: gpsusi %v (%s), fairy-stockfish %v", gps.Avoid, gps.Notes[AvoidStartposAfterSFEN], fairy.Avoid)
	}
	for _, p := range []*Profile{fairy, gps} {
		if p.ScoreSide != ScoreSideToMove {
			t.Errorf("%s: score side %q (%s), want %s", p.Identity.Name, p.ScoreSide, p.Notes["score_side"], ScoreSideToMove)
		}
	}
	if !gps.ReadyBetweenLeases || !fairy.ReadyBetweenLeases {
		t.Errorf("isready at a new game: gpsusi %dms %v, fairy-stockfish %dms %v; want cheap", gps.ReadyAgainMS, gps.ReadyBetweenLeases, fairy.ReadyAgainMS, fairy.ReadyBetweenLeases)
	}
}

// TestCache: a saved profile loads back under its key, and another binary
// (or version) misses.
func TestCache(t *testing.T) {
	dir := t.TempDir()
	id, err := IdentityOf(fakeengine.Path())
	if err != nil {
		t.Fatal(err)
	}
	p := probeFake(t, fakeengine.Normal)
	key := Key(id, "env=x")
	if err := Save(dir, key, p); err != nil {
		t.Fatal(err)
	}
	got, ok := Load(dir, key)
	if !ok || got.Goes("depth") != p.Goes("depth") || got.Identity.Name != p.Identity.Name {
		t.Fatalf("Load = %+v, %v", got, ok)
	}
	if _, ok := Load(dir, Key(id, "env=y")); ok {
		t.Error("a profile loaded for another configuration")
	}
	id.Size++
	if Key(id, "env=x") == key {
		t.Error("a changed binary keeps its key")
	}
	configured := got.Apply(Override{Go: []string{"movetime"}, Checkmate: new(true)})
	if configured.Goes("depth") != Emulated || configured.Goes("movetime") != Native || !configured.Checkmate ||
		configured.Sources["depth"] != SourceConfigured || got.Goes("depth") != p.Goes("depth") {
		t.Errorf("Apply: %+v (original %v)", configured, got.Go)
	}
}
