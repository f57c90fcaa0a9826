package review

import (
	"sync"
	"testing"
	"time"

	"github.com/usid/usid/internal/redistest"
	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/session"
)

// peek reads job id as it stands without following it: a Get by its owner
// would renew a followed job's grace, which is what the test looks at.
// status, the error's code, the positions analysed.
func peek(t *testing.T, m *Manager, id string) (status, code string, done int) {
	t.Helper()
	if m.st == nil {
		m.mu.Lock()
		j := m.jobs[id]
		m.mu.Unlock()
		if j == nil {
			t.Fatalf("job %s is gone", id)
		}
		v := j.view()
		if v.Error != nil {
			code = v.Error.Code
		}
		return v.Status, code, v.Progress.Done
	}
	ctx, cancel := m.st.ctx()
	defer cancel()
	rec, err := m.st.load(ctx, id)
	if err != nil || rec == nil {
		t.Fatalf("job %s in redis: %v %v", id, rec, err)
	}
	if rec.err != nil {
		code = rec.err.Code
	}
	return rec.status, code, len(rec.results)
}

// TestFollowedJobs (issue 26): a job started with Follow (the board's)
// lives while its page reads it. Three jobs run side by side, each paid
// from its own budget: a followed one that the test reads every 50 ms
// (spread over the instances, as a proxy spreads a page's polls) runs on;
// a followed one that nobody reads is cancelled once the grace has
// passed, with error abandoned, and its owner's engine time is no more
// charged; one without Follow, never read, runs to its end. Then the
// reads of the first stop, and it is cancelled too. In one process, and
// with three instances sharing a real redis-server: two run the jobs,
// and the page's requests all go to the third, which runs none (so a read
// on an instance that does not hold the job renews it, and the one
// holding it notices at its lease renewal). Before, nothing ended a REST job but DELETE: a closed tab's
// job spent its owner's engine time for as long as it ran.
func TestFollowedJobs(t *testing.T) {
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			const grace = 700 * time.Millisecond
			budgets := map[string]*testBudget{
				"polled": {balance: time.Hour}, "abandoned": {balance: time.Hour}, "unfollowed": {balance: time.Hour},
			}
			callers := func(client string) session.Caller {
				return session.Caller{Client: client, Budget: budgets[client]}
			}
			// front takes the page's requests.
			var front *Manager
			switch store {
			case "memory":
				front = newManager(t, func(c *Config) { c.FollowGrace = grace })
			case "redis":
				rs := redistest.Start(t)
				for i := range 3 {
					m := newManager(t, func(c *Config) {
						c.Redis = &RedisConfig{URL: rs.URL, Lease: time.Second, Check: 50 * time.Millisecond}
						c.FollowGrace = grace
					})
					if i < 2 {
						m.SetCallers(callers) // it takes jobs
					} else {
						front = m // without callers it takes none
					}
				}
			}
			start := func(client string, follow bool, moves []string, movetime int64) string {
				t.Helper()
				v, err := front.Start(callers(client), &Request{Position: &session.Position{Moves: moves}, Limits: &session.Limits{MoveTimeMS: movetime}, Follow: follow})
				if err != nil {
					t.Fatal(err)
				}
				want := int64(0)
				if follow {
					want = grace.Milliseconds()
				}
				if v.FollowMS != want {
					t.Errorf("%s: follow_ms %d, want %d", client, v.FollowMS, want)
				}
				return v.ID
			}
			begun := time.Now()
			polled := start("polled", true, opening, 300)
			gone := start("abandoned", true, opening, 300)
			free := start("unfollowed", false, opening[:4], 100)

			// The page of the first job polls it.
			var (
				mu       sync.Mutex
				last     *View
				pollErr  *session.Error
				stopPoll = make(chan struct{})
				polling  sync.WaitGroup
			)
			polling.Go(func() {
				for {
					select {
					case <-stopPoll:
						return
					case <-time.After(50 * time.Millisecond):
					}
					v, err := front.Get("polled", polled)
					mu.Lock()
					last, pollErr = v, err
					mu.Unlock()
				}
			})
			stopped := false
			stop := func() {
				if !stopped {
					stopped = true
					close(stopPoll)
					polling.Wait()
				}
			}
			defer stop()
			lastSeen := func() *View {
				mu.Lock()
				defer mu.Unlock()
				if pollErr != nil {
					t.Fatalf("polling the followed job: %v", pollErr)
				}
				return last
			}

			// Nobody reads the second: it is cancelled once the grace has
			// passed, and not before.
			testwait.For(t, "the unread followed job to end", time.Minute, func() bool {
				st, _, _ := peek(t, front, gone)
				return st == StatusCancelled || st == StatusDone || st == StatusFailed
			})
			took := time.Since(begun)
			st, code, done := peek(t, front, gone)
			t.Logf("unread followed job: %s (%s) after %v at %d/%d", st, code, took.Round(time.Millisecond), done, len(opening)+1)
			if st != StatusCancelled || code != CodeAbandoned {
				t.Fatalf("unread followed job: %s (error %q), want cancelled, abandoned", st, code)
			}
			if took < grace {
				t.Errorf("cancelled after %v, before its grace of %v", took, grace)
			}
			if done >= len(opening)+1 {
				t.Errorf("every position analysed (%d) before it was cancelled", done)
			}
			spent := budgets["abandoned"].total()

			// The polled one runs on past several graces, and the one
			// without Follow too, unread.
			testwait.For(t, "a first poll", time.Minute, func() bool { return lastSeen() != nil })
			at := lastSeen()
			testwait.For(t, "the polled job to analyse three more positions", 2*time.Minute, func() bool {
				v := lastSeen()
				return v != nil && (v.Progress.Done >= at.Progress.Done+3 || v.FinishedAt != nil)
			})
			if v := lastSeen(); v.Status == StatusCancelled || v.Status == StatusFailed {
				t.Fatalf("the polled job: %s %+v, want it running", v.Status, v.Error)
			}
			if now := budgets["abandoned"].total(); now > spent {
				t.Errorf("the abandoned job's owner was charged %v more after it was cancelled", now-spent)
			}
			testwait.For(t, "the job without follow to end", 2*time.Minute, func() bool {
				st, _, _ := peek(t, front, free)
				return st == StatusCancelled || st == StatusDone || st == StatusFailed
			})
			if st, code, done := peek(t, front, free); st != StatusDone || done != 5 {
				t.Errorf("the job without follow, never read: %s (%s) at %d/5, want done", st, code, done)
			}
			if now := budgets["abandoned"].total(); now > spent {
				t.Errorf("the abandoned job's owner was charged %v more after it was cancelled", now-spent)
			}

			// The page goes: the polled job is cancelled in its turn.
			stop()
			if st, _, _ := peek(t, front, polled); st == StatusDone {
				t.Log("the polled job was done before its polls stopped")
				return
			}
			testwait.For(t, "the job whose polls stopped to end", time.Minute, func() bool {
				st, _, _ := peek(t, front, polled)
				return st == StatusCancelled || st == StatusDone || st == StatusFailed
			})
			if st, code, _ := peek(t, front, polled); st != StatusCancelled || code != CodeAbandoned {
				t.Errorf("the job whose polls stopped: %s (%s), want cancelled, abandoned", st, code)
			}
		})
	}
}

