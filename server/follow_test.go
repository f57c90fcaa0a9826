package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/usid/usid/internal/redistest"
	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/quota"
	"github.com/usid/usid/review"
)

// countingBudgets is a quota.Store that adds up what each client is
// charged (taken, then settled).
type countingBudgets struct {
	quota.Store
	mu    sync.Mutex
	spent map[string]time.Duration
}

func (c *countingBudgets) add(client string, d time.Duration) {
	c.mu.Lock()
	c.spent[client] += d
	c.mu.Unlock()
}

func (c *countingBudgets) of(client string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.spent[client]
}

func (c *countingBudgets) Take(ctx context.Context, client string, b quota.Budget, d time.Duration) time.Duration {
	w := c.Store.Take(ctx, client, b, d)
	if w == 0 {
		c.add(client, d)
	}
	return w
}

func (c *countingBudgets) TakeBackground(ctx context.Context, client string, b quota.Budget, d time.Duration) time.Duration {
	w := c.Store.TakeBackground(ctx, client, b, d)
	if w == 0 {
		c.add(client, d)
	}
	return w
}

func (c *countingBudgets) TakeUpTo(ctx context.Context, client string, b quota.Budget, d time.Duration, background bool) (time.Duration, time.Duration) {
	g, w := c.Store.TakeUpTo(ctx, client, b, d, background)
	if w == 0 {
		c.add(client, g)
	}
	return g, w
}

func (c *countingBudgets) Charge(ctx context.Context, client string, b quota.Budget, held time.Duration) {
	c.add(client, held)
	c.Store.Charge(ctx, client, b, held)
}

// followPod is one usid of TestGameAnalysisFollow: its server and the
// metrics of its game jobs.
type followPod struct {
	hs  *httptest.Server
	reg *prometheus.Registry
}

