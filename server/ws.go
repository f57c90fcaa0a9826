package server

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/usid/usid/session"
)

// wsConn is one WebSocket connection and its session.
type wsConn struct {
	s      *Server
	c      *websocket.Conn
	conn   *batchConn // c's connection: holds a batch's frames for one write
	client *client

	writing atomic.Bool    // a writer goroutine runs (or has closed the connection)
	writers sync.WaitGroup // the writer goroutines, for serve to wait
	// wakeMu orders writers.Add against serve's Wait (a WaitGroup must not
	// grow from zero while waited on): once ended, wake-ups start nothing.
	wakeMu sync.Mutex
	ended  bool
	pinger *time.Timer
	sess   *session.Session

	ctx    context.Context // ends when the connection is done
	cancel context.CancelFunc

	mu        sync.Mutex
	closeSet  bool
	closeCode websocket.StatusCode
	closeWhy  string
}

func (s *Server) websocket(w http.ResponseWriter, r *http.Request) {
	if s.refuseWhileDraining(w, r) {
		return
	}
	// websocket.Accept answers a bad handshake or a foreign Origin itself,
	// in text/plain; checking the same things first keeps every refusal
	// problem JSON with a stable code. Accept still checks them too.
	if perr := s.checkHandshake(w, r); perr != nil {
		s.log.Info("websocket refused", "code", perr.Code, "origin", r.Header.Get("Origin"))
		s.problem(w, r, perr)
		return
	}
	cl := clientOf(r)
	release, qerr := s.gate.takeSession(cl, r)
	if qerr != nil {
		s.problem(w, r, qerr)
		return
	}
	// sameSite has checked the Origin against the configured names, not
	// against the request's Host, which a DNS-rebinding page controls.
	lean := &leanResponse{ResponseWriter: w} // small buffers, batched writes (wsconn.go)
	c, err := websocket.Accept(lean, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err == nil && lean.conn == nil {
		err = errors.New("websocket.Accept did not hijack through leanResponse")
		c.CloseNow()
	}
	if err != nil {
		release()
		s.log.Warn("websocket refused by Accept after checkHandshake passed", "err", err, "origin", r.Header.Get("Origin"))
		return // Accept has answered
	}
	c.SetReadLimit(s.cfg.MaxMessage)
	ctx, cancel := context.WithCancel(context.Background())
	wc := &wsConn{s: s, c: c, conn: lean.conn, client: cl, sess: s.cfg.Service.NewSession(), ctx: ctx, cancel: cancel,
		closeCode: websocket.StatusNormalClosure}
	wc.sess.SetReady(wc.wakeWriter)
	wc.sess.SetInline(wc.inline)
	wc.sess.SetCaller(s.gate.caller(cl))
	if s.cfg.Review != nil {
		wc.sess.SetGames(s.cfg.Review.For(s.gate.caller(cl)))
	}
	if s.cfg.Play != nil {
		wc.sess.SetPlay(s.cfg.Play.For(s.gate.caller(cl)))
	}

	s.mu.Lock()
	if s.draining.Load() {
		s.mu.Unlock()
		wc.sess.Close()
		c.Close(websocket.StatusGoingAway, "server shutting down")
		cancel()
		release()
		return
	}
	s.sessions[wc] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	s.m.sessions.WithLabelValues().Inc()
	// The connection is hijacked, so the handler can return: a fresh
	// goroutine with a small stack serves it, and the request, its headers
	// and the router's state become garbage. That is most of what an idle
	// connection costs.
	go func() {
		defer func() {
			s.mu.Lock()
			delete(s.sessions, wc)
			s.mu.Unlock()
			s.m.sessions.WithLabelValues().Dec()
			release()
			s.wg.Done()
		}()
		wc.serve()
	}()
}

// checkHandshake refuses what websocket.Accept would refuse, the same way
// (RFC 6455 section 4.2.1), but as problem JSON: a request that is not a
// WebSocket upgrade (426, with the Upgrade header RFC 9110 asks for), a
// version other than 13 or a malformed key (400). A foreign browser Origin
// has already been refused by sameSite (403).
func (s *Server) checkHandshake(w http.ResponseWriter, r *http.Request) *session.Error {
	if !r.ProtoAtLeast(1, 1) || !hasToken(r.Header, "Connection", "upgrade") || !hasToken(r.Header, "Upgrade", "websocket") {
		w.Header().Set("Connection", "Upgrade")
		w.Header().Set("Upgrade", "websocket")
		return &session.Error{Code: codeUpgradeRequired, Message: "this is the WebSocket endpoint: send an HTTP/1.1 GET with Connection: Upgrade and Upgrade: websocket", MoveIndex: -1}
	}
	if r.Header.Get("Sec-WebSocket-Version") != "13" {
		w.Header().Set("Sec-WebSocket-Version", "13")
		return &session.Error{Code: session.CodeBadRequest, Message: "Sec-WebSocket-Version must be 13", MoveIndex: -1}
	}
	keys := r.Header.Values("Sec-WebSocket-Key")
	if len(keys) != 1 {
		return &session.Error{Code: session.CodeBadRequest, Message: "exactly one Sec-WebSocket-Key is required", MoveIndex: -1}
	}
	if k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(keys[0])); err != nil || len(k) != 16 {
		return &session.Error{Code: session.CodeBadRequest, Message: "Sec-WebSocket-Key must be 16 bytes in base64", MoveIndex: -1}
	}
	return nil
}

