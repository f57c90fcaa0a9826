package broadcast

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/usid/usid/session"
)

// runner is a broadcast's search, on the instance holding its lease: a
// session with no connection, one analyze request per position (a newer
// one supersedes the running search, which ends with its bestmove), the
// session's coalesced, rate-bounded batches of events encoded once each
// and published.
type runner struct {
	m    *Manager
	id   string
	sess *session.Session
	pk   chan struct{} // a change of the broadcast: read it again
	hlt  chan bool     // stop; true: send what the search ends with
	done chan struct{}

	mu       sync.Mutex
	st       *State
	silent   bool                 // the lease was lost: another instance speaks for the search now
	searches map[string]*searchOf // by request id
	snap     map[int]item         // for the backend's snapshot: position, lines, terminal
	snapPos  *item
	snapTerm *item
}

type searchOf struct {
	n    int
	ply  int
	best *session.Event // the latest line of multipv 1 with a score, for the evaluation graph
}

func newRunner(m *Manager, st *State) *runner {
	return &runner{m: m, id: st.ID, st: st, pk: make(chan struct{}, 1), hlt: make(chan bool, 1), done: make(chan struct{}),
		searches: map[string]*searchOf{}, snap: map[int]item{}}
}

func (r *runner) poke() {
	select {
	case r.pk <- struct{}{}:
	default:
	}
}

// halt stops the runner; send: the search's terminal event still goes out
// (a drain, the broadcast's end), else nothing more (the lease was lost).
func (r *runner) halt(send bool) {
	select {
	case r.hlt <- send:
	default:
	}
}

func (r *runner) wait(ctx context.Context) {
	select {
	case <-r.done:
	case <-ctx.Done():
	}
}

func (r *runner) run() {
	m := r.m
	defer close(r.done)
	defer m.runnerDone(r)
	r.sess = m.cfg.Service.NewSession()
	r.sess.SetCaller(m.cfg.Callers(r.st.Owner))
	read := make(chan struct{})
	go func() {
		defer close(read)
		r.read()
	}()
	// A search of another instance that stopped without its terminal
	// event: it ends here, once.
	if n, term := m.be.searches(m.ctx, r.id); n > term && m.be.claimTerm(m.ctx, r.id, n) {
		var b batch
		b.add(kindTerm, n, 0, cutEvent(r.id, n))
		m.be.publish(m.ctx, r.id, b.bytes())
	}
	names := make([]string, 0, len(r.st.Options))
	for k := range r.st.Options {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		r.sess.Serve(&session.Request{Type: session.TypeSetOption, ID: "option", Engine: r.st.Engine, Name: k, Value: r.st.Options[k]})
	}
	version := r.st.Version
	if !r.start(r.st) {
		version = 0 // the next poke (within a Check) tries again
	}
	send, ended := true, false
loop:
	for {
		select {
		case send = <-r.hlt:
			break loop
		case <-r.pk:
			st, err := m.be.load(m.ctx, r.id)
			if err != nil {
				if err.Code == CodeNotFound {
					ended = true
					break loop
				}
				continue
			}
			if st.Ended || st.idle(m.cfg.Idle, time.Now()) && m.expire(r.id) {
				ended = true
				break loop
			}
			if st.Version != version && r.start(st) {
				version = st.Version
			}
		}
	}
	if !send {
		r.mu.Lock()
		r.silent = true
		r.mu.Unlock()
	}
	r.sess.Close() // stops the search: its bestmove comes through read
	<-read
	if ended && send {
		var b batch
		if m.addEnded(&b, r.id); len(b.bytes()) > 0 {
			m.be.publish(m.ctx, r.id, b.bytes())
		}
	}
	m.be.release(m.ctx, r.id)
}

// start asks the session for the analysis of st's position: the search
// that runs supersedes the one before. False: the store did not answer.
func (r *runner) start(st *State) bool {
	m := r.m
	n := m.be.nextSearch(m.ctx, r.id)
	if n <= 0 {
		return false
	}
	req := "s" + strconv.Itoa(n)
	pos := st.Position
	r.mu.Lock()
	r.st = st
	r.searches[req] = &searchOf{n: n, ply: len(pos.Moves)}
	r.mu.Unlock()
	if pos.Moves == nil {
		pos.Moves = []string{}
	}
	ev := struct {
		Type     string           `json:"type"`
		ID       string           `json:"id"`
		Search   int              `json:"search"`
		Position session.Position `json:"position"`
		Ply      int              `json:"ply"`
		Engine   string           `json:"engine"`
		MultiPV  int              `json:"multipv"`
	}{"position", r.id, n, pos, len(pos.Moves), st.Engine, st.MultiPV}
	js, err := json.Marshal(ev)
	if err != nil {
		return false
	}
	var b batch
	b.add(kindPosition, n, 0, js)
	r.publish(b.bytes(), []item{{kind: kindPosition, search: n, json: js}})
	p := st.Position
	r.sess.Serve(&session.Request{Type: session.TypeAnalyze, ID: req, Position: &p, Engine: st.Engine, MultiPV: st.MultiPV, Notation: st.Notation})
	return true
}

