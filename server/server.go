// Package server is usid's HTTP face: the chi router with the REST routes,
// the WebSocket endpoint, health and readiness, metrics and the OpenAPI spec.
// It maps the session package's error codes to HTTP statuses in one table
// and writes errors as RFC 9457 problem JSON.
//
// A Server is safe for concurrent use. Drain stops new work and ends the
// WebSocket sessions; the caller owns the http.Server and the pool.
package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/usid/usid/broadcast"
	"github.com/usid/usid/internal/etag"
	"github.com/usid/usid/match"
	"github.com/usid/usid/play"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/review"
	"github.com/usid/usid/session"
)

// Config wires a Server. Zero fields take the defaults shown.
type Config struct {
	Service *session.Service
	Pool    *pool.Pool
	// Gatherer serves /metrics; Registerer takes the server's own metrics.
	Gatherer   prometheus.Gatherer
	Registerer prometheus.Registerer
	// OriginPatterns lists the browser origins (host patterns, as in
	// "example.com" or "*.example.com") allowed to open a WebSocket besides
	// the server's own. Requests without an Origin (non-browsers) are allowed.
	OriginPatterns []string
	// Hosts are the service's own host names (patterns as above, with an
	// optional ":port" or ":*"), for its pages' origin and for the Host
	// header: when set, a /v1 request for another Host is refused (421).
	// Unset, any Host is served (behind a load balancer the Host is
	// whatever the client asked for), and only the loopback names count as
	// the service's own origin.
	Hosts        []string
	MaxBody      int64         // REST request body (64 KiB)
	MaxMessage   int64         // one WebSocket message (64 KiB)
	PingInterval time.Duration // WebSocket keepalive (30s)
	WriteTimeout time.Duration // one WebSocket write before the client counts as gone (10s)
	// BodyTimeout bounds the reading of a REST request body (10s): a client
	// that stalls mid-body gets 408 and holds no quota meanwhile.
	BodyTimeout time.Duration
	// HeaderTimeout and IdleTimeout are HTTPServer's ReadHeaderTimeout (10s)
	// and IdleTimeout between keep-alive requests (60s). WebSocket
	// connections are not cut by either: they leave the HTTP server at the
	// upgrade, and pings watch them.
	HeaderTimeout, IdleTimeout time.Duration
	Web                        http.Handler // the pages at / and /tsume; nil: none
	OpenAPI                    []byte       // served at /openapi.yaml
	Access                     *Access      // keys, quotas, proxies; nil: anonymous with default quotas (see Access.Check)
	Logger                     *slog.Logger

	// Games runs whole-game analyses; nil: no /v1/games routes, and
	// analyze_game is refused as unsupported.
	Review *review.Manager
	// Play runs games against the engine (play_* over the WebSocket); nil:
	// refused as unsupported.
	Play *play.Manager
	// Broadcasts runs broadcasts (one search, many viewers); nil: no
	// /v1/broadcasts routes.
	Broadcasts *broadcast.Manager
	// Matches runs engine matches; nil: no /v1/matches routes.
	Matches *match.Manager
}

// Server routes requests. Create it with New.
type Server struct {
	cfg      Config
	log      *slog.Logger
	router   chi.Router
	draining atomic.Bool
	m        *metrics
	gate     *gate

	mu       sync.Mutex
	sessions map[*wsConn]struct{}
	wg       sync.WaitGroup // WebSocket handlers

	// cut ends when a drain is about to run out of its grace: REST searches
	// still running then are stopped and answered 503 (cutSearches).
	cut         context.Context
	cutSearches context.CancelFunc
}

// WithDefaults returns cfg with the defaults New applies filled in (the
// values documented on Config's fields; Access's own defaults apply when
// the server is built).
func (cfg Config) WithDefaults() Config {
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 64 << 10
	}
	if cfg.MaxMessage <= 0 {
		cfg.MaxMessage = 64 << 10
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = 30 * time.Second
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 10 * time.Second
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = 10 * time.Second
	}
	if cfg.HeaderTimeout <= 0 {
		cfg.HeaderTimeout = 10 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Access == nil {
		cfg.Access = &Access{Anonymous: true}
	}
	return cfg
}

