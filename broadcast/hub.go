package broadcast

import (
	"encoding/binary"
	"encoding/json"
	"runtime"
	"slices"
	"sync"

	"github.com/usid/usid/session"
)

// A batch is what a runner publishes: the events of one turn of its
// session's outbox, each encoded once, with what a hub needs to keep the
// current state without decoding them: per item its kind, its search and
// its multipv line, then the JSON event.
//
//	kind byte | search uint32 | multipv uint8 | length uint32 | JSON ...

const (
	kindPosition = 'P' // a new position: its search starts
	kindInfo     = 'I' // a line of the current search
	kindTerm     = 'T' // the search's terminal event
	kindEnded    = 'E' // the broadcast is over
)

type item struct {
	kind   byte
	search int
	mpv    int
	json   []byte
	frame  []byte // the WebSocket frame of json (hub only)
}

type batch struct{ b []byte }

func (b *batch) add(kind byte, search, mpv int, js []byte) {
	b.b = append(b.b, kind)
	b.b = binary.BigEndian.AppendUint32(b.b, uint32(search))
	b.b = append(b.b, byte(min(mpv, 255)))
	b.b = binary.BigEndian.AppendUint32(b.b, uint32(len(js)))
	b.b = append(b.b, js...)
}

func (b *batch) bytes() []byte { return b.b }

// parseStored reads a stored snapshot: only items of a known kind whose
// JSON is sound (it came from the store, which anyone able to write to
// it could have changed).
func parseStored(b []byte) []item {
	its := parseBatch(b)
	out := its[:0]
	for _, it := range its {
		if (it.kind == kindPosition || it.kind == kindInfo || it.kind == kindTerm) && json.Valid(it.json) {
			out = append(out, it)
		}
	}
	return out
}

// parseBatch reads a batch; a malformed tail is dropped.
func parseBatch(b []byte) []item {
	var items []item
	for len(b) >= 10 {
		n := int(binary.BigEndian.Uint32(b[6:10]))
		if n > len(b)-10 {
			break
		}
		items = append(items, item{kind: b[0], search: int(binary.BigEndian.Uint32(b[1:5])), mpv: int(b[5]), json: b[10 : 10+n]})
		b = b[10+n:]
	}
	return items
}