// TestAbandonedWhileQueued: a followed job that nobody reads while it
// waits for a run slot ends cancelled (abandoned) without a search, so
// its owner is charged nothing: in one process at its grace, straight
// from the queue; with Redis when an instance takes it (the lease holder
// is the one that notices, and a queued job has none until then).
func TestAbandonedWhileQueued(t *testing.T) {
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			const grace = 300 * time.Millisecond
			budgets := map[string]*testBudget{"first": {balance: time.Hour}, "queued": {balance: time.Hour}}
			callers := func(client string) session.Caller {
				return session.Caller{Client: client, Budget: budgets[client]}
			}
			tweak := func(c *Config) { c.FollowGrace, c.MaxRunning = grace, 1 }
			var front *Manager
			switch store {
			case "memory":
				front = newManager(t, tweak)
			case "redis":
				rs := redistest.Start(t)
				redisTweak := func(c *Config) {
					tweak(c)
					c.Redis = &RedisConfig{URL: rs.URL, Lease: time.Second, Check: 50 * time.Millisecond}
				}
				newManager(t, redisTweak).SetCallers(callers) // the one instance running jobs
				front = newManager(t, redisTweak)
			}
			first, err := front.Start(callers("first"), &Request{Position: &session.Position{Moves: opening[:4]}, Limits: &session.Limits{MoveTimeMS: 300}})
			if err != nil {
				t.Fatal(err)
			}
			testwait.For(t, "the first job to run", time.Minute, func() bool {
				st, _, _ := peek(t, front, first.ID)
				return st == StatusRunning
			})
			queued, err := front.Start(callers("queued"), &Request{Position: &session.Position{Moves: opening}, Follow: true})
			if err != nil {
				t.Fatal(err)
			}
			testwait.For(t, "the queued job to end", 2*time.Minute, func() bool {
				st, _, _ := peek(t, front, queued.ID)
				return st == StatusCancelled || st == StatusDone || st == StatusFailed
			})
			st, code, done := peek(t, front, queued.ID)
			if st != StatusCancelled || code != CodeAbandoned || done != 0 {
				t.Errorf("the unread queued job: %s (%s) at %d, want cancelled, abandoned, with nothing analysed", st, code, done)
			}
			if spent := budgets["queued"].total(); spent != 0 {
				t.Errorf("its owner was charged %v", spent)
			}
		})
	}
}
