package usi

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Tests against the real engines from Debian: fairy-stockfish and gpsusi
// (package gpsshogi). They fail, never skip, when the engines are missing.

// outOfBook is a middle-game position (Sato-Watanabe, 19th Ryu-O, game 3):
// gpsusi has no book move for it, so it really searches.
const outOfBook = "8l/1l+R2P3/p2pBG1pp/kps1p4/Nn1P2G2/P1P1P2PP/1PS6/1KSG3+r1/LN2+p3L w Sbgn3p 124"

// mateIn5 has a mate in 5 plies for black: G*8f 9f9g 8f8g 9g9h 8g8h.
const mateIn5 = "9/9/9/9/9/k8/9/9/1R2K4 b Gr2b3g4s4n4l18p 1"

func startFairy(t *testing.T) *Engine {
	t.Helper()
	needBinary(t, fairyPath)
	e := startEngine(t, Config{Path: fairyPath})
	if err := e.IsReady(ctxTimeout(t, 30*time.Second)); err != nil {
		t.Fatalf("IsReady: %v", err)
	}
	return e
}

func startGPS(t *testing.T) *Engine {
	t.Helper()
	needBinary(t, gpsPath)
	e := startEngine(t, Config{Path: gpsPath, USIOKTimeout: time.Minute})
	if err := e.IsReady(ctxTimeout(t, 30*time.Second)); err != nil {
		t.Fatalf("IsReady: %v", err)
	}
	return e
}

// readAll reads a search's info lines and its result.
func readAll(t *testing.T, s *Search, timeout time.Duration) ([]Info, Result, error) {
	t.Helper()
	ctx := ctxTimeout(t, timeout)
	var infos []Info
	for in, ok := s.Next(ctx); ok; in, ok = s.Next(ctx) {
		infos = append(infos, in)
	}
	res, err := s.Wait(ctx)
	return infos, res, err
}

func checkBestMove(t *testing.T, res Result, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("search: %v", err)
	}
	if res.BestMove == nil || !IsMove(res.BestMove.Move) {
		t.Fatalf("search result: got %+v, want a bestmove", res)
	}
	if p := res.BestMove.Ponder; p != "" && !IsMove(p) {
		t.Errorf("ponder: got %q, want a USI move", p)
	}
}

func TestFairyHandshake(t *testing.T) {
	e := startFairy(t)
	id := e.ID()
	if !strings.HasPrefix(id.Name, "Fairy-Stockfish") || id.Author != "Fabian Fichter" {
		t.Errorf("ID: got %+v, want Fairy-Stockfish by Fabian Fichter", id)
	}
	opts := map[string]Option{}
	for _, o := range e.Options() {
		opts[o.Name] = o
	}
	// fairy-stockfish advertises Hash and Ponder, not USI_Hash and USI_Ponder.
	tests := []Option{
		{Name: "Threads", Type: TypeSpin, Default: "1", Min: 1, Max: 512, HasMin: true, HasMax: true},
		{Name: "Hash", Type: TypeSpin, Default: "16", Min: 1, Max: 131072, HasMin: true, HasMax: true},
		{Name: "MultiPV", Type: TypeSpin, Default: "1", Min: 1, Max: 500, HasMin: true, HasMax: true},
		{Name: "Skill Level", Type: TypeSpin, Default: "20", Min: -20, Max: 20, HasMin: true, HasMax: true},
		{Name: "Debug Log File", Type: TypeString},
		{Name: "SyzygyPath", Type: TypeString},
		{Name: "Clear Hash", Type: TypeButton},
		{Name: "Ponder", Type: TypeCheck, Default: "false"},
	}
	for _, want := range tests {
		got, ok := opts[want.Name]
		if !ok {
			t.Errorf("option %q: missing from %d options", want.Name, len(opts))
			continue
		}
		if got.String() != want.String() {
			t.Errorf("option %q: got %q, want %q", want.Name, got, want)
		}
	}
	if v := opts["UCI_Variant"]; v.Type != TypeCombo || v.Default != "shogi" || !strings.Contains(" "+strings.Join(v.Vars, " ")+" ", " shogi ") {
		t.Errorf("UCI_Variant: got %q, want a combo defaulting to shogi", v)
	}
}

