package review

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/usid/usid/pool"
	"github.com/usid/usid/session"
)

// Jobs shared through Redis (Config.Redis). Every instance answers GET and
// DELETE for every job from the store; an instance runs a job only while it
// holds the job's lease, which it renews every RedisConfig.Check and loses
// RedisConfig.Lease after it stops (it died). Each position's result is
// stored as soon as it is known, so an instance taking a job over goes on
// from the first position without one; only the searches in flight at a
// loss are done twice, and those are not charged twice (each search is
// marked charged in the job's record as it starts; a search found marked
// is free).
//
// A job started over a WebSocket is pinned to its instance while that
// instance lives (its events go to that connection); a job started over
// REST runs wherever an instance has a run slot. A drain (Close) hands the
// jobs nobody follows over a WebSocket back at once (queued again, lease
// released); jobs followed end as without Redis.
//
// A followed REST job (Request.Follow) keeps its grace and its last read
// in its record (follow, seen); any instance's Get renews seen, and the
// instance holding the lease sees the grace run out at its renewal (and an
// instance taking a job from the store, at the claim): one clock, the
// Redis server's, and nothing more than the renewal already does.

// unavailable is the error when the shared store cannot be reached.
func unavailable(err error) *session.Error {
	return &session.Error{Code: session.CodeQueueFull, Message: "the game analysis store is unavailable; retry later", MoveIndex: -1, Retry: 5 * time.Second}
}

// startShared records j (checked, not yet queued) in the store, within
// the bounds, and wakes the loop to run it.
func (m *Manager) startShared(j *job, s *sub) *session.Error {
	m.mu.Lock()
	closing := m.closing
	m.mu.Unlock()
	if closing {
		return &session.Error{Code: session.CodeShuttingDown, Message: "the server is shutting down", MoveIndex: -1}
	}
	need := worstBytes(j.g.startLen(), j.plies)
	now := time.Now()
	res, err := m.st.start(j, need, &m.cfg, now, s != nil)
	if err != nil {
		m.log.Warn("games: redis failed", "err", err)
		return unavailable(err)
	}
	switch res {
	case "ok":
	case "client":
		return &session.Error{Code: session.CodeTooManyRequests, Message: "this client already has the most game analyses it may run at once; wait for one to end or cancel it", MoveIndex: -1, Retry: 10 * time.Second}
	case "jobs":
		return &session.Error{Code: session.CodeQueueFull, Message: "too many game analyses are waiting; retry later", MoveIndex: -1, Retry: 30 * time.Second}
	case "client_bytes":
		return &session.Error{Code: session.CodeTooManyRequests, MoveIndex: -1, Retry: 10 * time.Second,
			Message: fmt.Sprintf("this client's game analyses under way hold as much memory as one client may (%d KiB; this game needs up to %d KiB); wait for one to end or cancel it", m.cfg.MaxBytesPerClient>>10, need>>10)}
	default:
		return &session.Error{Code: session.CodeQueueFull, Message: "game analyses under way hold as much memory as the server gives them; retry later", MoveIndex: -1, Retry: 30 * time.Second}
	}
	j.bytes, j.created = need, now
	if s != nil {
		m.mu.Lock()
		m.pending[j.id] = j
		m.mu.Unlock()
	}
	m.wake()
	return nil
}

func (m *Manager) wake() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// loop renews this instance's leases, passes cancels on and takes jobs
// while it has run slots, until Close stops it.
func (m *Manager) loop() {
	defer close(m.loopDone)
	t := time.NewTicker(m.st.check)
	defer t.Stop()
	for {
		select {
		case <-m.loopStop:
			return
		case <-t.C:
		case <-m.kick:
		}
		m.tick()
	}
}

// stopLoop stops the loop and waits for it: no lease is renewed after.
func (m *Manager) stopLoop() {
	m.stopOnce.Do(func() { close(m.loopStop) })
	<-m.loopDone
}

func (m *Manager) tick() {
	m.mu.Lock()
	jobs := make([]*job, 0, len(m.running))
	for j := range m.running {
		jobs = append(jobs, j)
	}
	m.mu.Unlock()
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.id
	}
	states, err := m.st.renew(ids)
	if err != nil {
		m.log.Warn("games: renewing leases in redis failed", "err", err)
		return
	}
	for i, st := range states {
		switch st {
		case -1:
			jobs[i].lose()
		case 1:
			m.cancel(jobs[i], nil)
		case 2: // abandoned: said again at each renewal until it has ended
			if j := jobs[i]; !j.halting() {
				m.log.Info("game analysis abandoned: nobody followed it", "job", j.id, "grace", j.follow)
				m.cancel(j, abandoned(j.follow))
			}
		}
	}
	for {
		m.mu.Lock()
		free := !m.closing && m.callers != nil && len(m.running) < m.cfg.MaxRunning
		m.mu.Unlock()
		if !free {
			return
		}
		id, err := m.st.claim()
		if err != nil {
			m.log.Warn("games: taking a job from redis failed", "err", err)
			return
		}
		if id == "" {
			return
		}
		m.take(id)
	}
}

