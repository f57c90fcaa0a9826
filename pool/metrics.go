package pool

import "github.com/prometheus/client_golang/prometheus"

// Engine states as the usid_pool_engines gauge reports them.
const (
	stateStarting  = "starting"  // process started, handshake not finished
	stateIdle      = "idle"      // warm and free
	stateBusy      = "busy"      // leased
	stateResetting = "resetting" // released, being brought back to a known state
	stateChecking  = "checking"  // idle, answering a health check
)

var states = []string{stateStarting, stateIdle, stateBusy, stateResetting, stateChecking}

// Restart reasons as usid_pool_restarts_total reports them.
const (
	reasonCrash       = "crash"        // the process exited on its own
	reasonStartFailed = "start_failed" // it failed to start or to finish the handshake
	reasonUnhealthy   = "unhealthy"    // it failed a health check
	reasonResetFailed = "reset_failed" // it could not be brought back to a known state after a lease
	reasonRecycle     = "recycle"      // it reached max_leases or max_age
	reasonKilled      = "killed"       // a lease holder asked for it to be replaced
	reasonTainted     = "tainted"      // a lease set an option no setoption can undo (string, filename, button)
)

type metrics struct {
	engines     *prometheus.GaugeVec
	queue       *prometheus.GaugeVec
	utilization *prometheus.GaugeVec
	available   *prometheus.GaugeVec
	wait        *prometheus.HistogramVec
	leases      *prometheus.CounterVec
	restarts    *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		engines: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "usid_pool_engines", Help: "Engine processes by engine and state.",
		}, []string{"engine", "state"}),
		queue: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "usid_pool_queue_length", Help: "Callers waiting for a free engine, by priority class (interactive, background).",
		}, []string{"engine", "class"}),
		utilization: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "usid_pool_utilization",
			Help: "Demand on the pool: (leased + waiting) / configured instances. Above 1 means callers queue; the autoscaling signal.",
		}, []string{"engine"}),
		available: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "usid_pool_available", Help: "1 when the engine kind can be leased, 0 while it is marked unavailable after repeated failures.",
		}, []string{"engine"}),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "usid_pool_lease_wait_seconds",
			Help:    "Time from Acquire to a lease (or failure), by priority class (interactive, background).",
			Buckets: []float64{.0001, .001, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"engine", "class"}),
		leases: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "usid_pool_leases_total", Help: "Leases granted.",
		}, []string{"engine"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "usid_pool_restarts_total", Help: "Engine processes replaced, by reason.",
		}, []string{"engine", "reason"}),
	}
	if reg != nil {
		reg.MustRegister(m.engines, m.queue, m.utilization, m.available, m.wait, m.leases, m.restarts)
	}
	return m
}