// AppendFrame appends payload as one unmasked WebSocket text frame (RFC
// 6455 section 5.2), as a server sends it: the same bytes for every viewer.
func AppendFrame(dst, payload []byte) []byte {
	n := len(payload)
	switch {
	case n < 126:
		dst = append(dst, 0x81, byte(n))
	case n < 1<<16:
		dst = append(dst, 0x81, 126)
		dst = binary.BigEndian.AppendUint16(dst, uint16(n))
	default:
		dst = append(dst, 0x81, 127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	}
	return append(dst, payload...)
}

// Viewer is one watching connection, as a hub writes to it.
type Viewer interface {
	// Send writes b (WebSocket frames; shared by every viewer, never
	// changed) or queues it, without blocking. False: the viewer cannot
	// take it (too slow, or gone); the hub drops it and calls Close.
	Send(b []byte) bool
	// Close closes the connection, for why.
	Close(why CloseReason)
}

// CloseReason says why a hub closes a viewer.
type CloseReason int

const (
	Ended     CloseReason = iota // the broadcast is over (a normal close)
	TooSlow                      // the viewer could not take a batch
	GoingAway                    // this instance is shutting down: watch on another
)

// hub fans a broadcast's batches out to this instance's viewers of it.
// One dispatcher goroutine runs while batches wait: batches that arrive
// while it writes are written together, in one Send per viewer.
type hub struct {
	m  *Manager
	id string

	mu      sync.Mutex
	viewers []Viewer // appended in place; a removal makes a new slice (readers keep theirs)
	queue   []item
	running bool
	ended   bool
	// The current state, for a late joiner and for GET: the position of
	// the newest search, its latest line per multipv, its terminal event.
	search int
	pos    *item // nil: the position of search was missed (its lines wait for it, unsent)
	lines  map[int]*item
	term   *item
	termed map[int]bool // the searches whose terminal event went out (each goes out once)
	loaded bool         // the state came from the backend or a batch
	// repairing: a repair from the stored state is under way (repair.go).
	repairing bool
}

func (m *Manager) hubOf(id string, create bool) *hub {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.hubs[id]
	if h == nil && create && !m.closed {
		h = &hub{m: m, id: id, lines: map[int]*item{}, termed: map[int]bool{}}
		m.hubs[id] = h
	}
	return h
}

// deliver takes a published batch of broadcast id (from this instance's
// runner or, with Redis, from any instance's).
func (m *Manager) deliver(id string, b []byte) {
	items := parseBatch(b)
	if len(items) == 0 {
		return
	}
	h := m.hubOf(id, true)
	if h == nil {
		return
	}
	h.mu.Lock()
	h.queue = append(h.queue, items...)
	start := !h.running
	h.running = true
	h.mu.Unlock()
	if start {
		go h.dispatch()
	}
}

// keep records it in the hub's state and reports whether it goes to the
// viewers: each event once (a batch and a repair may both bring it),
// never a line of an older search, nor a line whose position was missed
// (a viewer would take it for the current position's: it waits for a
// repair to bring the position); h.mu is held.
func (h *hub) keep(it *item) bool {
	h.loaded = true
	switch it.kind {
	case kindPosition:
		if it.search < h.search || it.search == h.search && h.pos != nil {
			return false
		}
		if it.search > h.search {
			clear(h.lines)
		}
		h.search, h.pos, h.term = it.search, it, nil
		for n := range h.termed {
			if n < h.search-8 {
				delete(h.termed, n)
			}
		}
		return true
	case kindInfo:
		if it.search < h.search {
			return false
		}
		if it.search > h.search {
			h.search, h.pos, h.term = it.search, nil, nil
			clear(h.lines)
		}
		h.lines[it.mpv] = it
		if h.pos == nil {
			h.m.repairSoon(h)
			return false
		}
		return true
	case kindTerm:
		if h.termed[it.search] || it.search < h.search-8 {
			return false
		}
		h.termed[it.search] = true
		if it.search == h.search {
			h.term = it
		}
		return true
	case kindEnded:
		if h.ended {
			return false
		}
		h.ended = true
		return true
	}
	return false
}

func (h *hub) dispatch() {
	for {
		h.mu.Lock()
		items := h.queue
		h.queue = nil
		if len(items) == 0 {
			h.running = false
			h.mu.Unlock()
			return
		}
		// One encoding of the frames for every viewer.
		size := 0
		out := make([]int, 0, len(items))
		for i := range items {
			if h.keep(&items[i]) {
				out = append(out, i)
				size += len(items[i].json) + 10
			}
		}
		buf := make([]byte, 0, size)
		for _, i := range out {
			start := len(buf)
			buf = AppendFrame(buf, items[i].json)
			items[i].frame = buf[start:len(buf):len(buf)]
		}
		viewers, ended := h.viewers, h.ended
		h.mu.Unlock()
		if len(buf) == 0 && !ended {
			continue
		}
		h.fanout(viewers, buf)
		if ended {
			h.end()
			return
		}
	}
}

// fanout writes buf to viewers, in parallel over Workers goroutines for a
// large audience, and drops those that cannot take it.
func (h *hub) fanout(viewers []Viewer, buf []byte) {
	w := h.m.cfg.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	const minChunk = 512
	w = max(min(w, len(viewers)/minChunk), 1)
	var dropped []Viewer
	var mu sync.Mutex
	send := func(vs []Viewer) {
		var d []Viewer
		for _, v := range vs {
			if !v.Send(buf) {
				d = append(d, v)
			}
		}
		if len(d) > 0 {
			mu.Lock()
			dropped = append(dropped, d...)
			mu.Unlock()
		}
	}
	if w == 1 {
		send(viewers)
	} else {
		var wg sync.WaitGroup
		chunk := (len(viewers) + w - 1) / w
		for i := 0; i < len(viewers); i += chunk {
			vs := viewers[i:min(i+chunk, len(viewers))]
			if i+chunk >= len(viewers) {
				send(vs) // the last chunk on this goroutine
				break
			}
			wg.Go(func() { send(vs) })
		}
		wg.Wait()
	}
	for _, v := range dropped {
		h.remove(v)
		v.Close(TooSlow)
	}
	h.m.delivered.Add(int64(len(viewers) - len(dropped)))
}

// end closes every viewer (the broadcast is over) and forgets the hub.
func (h *hub) end() {
	h.m.mu.Lock()
	if h.m.hubs[h.id] == h {
		delete(h.m.hubs, h.id)
	}
	h.m.mu.Unlock()
	h.closeAll(Ended)
}

func (h *hub) closeAll(why CloseReason) {
	h.mu.Lock()
	vs := h.viewers
	h.viewers = nil
	h.mu.Unlock()
	for _, v := range vs {
		v.Close(why)
	}
}

// snapshot is the current state's items in order: position, lines, terminal.
func (h *hub) snapshot() []item {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.snapshotLocked()
}

func (h *hub) snapshotLocked() []item {
	var its []item
	if h.pos == nil {
		return nil // lines without their position are shown to nobody
	}
	its = append(its, *h.pos)
	keys := make([]int, 0, len(h.lines))
	for k := range h.lines {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		its = append(its, *h.lines[k])
	}
	if h.term != nil {
		its = append(its, *h.term)
	}
	return its
}

func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.viewers)
}