// take runs job id, just claimed: the job this instance started, or one
// built from its record, with its positions analysed so far.
func (m *Manager) take(id string) {
	ctx, cancel := m.st.ctx()
	rec, err := m.st.load(ctx, id)
	cancel()
	if err != nil || rec == nil {
		m.log.Warn("games: reading a job taken failed; handing it back", "job", id, "err", err)
		m.st.release(id, StatusQueued, time.Time{}, nil, false)
		return
	}
	m.mu.Lock()
	j := m.pending[id]
	delete(m.pending, id)
	callers := m.callers
	m.mu.Unlock()
	if j == nil {
		var serr *session.Error
		if j, serr = m.jobOf(id, rec); serr != nil {
			// Not runnable here (another configuration): it fails, once.
			m.st.end(id, StatusFailed, &errorJSON{Code: serr.Code, Message: serr.Message}, worstBytes(rec.req.startLen(), len(rec.req.Moves)), m.cfg.Keep, len(rec.req.Moves))
			return
		}
		who := callers(rec.owner)
		j.caller = session.Caller{Client: rec.owner, Class: pool.Background, Budget: who.Budget}
	}
	j.mu.Lock()
	j.loadLocked(rec)
	j.status = StatusRunning
	if j.started.IsZero() {
		j.started = time.Now()
	}
	j.mu.Unlock()
	switch {
	case rec.cancel:
		j.stop(nil, true)
	case rec.abandoned:
		j.stop(abandoned(j.follow), true)
	}
	m.mu.Lock()
	if m.closing {
		m.mu.Unlock()
		m.st.release(id, StatusQueued, time.Time{}, nil, false)
		return
	}
	m.jobs[id] = j
	m.running[j] = struct{}{}
	m.wg.Add(1)
	m.updateGaugesLocked()
	m.mu.Unlock()
	go j.run()
}

// jobOf builds job id from its record, checked as Start checks a request.
func (m *Manager) jobOf(id string, rec *record) (*job, *session.Error) {
	req := &Request{Position: rec.req.position(), Engine: rec.req.Engine,
		Limits: &session.Limits{MoveTimeMS: rec.req.Limits.MoveTimeMS, Depth: rec.req.Limits.Depth, Nodes: rec.req.Limits.Nodes}}
	th := rec.req.Thresholds
	req.Thresholds = &th
	switch {
	case rec.req.KIF:
		req.Notation = "kif"
	case rec.req.SAN:
		req.Notation = "san"
	}
	j, err := m.newJob(rec.owner, req)
	if err != nil {
		return nil, err
	}
	j.id, j.created, j.started, j.follow = id, rec.created, rec.started, rec.follow
	return j, nil
}

// loadLocked takes the record's results: the positions without one are
// the ones left to analyse.
func (j *job) loadLocked(rec *record) {
	if len(rec.results) > 0 && j.results == nil {
		j.results = make([]*result, j.plies+1)
	}
	for ply, r := range rec.results {
		if j.results[ply] == nil {
			j.results[ply] = r
			j.done++
		}
	}
	j.redo = j.redo[:0]
	for ply := 0; ply <= j.plies; ply++ {
		if j.results == nil || j.results[ply] == nil {
			j.redo = append(j.redo, ply)
		}
	}
	j.next = j.plies + 1
}

// viewShared reads job id from the store: the job as this instance
// runs it, or as its record stands. Reading a followed job under way
// notes in the store that its owner follows it, for whichever instance
// holds it.
func (m *Manager) viewShared(client, id string) (*View, *session.Error) {
	m.mu.Lock()
	local := m.jobs[id]
	m.mu.Unlock()
	if local != nil && local.client == client {
		if local.follow > 0 {
			if err := m.st.touch(id, client); err != nil {
				return nil, unavailable(err)
			}
		}
		return local.view(), nil
	}
	ctx, cancel := m.st.ctx()
	rec, err := m.st.load(ctx, id)
	cancel()
	if err != nil {
		return nil, unavailable(err)
	}
	if rec == nil || rec.owner != client || (!rec.finished.IsZero() && time.Since(rec.finished) > m.cfg.Keep) {
		return nil, notFound(id)
	}
	if rec.follow > 0 && rec.finished.IsZero() {
		if err := m.st.touch(id, client); err != nil {
			return nil, unavailable(err)
		}
	}
	j, serr := m.jobOf(id, rec)
	if serr != nil {
		return nil, notFound(id)
	}
	j.mu.Lock()
	j.loadLocked(rec)
	j.status, j.finished = rec.status, rec.finished
	if rec.err != nil {
		why := &session.Error{Code: rec.err.Code, Message: rec.err.Message, MoveIndex: -1}
		if rec.status == StatusPaused {
			j.pauseWhy = why
		} else {
			j.why = why
		}
		if rec.err.Ply != nil {
			j.failPly = *rec.err.Ply
		}
	}
	if !j.finished.IsZero() && j.status != StatusFailed {
		j.summary = summarize(j.renderLocked())
	}
	j.mu.Unlock()
	j.cancel()
	return j.view(), nil
}

