package server

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/usid/usid/session"
)

type metrics struct {
	sessions *prometheus.GaugeVec
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	events   *prometheus.CounterVec
	// infoEvents is events' info counter: one per line a search streams,
	// counted without a lookup by label (made at the first info, as
	// WithLabelValues would).
	infoEvents func() prometheus.Counter
	viewers    prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		sessions: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "usid_sessions", Help: "Open WebSocket sessions.",
		}, nil),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "usid_http_requests_total", Help: "HTTP requests by route and status.",
		}, []string{"route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "usid_http_request_duration_seconds", Help: "HTTP request time by route (WebSocket: the upgrade).",
			Buckets: []float64{.001, .005, .01, .05, .1, .5, 1, 5, 10, 30, 60, 300, 1800},
		}, []string{"route"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "usid_ws_events_total", Help: "Events sent to WebSocket clients, by type.",
		}, []string{"type"}),
		viewers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "usid_broadcast_viewers", Help: "Open viewer WebSockets of broadcasts.",
		}),
	}
	m.infoEvents = sync.OnceValue(func() prometheus.Counter { return m.events.WithLabelValues(session.EventInfo) })
	if reg != nil {
		reg.MustRegister(m.sessions, m.requests, m.duration, m.events, m.viewers)
	}
	return m
}

// instrument counts requests by chi's route pattern (never the raw path,
// which would let clients create label values).
func (s *Server) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		route := "other"
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		}
		status := ww.Status()
		if status == 0 {
			status = http.StatusOK
		}
		s.m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
		s.m.duration.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}
