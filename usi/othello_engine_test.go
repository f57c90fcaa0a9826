package usi

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/usid/usid/internal/fakeengine"
)

// startOthello starts a fake othello engine in mode as dialect d, ready.
func startOthello(t *testing.T, mode string, d *Dialect) *Engine {
	t.Helper()
	cfg, _ := fakeConfig(t, mode)
	cfg.Dialect = d
	e := startEngine(t, cfg)
	if err := e.IsReady(ctxTimeout(t, 30*time.Second)); err != nil {
		t.Fatalf("%s: IsReady: %v", mode, err)
	}
	return e
}

// search runs one search to its end.
func search(t *testing.T, e *Engine, p Position, g Go) Result {
	t.Helper()
	ctx := ctxTimeout(t, 30*time.Second)
	s, err := e.Go(ctx, p, g)
	if err != nil {
		t.Fatalf("Go: %v", err)
	}
	res, err := s.Wait(ctx)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return res
}

var byoyomi = Go{Clock: &Clock{Byoyomi: time.Second}}

// TestUSIXHandshake: what each fake USI-X engine says at the handshake is
// kept: its id ("auther", empty values), its options, its score scale.
func TestUSIXHandshake(t *testing.T) {
	for _, tt := range []struct {
		mode    string
		id      ID
		scale   ScoreScale
		noScale bool
	}{
		{fakeengine.USIX, ID{Name: "Fake usix", Author: "usid tests"}, ScoreScale{ScoreStones, -64, 64}, false},
		{fakeengine.USIXAuther, ID{Name: "Fake usix-auther", Author: "Y_Hyodo"}, ScoreScale{ScoreStones, -64, 64}, false},
		{fakeengine.USIXEmptyID, ID{}, ScoreScale{ScoreStones, -64, 64}, false},
		{fakeengine.USIXScoreType + "=stones", ID{Name: "Fake usix-scoretype", Author: "usid tests"}, ScoreScale{ScoreStones, -64, 64}, false},
		{fakeengine.USIXScoreType + "=WP", ID{Name: "Fake usix-scoretype", Author: "usid tests"}, ScoreScale{ScoreWP, 0, 100}, false},
		{fakeengine.USIXScoreType + "=other", ID{Name: "Fake usix-scoretype", Author: "usid tests"}, ScoreScale{ScoreOther, -100, 100}, false},
		{fakeengine.USIXScoreType + "=none", ID{Name: "Fake usix-scoretype", Author: "usid tests"}, ScoreScale{}, true},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			e := startOthello(t, tt.mode, DialectUSIX)
			if got := e.ID(); got != tt.id {
				t.Errorf("ID = %+v, want %+v", got, tt.id)
			}
			scale, ok := e.ScoreScale()
			if ok == tt.noScale || scale != tt.scale {
				t.Errorf("ScoreScale = %+v, %v; want %+v, %v", scale, ok, tt.scale, !tt.noScale)
			}
			if o := e.Options(); len(o) != 1 || o[0].Name != "max_depth" {
				t.Errorf("Options = %+v", o)
			}
		})
	}
}