// cancelShared cancels client's job id wherever it runs and waits, until
// ctx ends, for it to end.
func (m *Manager) cancelShared(ctx context.Context, client, id string) (*View, *session.Error) {
	res, err := m.st.cancel(id, client)
	if err != nil {
		return nil, unavailable(err)
	}
	switch res {
	case "nf":
		return nil, notFound(id)
	case "claimed":
		m.endUnheld(id, nil)
	case "held":
		m.mu.Lock()
		j := m.jobs[id]
		m.mu.Unlock()
		if j != nil {
			m.cancel(j, nil)
		}
	}
	for {
		v, serr := m.viewShared(client, id)
		if serr != nil || v.FinishedAt != nil {
			return v, serr
		}
		t := time.NewTimer(20 * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return v, nil
		}
	}
}

// endUnheld ends job id, which nobody ran and this instance now holds,
// cancelled (why: the server's reason, nil: the client's).
func (m *Manager) endUnheld(id string, why *session.Error) {
	m.mu.Lock()
	j := m.pending[id]
	delete(m.pending, id)
	m.mu.Unlock()
	ctx, cancel := m.st.ctx()
	rec, err := m.st.load(ctx, id)
	cancel()
	if err != nil || rec == nil {
		return
	}
	if j == nil {
		var serr *session.Error
		if j, serr = m.jobOf(id, rec); serr != nil {
			m.st.end(id, StatusCancelled, nil, worstBytes(rec.req.startLen(), len(rec.req.Moves)), m.cfg.Keep, len(rec.req.Moves))
			return
		}
	}
	j.mu.Lock()
	j.loadLocked(rec)
	j.finishLocked(StatusCancelled, why)
	real := j.realBytesLocked()
	ej := j.errorLocked()
	j.mu.Unlock()
	if err := m.st.end(id, StatusCancelled, ej, real, m.cfg.Keep, j.plies); err != nil {
		m.log.Warn("games: ending a job in redis failed", "job", id, "err", err)
	}
}

// endedShared records the end of a job this instance ran and forgets it
// here (the store keeps it).
func (m *Manager) endedShared(j *job) {
	j.mu.Lock()
	status, real, ej, left := j.status, j.realBytesLocked(), j.errorLocked(), j.lost || (j.handback && j.finished.IsZero())
	j.mu.Unlock()
	var err error
	switch {
	case j.lost:
		// Its WebSocket followers hear no more of it here.
		j.mu.Lock()
		for _, s := range j.subs {
			ev := session.ErrorEvent(s.id, &session.Error{Code: session.CodeShuttingDown, MoveIndex: -1,
				Message: "the analysis went on on another instance; read it with GET /v1/games/analysis/" + j.id})
			ev.Job = j.id
			s.emit(ev)
		}
		j.subs = nil
		j.mu.Unlock()
	case left:
		err = m.st.release(j.id, StatusQueued, time.Time{}, nil, false)
	default:
		err = m.st.end(j.id, status, ej, real, m.cfg.Keep, j.plies)
		if errors.Is(err, errIncomplete) {
			// A result Redis did not take: stored again from here, or, if
			// that fails too, the job goes back to the store to be finished
			// (never done with a hole).
			err = m.storeAll(j)
			if err == nil {
				err = m.st.end(j.id, status, ej, real, m.cfg.Keep, j.plies)
			}
			if err != nil {
				m.log.Warn("games: a job's results not all stored; handing it back", "job", j.id, "err", err)
				err = m.st.release(j.id, StatusQueued, time.Time{}, nil, false)
			}
		}
	}
	if err != nil {
		m.log.Warn("games: recording a job's end in redis failed", "job", j.id, "err", err)
	}
	m.mu.Lock()
	delete(m.running, j)
	delete(m.jobs, j.id)
	m.updateGaugesLocked()
	m.mu.Unlock()
	j.dropEncoding(true)
	m.wake()
}

// storeAll stores every result of j (those already stored are kept).
func (m *Manager) storeAll(j *job) error {
	j.mu.Lock()
	results := slices.Clone(j.results)
	j.mu.Unlock()
	for ply, r := range results {
		if r == nil {
			continue
		}
		if ok, err := m.st.put(j.id, ply, r); err != nil {
			return err
		} else if !ok {
			return errors.New("games: the lease on the job was lost")
		}
	}
	return nil
}

