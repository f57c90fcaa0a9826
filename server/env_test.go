package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/usid/usid"
	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/internal/pooltest"
	"github.com/usid/usid/play"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/quota"
	"github.com/usid/usid/review"
	"github.com/usid/usid/session"
)

const (
	fairyPath = "/usr/games/fairy-stockfish"
	gpsPath   = "/usr/games/gpsusi"
)

// env is a real usid stack on loopback: a pool of real engines (and fake ones
// for faults), the session service and the HTTP server.
type env struct {
	pool  *pool.Pool
	games *review.Manager
	play  *play.Manager
	srv   *Server
	http  *httptest.Server
	reg   *prometheus.Registry
	sent  *lineLog // every line sent to an engine, by engine name
}

var shared *env

func TestMain(m *testing.M) {
	fakeengine.RunIfRequested()
	for _, p := range []string{fairyPath, gpsPath} {
		if _, err := os.Stat(p); err != nil {
			fmt.Fprintf(os.Stderr, "%s is missing (%v): apt-get install fairy-stockfish gpsshogi\n", p, err)
			os.Exit(1)
		}
	}
	removeCache := pooltest.PrivateCache()
	e, err := newEnv(nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	shared = e
	code := m.Run()
	e.close()
	closeChessEnv()
	removeCache()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "leaked goroutines:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func engines() []pool.EngineConfig {
	return []pool.EngineConfig{
		{
			Name: "fairy", Path: fairyPath, Instances: 2, Options: map[string]string{"USI_Hash": "16", "Threads": "1"},
			ClientOptions: map[string]pool.OptionRule{"Skill Level": {Min: ptr(0), Max: ptr(20)}, "Debug Log File": {}},
			Queue:         8,
		},
		{
			Name: "gps", Path: gpsPath, Instances: 1, Options: map[string]string{"Thread": "1"},
			Timeouts: pool.Timeouts{Start: 2 * time.Minute}, // gpsusi loads its data slowly on a loaded machine
		},
		{
			Name: "liar", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.MateLine + "=G*8f_9f9g_8f8g_9g8h"},
			// It answers every go mate with the same false line, so its probe
			// finds no mate search: the operator's word makes usid ask it.
			Capabilities: pool.Capabilities{CheckmateAnswer: ptr(true)},
		},
		// Dialects usid learns by itself (issue: any USI engine unchanged).
		{Name: "mateonly", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.MateOnly}},
		{Name: "instant", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.Normal}},
		{
			Name: "slowmate", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.MateUntilStop},
			// Its mate search answers only when stopped, so its probe finds
			// none: the operator's word makes usid ask it.
			Capabilities: pool.Capabilities{CheckmateAnswer: ptr(true)},
		},
	}
}

func ptr[T any](v T) *T { return &v }

func newEnv(tweak func(*session.Config)) (*env, error) { return newEnvWith(engines(), tweak) }