// read takes the session's batches of events until it is closed, and
// publishes each as one batch, every event encoded once.
func (r *runner) read() {
	m := r.m
	for {
		evs, err := r.sess.Next(context.Background())
		if err != nil {
			return
		}
		var b batch
		var kept []item
		for _, ev := range evs {
			r.mu.Lock()
			s := r.searches[ev.ID]
			silent := r.silent
			r.mu.Unlock()
			if s == nil {
				if ev.Type == session.EventError {
					m.log.Warn("broadcast option refused", "broadcast", r.id, "code", ev.Code, "message", ev.Message)
				}
				continue
			}
			if silent {
				continue
			}
			var kind byte
			switch ev.Type {
			case session.EventInfo:
				kind = kindInfo
				if ev.MultiPV <= 1 && ev.Score != nil {
					s.best = ev
				}
			case session.EventBestMove, session.EventError, session.EventCheckmate:
				kind = kindTerm
				if !m.be.claimTerm(m.ctx, r.id, s.n) {
					continue // another instance ended it already
				}
				if ev.Type == session.EventBestMove && s.best != nil {
					r.eval(s, ev)
				}
				r.mu.Lock()
				delete(r.searches, ev.ID)
				r.mu.Unlock()
			default:
				continue // queued, engine: the search's own business
			}
			ev.ID = r.id
			js, err := ev.MarshalJSON()
			if err != nil || len(js) > m.bounds.event {
				continue // over what is stored and read back (bounds)
			}
			js = withSearch(js, s.n)
			b.add(kind, s.n, ev.MultiPV, js)
			kept = append(kept, item{kind: kind, search: s.n, mpv: ev.MultiPV, json: js})
		}
		if len(kept) > 0 {
			r.publish(b.bytes(), kept)
		}
	}
}

// withSearch adds "search":n to an encoded event.
func withSearch(js []byte, n int) []byte {
	if len(js) < 2 || js[len(js)-1] != '}' {
		return js
	}
	out := append(js[:len(js)-1:len(js)-1], `,"search":`...)
	out = strconv.AppendInt(out, int64(n), 10)
	return append(out, '}')
}

// publish sends a batch to every instance's viewers and stores the state
// it leaves, for a viewer that joins on an instance that saw none of it.
func (r *runner) publish(b []byte, items []item) {
	r.mu.Lock()
	for i := range items {
		it := items[i]
		switch it.kind {
		case kindPosition:
			r.snapPos, r.snapTerm = &it, nil
			clear(r.snap)
		case kindInfo:
			if (r.snapPos == nil || it.search >= r.snapPos.search) && it.mpv <= r.st.MultiPV {
				r.snap[it.mpv] = it
			}
		case kindTerm:
			if r.snapPos != nil && it.search == r.snapPos.search {
				r.snapTerm = &it
			}
		}
	}
	var s batch
	if r.snapPos != nil {
		s.add(r.snapPos.kind, r.snapPos.search, 0, r.snapPos.json)
	}
	for k := 1; k <= 255; k++ {
		if it, ok := r.snap[k]; ok {
			s.add(it.kind, it.search, it.mpv, it.json)
		} else if k > len(r.snap) {
			break
		}
	}
	if r.snapTerm != nil {
		s.add(r.snapTerm.kind, r.snapTerm.search, 0, r.snapTerm.json)
	}
	r.mu.Unlock()
	r.m.be.publishState(r.m.ctx, r.id, b, s.bytes())
}

// eval records the evaluation of search s's position for the graph.
func (r *runner) eval(s *searchOf, term *session.Event) {
	e := struct {
		Ply      int            `json:"ply"`
		Score    *session.Score `json:"score,omitempty"`
		Depth    int            `json:"depth,omitempty"`
		BestMove string         `json:"bestmove,omitempty"`
		PV       []string       `json:"pv,omitempty"`
	}{s.ply, s.best.Score, s.best.Depth, term.Move, s.best.PV}
	js, err := json.Marshal(e)
	if err == nil && len(js) > r.m.bounds.eval {
		e.PV = nil // within what is stored and read back (bounds)
		js, err = json.Marshal(e)
	}
	if err == nil {
		r.m.be.addEval(r.m.ctx, r.id, s.ply, js)
	}
}

// cutEvent is the terminal event of search n, cut short when the instance
// running it stopped.
func cutEvent(id string, n int) []byte {
	return fmt.Appendf(nil, `{"type":"error","id":%q,"code":%q,"message":"the instance running this search stopped; another instance searches the position again","search":%d}`,
		id, session.CodeEngineError, n)
}
