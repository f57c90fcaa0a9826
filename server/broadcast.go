package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/coder/websocket"
	"github.com/go-chi/chi/v5"

	"github.com/usid/usid/broadcast"
	"github.com/usid/usid/session"
)

// Broadcasts (package broadcast): REST routes for the owner (create, moves,
// position, end) and for anyone (read), and the viewers' WebSocket, whose
// writes are the hub's: each batch is framed once by the hub and written
// here to every viewer's socket without blocking (viewer.Send).

func (s *Server) broadcastRoutes(r chi.Router) {
	r.Post("/broadcasts", s.createBroadcast)
	r.With(s.readGuard).Get("/broadcasts/{id}", s.getBroadcast)
	r.Delete("/broadcasts/{id}", s.endBroadcast)
	r.Post("/broadcasts/{id}/moves", s.broadcastMoves)
	r.Put("/broadcasts/{id}/position", s.broadcastPosition)
	// A viewer's upgrade reads the broadcast too: charged as a read before
	// the store is asked anything.
	r.With(s.readGuard).Get("/broadcasts/{id}/ws", s.watchBroadcast)
}

func (s *Server) createBroadcast(w http.ResponseWriter, r *http.Request) {
	var req broadcast.Request
	// The search itself takes from the owner's budget as it runs.
	c := s.admitWork(w, r, &req)
	if c == nil {
		return
	}
	v, err := s.cfg.Broadcasts.Create(c.id, &req)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/broadcasts/"+v.ID)
	writeJSON(w, http.StatusCreated, v)
}