// newEnvWith is newEnv with other engines.
func newEnvWith(engs []pool.EngineConfig, tweak func(*session.Config)) (*env, error) {
	sent := &lineLog{store: &lineStore{lines: map[string][]string{}}}
	log := slog.New(sent)
	reg := prometheus.NewRegistry()
	p, err := pool.New(engs, pool.Options{Logger: log, Registerer: reg})
	if err != nil {
		return nil, err
	}
	cfg := session.Config{Pool: p, Logger: log, IdleRelease: 2 * time.Second, AcquireTimeout: time.Second,
		Caps: session.Caps{MaxMultiPV: 5, MaxAnalysis: time.Minute}}
	if tweak != nil {
		tweak(&cfg)
	}
	svc := session.NewService(cfg)
	gm := review.New(review.Config{Service: svc, Registerer: reg, Logger: log, SpareCheck: 20 * time.Millisecond})
	pm := play.New(play.Config{Service: svc, Logger: log})
	srv := New(Config{Service: svc, Pool: p, Gatherer: reg, Registerer: reg, OpenAPI: usid.OpenAPI, Logger: log, Review: gm, Play: pm,
		Access: &Access{Anonymous: true, AnonymousQuota: Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 1000, Burst: 1000, Sessions: 100, Leases: 100, Messages: 1e6}}})
	e := &env{pool: p, games: gm, play: pm, srv: srv, http: httptest.NewServer(srv), reg: reg, sent: sent}
	// Wait for every engine, so that timing in tests is about searches.
	// Probing gpsusi afresh restarts it after each go it aborts on: on a
	// busy machine that takes a while.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		ready := true
		for _, st := range p.Status() {
			ready = ready && st.Idle == st.Instances
		}
		if ready {
			return e, nil
		}
		if time.Now().After(deadline) {
			e.close()
			return nil, fmt.Errorf("engines did not start: %+v", p.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *env) close() {
	e.http.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// As internal/app drains: game jobs alongside the server.
	drained := make(chan struct{})
	go func() {
		if e.games != nil {
			e.games.Close(ctx)
		}
		if e.play != nil {
			e.play.Close(ctx)
		}
		close(drained)
	}()
	e.srv.Drain(ctx)
	<-drained
	e.pool.Close(ctx)
}

// waitIdle waits until every engine is back in the pool, idle.
func (e *env) waitIdle(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ready := true
		for _, st := range e.pool.Status() {
			ready = ready && st.Idle == st.Instances
		}
		if ready {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("engines not idle: %+v", e.pool.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lineLog is a slog handler that records the lines usi sends to engines.
type lineLog struct {
	store *lineStore
	attrs []slog.Attr
}

type lineStore struct {
	mu       sync.Mutex
	lines    map[string][]string // by pool engine name
	warnings []string            // every warning or error logged: "engine: message"
}

func (l *lineLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *lineLog) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		name := ""
		for _, a := range l.attrs {
			if a.Key == "engine" && name == "" {
				name = a.Value.String()
			}
		}
		l.store.mu.Lock()
		l.store.warnings = append(l.store.warnings, name+": "+r.Message)
		l.store.mu.Unlock()
	}
	if r.Message != "send" {
		return nil
	}
	var engine, line string
	collect := func(a slog.Attr) bool {
		switch a.Key {
		case "engine":
			if engine == "" {
				engine = a.Value.String()
			}
		case "line":
			line = a.Value.String()
		}
		return true
	}
	for _, a := range l.attrs {
		collect(a)
	}
	r.Attrs(collect)
	l.store.mu.Lock()
	l.store.lines[engine] = append(l.store.lines[engine], line)
	l.store.mu.Unlock()
	return nil
}
func (l *lineLog) WithAttrs(as []slog.Attr) slog.Handler {
	return &lineLog{store: l.store, attrs: append(append([]slog.Attr{}, l.attrs...), as...)}
}
func (l *lineLog) WithGroup(string) slog.Handler { return l }

// sentTo returns the lines sent to engines of the given pool name so far.
func (e *env) sentTo(name string) []string {
	e.sent.store.mu.Lock()
	defer e.sent.store.mu.Unlock()
	return append([]string(nil), e.sent.store.lines[name]...)
}

// warnings returns the warnings and errors logged so far, "engine: message".
func (e *env) warnings() []string {
	e.sent.store.mu.Lock()
	defer e.sent.store.mu.Unlock()
	return append([]string(nil), e.sent.store.warnings...)
}

// wsClient is a WebSocket client of the usid under test.
type wsClient struct {
	t      *testing.T
	c      *websocket.Conn
	events chan map[string]any
	done   chan struct{}
	err    error
}

func dial(t *testing.T, e *env) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	url := "ws" + strings.TrimPrefix(e.http.URL, "http") + "/v1/ws"
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	cl := &wsClient{t: t, c: c, events: make(chan map[string]any, 10000), done: make(chan struct{})}
	go cl.read()
	t.Cleanup(func() { cl.c.Close(websocket.StatusNormalClosure, ""); <-cl.done })
	return cl
}

// dialNoRead connects without reading: a client that lets events pile up.
func dialNoRead(t *testing.T, e *env) *websocket.Conn {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.http.URL, "http")+"/v1/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (cl *wsClient) read() {
	defer close(cl.done)
	for {
		_, b, err := cl.c.Read(context.Background())
		if err != nil {
			cl.err = err
			close(cl.events)
			return
		}
		var ev map[string]any
		if err := json.Unmarshal(b, &ev); err != nil {
			cl.t.Errorf("event is not JSON: %s", b)
			continue
		}
		cl.events <- ev
	}
}

func (cl *wsClient) send(v any) {
	cl.t.Helper()
	b, _ := json.Marshal(v)
	if err := cl.c.Write(cl.t.Context(), websocket.MessageText, b); err != nil {
		cl.t.Fatalf("send: %v", err)
	}
}

func (cl *wsClient) sendRaw(s string) {
	cl.t.Helper()
	if err := cl.c.Write(cl.t.Context(), websocket.MessageText, []byte(s)); err != nil {
		cl.t.Fatalf("send: %v", err)
	}
}

// until collects events until stop returns true for one (included), or fails
// the test after d, tripled: d is what a quiet machine needs with room to
// spare, the bound only ends a broken run, and a machine busy with other
// work (CI may share it) can take several times as long for a sound one.
func (cl *wsClient) until(d time.Duration, stop func(map[string]any) bool) []map[string]any {
	cl.t.Helper()
	var got []map[string]any
	d *= 3
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-cl.events:
			if !ok {
				cl.t.Fatalf("connection closed (%v) after %d events: %v", cl.err, len(got), tail(got))
			}
			got = append(got, ev)
			if stop(ev) {
				return got
			}
		case <-timer.C:
			cl.t.Fatalf("timed out after %v; %d events: %v", d, len(got), tail(got))
		}
	}
}

// terminal collects events until the terminal event of request id.
func (cl *wsClient) terminal(id string, d time.Duration) []map[string]any {
	cl.t.Helper()
	return cl.until(d, func(ev map[string]any) bool {
		return ev["id"] == id && (ev["type"] == "bestmove" || ev["type"] == "checkmate" || ev["type"] == "error")
	})
}

func tail(evs []map[string]any) []map[string]any {
	if len(evs) > 5 {
		return evs[len(evs)-5:]
	}
	return evs
}

func last(evs []map[string]any) map[string]any { return evs[len(evs)-1] }

func num(v any) int { f, _ := v.(float64); return int(f) }

// call sends a request (a JSON body unless body is a string) through a
// client that checks the answer against openapi.yaml, and decodes the answer.
func call(t *testing.T, e *env, method, path string, body any) (int, http.Header, map[string]any) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		r = bytes.NewReader(j)
	}
	req, _ := http.NewRequestWithContext(t.Context(), method, e.http.URL+path, r)
	if r != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := checkedClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, resp.Header, out
}

// ownServer runs a server like the shared one (its pool and service), with
// its configuration changed by tweak, on a listener of its own.
func ownServer(t *testing.T, tweak func(*Config)) *httptest.Server {
	cfg := shared.srv.cfg
	cfg.Registerer = nil
	tweak(&cfg)
	srv := New(cfg)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Drain(context.Background())
		hs.Close()
	})
	return hs
}

func testLog(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))
}
