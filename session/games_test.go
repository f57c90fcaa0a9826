package session

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"
)

// stubRunner stands in for package review (which imports this package): it
// records what the session asks and lets the test emit the job's events.
type stubRunner struct {
	mu      sync.Mutex
	emit    map[string]func(*Event)
	handles map[string]*stubHandle
	refuse  *Error
}

type stubHandle struct {
	mu                  sync.Mutex
	cancelled, detached bool
}

func (h *stubHandle) Cancel() { h.mu.Lock(); h.cancelled = true; h.mu.Unlock() }
func (h *stubHandle) Detach() { h.mu.Lock(); h.detached = true; h.mu.Unlock() }
func (h *stubHandle) state() (bool, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cancelled, h.detached
}

func (r *stubRunner) StartGame(req *Request, emit func(*Event)) (GameHandle, *Error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refuse != nil {
		return nil, r.refuse
	}
	h := &stubHandle{}
	r.emit[req.ID], r.handles[req.ID] = emit, h
	return h, nil
}

func (r *stubRunner) send(id string, ev *Event) {
	r.mu.Lock()
	emit := r.emit[id]
	r.mu.Unlock()
	ev.ID = id
	emit(ev)
}

func newStub() *stubRunner {
	return &stubRunner{emit: map[string]func(*Event){}, handles: map[string]*stubHandle{}}
}

func next(t *testing.T, s *Session) []*Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	evs, err := s.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestAnalyzeGameParse(t *testing.T) {
	r, err := ParseRequest([]byte(`{"type":"analyze_game","id":"g1","position":{"moves":["7g7f"]},"limits":{"depth":3},"record":"x"}`))
	if err != nil || r.Type != TypeAnalyzeGame || !r.IsSearch() || r.Record == nil || *r.Record != "x" {
		t.Fatalf("got %+v %v", r, err)
	}
	if _, err := ParseRequest([]byte(`{"type":"analyze_game","position":{}}`)); err == nil || err.Code != CodeInvalidField {
		t.Errorf("no id: %v", err)
	}
}

func TestAnalyzeGameWithoutRunner(t *testing.T) {
	s := NewService(Config{}).NewSession()
	defer s.Close()
	s.Handle([]byte(`{"type":"analyze_game","id":"g1","position":{},"limits":{"depth":1}}`))
	evs := next(t, s)
	if len(evs) != 1 || evs[0].Type != EventError || evs[0].Code != CodeUnsupported || evs[0].ID != "g1" {
		t.Fatalf("got %+v", evs[0])
	}
}

// The session forwards a job's events, cancels it on stop, forgets it at
// its terminal event, and detaches the jobs still running at Close.
func TestAnalyzeGameSession(t *testing.T) {
	r := newStub()
	s := NewService(Config{}).NewSession()
	s.SetGames(r)
	s.Handle([]byte(`{"type":"analyze_game","id":"g1","position":{},"limits":{"depth":1}}`))
	s.Handle([]byte(`{"type":"analyze_game","id":"g1","position":{},"limits":{"depth":1}}`))
	if evs := next(t, s); evs[0].Code != CodeInvalidField {
		t.Errorf("a second job under a running id: %+v", evs[0])
	}
	// Progress events not yet read are merged: the latest count, every position.
	r.send("g1", &Event{Type: EventProgress, Job: "j1", Progress: &GameProgress{Done: 1, Total: 3}, Positions: []json.RawMessage{[]byte(`{"ply":0}`)}})
	r.send("g1", &Event{Type: EventProgress, Job: "j1", Progress: &GameProgress{Done: 2, Total: 3}, Positions: []json.RawMessage{[]byte(`{"ply":0}`), []byte(`{"ply":1}`)}})
	evs := next(t, s)
	if len(evs) != 1 || evs[0].Progress.Done != 2 || len(evs[0].Positions) != 3 {
		t.Fatalf("merged progress: %+v", evs)
	}
	s.Handle([]byte(`{"type":"stop","id":"g1"}`))
	if c, _ := r.handles["g1"].state(); !c {
		t.Error("stop did not cancel the job")
	}
	r.send("g1", &Event{Type: EventGameAnalysis, Job: "j1", Status: "cancelled"})
	if evs := next(t, s); evs[0].Type != EventGameAnalysis {
		t.Fatalf("terminal: %+v", evs[0])
	}
	// A stop after the end is quiet; a new job may take the id again.
	s.Handle([]byte(`{"type":"stop","id":"g1"}`))
	s.Handle([]byte(`{"type":"analyze_game","id":"g1","position":{},"limits":{"depth":1}}`))
	s.Handle([]byte(`{"type":"analyze_game","id":"g2","position":{},"limits":{"depth":1}}`))
	s.Handle([]byte(`{"type":"analyze_game","id":"g3","position":{},"limits":{"depth":1},"keep":true}`))
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	if evs, err := s.Next(ctx); err == nil {
		t.Errorf("events after a late stop and two starts: %+v", evs)
	}
	cancel()
	// Drain waits for the jobs' terminal events.
	drained := make(chan struct{})
	go func() { s.Drain(); close(drained) }()
	r.send("g1", &Event{Type: EventGameAnalysis, Job: "j2", Status: "done"})
	select {
	case <-drained:
		t.Fatal("drain ended with a job still running")
	case <-time.After(50 * time.Millisecond):
	}
	s.Close() // ends the drain's wait; g2 ends with the session, g3 (keep) runs on
	<-drained
	if c, d := r.handles["g2"].state(); !c || !d {
		t.Errorf("g2 after Close: cancelled %v detached %v, want a cancelled job", c, d)
	}
	if c, d := r.handles["g3"].state(); c || !d {
		t.Errorf("g3 (keep) after Close: cancelled %v detached %v, want a detached job running on", c, d)
	}
	// A refused start answers with the runner's error.
	r.refuse = &Error{Code: CodeTooManyRequests, Message: "bound", MoveIndex: -1}
	s2 := NewService(Config{}).NewSession()
	defer s2.Close()
	s2.SetGames(r)
	s2.Handle([]byte(`{"type":"analyze_game","id":"g3","position":{},"limits":{"depth":1}}`))
	if evs := next(t, s2); evs[0].Code != CodeTooManyRequests || evs[0].ID != "g3" {
		t.Errorf("refused: %+v", evs[0])
	}
}
