package review

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	jobs      *prometheus.GaugeVec
	positions *prometheus.CounterVec
	finished  *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		jobs: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "usid_game_jobs", Help: "Game analysis jobs by state (queued, running, paused for their owners' engine time).",
		}, []string{"state"}),
		positions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "usid_game_positions_total", Help: "Positions of games analysed, by source: engine (a search) or rules (a checkmate, no engine); preempted counts searches stopped for an interactive caller (searched again); unscored, searches answered with no score, done once more.",
		}, []string{"source"}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "usid_game_jobs_finished_total", Help: "Game analysis jobs ended, by status (done, cancelled, failed).",
		}, []string{"status"}),
	}
	for _, s := range []string{StatusQueued, StatusRunning, StatusPaused} {
		m.jobs.WithLabelValues(s)
	}
	for _, s := range []string{"engine", "rules"} {
		m.positions.WithLabelValues(s)
	}
	for _, s := range []string{StatusDone, StatusCancelled, StatusFailed} {
		m.finished.WithLabelValues(s)
	}
	if reg != nil {
		reg.MustRegister(m.jobs, m.positions, m.finished)
	}
	return m
}

func (m *Manager) updateGaugesLocked() {
	m.m.jobs.WithLabelValues(StatusQueued).Set(float64(len(m.queue)))
	m.m.jobs.WithLabelValues(StatusRunning).Set(float64(len(m.running)))
	m.m.jobs.WithLabelValues(StatusPaused).Set(float64(len(m.paused)))
}