func (s *Server) getBroadcast(w http.ResponseWriter, r *http.Request) {
	v, err := s.cfg.Broadcasts.Get(chi.URLParam(r, "id"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) endBroadcast(w http.ResponseWriter, r *http.Request) {
	v, err := s.cfg.Broadcasts.End(clientOf(r).id, chi.URLParam(r, "id"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) broadcastMoves(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Moves []string `json:"moves"`
		Ply   *int     `json:"ply"`
	}
	// A new position starts a search: it passes the owner's flood guard
	// (429) and is refused while the instance drains (503), as creating does.
	c := s.admitWork(w, r, &req)
	if c == nil {
		return
	}
	v, err := s.cfg.Broadcasts.Moves(c.id, chi.URLParam(r, "id"), req.Moves, req.Ply)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) broadcastPosition(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Position *session.Position `json:"position"`
	}
	c := s.admitWork(w, r, &req) // as for moves
	if c == nil {
		return
	}
	v, err := s.cfg.Broadcasts.SetPosition(c.id, chi.URLParam(r, "id"), req.Position)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// maxViewerPending is what a viewer may have unwritten (its socket's
// buffer full) before it counts as too slow and is dropped.
const maxViewerPending = 64 << 10

// viewer is one watching connection: a reader goroutine that only waits
// for the client's frames (it sends none but control frames), and writes
// made by the hub's dispatcher straight to the socket, never blocking:
// what the socket does not take waits in pending, written by a goroutine
// that exists only while there is some.
type viewer struct {
	s    *Server
	c    *websocket.Conn
	conn *viewerConn
	raw  syscall.RawConn

	mu       sync.Mutex
	pending  []byte
	flushing bool
	dead     bool
	// One write's input and output, for writeFD (under mu): a method value
	// made once, so that a write allocates no closure (10,000 viewers are
	// 10,000 writes per line).
	out     []byte
	wrote   int
	werr    error
	writeFn func(fd uintptr) bool
}

// viewerConn is the viewer's net.Conn as coder/websocket sees it: reads
// go to the socket (batchConn's counting, for waitReadable), writes (a
// pong, the close frame) join the viewer's queue, in order with the hub's.
type viewerConn struct {
	*batchConn
	v *viewer
}

func (c *viewerConn) Write(p []byte) (int, error) {
	if !c.v.Send(bytes.Clone(p)) {
		return 0, net.ErrClosed
	}
	return len(p), nil
}

// viewerResponse is leanResponse for a viewer: the hijacked connection is
// a viewerConn.
type viewerResponse struct {
	http.ResponseWriter
	v *viewer
}

func (w *viewerResponse) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	bc, left, err := hijackLean(w.ResponseWriter)
	if err != nil {
		return nil, nil, err
	}
	sc, ok := bc.Conn.(syscall.Conn)
	if !ok {
		bc.Close()
		return nil, nil, errors.New("viewer connection has no file descriptor")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		bc.Close()
		return nil, nil, err
	}
	vc := &viewerConn{batchConn: bc, v: w.v}
	w.v.conn, w.v.raw = vc, raw
	return vc, leanReadWriter(bc, vc, left), nil
}

func (s *Server) watchBroadcast(w http.ResponseWriter, r *http.Request) {
	if s.refuseWhileDraining(w, r) {
		return
	}
	if perr := s.checkHandshake(w, r); perr != nil {
		s.problem(w, r, perr)
		return
	}
	// The seat is taken before the upgrade: not_found, ended and a full
	// house are HTTP answers a client can read.
	seat, perr := s.cfg.Broadcasts.Reserve(clientOf(r).id, chi.URLParam(r, "id"))
	if perr != nil {
		s.problem(w, r, perr)
		return
	}
	v := &viewer{s: s}
	c, err := websocket.Accept(&viewerResponse{ResponseWriter: w, v: v}, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err == nil && v.conn == nil {
		err = errors.New("websocket.Accept did not hijack through viewerResponse")
		c.CloseNow()
	}
	if err != nil {
		seat.Release()
		s.log.Warn("viewer refused by Accept after checkHandshake passed", "err", err)
		return
	}
	v.c = c
	c.SetReadLimit(4 << 10)
	unwatch, perr := seat.Watch(v)
	if perr != nil {
		code := websocket.StatusTryAgainLater
		if perr.Code == broadcast.CodeEnded || perr.Code == broadcast.CodeNotFound || perr.Code == broadcast.CodeInvalid {
			code = websocket.StatusNormalClosure
		}
		c.Close(code, perr.Code)
		return
	}
	s.m.viewers.Inc()
	// The handler returns: a fresh goroutine with a small stack reads.
	go func() {
		defer s.m.viewers.Dec()
		defer unwatch()
		v.read()
		c.CloseNow()
	}()
}

// read waits for the client's frames (ignored; coder/websocket answers pings
// and the close handshake) until the connection ends.
func (v *viewer) read() {
	var consumed int64
	for {
		v.conn.waitReadable(consumed)
		_, data, err := v.c.Read(context.Background())
		consumed += clientFrameSize(len(data))
		if err != nil {
			return
		}
	}
}

// Send writes b to the socket as far as it takes it now, and queues the
// rest; false when the viewer is gone or has too much unwritten.
func (v *viewer) Send(b []byte) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.dead {
		return false
	}
	if len(v.pending) > 0 || v.flushing {
		if len(v.pending)+len(b) > maxViewerPending {
			v.dead = true
			return false
		}
		v.pending = append(v.pending, b...)
		return true
	}
	n, err := v.writeNow(b)
	if err != nil {
		v.dead = true
		return false
	}
	if n < len(b) {
		v.pending = append(v.pending, b[n:]...)
		v.flushing = true
		go v.flush()
	}
	return true
}

// writeNow writes what the socket takes without waiting; v.mu is held.
func (v *viewer) writeNow(b []byte) (int, error) {
	if v.writeFn == nil {
		v.writeFn = v.writeFD
	}
	v.out, v.wrote, v.werr = b, 0, nil
	err := v.raw.Write(v.writeFn)
	n, werr := v.wrote, v.werr
	v.out, v.werr = nil, nil
	if err != nil {
		return n, err
	}
	return n, werr
}

// writeFD is writeNow's one non-blocking write(2) of v.out.
func (v *viewer) writeFD(fd uintptr) bool {
	for {
		k, err := syscall.Write(int(fd), v.out)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN {
			return true
		}
		if k > 0 {
			v.wrote = k
		}
		v.werr = err
		return true
	}
}

// flush writes the pending bytes, waiting for the socket (within
// WriteTimeout each time), until none are left.
func (v *viewer) flush() {
	for {
		v.mu.Lock()
		p := v.pending
		if len(p) == 0 || v.dead {
			v.pending, v.flushing = nil, false
			v.mu.Unlock()
			return
		}
		v.mu.Unlock()
		v.conn.batchConn.Conn.SetWriteDeadline(time.Now().Add(v.s.cfg.WriteTimeout))
		var n int
		var werr error
		err := v.raw.Write(func(fd uintptr) bool {
			k, err := syscall.Write(int(fd), p)
			if err == syscall.EAGAIN || err == syscall.EINTR {
				return false // wait until the socket takes more
			}
			if k > 0 {
				n = k
			}
			werr = err
			return true
		})
		v.mu.Lock()
		if err != nil || werr != nil {
			v.dead, v.pending, v.flushing = true, nil, false
			v.mu.Unlock()
			if v.c != nil {
				v.c.CloseNow()
			}
			return
		}
		v.pending = v.pending[n:]
		if len(v.pending) == 0 {
			// Writes outside flush never wait: no deadline for them.
			v.conn.batchConn.Conn.SetWriteDeadline(time.Time{})
			v.pending, v.flushing = nil, false
			v.mu.Unlock()
			return
		}
		v.mu.Unlock()
	}
}

// Close ends the connection: a normal close once the broadcast is over, a
// going-away close when the server drains, and at once for a viewer too
// slow to keep up (its socket takes nothing more, a close frame included).
func (v *viewer) Close(why broadcast.CloseReason) {
	switch why {
	case broadcast.Ended:
		go v.c.Close(websocket.StatusNormalClosure, "broadcast ended")
	case broadcast.GoingAway:
		go v.c.Close(websocket.StatusGoingAway, "server shutting down")
	default:
		v.c.CloseNow()
	}
}