// pausedShared hands a job whose owner's engine time is spent back to the
// store, paused: any instance takes it again once wait has passed.
func (m *Manager) pausedShared(j *job, wait time.Duration) {
	j.mu.Lock()
	halt := j.halt
	why := j.pauseWhy
	j.mu.Unlock()
	if halt {
		j.mu.Lock()
		j.finishLocked(StatusCancelled, j.why)
		j.mu.Unlock()
		m.endedShared(j)
		return
	}
	var ej *errorJSON
	if why != nil {
		ej = &errorJSON{Code: why.Code, Message: why.Message}
	}
	j.mu.Lock()
	followed := len(j.subs) > 0
	j.status = StatusPaused
	j.mu.Unlock()
	// A job followed over a WebSocket stays pinned here and waits, paused,
	// among this instance's pending jobs; others go to whichever instance
	// takes them once wait has passed.
	if err := m.st.release(j.id, StatusPaused, time.Now().Add(min(wait, m.cfg.PauseCheck)), ej, followed); err != nil {
		m.log.Warn("games: pausing a job in redis failed", "job", j.id, "err", err)
	}
	j.dropEncoding(!followed)
	m.mu.Lock()
	delete(m.running, j)
	delete(m.jobs, j.id)
	if followed {
		m.pending[j.id] = j
	}
	m.updateGaugesLocked()
	m.mu.Unlock()
}

// lose stops a job whose lease another instance now holds (this one
// failed to renew it in time): it goes on there.
func (j *job) lose() {
	j.mu.Lock()
	j.lost = true
	j.mu.Unlock()
	j.m.log.Warn("games: lease on a job lost; another instance runs it", "job", j.id)
	j.stop(nil, true)
}

// errorLocked is why the job ended as stored: the failure, or the
// server's reason for cancelling it.
func (j *job) errorLocked() *errorJSON {
	if j.why == nil {
		return nil
	}
	e := &errorJSON{Code: j.why.Code, Message: j.why.Message}
	if j.status == StatusFailed {
		p := j.failPly
		e.Ply = &p
	}
	return e
}

// onceBudget charges a search of a shared job to its owner unless the
// search was charged before (by an instance that then lost the job).
type onceBudget struct {
	inner session.Budget
	free  bool
}

func (b *onceBudget) Take(ctx context.Context, d time.Duration) time.Duration {
	if b.free && d > 0 {
		return 0
	}
	return b.inner.Take(ctx, d)
}

func (b *onceBudget) TakeBackground(ctx context.Context, d time.Duration) time.Duration {
	if b.free && d > 0 {
		return 0
	}
	return b.inner.TakeBackground(ctx, d)
}

func (b *onceBudget) TakeUpTo(ctx context.Context, d time.Duration, background bool) (time.Duration, time.Duration) {
	if b.free && d > 0 {
		return d, 0
	}
	return b.inner.TakeUpTo(ctx, d, background)
}

func (b *onceBudget) Charge(ctx context.Context, d time.Duration) {
	if !b.free {
		b.inner.Charge(ctx, d)
	}
}

// closeShared drains with Redis: the jobs nobody follows go back to the
// store at once; followed ones end as without Redis (see Close).
func (m *Manager) closeShared(ctx context.Context, why *session.Error) {
	m.mu.Lock()
	m.closing = true
	pending := make([]string, 0, len(m.pending))
	for id := range m.pending {
		pending = append(pending, id)
	}
	running := make([]*job, 0, len(m.running))
	for j := range m.running {
		running = append(running, j)
	}
	m.mu.Unlock()
	for _, id := range pending {
		if res, err := m.st.cancel(id, m.pendingOwner(id)); err == nil && res == "claimed" {
			m.endUnheld(id, why)
		}
	}
	var followed []*job
	for _, j := range running {
		j.mu.Lock()
		back := len(j.subs) == 0
		j.handback = back
		j.mu.Unlock()
		if back {
			j.stop(why, true)
		} else {
			j.stop(why, false)
			followed = append(followed, j)
		}
	}
	defer cutBefore(ctx, followed, why)()
	m.wg.Wait() // the loop keeps renewing the leases of jobs finishing
	m.stopLoop()
	m.st.gone()
	m.st.close()
}

func (m *Manager) pendingOwner(id string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if j := m.pending[id]; j != nil {
		return j.client
	}
	return ""
}

// searchKey names one search of a job: a position's ("p12"), or that of
// the position after its best move ("b12").
func searchKey(ply int, best bool) string {
	if best {
		return fmt.Sprintf("b%d", ply)
	}
	return fmt.Sprintf("p%d", ply)
}
