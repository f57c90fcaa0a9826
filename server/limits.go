package server

import (
	"net/http"
	"strings"
	"time"

	"github.com/usid/usid/review"
)

// limitsJSON is GET /v1/limits: the caps every request is under and the
// quota of the client asking, so that pages and scripts offer and send only
// what the server accepts instead of learning it from 422s and 429s. Both
// objects may gain fields; none is renamed.
type limitsJSON struct {
	Caps  capsJSON  `json:"caps"`
	Quota quotaJSON `json:"quota"`
	// GameAnalysis is what a game analysis gets by default (the board's
	// setting); nil without game analyses.
	GameAnalysis *gameDefaultsJSON `json:"game_analysis,omitempty"`
}

type gameDefaultsJSON struct {
	DefaultLimits struct {
		MoveTimeMS int64 `json:"movetime_ms"`
	} `json:"default_limits"`
	Thresholds review.Thresholds `json:"thresholds"`
}

// capsJSON is session.Caps as a client writes its requests: times in
// milliseconds, as the request fields they bound.
type capsJSON struct {
	MaxMoveTimeMS int64 `json:"max_movetime_ms"`  // limits.movetime_ms
	MaxAnalysisMS int64 `json:"max_analysis_ms"`  // an analysis until stop, pondering
	MaxMateTimeMS int64 `json:"max_mate_time_ms"` // mate timeout_ms
	MaxClockMS    int64 `json:"max_clock_ms"`     // btime, wtime, byoyomi, binc, winc
	MaxDepth      int   `json:"max_depth"`
	MaxNodes      int64 `json:"max_nodes"`
	MaxMultiPV    int   `json:"max_multipv"`
	MaxMoves      int   `json:"max_moves"` // moves in a position
}

// quotaJSON is the asking client's Quota and how it was identified.
type quotaJSON struct {
	Client string `json:"client"`        // "key" or "anonymous"
	Key    string `json:"key,omitempty"` // the API key's name
	// Budget is the engine-time budget; nil: no limit.
	Budget   *budgetJSON `json:"budget,omitempty"`
	Rate     float64     `json:"rate"`
	Burst    int         `json:"burst"`
	Sessions int         `json:"sessions"`
	Leases   int         `json:"leases"`
	Messages float64     `json:"messages"`
	Reads    float64     `json:"reads"` // GET requests of /v1 per second (burst twice that)
}

type budgetJSON struct {
	EngineSeconds float64 `json:"engine_seconds"`
	PeriodS       float64 `json:"period_s"`
	Burst         float64 `json:"burst"`
	// InteractiveShare of the bucket (InteractiveReserve engine-seconds)
	// only interactive searches may spend: game analyses stop above it.
	InteractiveShare   float64 `json:"interactive_share"`
	InteractiveReserve float64 `json:"interactive_reserve"`
}

func (s *Server) limits(w http.ResponseWriter, r *http.Request) {
	caps := s.cfg.Service.Caps
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	c := clientOf(r)
	q := quotaJSON{Client: "anonymous", Rate: c.quota.Rate, Burst: c.quota.Burst, Sessions: c.quota.Sessions,
		Leases: c.quota.Leases, Messages: c.quota.Messages, Reads: c.quota.Reads}
	if b := c.quota.EngineTime; !b.Unlimited() {
		q.Budget = &budgetJSON{EngineSeconds: b.Seconds, PeriodS: b.Period.Seconds(), Burst: b.Burst,
			InteractiveShare: b.Share(), InteractiveReserve: b.Reserve()}
	}
	if name, ok := strings.CutPrefix(c.id, "key:"); ok {
		q.Client, q.Key = "key", name
	}
	ans := limitsJSON{
		Caps: capsJSON{MaxMoveTimeMS: ms(caps.MaxMoveTime), MaxAnalysisMS: ms(caps.MaxAnalysis), MaxMateTimeMS: ms(caps.MaxMateTime),
			MaxClockMS: ms(caps.MaxClock), MaxDepth: caps.MaxDepth, MaxNodes: caps.MaxNodes, MaxMultiPV: caps.MaxMultiPV, MaxMoves: caps.MaxMoves},
		Quota: q,
	}
	if s.cfg.Review != nil {
		g := &gameDefaultsJSON{Thresholds: review.DefaultThresholds()}
		g.DefaultLimits.MoveTimeMS = ms(s.cfg.Review.DefaultMoveTime())
		ans.GameAnalysis = g
	}
	body, etag := encodeTagged(ans)
	writeTagged(w, r, body, etag)
}