// New builds the router.
func New(cfg Config) *Server {
	cfg = cfg.WithDefaults()
	s := &Server{cfg: cfg, log: cfg.Logger, sessions: make(map[*wsConn]struct{}), m: newMetrics(cfg.Registerer), gate: newGate(cfg.Access)}
	s.cut, s.cutSearches = context.WithCancel(context.Background())
	r := chi.NewRouter()
	r.Use(middleware.Recoverer, s.instrument, s.oneFraming)
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		r.Method(m, "/healthz", http.HandlerFunc(s.healthz))
		r.Method(m, "/readyz", http.HandlerFunc(s.readyz))
		if cfg.Gatherer != nil {
			r.Method(m, "/metrics", promhttp.HandlerFor(cfg.Gatherer, promhttp.HandlerOpts{}))
		}
	}
	r.Get("/openapi.yaml", s.openapi)
	r.Route("/v1", func(r chi.Router) {
		r.Use(s.sameSite, s.authenticate)
		r.Post("/ws-ticket", s.wsTicket)
		r.With(s.readGuard).Get("/engines", s.engines)
		r.With(s.readGuard).Get("/limits", s.limits)
		r.Post("/validate", s.validate)
		r.With(s.flood).Post("/records/parse", s.parseRecord)
		r.With(s.flood).Post("/records/export", s.exportRecord)
		r.Post("/analyze", searchRoute(s, (*analyzeRequest).request, s.cfg.Service.Analyze))
		r.Post("/mate", searchRoute(s, (*mateRequest).request, s.cfg.Service.Mate))
		r.Get("/ws", s.websocket)
		if cfg.Review != nil {
			r.Post("/games/analysis", s.startGameAnalysis)
			r.With(s.readGuard).Get("/games/analysis/{id}", s.getGameAnalysis)
			r.Delete("/games/analysis/{id}", s.cancelGameAnalysis)
		}
		if cfg.Play != nil {
			r.With(s.readGuard).Get("/play/games", s.playGames)
		}
		if cfg.Broadcasts != nil {
			s.broadcastRoutes(r)
		}
		if cfg.Matches != nil {
			s.matchRoutes(r)
		}
	})
	if cfg.Web != nil {
		// Only the pages and their assets: every other path keeps
		// problem+json answers.
		r.Handle("/", cfg.Web)
		r.Handle("/tsume", cfg.Web)
		r.Handle("/chess", cfg.Web)
		r.Handle("/othello", cfg.Web)
		r.Handle("/watch/{id}", s.problemNotFound(cfg.Web))     // a broadcast's watch page (a path that cannot be one: 404)
		r.Handle("/watch/{id}/{n}", s.problemNotFound(cfg.Web)) // a match game's
		r.Handle("/match/{id}", s.problemNotFound(cfg.Web))     // a match's page
		r.Handle("/static/*", s.problemNotFound(cfg.Web))
	}
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.problem(w, r, &session.Error{Code: codeNotFound, Message: "no such route: " + r.URL.Path, MoveIndex: -1})
	})
	// RFC 9110 asks a 405 to say which methods the path takes. Every route
	// is a fixed path, so a table made once answers that.
	allow := map[string][]string{}
	chi.Walk(r, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		allow[route] = append(allow[route], method)
		return nil
	})
	for _, m := range allow {
		slices.Sort(m) // chi walks methods in map order; the header is stable
	}
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		methods := allow[r.URL.Path]
		if len(methods) == 0 {
			methods = s.allowedMethods(r.URL.Path) // a path with parameters
		}
		if len(methods) > 0 {
			w.Header().Set("Allow", strings.Join(methods, ", "))
		}
		s.problem(w, r, &session.Error{Code: codeMethodNotAllowed, Message: r.Method + " is not allowed on " + r.URL.Path, MoveIndex: -1})
	})
	s.router = r
	return s
}

// allowedMethods lists the methods the router serves on path, for the
// Allow header of a 405 on a route with parameters (/v1/games/analysis/{id}).
func (s *Server) allowedMethods(path string) []string {
	var out []string
	for _, m := range []string{http.MethodDelete, http.MethodGet, http.MethodHead, http.MethodPatch, http.MethodPost, http.MethodPut} {
		if s.router.Match(chi.NewRouteContext(), m, path) {
			out = append(out, m)
		}
	}
	return out
}

// oneFraming refuses a request body framed by Transfer-Encoding: usid
// takes bodies with Content-Length only. A request with both headers is
// the classic way to smuggle a second request past a front proxy that
// reads the other one; Go's server drops Content-Length in that case before
// a handler can see it, so every Transfer-Encoding is refused (400).
func (s *Server) oneFraming(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TransferEncoding) > 0 {
			w.Header().Set("Connection", "close")
			s.problem(w, r, &session.Error{Code: session.CodeBadRequest, Message: "Transfer-Encoding is not accepted on requests; send the body with Content-Length", MoveIndex: -1})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// problemNotFound answers h's 404s with problem+json, like every other
// route's, instead of the file server's plain text.
func (s *Server) problemNotFound(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&notFoundWriter{ResponseWriter: w, notFound: func() {
			s.problem(w, r, &session.Error{Code: codeNotFound, Message: "no such file: " + r.URL.Path, MoveIndex: -1})
		}}, r)
	})
}

// notFoundWriter replaces a 404 and its body with notFound's answer.
type notFoundWriter struct {
	http.ResponseWriter
	notFound func()
	hit      bool
}