// add takes viewer v and sends it the current state at once.
func (h *hub) add(v Viewer) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return false
	}
	var buf []byte
	for _, it := range h.snapshotLocked() {
		buf = AppendFrame(buf, it.json)
	}
	if len(buf) > 0 && !v.Send(buf) {
		return false
	}
	h.viewers = append(h.viewers, v)
	return true
}

// remove forgets v; it reports whether v was there.
func (h *hub) remove(v Viewer) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := slices.Index(h.viewers, v)
	if i < 0 {
		return false
	}
	vs := make([]Viewer, 0, len(h.viewers)-1)
	vs = append(vs, h.viewers[:i]...)
	h.viewers = append(vs, h.viewers[i+1:]...)
	return true
}

// Seat is a viewer's place on this instance, taken before its handshake is
// answered (so that a refusal is an HTTP status, not a closed socket) and
// given back by Release or by the function Watch returns. Safe for
// concurrent use.
type Seat struct {
	m          *Manager
	client, id string
	nets       []string
	once       sync.Once
}

// Reserve takes a place for a viewer of client on broadcast id: not_found,
// ended, too_many_requests (the client's, its networks' or this
// instance's viewers are as many as they may be) or shutting_down
// otherwise.
func (m *Manager) Reserve(client, id string) (*Seat, *session.Error) {
	if !validID(id) {
		return nil, notFound(id)
	}
	st, err := m.be.load(m.ctx, id)
	if err != nil {
		return nil, m.refused(id, err)
	}
	if st.Ended {
		return nil, errorf(CodeEnded, "broadcast %s has ended", id)
	}
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return nil, errorf(session.CodeShuttingDown, "the server is shutting down")
	}
	nets := m.cfg.Callers(client).Networks
	if f := m.viewers.Take(client, nets, session.Bounds{PerClient: m.cfg.MaxViewersPerClient, PerNetwork: m.cfg.MaxViewersPerNetwork, Total: m.cfg.MaxViewers}); f != nil {
		return nil, full("viewers on this instance", f)
	}
	return &Seat{m: m, client: client, nets: nets, id: id}, nil
}

// Release gives the place back (once; later calls do nothing).
func (s *Seat) Release() {
	s.once.Do(func() { s.m.viewers.Give(s.client, s.nets) })
}

// Watch adds viewer v of client to broadcast id on this instance; it
// returns the function that removes it (call it when the connection ends).
func (m *Manager) Watch(client, id string, v Viewer) (func(), *session.Error) {
	seat, err := m.Reserve(client, id)
	if err != nil {
		return nil, err
	}
	return seat.Watch(v)
}

// Watch puts viewer v in the seat: it gets the broadcast's current state at
// once, then every batch. The function returned removes it and gives the
// seat back (call it when the connection ends); on an error the seat is
// given back already.
func (s *Seat) Watch(v Viewer) (func(), *session.Error) {
	m, id := s.m, s.id
	h := m.hubOf(id, true)
	if h == nil {
		s.Release()
		return nil, errorf(session.CodeShuttingDown, "the server is shutting down")
	}
	h.mu.Lock()
	if !h.loaded {
		// This instance has seen no batch of it yet: the state as the
		// search's instance last stored it.
		h.mu.Unlock()
		b, err := m.be.snapshot(m.ctx, id)
		if err != nil && err.Code == CodeInvalid {
			s.Release()
			return nil, m.refused(id, err)
		}
		snap := parseStored(b)
		h.mu.Lock()
		if !h.loaded {
			for i := range snap {
				h.keep(&snap[i])
			}
		}
	}
	h.mu.Unlock()
	if !h.add(v) {
		s.Release()
		return nil, errorf(CodeEnded, "broadcast %s has ended", id)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			h.remove(v)
			s.Release()
		})
	}, nil
}

// lineOf turns an info event into GET's line (the Line schema: pv always there).
func lineOf(js []byte) json.RawMessage {
	var ev struct {
		MultiPV  int             `json:"multipv"`
		Depth    int             `json:"depth"`
		SelDepth int             `json:"seldepth,omitempty"`
		Score    json.RawMessage `json:"score,omitempty"`
		Bound    string          `json:"bound,omitempty"`
		Nodes    int64           `json:"nodes,omitempty"`
		TimeMS   int64           `json:"time_ms,omitempty"`
		PV       []string        `json:"pv"`
		PVKIF    []string        `json:"pv_kif,omitempty"`
		PVSAN    []string        `json:"pv_san,omitempty"`
		WDL      []int           `json:"wdl,omitempty"`
	}
	if json.Unmarshal(js, &ev) != nil {
		return nil
	}
	if ev.PV == nil {
		ev.PV = []string{}
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return nil
	}
	return b
}
