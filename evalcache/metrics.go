package evalcache

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	hits      *prometheus.CounterVec
	misses    prometheus.Counter
	evictions prometheus.Counter
	errors    *prometheus.CounterVec
	dropped   prometheus.Counter
	rejected  *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, c *Cache) *metrics {
	m := &metrics{
		hits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "usid_evalcache_hits_total",
			Help: "Lookups answered from the evaluation cache, by tier (memory, redis)."}, []string{"tier"}),
		misses: prometheus.NewCounter(prometheus.CounterOpts{Name: "usid_evalcache_misses_total",
			Help: "Lookups the evaluation cache could not answer (no entry, or none deep enough)."}),
		evictions: prometheus.NewCounter(prometheus.CounterOpts{Name: "usid_evalcache_evictions_total",
			Help: "Entries evicted from the memory tier to keep it within its bounds."}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "usid_evalcache_errors_total",
			Help: "Failed calls to a cache tier (redis, file); usid searches instead."}, []string{"tier"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "usid_evalcache_dropped_writes_total",
			Help: "Writes to the file or redis dropped because the writer's queue was full."}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "usid_evalcache_rejected_total",
			Help: "Entries read from a tier (memory, redis) that failed the checks of an engine's answer or were out of bounds; removed."}, []string{"tier"}),
	}
	m.hits.WithLabelValues("memory")
	m.hits.WithLabelValues("redis")
	m.errors.WithLabelValues("redis")
	m.errors.WithLabelValues("file")
	m.rejected.WithLabelValues("memory")
	m.rejected.WithLabelValues("redis")
	if reg != nil {
		size := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "usid_evalcache_entries",
			Help: "Entries in the memory tier of the evaluation cache."}, func() float64 { return float64(c.Len()) })
		bytes := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "usid_evalcache_bytes",
			Help: "Approximate bytes of keys and values in the memory tier."}, func() float64 {
			c.mu.Lock()
			defer c.mu.Unlock()
			return float64(c.bytes)
		})
		reg.MustRegister(m.hits, m.misses, m.evictions, m.errors, m.dropped, m.rejected, size, bytes)
	}
	return m
}