func (w *notFoundWriter) WriteHeader(code int) {
	if code == http.StatusNotFound {
		w.hit = true
		for _, k := range []string{"Content-Type", "X-Content-Type-Options", "Content-Length"} {
			w.Header().Del(k)
		}
		w.notFound()
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *notFoundWriter) Write(b []byte) (int, error) {
	if w.hit {
		return len(b), nil // the file server's text, replaced
	}
	return w.ResponseWriter.Write(b)
}

// HTTPServer returns an http.Server for s with its timeouts: headers within
// HeaderTimeout, idle keep-alive connections closed after IdleTimeout.
// Request bodies get BodyTimeout each, set per request (a server-wide
// ReadTimeout would also cancel long REST searches once the body is read).
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{Handler: s, ReadHeaderTimeout: s.cfg.HeaderTimeout, IdleTimeout: s.cfg.IdleTimeout}
}

// ServeHTTP makes the Server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.router.ServeHTTP(w, r) }

// Drain makes /readyz fail and refuses new work at once, tells every
// WebSocket client the server is going away, and waits until their sessions
// have ended (searches in flight get their result) or ctx ends, when the
// remaining connections are closed.
func (s *Server) Drain(ctx context.Context) {
	s.draining.Store(true)
	s.mu.Lock()
	conns := make([]*wsConn, 0, len(s.sessions))
	for c := range s.sessions {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.goingAway()
	}
	// REST searches may run past the grace (a long movetime): stop them a
	// little before it ends, so that each gets a 503 answer, not a closed
	// connection when the server is closed at the deadline.
	if deadline, ok := ctx.Deadline(); ok {
		left := time.Until(deadline)
		margin := min(5*time.Second, max(time.Second, left/5))
		time.AfterFunc(left-margin, s.cutSearches)
	}
	context.AfterFunc(ctx, s.cutSearches)
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		for _, c := range conns {
			c.closeNow()
		}
		<-done
	}
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	switch {
	case s.draining.Load():
		s.problem(w, r, &session.Error{Code: session.CodeShuttingDown, Message: "draining", MoveIndex: -1})
	case !s.cfg.Pool.Ready():
		s.problem(w, r, &session.Error{Code: session.CodeNoEngine, Message: "no engine can be leased yet", MoveIndex: -1})
	default:
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	}
}

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(s.cfg.OpenAPI)
}

// Codes only the server uses.
const (
	codeNotFound         = "not_found"
	codeMethodNotAllowed = "method_not_allowed"
	codeBodyTooLarge     = "body_too_large"
	codeRequestTimeout   = "request_timeout"
	codeMediaType        = "unsupported_media_type"
	codeMisdirected      = "misdirected"
	codeUnauthorized     = "unauthorized"
	codeInternal         = "internal"
	codeUpgradeRequired  = "upgrade_required"   // GET /v1/ws without a WebSocket handshake
	codeOriginNotAllowed = "origin_not_allowed" // a browser request from a page of a foreign origin
)

// statusOf is the one table from error codes to HTTP statuses. Codes not
// listed are position and move codes from the shogi and chess packages: 422.
var statusOf = map[string]int{
	session.CodeBadRequest:       http.StatusBadRequest,
	session.CodeUnknownType:      http.StatusBadRequest,
	session.CodeInvalidField:     http.StatusUnprocessableEntity,
	session.CodeUnknownEngine:    http.StatusNotFound,
	session.CodeQueueFull:        http.StatusServiceUnavailable,
	session.CodeUnavailable:      http.StatusServiceUnavailable,
	session.CodeNoEngine:         http.StatusServiceUnavailable,
	session.CodeShuttingDown:     http.StatusServiceUnavailable,
	session.CodeOptionNotAllowed: http.StatusUnprocessableEntity,
	session.CodeUnsupported:      http.StatusUnprocessableEntity,
	session.CodeGameMismatch:     http.StatusUnprocessableEntity,
	session.CodeEngineError:      http.StatusBadGateway,
	session.CodeTooManyRequests:  http.StatusTooManyRequests,
	codeNotFound:                 http.StatusNotFound,
	codeMethodNotAllowed:         http.StatusMethodNotAllowed,
	codeBodyTooLarge:             http.StatusRequestEntityTooLarge,
	codeRequestTimeout:           http.StatusRequestTimeout,
	codeMediaType:                http.StatusUnsupportedMediaType,
	codeMisdirected:              http.StatusMisdirectedRequest,
	codeUnauthorized:             http.StatusUnauthorized,
	codeInternal:                 http.StatusInternalServerError,
	codeUpgradeRequired:          http.StatusUpgradeRequired,
	codeOriginNotAllowed:         http.StatusForbidden,
	broadcast.CodeNotOwner:       http.StatusForbidden,
	broadcast.CodeConflict:       http.StatusConflict,
	broadcast.CodeEnded:          http.StatusConflict,
	broadcast.CodeInvalid:        http.StatusNotFound,
}