// TestUSIXSearch: searches of the fake USI-X engines are read: bare and
// float scores in the declared scale, a win outside it clamped as a bound,
// no info at all, pass, the info string.
func TestUSIXSearch(t *testing.T) {
	legal, _ := fakeengine.OthelloMoves(StartOthello)
	t.Run("usix", func(t *testing.T) {
		e := startOthello(t, fakeengine.USIX, DialectUSIX)
		res := search(t, e, Position{}, byoyomi)
		if res.BestMove == nil || !slices.Contains(legal, res.BestMove.Move) {
			t.Fatalf("bestmove %+v, want one of %v", res.BestMove, legal)
		}
		if len(res.Lines) != 1 || res.Lines[0].Score != (Score{Scaled: true, Points: 2, Value: 200}) {
			t.Errorf("lines %+v, want one with a bare score of 2", res.Lines)
		}
		// From a position token, with moves and a pass in the list.
		after, _ := fakeengine.OthelloAfter(afterF5, "f6")
		want, _ := fakeengine.OthelloMoves(after)
		res = search(t, e, Position{SFEN: afterF5, Moves: []string{"f6"}}, byoyomi)
		if !slices.Contains(want, res.BestMove.Move) {
			t.Errorf("bestmove %q after f5 f6, want one of %v", res.BestMove.Move, want)
		}
	})
	t.Run("float", func(t *testing.T) {
		e := startOthello(t, fakeengine.USIXFloat, DialectUSIX)
		ctx := ctxTimeout(t, 30*time.Second)
		s, err := e.Go(ctx, Position{}, byoyomi)
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for in, ok := s.Next(ctx); ok; in, ok = s.Next(ctx) {
			if in.Has(InfoString) {
				texts = append(texts, in.Text)
			}
		}
		res, err := s.Wait(ctx)
		if err != nil || len(res.Lines) != 1 || res.Lines[0].Score != (Score{Scaled: true, Points: 41, Value: 4100}) {
			t.Errorf("result %+v, %v, want a line scored 41.0", res, err)
		}
		if !slices.Equal(texts, []string{"no_search_score -73.0"}) {
			t.Errorf("info strings %q", texts)
		}
	})
	t.Run("win-outside", func(t *testing.T) {
		e := startOthello(t, fakeengine.USIXWinOutside, DialectUSIX)
		res := search(t, e, Position{}, byoyomi)
		if len(res.Lines) != 1 || res.Lines[0].Score != (Score{Scaled: true, Points: 100, Value: 10000, Bound: LowerBound}) {
			t.Errorf("lines %+v, want 10000 on a scale of ±100 read as at least 100", res.Lines)
		}
	})
	t.Run("no-info", func(t *testing.T) {
		e := startOthello(t, fakeengine.USIXNoInfo, DialectUSIX)
		res := search(t, e, Position{}, byoyomi)
		if res.BestMove == nil || !slices.Contains(legal, res.BestMove.Move) || len(res.Lines) != 0 {
			t.Errorf("result %+v, want a bestmove and no lines", res)
		}
	})
	t.Run("pass", func(t *testing.T) {
		e := startOthello(t, fakeengine.USIXPass, DialectUSIX)
		res := search(t, e, Position{}, byoyomi)
		if *res.BestMove != (BestMove{Move: MovePass, Ponder: "b6"}) {
			t.Errorf("bestmove %+v, want pass ponder b6", res.BestMove)
		}
	})
	t.Run("no-square", func(t *testing.T) {
		// Black has no square: X everywhere but one empty cell, no O.
		full := strings.Repeat("X", 63) + "-B"
		e := startOthello(t, fakeengine.USIX, DialectUSIX)
		// Go.Pass changes nothing in USI-X: the engine answers its pass.
		res := search(t, e, Position{SFEN: full}, Go{Pass: true, Clock: &Clock{Byoyomi: time.Second}})
		if res.BestMove.Move != MovePass || len(res.Lines) != 0 {
			t.Errorf("result %+v, want bestmove pass", res)
		}
	})
}