func TestFairySearch(t *testing.T) {
	e := startFairy(t)
	if err := e.NewGame(); err != nil {
		t.Fatal(err)
	}
	s, err := e.Go(t.Context(), Position{Moves: []string{"7g7f", "3c3d"}}, Go{Depth: 10})
	if err != nil {
		t.Fatal(err)
	}
	infos, res, err := readAll(t, s, 60*time.Second)
	checkBestMove(t, res, err)
	depths := 0
	for _, in := range infos {
		if !in.Has(InfoPV) {
			continue
		}
		depths++
		// fairy-stockfish sends seldepth and time on every pv line; time is
		// the milliseconds searched, not a copy of seldepth.
		if !in.Has(InfoDepth|InfoSelDepth|InfoTime|InfoNodes|InfoScore) || in.Depth < 1 || in.SelDepth < in.Depth || in.Nodes <= 0 {
			t.Errorf("info: got %q, want depth, seldepth >= depth, time, nodes and score", in)
		}
		for _, m := range in.PV {
			if !IsMove(m) {
				t.Errorf("pv move %q in %q is not a USI move", m, in)
			}
		}
	}
	if depths < 10 {
		t.Errorf("info lines with a pv: got %d, want one per depth (10)", depths)
	}
	if len(res.Lines) != 1 || res.Lines[0].PV[0] != res.BestMove.Move {
		t.Errorf("Result.Lines: got %v, want one line starting with bestmove %s", res.Lines, res.BestMove.Move)
	}
}

func TestFairyStopInfinite(t *testing.T) {
	e := startFairy(t)
	for _, how := range []string{"Stop", "cancel"} {
		t.Run(how, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			s, err := e.Go(ctx, Position{}, Go{Infinite: true})
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if _, ok := s.Next(ctxTimeout(t, 10*time.Second)); !ok {
					t.Fatal("no info before stop")
				}
			}
			select {
			case <-s.Done():
				t.Fatal("go infinite ended before stop")
			default:
			}
			start := time.Now()
			if how == "Stop" {
				s.Stop()
			} else {
				cancel()
			}
			_, res, err := readAll(t, s, 10*time.Second)
			checkBestMove(t, res, err)
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("bestmove %v after stop, want well within the 5s stop timeout", d)
			}
		})
	}
}