// hasToken reports whether a comma-separated header holds token, in any case.
func hasToken(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// serve runs the connection. This goroutine reads. A writer goroutine runs
// only while the session has events to send (SetReady starts it, and it
// returns when the session is quiet), and a timer pings the client every
// PingInterval: an idle connection costs one goroutine. The writer closes
// the connection once the session is over.
func (wc *wsConn) serve() {
	wc.pinger = time.AfterFunc(time.Hour, wc.ping)
	wc.pinger.Reset(wc.s.cfg.PingInterval) // after the assignment ping reads
	wc.read()
	// The connection is closing or gone, so nothing more can be delivered:
	// stop the search, give the engine back, and end the writer and pinger.
	wc.sess.Close() // the last wake-up: the writer sees the end and closes
	wc.cancel()
	wc.pinger.Stop()
	wc.wakeMu.Lock()
	wc.ended = true // a later Close (a drain's) wakes nobody: the writer above has the end
	wc.wakeMu.Unlock()
	wc.writers.Wait()
	wc.c.CloseNow()
}

// wakeWriter is the session's ready callback: it starts a writer unless one
// runs (or the last one has closed the connection). It runs with the
// session's outbox locked, so it only starts the goroutine.
func (wc *wsConn) wakeWriter() {
	wc.wakeMu.Lock()
	defer wc.wakeMu.Unlock()
	if wc.ended {
		return
	}
	if wc.writing.CompareAndSwap(false, true) {
		wc.writers.Add(1)
		go func() {
			defer wc.writers.Done()
			wc.write()
		}()
	}
}

// inline is the session's inline callback: the goroutine that queued an
// info event (the session's worker) writes it itself when no writer runs,
// the rate allows a batch and the socket takes all of it at once, so that
// an engine's line reaches the client without waking another goroutine.
// Anything else (a batch held back by the rate, a socket that is full, an
// error) is left to a writer goroutine, started here.
func (wc *wsConn) inline() {
	if !wc.writing.CompareAndSwap(false, true) {
		return // a writer runs: it takes the event
	}
	if wc.conn.direct.Load() > 0 {
		// A pong or ping is being written: a writer waits behind it,
		// not the engine's goroutine (a client that reads nothing holds
		// it until the ping fails).
		wc.startWriter()
		return
	}
	for {
		evs := wc.sess.TryNext()
		if evs == nil {
			break
		}
		wc.conn.hold()
		if !wc.encode(evs) || !wc.conn.tryRelease() {
			wc.startWriter() // it writes the rest first
			return
		}
	}
	wc.writing.Store(false)
	if wc.sess.Pending() && wc.writing.CompareAndSwap(false, true) {
		wc.startWriter() // held back by the rate, or the session's end
	}
}

// startWriter starts a writer goroutine for a caller that has set writing.
func (wc *wsConn) startWriter() {
	wc.wakeMu.Lock()
	defer wc.wakeMu.Unlock()
	if wc.ended {
		return
	}
	wc.writers.Add(1)
	go func() {
		defer wc.writers.Done()
		wc.write()
	}()
}

// ping checks that the client is there (a dead peer does not answer) and
// keeps proxies from dropping a quiet connection.
func (wc *wsConn) ping() {
	interval := wc.s.cfg.PingInterval
	if wc.ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(wc.ctx, interval)
	err := wc.c.Ping(ctx)
	cancel()
	if err != nil {
		wc.c.CloseNow() // the reader fails, and serve ends the session
		return
	}
	wc.pinger.Reset(interval)
}

func (wc *wsConn) read() {
	var consumed int64 // by the messages read: see batchConn.waitReadable
	for {
		wc.conn.waitReadable(consumed) // idle here, on a small stack
		// Not wc.ctx: it ends only after this loop does, and a Read with a
		// cancellable context registers (and removes) a callback per message.
		typ, data, err := wc.c.Read(context.Background())
		consumed += clientFrameSize(len(data))
		if err != nil {
			if websocket.CloseStatus(err) == websocket.StatusMessageTooBig {
				wc.s.log.Info("websocket message too big; closing")
			}
			return
		}
		if typ == websocket.MessageText && !utf8.Valid(data) {
			// RFC 6455 8.1: a text frame that is not UTF-8 fails the connection.
			wc.setClose(websocket.StatusInvalidFramePayloadData, "text message is not valid UTF-8")
			return
		}
		// One parse, for the limiter and the session alike.
		var req *session.Request
		var perr *session.Error
		if typ != websocket.MessageText {
			perr = &session.Error{Code: session.CodeBadRequest, Message: "messages are JSON text", MoveIndex: -1}
		} else {
			req, perr = session.ParseRequest(data)
		}
		id := ""
		if req != nil {
			id = req.ID
		}
		if err := wc.admit(req, perr); err != nil {
			wc.sess.Notify(session.ErrorEvent(id, err))
			continue
		}
		if perr != nil {
			wc.sess.Notify(session.ErrorEvent(id, perr))
			continue
		}
		wc.sess.Serve(req)
	}
}

// admit charges one message to the client: every message, refused or not,
// to its flood guard; a search request also to its search rate.
func (wc *wsConn) admit(req *session.Request, perr *session.Error) *session.Error {
	if err := wc.s.gate.allowMessage(wc.client); err != nil {
		return err
	}
	if perr == nil && req.IsSearch() {
		return wc.s.gate.allow(wc.ctx, wc.client)
	}
	return nil
}

// write sends the session's events while it has some. Once the session is
// over it closes the connection with the reason recorded by setClose, and
// no writer starts again.
func (wc *wsConn) write() {
	for {
		// What inline left held (a full socket) goes first.
		if wc.conn.release(wc.s.cfg.WriteTimeout) != nil {
			wc.setClose(websocket.StatusPolicyViolation, "client too slow: write timed out")
			break
		}
		if !wc.sess.Pending() {
			// Quiet: return, unless an event came in between (its wake-up
			// found this writer still running and started none). During a
			// search too: the session's worker writes the info events
			// itself (inline) while no writer runs.
			wc.conn.noDeadline()
			wc.writing.Store(false)
			if !wc.sess.Pending() || !wc.writing.CompareAndSwap(false, true) {
				return
			}
		}
		evs, err := wc.sess.Next(wc.ctx)
		if err != nil {
			if errors.Is(err, session.ErrSlowClient) {
				wc.setClose(websocket.StatusPolicyViolation, "client too slow: events piled up unread")
			}
			break
		}
		if !wc.send(evs) {
			wc.setClose(websocket.StatusPolicyViolation, "client too slow: write timed out")
			break
		}
	}
	// The end: writing stays true, so that no writer starts again.
	wc.mu.Lock()
	code, why := wc.closeCode, wc.closeWhy
	wc.mu.Unlock()
	wc.c.Close(code, why)
}

// send writes a batch of events, one message each, with one write(2) for
// the batch (batchConn) and no timer per message: the frames go into the
// held buffer, which cannot block, and release writes them within
// WriteTimeout. It reports false when the client did not take them in time.
func (wc *wsConn) send(evs []*session.Event) bool {
	wc.conn.hold()
	if !wc.encode(evs) {
		wc.conn.release(wc.s.cfg.WriteTimeout)
		return false
	}
	return wc.conn.release(wc.s.cfg.WriteTimeout) == nil
}

// encodeBufs are the buffers events are encoded into, between batches.
var encodeBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// encode writes a batch of events, one message each, into the held
// connection (wc.conn.hold first). It reports false when the connection
// is closed.
func (wc *wsConn) encode(evs []*session.Event) bool {
	buf := encodeBufs.Get().(*[]byte)
	defer func() {
		if cap(*buf) <= 64<<10 {
			encodeBufs.Put(buf)
		}
	}()
	infos := 0
	for _, ev := range evs {
		// AppendJSON into a reused buffer: no allocation for an info
		// event, and not json.Marshal, which would encode the event, then
		// copy and re-check its own output. coder/websocket copies the
		// message into its frame before Write returns.
		b, err := ev.AppendJSON((*buf)[:0])
		*buf = b
		if err != nil {
			wc.s.log.Error("event not encodable", "err", err)
			continue
		}
		if err := wc.c.Write(context.Background(), websocket.MessageText, b); err != nil {
			return false
		}
		if ev.Type == session.EventInfo {
			infos++
		} else {
			wc.s.m.events.WithLabelValues(ev.Type).Inc()
		}
	}
	if infos > 0 {
		wc.s.m.infoEvents().Add(float64(infos))
	}
	return true
}

// setClose records the close status; the first reason wins.
func (wc *wsConn) setClose(code websocket.StatusCode, why string) {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	if !wc.closeSet {
		wc.closeCode, wc.closeWhy, wc.closeSet = code, why, true
	}
}

// goingAway tells the client the server is draining: a closing event now,
// the result of the search in flight when it comes, then a going-away close.
func (wc *wsConn) goingAway() {
	wc.sess.Notify(&session.Event{Type: session.EventClosing, Code: session.CodeShuttingDown, Message: "the server is shutting down; reconnect to another instance"})
	wc.setClose(websocket.StatusGoingAway, "server shutting down")
	go func() {
		wc.sess.Drain()
		wc.sess.Close() // the writer sends what is left, then closes
	}()
}

// closeNow cuts the connection (the drain deadline passed).
func (wc *wsConn) closeNow() {
	wc.setClose(websocket.StatusGoingAway, "server shutting down")
	wc.c.CloseNow()
}
