package session

import (
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