// TestGameAnalysisFollow (issue 26): POST /v1/games/analysis with
// "follow": true (as the board asks) makes a job that lives while its
// client reads it. Three clients' jobs run side by side: one followed and
// read every 50 ms runs on; one followed and never read is cancelled once
// the grace has passed (error.code abandoned, follow_ms in every answer)
// and its owner's engine time is no more charged; one without follow,
// never read, runs to its end. Once the reads of the first stop it is
// cancelled too. With jobs in this process, and with two instances on
// one real redis-server taking the reads in turn (as a proxy spreads a
// page's polls). The jobs' ends are watched on the metrics: a GET by the
// owner would renew the job it looks at. Before, a REST job ran on for as
// long as it took whoever read it: the board's job outlived its tab.
func TestGameAnalysisFollow(t *testing.T) {
	shared.waitIdle(t)
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			const grace = 700 * time.Millisecond
			keys := map[string]string{"polled": "key-polled-0123456789", "gone": "key-gone-0123456789", "free": "key-free-0123456789"}
			budgets := &countingBudgets{Store: quota.NewMemory(quota.MemoryConfig{}), spent: map[string]time.Duration{}}
			var redisURL string
			n := 1
			if store == "redis" {
				redisURL, n = redistest.Start(t).URL, 2
			}
			var pods []followPod
			for range n {
				gcfg := review.Config{Service: shared.srv.cfg.Service, SpareCheck: 20 * time.Millisecond, FollowGrace: grace}
				if redisURL != "" {
					gcfg.Redis = &review.RedisConfig{URL: redisURL, Lease: time.Second, Check: 50 * time.Millisecond}
				}
				reg := prometheus.NewRegistry()
				gcfg.Registerer = reg
				gm := review.New(gcfg)
				cfg := shared.srv.cfg
				cfg.Registerer, cfg.Review = nil, gm
				cfg.Access = &Access{Keys: keys, Anonymous: true, Budgets: budgets,
					Keyed:          Quota{EngineTime: quota.Budget{Seconds: 3600, Period: time.Hour, Burst: 3600, InteractiveShare: -1}, Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5},
					AnonymousQuota: Quota{EngineTime: quota.Budget{Seconds: -1}, Rate: 1000, Burst: 1000, Sessions: 5, Leases: 5}}
				srv := New(cfg)
				gm.SetCallers(srv.CallerFor)
				hs := httptest.NewServer(srv)
				t.Cleanup(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					srv.Drain(ctx)
					hs.Close()
					gm.Close(ctx)
				})
				pods = append(pods, followPod{hs, reg})
			}
			// ended counts the jobs ended with status on every instance.
			ended := func(status string) int {
				total := 0.0
				for _, p := range pods {
					mfs, err := p.reg.Gather()
					if err != nil {
						t.Fatal(err)
					}
					for _, mf := range mfs {
						if mf.GetName() != "usid_game_jobs_finished_total" {
							continue
						}
						for _, m := range mf.GetMetric() {
							for _, l := range m.GetLabel() {
								if l.GetName() == "status" && l.GetValue() == status {
									total += m.GetCounter().GetValue()
								}
							}
						}
					}
				}
				return int(total)
			}
			cancelled := func() int { return ended("cancelled") }
			type jobJSON struct {
				ID       string
				Status   string
				FollowMS int64 `json:"follow_ms"`
				Progress struct{ Done, Total int }
				Error    *struct{ Code, Message string }
			}
			read := func(client, id string) jobJSON {
				t.Helper()
				resp, b := do(t, "GET", pods[0].hs.URL+"/v1/games/analysis/"+id, keys[client], "")
				var j jobJSON
				if resp.StatusCode != 200 || json.Unmarshal([]byte(b), &j) != nil {
					t.Fatalf("GET %s's job: %d %s", client, resp.StatusCode, b)
				}
				return j
			}
			start := func(client string, follow bool, moves []string, movetime int) string {
				t.Helper()
				body, _ := json.Marshal(map[string]any{"engine": "fairy", "position": map[string]any{"moves": moves},
					"limits": map[string]any{"movetime_ms": movetime}, "follow": follow})
				resp, b := do(t, "POST", pods[0].hs.URL+"/v1/games/analysis", keys[client], string(body))
				var j jobJSON
				if resp.StatusCode != 202 || json.Unmarshal([]byte(b), &j) != nil {
					t.Fatalf("POST %s's job: %d %s", client, resp.StatusCode, b)
				}
				if want := map[bool]int64{true: grace.Milliseconds()}[follow]; j.FollowMS != want {
					t.Errorf("%s's job: follow_ms %d, want %d", client, j.FollowMS, want)
				}
				return j.ID
			}
			moves := strings.Fields("7g7f 3c3d 2g2f 4c4d 2f2e 2b3c 3i4h 8b4b 5i6h 5a6b 6h7h 6b7b")
			begun := time.Now()
			polled := start("polled", true, moves, 300)
			gone := start("gone", true, moves, 300)
			free := start("free", false, moves[:4], 100)

			// The page of the first job polls it, on the instances in turn.
			var (
				mu       sync.Mutex
				last     jobJSON
				pollErr  string
				stopPoll = make(chan struct{})
				polling  sync.WaitGroup
			)
			polling.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stopPoll:
						return
					case <-time.After(50 * time.Millisecond):
					}
					req, _ := http.NewRequest("GET", pods[i%len(pods)].hs.URL+"/v1/games/analysis/"+polled, nil)
					req.Header.Set("Authorization", "Bearer "+keys["polled"])
					resp, err := http.DefaultClient.Do(req)
					var j jobJSON
					if err == nil {
						if resp.StatusCode != 200 {
							err = fmt.Errorf("GET: %s", resp.Status)
						} else {
							err = json.NewDecoder(resp.Body).Decode(&j)
						}
						resp.Body.Close()
					}
					mu.Lock()
					if err != nil {
						pollErr = err.Error()
					} else {
						last = j
					}
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
			lastSeen := func() jobJSON {
				mu.Lock()
				defer mu.Unlock()
				if pollErr != "" {
					t.Fatalf("polling the followed job: %s", pollErr)
				}
				return last
			}

			// (Without follow the unread job and the one without follow end
			// done first.)
			testwait.For(t, "a job to end cancelled", time.Minute, func() bool { return cancelled() >= 1 || ended("done") >= 2 })
			took := time.Since(begun)
			g := read("gone", gone)
			t.Logf("the unread followed job: %s (%v) after %v at %d/%d", g.Status, g.Error, took.Round(time.Millisecond), g.Progress.Done, g.Progress.Total)
			if g.Status != "cancelled" || g.Error == nil || g.Error.Code != "abandoned" || g.FollowMS != grace.Milliseconds() {
				t.Fatalf("the unread followed job: %+v, want cancelled with error abandoned", g)
			}
			if took < grace {
				t.Errorf("cancelled after %v, before its grace of %v", took, grace)
			}
			spent := budgets.of("key:gone")
			if spent <= 0 {
				t.Errorf("the abandoned job's owner was charged %v: the test sees no charges", spent)
			}

			testwait.For(t, "a first poll", time.Minute, func() bool { return lastSeen().ID != "" })
			at := lastSeen()
			testwait.For(t, "the polled job to analyse three more positions", 2*time.Minute, func() bool {
				v := lastSeen()
				return v.Progress.Done >= at.Progress.Done+3 || v.Status == "done" || v.Status == "cancelled" || v.Status == "failed"
			})
			if v := lastSeen(); v.Status == "cancelled" || v.Status == "failed" {
				t.Fatalf("the polled job: %s %v, want it running", v.Status, v.Error)
			}
			if now := budgets.of("key:gone"); now > spent {
				t.Errorf("the abandoned job's owner was charged %v more after it was cancelled", now-spent)
			}
			if c := cancelled(); c != 1 {
				t.Errorf("%d jobs cancelled, want only the unread followed one", c)
			}
			testwait.For(t, "the job without follow to end", 2*time.Minute, func() bool {
				s := read("free", free).Status
				return s != "queued" && s != "running"
			})
			if f := read("free", free); f.Status != "done" || f.Progress.Done != 5 {
				t.Errorf("the job without follow, read only now: %s (%v) at %d/5, want done", f.Status, f.Error, f.Progress.Done)
			}

			// The page goes: its job is cancelled in its turn.
			stop()
			if lastSeen().Status == "done" {
				t.Log("the polled job was done before its polls stopped")
				return
			}
			testwait.For(t, "the job whose polls stopped to end", time.Minute, func() bool { return cancelled() >= 2 || ended("done") >= 2 })
			if p := read("polled", polled); p.Status == "done" {
				t.Log("the polled job was done just as its polls stopped")
			} else if p.Status != "cancelled" || p.Error == nil || p.Error.Code != "abandoned" {
				t.Errorf("the job whose polls stopped: %s %v, want cancelled, abandoned", p.Status, p.Error)
			}
			if now := budgets.of("key:gone"); now > spent {
				t.Errorf("the abandoned job's owner was charged %v more after it was cancelled", now-spent)
			}
			shared.waitIdle(t)
		})
	}
}