func TestFairyPonderhit(t *testing.T) {
	e := startFairy(t)
	pos := Position{Moves: []string{"7g7f", "3c3d"}}
	clock := &Clock{BTime: 2 * time.Second, WTime: 2 * time.Second, Byoyomi: 500 * time.Millisecond}

	t.Run("hit", func(t *testing.T) {
		s, err := e.Go(t.Context(), pos, Go{Ponder: true, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-s.Done():
			t.Fatal("ponder search ended before ponderhit")
		case <-time.After(300 * time.Millisecond):
		}
		if err := s.Ponderhit(); err != nil {
			t.Fatal(err)
		}
		// After ponderhit the engine plays on its clock: about 2.5s at most.
		infos, res, err := readAll(t, s, 30*time.Second)
		checkBestMove(t, res, err)
		if len(infos) == 0 {
			t.Error("no info while pondering")
		}
	})
	t.Run("miss", func(t *testing.T) {
		s, err := e.Go(t.Context(), pos, Go{Ponder: true, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		s.Stop()
		_, res, err := readAll(t, s, 10*time.Second)
		checkBestMove(t, res, err)
	})
}

func TestFairyMultiPV(t *testing.T) {
	e := startFairy(t)
	search := func() (multipvs map[int]bool, res Result) {
		t.Helper()
		s, err := e.Go(t.Context(), Position{}, Go{Depth: 6})
		if err != nil {
			t.Fatal(err)
		}
		infos, res, err := readAll(t, s, 60*time.Second)
		checkBestMove(t, res, err)
		multipvs = map[int]bool{}
		for _, in := range infos {
			if in.Has(InfoMultiPV) {
				multipvs[in.MultiPV] = true
			}
		}
		return multipvs, res
	}

	if err := e.SetOption("multipv", "2"); err != nil { // names match case-insensitively
		t.Fatal(err)
	}
	if got, _ := e.OptionValue("MultiPV"); got != "2" {
		t.Errorf("OptionValue(MultiPV) after SetOption: got %q, want 2", got)
	}
	if err := e.IsReady(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The engine's state reflects the option: two lines per depth.
	if mp, res := search(); !mp[2] || len(res.Lines) != 2 {
		t.Errorf("with MultiPV 2: got multipv %v and %d result lines, want multipv 2 and 2 lines", mp, len(res.Lines))
	}

	if err := e.ResetOptions(); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.OptionValue("MultiPV"); got != "1" {
		t.Errorf("OptionValue(MultiPV) after ResetOptions: got %q, want 1", got)
	}
	if mp, res := search(); mp[2] || len(res.Lines) != 1 {
		t.Errorf("after ResetOptions: got multipv %v and %d result lines, want multipv 1 only", mp, len(res.Lines))
	}

	for _, bad := range []struct{ name, value string }{
		{"MultiPV", "0"}, {"MultiPV", "501"}, {"MultiPV", "two"}, {"Ponder", "1"},
		{"UCI_Variant", "go"}, {"Clear Hash", "yes"}, {"Debug Log File", "x\ny"}, {"Hashes", "1"},
	} {
		err := e.SetOption(bad.name, bad.value)
		if !errors.Is(err, ErrBadCommand) && !errors.Is(err, ErrUnknownOption) {
			t.Errorf("SetOption(%q, %q): got %v, want ErrBadCommand or ErrUnknownOption", bad.name, bad.value, err)
		}
	}
	if err := e.IsReady(t.Context()); err != nil {
		t.Errorf("IsReady after refused options: %v", err)
	}
}

func TestFairyGoMate(t *testing.T) {
	e := startFairy(t)
	// fairy-stockfish reads "go mate" as a UCI mate search and answers with
	// bestmove, not checkmate.
	s, err := e.Go(t.Context(), Position{SFEN: mateIn5}, Go{Mate: true, MateTime: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, res, err := readAll(t, s, 30*time.Second)
	checkBestMove(t, res, err)
	if res.BestMove.Move != "G*8f" {
		t.Errorf("mate in 5: got bestmove %s, want G*8f", res.BestMove.Move)
	}
}

func TestGPSUSI(t *testing.T) {
	t.Parallel()
	e := startGPS(t)
	if id := e.ID(); !strings.HasPrefix(id.Name, "gpsshogi") || id.Author != "teamgps" {
		t.Errorf("ID: got %+v, want gpsshogi by teamgps", id)
	}
	want := Option{Name: "LimitDepth", Type: TypeSpin, Default: "10", Min: 4, Max: 10, HasMin: true, HasMax: true}
	if opts := e.Options(); len(opts) == 0 || opts[0].String() != want.String() {
		t.Errorf("first option: got %v, want %q", opts, want)
	}

	t.Run("nomate", func(t *testing.T) {
		s, err := e.Go(t.Context(), Position{SFEN: "4k4/9/9/9/9/9/9/9/4K4 b - 1"}, Go{Mate: true, MateTime: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		_, res, err := readAll(t, s, 30*time.Second)
		if err != nil || res.Checkmate == nil || res.Checkmate.Result != NoMate {
			t.Fatalf("go mate without a mate: got %+v, %v, want checkmate nomate", res, err)
		}
	})
	t.Run("byoyomi", func(t *testing.T) {
		s, err := e.Go(t.Context(), Position{SFEN: outOfBook}, Go{Clock: &Clock{Byoyomi: time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		infos, res, err := readAll(t, s, 30*time.Second)
		checkBestMove(t, res, err)
		withPV := 0
		for _, in := range infos {
			if in.Has(InfoPV) {
				withPV++
				if in.Time < 0 || in.Has(InfoSelDepth) && in.SelDepth < in.Depth {
					t.Errorf("info: got %q, want time and seldepth >= depth", in)
				}
			}
		}
		if withPV == 0 {
			t.Errorf("infos: got %q, want lines with a pv", infos)
		}
	})
	t.Run("stop infinite", func(t *testing.T) {
		s, err := e.Go(t.Context(), Position{SFEN: outOfBook}, Go{Infinite: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := s.Next(ctxTimeout(t, 20*time.Second)); !ok {
			t.Fatal("no info before stop")
		}
		s.Stop()
		_, res, err := readAll(t, s, 20*time.Second)
		checkBestMove(t, res, err)
	})
	// Last: after a found mate, gpsusi miscounts its searches ("delay go")
	// and would hold back the next go.
	t.Run("mate", func(t *testing.T) {
		s, err := e.Go(t.Context(), Position{SFEN: mateIn5}, Go{Mate: true, MateTime: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		_, res, err := readAll(t, s, 30*time.Second)
		want := "G*8f 9f9g 8f8g 9g9h 8g8h"
		if err != nil || res.Checkmate == nil || res.Checkmate.Result != MateFound || strings.Join(res.Checkmate.Moves, " ") != want {
			t.Fatalf("go mate: got %+v, %v, want checkmate %s", res.Checkmate, err, want)
		}
	})
}

func TestGPSUSICrashOnGoDepth(t *testing.T) {
	t.Parallel()
	e := startGPS(t)
	// gpsusi aborts on "go depth": a real engine fault, which must reach the
	// caller as ErrEngineExited with the exit status.
	start := time.Now()
	s, err := e.Go(t.Context(), Position{}, Go{Depth: 3})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = readAll(t, s, 30*time.Second)
	var exit *exec.ExitError
	if !errors.Is(err, ErrEngineExited) || !errors.As(err, &exit) {
		t.Fatalf("search: got %v, want ErrEngineExited with the exit status", err)
	}
	t.Logf("gpsusi on go depth: %v after %v", err, time.Since(start))
	select {
	case <-e.Done():
	default:
		t.Error("Done not closed after the engine exited")
	}
	if err := e.Err(); !errors.Is(err, ErrEngineExited) {
		t.Errorf("Err: got %v, want ErrEngineExited", err)
	}
}
