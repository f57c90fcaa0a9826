package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/usid/usid/session"
)

// wsConn is one WebSocket connection and its session.
type wsConn struct {
	s      *Server
	c      *websocket.Conn
	client *client
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
	cl := clientOf(r)
	release, qerr := s.gate.takeSession(cl, r)
	if qerr != nil {
		s.problem(w, r, qerr)
		return
	}
	// sameSite has checked the Origin against the configured names, not
	// against the request's Host, which a DNS-rebinding page controls.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		release()
		s.log.Info("websocket refused", "err", err, "origin", r.Header.Get("Origin"))
		return // Accept has answered
	}
	c.SetReadLimit(s.cfg.MaxMessage)
	ctx, cancel := context.WithCancel(context.Background())
	wc := &wsConn{s: s, c: c, client: cl, sess: s.cfg.Service.NewSession(), ctx: ctx, cancel: cancel,
		closeCode: websocket.StatusNormalClosure}

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

// serve runs the connection: this goroutine reads, one writes (and pings
// when there is nothing to write). The writer closes the connection once the
// session has nothing more to send.
func (wc *wsConn) serve() {
	var wg sync.WaitGroup
	wg.Go(wc.write)
	wc.read()
	// The connection is closing or gone, so nothing more can be delivered:
	// stop the search, give the engine back, and end the writer and pinger.
	wc.sess.Close()
	wc.cancel()
	wg.Wait()
	wc.c.CloseNow()
}

func (wc *wsConn) read() {
	for {
		typ, data, err := wc.c.Read(wc.ctx)
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
		return wc.s.gate.allow(wc.client)
	}
	return nil
}

// write sends the session's events until the session is over, then closes
// the connection with the reason recorded by setClose.
func (wc *wsConn) write() {
	defer func() {
		wc.mu.Lock()
		code, why := wc.closeCode, wc.closeWhy
		wc.mu.Unlock()
		wc.c.Close(code, why)
	}()
	interval := wc.s.cfg.PingInterval
	nextPing := time.Now().Add(interval)
	for {
		ctx, cancel := context.WithDeadline(wc.ctx, nextPing)
		evs, err := wc.sess.Next(ctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && wc.ctx.Err() == nil {
			// Nothing to send for a while: a ping keeps proxies from
			// dropping the connection and tells a dead peer apart.
			pctx, cancel := context.WithTimeout(wc.ctx, interval)
			err := wc.c.Ping(pctx)
			cancel()
			if err != nil {
				wc.c.CloseNow()
				return
			}
			nextPing = time.Now().Add(interval)
			continue
		}
		if err != nil {
			if errors.Is(err, session.ErrSlowClient) {
				wc.setClose(websocket.StatusPolicyViolation, "client too slow: events piled up unread")
			}
			return
		}
		for _, ev := range evs {
			b, err := json.Marshal(ev)
			if err != nil {
				wc.s.log.Error("event not encodable", "err", err)
				continue
			}
			ctx, cancel := context.WithTimeout(wc.ctx, wc.s.cfg.WriteTimeout)
			err = wc.c.Write(ctx, websocket.MessageText, b)
			cancel()
			if err != nil {
				wc.setClose(websocket.StatusPolicyViolation, "client too slow: write timed out")
				return
			}
			wc.s.m.events.WithLabelValues(ev.Type).Inc()
		}
	}
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