// TestUSIXInfinite: the engines that answer go infinite at once (and then
// ignore stop) and those that answer only at stop both end their search.
func TestUSIXInfinite(t *testing.T) {
	t.Run("at-once", func(t *testing.T) {
		e := startOthello(t, fakeengine.USIXInfiniteAtOnce, DialectUSIX)
		ctx := ctxTimeout(t, 30*time.Second)
		s, err := e.Go(ctx, Position{}, Go{Infinite: true})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Wait(ctx) // no stop sent: it answers by itself
		if err != nil || res.BestMove == nil {
			t.Fatalf("Wait: %+v, %v", res, err)
		}
		s.Stop() // the search has ended: nothing is sent, nothing waits
		if err := e.IsReady(ctx); err != nil {
			t.Fatalf("IsReady after: %v", err)
		}
		if res := search(t, e, Position{}, byoyomi); res.BestMove == nil {
			t.Error("no second search")
		}
	})
	t.Run("at-stop", func(t *testing.T) {
		e := startOthello(t, fakeengine.USIX, DialectUSIX)
		ctx := ctxTimeout(t, 30*time.Second)
		s, err := e.Go(ctx, Position{}, Go{Infinite: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := s.Next(ctx); !ok {
			t.Fatal("no info before stop")
		}
		select {
		case <-s.Done():
			t.Fatal("ended before stop")
		default:
		}
		s.Stop()
		if res, err := s.Wait(ctx); err != nil || res.BestMove == nil {
			t.Fatalf("Wait: %+v, %v", res, err)
		}
	})
}

// TestUSIXNeverSendsWhatCrashes: the fake USI-X engine exits on a position
// written with spaces and on an upper-case move, as the real ones do;
// usid refuses both before anything is sent, and sends no gameover.
func TestUSIXNeverSendsWhatCrashes(t *testing.T) {
	for _, in := range []string{
		"position sfen " + afterF5[:64] + " W 2 moves\ngo\n",
		"position startpos moves D3\ngo\n",
		"position sfen " + StartSFEN + "\ngo\n",
	} {
		cmd := exec.Command(fakeengine.Path())
		cmd.Env = fakeengine.Env(fakeengine.USIX)
		cmd.Stdin = strings.NewReader(in)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(stderr.String(), "Traceback") {
			t.Errorf("fake engine given %q: %v, %q; want a crash", in, err, stderr.String())
		}
	}

	log := filepath.Join(t.TempDir(), "log")
	cfg, _ := fakeConfig(t, fakeengine.USIX)
	cfg.Env = append(cfg.Env, fakeengine.EnvLog+"="+log)
	cfg.Dialect = DialectUSIX
	e := startEngine(t, cfg)
	ctx := ctxTimeout(t, 30*time.Second)
	for _, p := range []Position{{SFEN: afterF5[:64] + " W 2"}, {Moves: []string{"D3"}}, {SFEN: StartSFEN}} {
		if _, err := e.Go(ctx, p, byoyomi); !errors.Is(err, ErrBadCommand) {
			t.Errorf("Go(%+v): %v, want ErrBadCommand", p, err)
		}
	}
	if err := e.GameOver(Win); err != nil {
		t.Errorf("GameOver: %v", err)
	}
	if err := e.IsReady(ctx); err != nil {
		t.Fatalf("IsReady: engine hurt: %v", err)
	}
	b, _ := os.ReadFile(log)
	if got := string(b); got != "usi\nscore_scale_and_type\nisready\n" {
		t.Errorf("the engine read %q", got)
	}
}

// TestUSIXPassMisplay: an engine that misplays a pass inside a move list
// (Azisai) answers an illegal move there, and a legal one when the same
// position is sent as a position token without moves, as usid can send it.
func TestUSIXPassMisplay(t *testing.T) {
	e := startOthello(t, fakeengine.USIXPassMisplay, DialectUSIX)
	moves := []string{"f5", "pass"} // not a legal game: the fake does not check, as real engines do not
	reached, _ := fakeengine.OthelloAfter("", moves...)
	legal, _ := fakeengine.OthelloMoves(reached)
	if res := search(t, e, Position{Moves: moves}, byoyomi); slices.Contains(legal, res.BestMove.Move) {
		t.Errorf("with a pass in the moves: %q, a legal move: the mode does not misplay", res.BestMove.Move)
	}
	if res := search(t, e, Position{SFEN: reached}, byoyomi); !slices.Contains(legal, res.BestMove.Move) {
		t.Errorf("the position reached: %q, want one of %v", res.BestMove.Move, legal)
	}
}

// TestUOIEngine: an engine written to the UOI draft is served: uoi/uoiok,
// its comment and untyped option, "score scale and type", the ofen, its
// transposed squares read back into usid's, pass instead of go, and its
// gameover; never a USI word it does not know.
func TestUOIEngine(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log")
	cfg, _ := fakeConfig(t, fakeengine.UOI)
	cfg.Env = append(cfg.Env, fakeengine.EnvLog+"="+log)
	cfg.Dialect = DialectUOI
	e := startEngine(t, cfg)
	ctx := ctxTimeout(t, 30*time.Second)
	if err := e.IsReady(ctx); err != nil {
		t.Fatal(err)
	}
	if id := e.ID(); id != (ID{Name: "Fake uoi", Author: "Y_Hyodo"}) {
		t.Errorf("ID %+v", id)
	}
	if o := e.Options(); len(o) != 1 || o[0].Name != "use_book" || o[0].Type != TypeString || o[0].Default != "true" {
		t.Errorf("Options %+v", o)
	}
	if s, ok := e.ScoreScale(); !ok || s != (ScoreScale{ScoreWP, 0, 100}) {
		t.Errorf("ScoreScale %+v, %v", s, ok)
	}
	if w := e.LastWords(); !slices.Contains(w, "# UOI fake engine, v0.0.3") {
		t.Errorf("the comment is not in the last words %q", w)
	}
	if err := e.NewGame(); err != nil {
		t.Fatal(err)
	}

	// After f5 d6 the engine's square, named the draft's way and not
	// renamed, would be another square, and not a legal one.
	if reached, _ := fakeengine.OthelloAfter("", "f5", "d6"); reached != afterF5D6[:65] {
		t.Fatalf("after f5 d6: %s", reached)
	}
	legal, _ := fakeengine.OthelloMoves(afterF5D6)
	res := search(t, e, Position{SFEN: afterF5D6}, Go{Clock: &Clock{BTime: 5 * time.Second, WTime: 50 * time.Second}})
	if res.BestMove == nil || !slices.Contains(legal, res.BestMove.Move) || slices.Contains(legal, TransposeSquare(res.BestMove.Move)) {
		t.Fatalf("bestmove %+v: want one of %v (and not legal transposed)", res.BestMove, legal)
	}
	if len(res.Lines) != 1 || !slices.Equal(res.Lines[0].PV, []string{res.BestMove.Move}) || res.Lines[0].Score.Points != 10 {
		t.Errorf("lines %+v", res.Lines)
	}
	s, err := e.Go(ctx, Position{}, Go{Infinite: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Next(ctx); !ok {
		t.Fatal("go infinite: no info")
	}
	s.Stop()
	if res, err := s.Wait(ctx); err != nil || res.BestMove == nil {
		t.Fatalf("go infinite, stop: %+v, %v", res, err)
	}
	if _, err := e.Go(ctx, Position{Moves: []string{"f5"}}, byoyomi); !errors.Is(err, ErrBadCommand) {
		t.Errorf("moves to a UOI engine: %v, want ErrBadCommand", err)
	}
	if _, err := e.Go(ctx, Position{}, Go{MoveTime: time.Second}); !errors.Is(err, ErrBadCommand) {
		t.Errorf("go movetime to a UOI engine: %v, want ErrBadCommand", err)
	}
	// Pass: the engine is told, and the search is its pass.
	res = search(t, e, Position{SFEN: afterF5}, Go{Pass: true, Clock: &Clock{}})
	if *res.BestMove != (BestMove{Move: MovePass}) {
		t.Errorf("pass: %+v", res.BestMove)
	}
	if err := e.GameOver(Lose); err != nil {
		t.Errorf("GameOver: %v", err)
	}
	if err := e.GameOverStones(GameOverStones{Result: BlackWin, Reason: ByDoublePass, Black: 40, White: 24}); err != nil {
		t.Errorf("GameOverStones: %v", err)
	}
	if err := e.IsReady(ctx); err != nil {
		t.Fatalf("IsReady: engine hurt: %v", err)
	}
	b, _ := os.ReadFile(log)
	want := "uoi\nscore scale and type\nisready\nuoinewgame\n" +
		"position " + OFEN(afterF5D6) + "\ngo btime 5000 wtime 50000\n" +
		"position " + OFEN(StartOthello) + "\ngo infinite\nstop\n" +
		"pass " + OFEN(afterF5) + "\n" +
		"gameover black_win by double_pass bstone 40 wstone 24\nisready\n"
	if got := string(b); got != want {
		t.Errorf("the engine read\n%s\nwant\n%s", got, want)
	}
}

// TestDetectOthello: Detect tells the four dialects apart from a minimal
// entry, USI-X with and without an answer to score_scale_and_type, and an
// othello engine reads nothing it would crash on.
func TestDetectOthello(t *testing.T) {
	for _, tt := range []struct {
		mode string
		want *Dialect
	}{
		{fakeengine.USIX, DialectUSIX},
		{fakeengine.USIXScoreType + "=none", DialectUSIX}, // by its bestmove
		{fakeengine.USIXPassMisplay, DialectUSIX},
		{fakeengine.USIXNoInfo, DialectUSIX},
		{fakeengine.UOI, DialectUOI},
		{fakeengine.Normal, DialectUSI},
		{fakeengine.UCI, DialectUCI},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "log")
			cfg, _ := fakeConfig(t, tt.mode)
			cfg.Env = append(cfg.Env, fakeengine.EnvLog+"="+log)
			d, err := Detect(t.Context(), cfg, 30*time.Second)
			if err != nil || d != tt.want {
				t.Fatalf("Detect = %v, %v; want %s", d, err, tt.want.Name)
			}
			if tt.want == DialectUSIX || tt.want == DialectUOI {
				b, _ := os.ReadFile(log)
				for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
					if l != "usi" && l != "uci" && l != "uoi" && l != "score_scale_and_type" && l != "isready" &&
						l != "usinewgame" && l != "position startpos moves" && l != "go btime 0 wtime 0 byoyomi 100" {
						t.Errorf("Detect sent %q", l)
					}
				}
			}
		})
	}
}

// TestDetectRealUSI: the real shogi engines stay USI engines: neither
// answers score_scale_and_type, and their bestmove is a shogi move.
func TestDetectRealUSI(t *testing.T) {
	needBinary(t, fairyPath)
	needBinary(t, gpsPath)
	for _, path := range []string{fairyPath, gpsPath} {
		d, err := Detect(t.Context(), Config{Path: path}, 2*time.Minute)
		if err != nil || d != DialectUSI {
			t.Errorf("%s: Detect = %v, %v; want usi", path, d, err)
		}
	}
}

// TestDetectUndecided: an engine that answers usiok but nothing more in time
// is undecided, not an error of the hello.
func TestDetectUndecided(t *testing.T) {
	cfg, _ := fakeConfig(t, fakeengine.SlowReady+"=1m")
	_, err := Detect(t.Context(), cfg, 500*time.Millisecond)
	if !errors.Is(err, ErrUndecided) || !errors.Is(err, ErrTimeout) {
		t.Errorf("Detect: %v, want ErrUndecided and ErrTimeout", err)
	}
}