// Problem is an RFC 9457 problem document with usid's stable code.
type Problem struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail"`
	Code      string `json:"code"`
	MoveIndex *int   `json:"move_index,omitempty"`
	// Line is the 1-based line of a game record where it went wrong.
	Line *int `json:"line,omitempty"`
}

func (s *Server) problem(w http.ResponseWriter, r *http.Request, e *session.Error) {
	s.problemAt(w, r, e, 0)
}

// problemAt writes the problem of e; line > 0 names a record's line.
func (s *Server) problemAt(w http.ResponseWriter, r *http.Request, e *session.Error, line int) {
	status, ok := statusOf[e.Code]
	if !ok {
		status = http.StatusUnprocessableEntity
	}
	p := Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: e.Message, Code: e.Code}
	if e.MoveIndex >= 0 {
		i := e.MoveIndex
		p.MoveIndex = &i
	}
	if line > 0 {
		p.Line = &line
	}
	if status == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
		// RFC 9110 section 15.5.2: every 401 names the scheme to use.
		w.Header().Set("WWW-Authenticate", `Bearer realm="usid"`)
	}
	if d := session.RetryAfter(e); d > 0 && (status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable) {
		w.Header().Set("Retry-After", strconv.Itoa(int(d.Seconds())))
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(p)
}

// readGuard is middleware for the GET routes of /v1: it takes one read
// from the client's flood guard (Quota.Reads), else answers 429.
func (s *Server) readGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !clientOf(r).reads.Allow() {
			s.problem(w, r, &session.Error{Code: session.CodeTooManyRequests, Retry: time.Second, MoveIndex: -1,
				Message: "reads arrive faster than this client's flood guard allows (access.*.reads); send If-None-Match with the last ETag: an unchanged answer is 304; retry in 1s"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// writeTagged writes a JSON answer of 200 with its ETag, or 304 Not
// Modified without a body when the request's If-None-Match names that
// tag (RFC 9110 13.1.2): a client polling an unchanged answer gets it for
// nearly nothing. Cache-Control: the answer is the client's own (private)
// and a cache must ask again each time (no-cache).
func writeTagged(w http.ResponseWriter, r *http.Request, body []byte, etag string) {
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "private, no-cache")
	if noneMatch(r.Header.Values("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// noneMatch reports whether If-None-Match lists etag, or is "*" (weak
// comparison, as RFC 9110 asks for If-None-Match).
func noneMatch(values []string, etag string) bool {
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == "*" || t == etag {
				return true
			}
		}
	}
	return false
}

// encodeTagged encodes v as writeJSON does, and tags it with a hash.
func encodeTagged(v any) ([]byte, string) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return b.Bytes(), etag.Of(b.Bytes())
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// maxDrain bounds the excess of a too large body that is read and dropped
// so that its sender can read the 413.
const maxDrain = 16 << 20

// decode reads a JSON request body strictly (session.DecodeStrict, the
// parser of WebSocket messages too): size-capped, one object, no unknown
// fields or duplicate keys, nothing after the object.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) *session.Error {
	// JSON only: a browser sends text/plain, forms and no type across
	// origins without asking first (no CORS preflight); JSON it must ask for.
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return &session.Error{Code: codeMediaType, Message: "request bodies are JSON: send Content-Type: application/json", MoveIndex: -1}
	}
	// The body has BodyTimeout to arrive; then the deadline goes, so that
	// the server's watch for a vanished client does not fire mid-search.
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout))
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) && r.ContentLength > 0 && r.ContentLength-s.cfg.MaxBody <= maxDrain {
		// A client that sends its whole body before reading the answer
		// loses the 413 if the connection closes with its data unread (the
		// kernel answers with a reset): read and drop the rest, within the
		// body's deadline, when there is not too much of it.
		io.CopyN(io.Discard, r.Body, maxDrain)
	}
	rc.SetReadDeadline(time.Time{})
	if err != nil {
		if mbe != nil {
			return &session.Error{Code: codeBodyTooLarge, Message: "request body larger than " + strconv.FormatInt(s.cfg.MaxBody, 10) + " bytes", MoveIndex: -1}
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			w.Header().Set("Connection", "close")
			return &session.Error{Code: codeRequestTimeout, Message: "the request body did not arrive within " + s.cfg.BodyTimeout.String(), MoveIndex: -1}
		}
		return &session.Error{Code: session.CodeBadRequest, Message: "request body unreadable: " + err.Error(), MoveIndex: -1}
	}
	if err := session.DecodeStrict(raw, v); err != nil {
		return &session.Error{Code: session.CodeBadRequest, Message: "malformed JSON body: " + err.Error(), MoveIndex: -1}
	}
	return nil
}
