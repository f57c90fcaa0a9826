package play

import (
	"context"
	"testing"
	"time"

	"github.com/usid/usid/quota"
	"github.com/usid/usid/session"
	"github.com/usid/usid/shogi"
)

// testBudget is one client's engine time in a real quota store, as the
// server gives a game's caller.
type testBudget struct {
	store *quota.Memory
	b     quota.Budget
	id    string
}

func (x testBudget) Take(ctx context.Context, d time.Duration) time.Duration {
	return x.store.Take(ctx, x.id, x.b, d)
}

func (x testBudget) TakeBackground(ctx context.Context, d time.Duration) time.Duration {
	return x.store.TakeBackground(ctx, x.id, x.b, d)
}

func (x testBudget) TakeUpTo(ctx context.Context, d time.Duration, background bool) (time.Duration, time.Duration) {
	return x.store.TakeUpTo(ctx, x.id, x.b, d, background)
}

func (x testBudget) Charge(ctx context.Context, d time.Duration) { x.store.Charge(ctx, x.id, x.b, d) }

// spent reports whether the budget's balance is spent (a search would be
// refused), and for how long.
func (x testBudget) spent() time.Duration { return x.Take(context.Background(), 0) }

// TestPonderingIsNotCharged (issue 35): pondering is the engine thinking
// on the human's time, charged to nobody; the engine's own moves are
// charged to the player, from go or ponderhit to bestmove. With 2 s of
// engine time, the human thinks 3 s while the engine ponders: the balance
// is still above zero after the think, and the game goes on (the ponder
// move played: ponderhit, the engine's search charged from there). Before,
// pondering was charged as it went: it spent the budget, was stopped, and
// the engine's next search was refused; the game ended aborted
// (too_many_requests) on the human's move.
func TestPonderingIsNotCharged(t *testing.T) {
	m := New(Config{Service: svc, Lag: 5 * time.Second})
	defer m.Close(context.Background())
	bud := testBudget{quota.NewMemory(quota.MemoryConfig{}), quota.Budget{Seconds: 2, Period: 24 * time.Hour, Burst: 2, InteractiveShare: -1}, "dora"}
	c := newConnAs(t, m, session.Caller{Client: "dora", Budget: bud})
	c.send(startReq("g", "fairy", `{"side":"b","clock":{"b":{"byoyomi_ms":30000},"w":{"byoyomi_ms":30000}},"level":{"movetime_ms":200},"ponder":true}`, nil))
	v := c.state()
	if !v.Ponder {
		t.Fatal("the game does not ponder")
	}
	g := m.find("dora", v.ID)
	for i, move := range []string{"7g7f", ""} {
		if move == "" { // the engine's expected move: ponderhit
			g.mu.Lock()
			move = g.ponderMove
			g.mu.Unlock()
			pos, _ := shogi.Load(v.SFEN, v.Moves)
			if move == "" || !pos.IsLegal(mustMove(move)) {
				move = pos.LegalMoves()[0].String()
			}
		}
		c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: move})
		if v = c.state(); v.Status != statusPlaying {
			t.Fatalf("after the human's move %d (%s): %+v", i+1, move, v.Result)
		}
		if v = c.state(); v.Status != statusPlaying {
			t.Fatalf("after the engine's move %d: %+v", i+1, v.Result)
		}
		if i == 0 {
			// The human's think, the scenario's subject: longer than the
			// engine time left, while the engine ponders.
			<-time.After(3 * time.Second)
			if wait := bud.spent(); wait > 0 {
				t.Errorf("after a 3 s think on a 2 s budget the balance is spent (retry in %v): the pondering was charged", wait)
			}
		}
	}
	c.send(&session.Request{Type: session.TypePlayResign, ID: "r", Game: v.ID})
	checkResult(t, c.state(), "w", "resign", "resign")
	waitIdle(t)
}

// TestPonderingYields (issue 35): a pondering engine gives way, like an
// idle lease, to a caller waiting for its kind: with stockfish's only
// process pondering during the human's turn, another client's analysis
// gets the engine at once; at the human's move the engine searches afresh
// and plays. Before, the pondering held the process until the human moved
// and the analysis waited in vain (no_engine after the acquire timeout).
func TestPonderingYields(t *testing.T) {
	if n := shared.Status(); len(n) == 0 {
		t.Fatal("no engines")
	}
	for _, st := range shared.Status() {
		if st.Name == "stockfish" && st.Instances != 1 {
			t.Fatalf("stockfish has %d instances; the test needs one", st.Instances)
		}
	}
	m := New(Config{Service: svc, Lag: 5 * time.Second})
	defer m.Close(context.Background())
	c := newConn(t, m, "erin")
	c.send(startReq("g", "stockfish", `{"side":"w","clock":{"b":{"main_ms":2000,"inc_ms":100},"w":{"main_ms":600000}},"ponder":true}`, &session.Position{Game: "chess", Start: "startpos"}))
	v := c.state()
	if !v.Ponder {
		t.Fatal("the game does not ponder")
	}
	c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: "e2e4"})
	c.state()
	if v = c.state(); v.Status != statusPlaying || len(v.Moves) != 2 {
		t.Fatalf("after the engine's move: %+v %v", v.Result, v.Moves)
	}
	g := m.find("erin", v.ID)
	g.mu.Lock()
	pondering := g.ponderID != ""
	g.mu.Unlock()
	if !pondering {
		t.Fatal("the engine does not ponder after its move")
	}

	// Another client, during the human's turn.
	ctx, cancel := context.WithTimeout(session.WithCaller(t.Context(), session.Caller{Client: "frank"}), 20*time.Second)
	defer cancel()
	start := time.Now()
	res, err := svc.Analyze(ctx, &session.Request{Engine: "stockfish", Position: &session.Position{Game: "chess", Start: "startpos", Moves: []string{"d2d4"}}, Limits: &session.Limits{Depth: 5}})
	if err != nil {
		t.Fatalf("another client's analysis while the engine ponders: %v after %v", err, time.Since(start).Round(time.Millisecond))
	}
	t.Logf("the analysis got the engine and answered %s in %v", res.BestMove, time.Since(start).Round(time.Millisecond))

	// The human's move: the engine searches afresh and plays.
	c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: "g1f3"})
	// The engine's search may wait for the process a moment (its clock
	// standing meanwhile, with a play event of its own): wait for its move.
	if v = c.until(func(v *stateView) bool { return v.Status != statusPlaying || len(v.Moves) == 4 }); v.Status != statusPlaying || len(v.Moves) != 4 {
		t.Fatalf("after the human's move, the engine's: %+v %v", v.Result, v.Moves)
	}
	c.send(&session.Request{Type: session.TypePlayResign, ID: "r", Game: v.ID})
	checkResult(t, c.state(), "b", "resign", "0-1")
	waitIdle(t)
}
