package session

import (
	"context"
	"time"
)

// AnalyzeResult is the answer to one bounded search over REST.
type AnalyzeResult struct {
	Engine      string  `json:"engine"`
	BestMove    string  `json:"bestmove"`
	BestMoveKIF string  `json:"bestmove_kif,omitempty"`
	BestMoveSAN string  `json:"bestmove_san,omitempty"`
	Ponder      string  `json:"ponder,omitempty"`
	Lines       []*Line `json:"lines"`
	// Emulated lists the limits usid enforced itself because the engine
	// does not honour them natively (see the engine's profile).
	Emulated []string `json:"emulated,omitempty"`
	// LimitedByBudget: the movetime was cut to the client's engine time
	// left (issue 35); the search ran that long, not its movetime.
	LimitedByBudget bool `json:"limited_by_budget,omitempty"`
	// Nodes the search reached, as the engine last reported them.
	Nodes int64 `json:"nodes,omitempty"`
	// Book: the engine answered with no evaluation (no info line with a
	// score), as engines playing from their opening book do; Lines is empty.
	Book bool `json:"book,omitempty"`
	// Unscored: no evaluation either, though the search ran to near its
	// movetime (it finished no iteration: an engine starved of CPU); not
	// its book. Lines is empty.
	Unscored bool `json:"unscored,omitempty"`
	// Cached: answered from the evaluation cache, without an engine; the
	// lines carry the depth and nodes the cached search reached.
	Cached bool `json:"cached,omitempty"`
}

// Line is the engine's final line for one multipv.
type Line struct {
	MultiPV  int      `json:"multipv"`
	Score    *Score   `json:"score,omitempty"`
	Bound    string   `json:"bound,omitempty"`
	Depth    int      `json:"depth"`
	SelDepth int      `json:"seldepth,omitempty"`
	Nodes    int64    `json:"nodes,omitempty"`
	TimeMS   int64    `json:"time_ms,omitempty"`
	PV       []string `json:"pv"`
	PVKIF    []string `json:"pv_kif,omitempty"`
	PVSAN    []string `json:"pv_san,omitempty"`
	WDL      []int    `json:"wdl,omitempty"` // chess: win/draw/loss per mille, from the side to move
}

// MateResult is the answer to a tsume request over REST.
type MateResult struct {
	Engine   string   `json:"engine"`
	Result   string   `json:"result"` // mate, nomate, timeout, notimplemented
	Moves    []string `json:"moves"`
	MovesKIF []string `json:"moves_kif,omitempty"`
	MovesSAN []string `json:"moves_san,omitempty"`
	Verified string   `json:"verified,omitempty"` // with mate: "forced" or "line", as in the checkmate event
	// LimitedByBudget: the timeout was cut to the client's engine time
	// left (issue 35).
	LimitedByBudget bool `json:"limited_by_budget,omitempty"`
}

// Analyze runs one bounded search (REST): at least one limit is required and
// every limit is capped. ctx bounds the wait for an engine.
func (c *Service) Analyze(ctx context.Context, r *Request) (*AnalyzeResult, *Error) {
	r.Type, r.ID = TypeAnalyze, "rest"
	j, err := c.newJob(r)
	if err != nil {
		return nil, err
	}
	if !j.bounded {
		return nil, errorf(CodeInvalidField, "limits: set movetime_ms, depth or nodes; REST runs only bounded searches (at most %v)", c.Caps.MaxMoveTime)
	}
	if cr := c.fromCache(ctx, j, limitMet(j)); cr != nil {
		res := &AnalyzeResult{Engine: j.engine, BestMove: cr.BestMove, Ponder: cr.Ponder, Lines: cr.Lines, Cached: true}
		if j.kif {
			ev := &Event{}
			j.setMoveNotation(ev, cr.BestMove)
			res.BestMoveKIF, res.BestMoveSAN = ev.MoveKIF, ev.MoveSAN
		}
		return res, nil
	}
	lines := map[int]*Line{}
	term, perr := c.oneShot(ctx, j, func(ev *Event) {
		if ev.Type == EventInfo && len(ev.PV) > 0 {
			lines[ev.MultiPV] = &Line{MultiPV: ev.MultiPV, Score: ev.Score, Bound: ev.Bound, Depth: ev.Depth,
				SelDepth: ev.SelDepth, Nodes: ev.Nodes, TimeMS: ev.TimeMS, PV: ev.PV, PVKIF: ev.PVKIF, PVSAN: ev.PVSAN, WDL: ev.WDL}
		}
	})
	if perr != nil {
		return nil, perr
	}
	res := &AnalyzeResult{Engine: j.engine, BestMove: term.Move, BestMoveKIF: term.MoveKIF, BestMoveSAN: term.MoveSAN, Ponder: term.PonderMv, Lines: []*Line{}, Emulated: term.Emulated,
		Nodes: term.Nodes, Book: term.Book, Unscored: term.Unscored, LimitedByBudget: term.LimitedByBudget}
	for k := 1; k <= j.multipv; k++ {
		if l := lines[k]; l != nil {
			res.Lines = append(res.Lines, l)
		}
	}
	return res, nil
}

// Mate runs a tsume search (REST).
func (c *Service) Mate(ctx context.Context, r *Request) (*MateResult, *Error) {
	r.Type, r.ID = TypeMate, "rest"
	j, err := c.newJob(r)
	if err != nil {
		return nil, err
	}
	res := &MateResult{Engine: j.engine, Moves: []string{}}
	term, perr := c.oneShot(ctx, j, func(*Event) {})
	if perr != nil {
		return nil, perr
	}
	res.Result, res.MovesKIF, res.MovesSAN, res.Verified, res.LimitedByBudget = term.Result, term.MovesKIF, term.MovesSAN, term.Verified, term.LimitedByBudget
	if term.Moves != nil {
		res.Moves = term.Moves
	}
	return res, nil
}

// oneShot leases an engine for one job and returns its terminal event, or
// the error it ended with.
func (c *Service) oneShot(ctx context.Context, j *job, emit func(*Event)) (*Event, *Error) {
	if err := checkBudget(ctx, CallerOf(ctx)); err != nil {
		return nil, err // spent: no use waiting for an engine
	}
	asked := time.Now()
	if err := c.pickMateEngine(ctx, j, c.AcquireTimeout, nil); err != nil {
		return nil, err
	}
	actx, cancel := context.WithTimeout(ctx, c.AcquireTimeout-time.Since(asked))
	lease, err := c.acquire(actx, j.engine, CallerOf(ctx), nil)
	cancel()
	if t := timingOf(ctx); t != nil {
		t.Queue = time.Since(asked)
	}
	if err != nil {
		return nil, acquireError(j.engine, err)
	}
	// The client going away stops the search (its bestmove is still awaited).
	term, discard := c.runSearch(ctx, lease, j, emit, nil)
	if discard {
		lease.Discard()
	} else {
		lease.Release()
	}
	if term.Type == EventError {
		return nil, &Error{Code: term.Code, Message: term.Message, MoveIndex: -1, Retry: term.retry}
	}
	return term, nil
}

// RetryAfter suggests when a refused REST request may be retried: the wait
// the error announces, or a default for its code (0: no retry suggested).
func RetryAfter(e *Error) time.Duration {
	if e.Retry != 0 {
		return max(e.Retry, 0) // NoRetry: none
	}
	switch e.Code {
	case CodeTooManyRequests:
		return time.Second
	case CodeNoEngine, CodeQueueFull:
		return 5 * time.Second
	case CodeUnavailable, CodeShuttingDown:
		return 30 * time.Second
	}
	return 0
}
