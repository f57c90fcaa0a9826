package session

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/pool"
)

// TestAnalysisMode: on an engine that advertises USI_AnalyseMode and
// USI_OwnBook (and plays from its book without them), analysis sets them
// and gets evaluations; play sets them back, and a book move comes without
// an evaluation, which the answer says (book).
func TestAnalysisMode(t *testing.T) {
	p := newPool(t, pool.EngineConfig{Name: "book", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.AnalyseMode}})
	svc := NewService(Config{Pool: p, AcquireTimeout: 2 * time.Minute, QueueTimeout: 2 * time.Minute})
	res, err := svc.Analyze(t.Context(), &Request{Limits: &Limits{Depth: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Lines) == 0 || res.Book {
		t.Errorf("REST analysis: lines %v, book %v; want an evaluation", res.Lines, res.Book)
	}
	s := svc.NewSession()
	defer s.Close()
	terminal := func(msg, id string) *Event {
		t.Helper()
		s.Handle([]byte(msg))
		evs := events(t, s, id)
		return evs[len(evs)-1]
	}
	if ev := terminal(`{"type":"go","id":"g1","btime":60000,"wtime":60000,"byoyomi":1000}`, "g1"); ev.Type != EventBestMove || !ev.Book {
		t.Errorf("play: %+v; want a book move, book true", ev)
	}
	if ev := terminal(`{"type":"analyze","id":"a1","limits":{"depth":1}}`, "a1"); ev.Type != EventBestMove || ev.Book {
		t.Errorf("analysis after play: %+v; want an evaluated move", ev)
	}
	if ev := terminal(`{"type":"go","id":"g2","btime":60000,"wtime":60000,"byoyomi":1000}`, "g2"); ev.Type != EventBestMove || !ev.Book {
		t.Errorf("play after analysis: %+v; want the book again", ev)
	}
}

// TestHashKept: one-shot analyses go on in the engine's game, as in an
// analysis GUI (one usinewgame, many positions): the engine keeps what it
// learned (its hash; the fake counts the searches since usinewgame). A
// search whose history repeats a position ends the game when its lease
// does, so that the next caller's answer carries no trace of the
// repetition (the evaluation cache relies on it).
func TestHashKept(t *testing.T) {
	p := newPool(t, pool.EngineConfig{Name: "echo", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.EchoOptions}})
	svc := NewService(Config{Pool: p, AcquireTimeout: 2 * time.Minute})
	searches := func(moves ...string) string {
		t.Helper()
		s := svc.NewSession()
		defer s.Close()
		b, _ := json.Marshal(map[string]any{"type": "analyze", "id": "a", "limits": map[string]any{"depth": 1}, "position": map[string]any{"moves": moves}})
		s.Handle(b)
		for _, e := range events(t, s, "a") {
			if _, n, ok := strings.Cut(e.Text, " searches="); e.Type == EventInfo && ok {
				return "searches=" + n
			}
		}
		t.Fatal("no searches= line")
		return ""
	}
	first := searches("7g7f")
	n, _ := strconv.Atoi(strings.TrimPrefix(first, "searches="))
	for i, moves := range [][]string{{"2g2f"}, {"7g7f", "3c3d"}} {
		if got, want := searches(moves...), fmt.Sprintf("searches=%d", n+i+1); got != want {
			t.Errorf("analysis %d: %s, want %s: the game (and hash) kept", i+2, got, want)
		}
	}
	// 5i5h 5a5b 5h5i 5b5a: the start position comes back.
	repeated := []string{"5i5h", "5a5b", "5h5i", "5b5a", "7g7f"}
	searches(repeated...)
	if got := searches("7g7f"); got != "searches=1" {
		t.Errorf("after a repeated history: %s, want searches=1 (a new game)", got)
	}
}

// TestStarvedSearchIsNoBook: an engine starved of CPU answers its movetime
// with a bare bestmove (no line finished). That is no book move: the answer
// says unscored, not book, and the same question asked again (the engine
// searches it now) gets an evaluation, neither flag.
func TestStarvedSearchIsNoBook(t *testing.T) {
	// Its movetime native, as a real stockfish's is: the probe, met by the
	// fake's bare answers, cannot tell (the operator's word wins).
	p := newPool(t, pool.EngineConfig{Name: "starved", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.Starved},
		Capabilities: pool.Capabilities{Go: []string{"depth", "nodes", "movetime"}}})
	svc := NewService(Config{Pool: p, AcquireTimeout: 2 * time.Minute, QueueTimeout: 2 * time.Minute})
	req := func() *Request {
		return &Request{Position: &Position{Moves: []string{"2g2f", "8c8d", "2f2e"}}, Limits: &Limits{MoveTimeMS: 300}}
	}
	res, err := svc.Analyze(t.Context(), req())
	if err != nil {
		t.Fatal(err)
	}
	if res.BestMove == "" || res.Book || !res.Unscored || len(res.Lines) != 0 {
		t.Errorf("starved: move %q (emulated %v), book %v, unscored %v, %d lines; want a move, unscored, not book, no lines", res.BestMove, res.Emulated, res.Book, res.Unscored, len(res.Lines))
	}
	res, err = svc.Analyze(t.Context(), req())
	if err != nil {
		t.Fatal(err)
	}
	if res.Book || res.Unscored || len(res.Lines) == 0 {
		t.Errorf("searched again: book %v, unscored %v, %d lines; want an evaluation", res.Book, res.Unscored, len(res.Lines))
	}
}
