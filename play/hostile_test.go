package play

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/usid/usid/internal/redistest"
	"github.com/usid/usid/session"
)

// rawRedis is a plain client on the test's redis-server: what anyone able
// to write to the shared Redis could do.
func rawRedis(t *testing.T, url string) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	cl := redis.NewClient(opt)
	t.Cleanup(func() { cl.Close() })
	return cl
}

// sentBytes is how many bytes redis-server has sent to its clients.
func sentBytes(t *testing.T, cl *redis.Client) int64 {
	t.Helper()
	info, err := cl.Info(context.Background(), "stats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "total_net_output_bytes:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatal("no total_net_output_bytes in INFO stats")
	return 0
}

// humanToMove is a game in progress, the human (Black, 60 s sudden death)
// to move, as an instance that then died left it in the store.
func humanToMove(id, owner string, turnStart time.Time) *State {
	st := &State{Owner: owner, Main: [2]int64{60000, 60000}, Played: [2]int{1, 1}, TurnStart: turnStart.Round(time.Millisecond)}
	st.ID, st.Engine, st.Human, st.SFEN = id, "fairy", "b", "startpos"
	st.Moves, st.MovesKIF, st.TimesMS = []string{"7g7f", "3c3d"}, []string{"▲７六歩(77)", "△３四歩(33)"}, []int64{1000, 800}
	st.TC = Sides{B: TimeControl{MainMS: 60000}, W: TimeControl{MainMS: 60000}}
	st.Status = statusPlaying
	return st
}

// plant admits st as an instance of its own would, lets its lease go (the
// instance died) and then stores raw under the game's key instead.
func plant(t *testing.T, url, prefix string, st *State, raw func(b []byte) []byte) {
	t.Helper()
	s := newRedisStore(t, url, prefix, time.Second)
	if got, err := s.Admit(context.Background(), st, Bounds{PerClient: 10, PerNetwork: 10, Games: 10}, time.Hour); err != nil || got != "ok" {
		t.Fatalf("admit: %q %v", got, err)
	}
	b, _ := json.Marshal(st)
	cl := rawRedis(t, url)
	ctx := context.Background()
	cl.Del(ctx, prefix+"lease:"+st.ID)
	if err := cl.Set(ctx, prefix+"game:"+st.ID, raw(b), 0).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestHostileStoredGames (issue 35): a game state read back from Redis is
// checked as a client's play_start is: a turn that starts in the future
// gives the side to move no time (its clock shows at most its main time),
// a main time no control can give is refused, and a 60 MB value is never
// sent by redis-server (its size is checked on the server).
func TestHostileStoredGames(t *testing.T) {
	rs := redistest.Start(t)
	cl := rawRedis(t, rs.URL)
	m := New(Config{Service: svc, Store: newRedisStore(t, rs.URL, "t36:", 5*time.Second), Lag: time.Minute})
	defer m.Close(context.Background())
	same := func(b []byte) []byte { return b }
	resume := func(id string) *session.Event {
		c := newConn(t, m, "mallory")
		c.send(&session.Request{Type: session.TypePlayResume, ID: "r", Game: id})
		return c.next()
	}

	// A turn that starts 30 s ahead of this instance's clock.
	plant(t, rs.URL, "t36:", humanToMove("future", "mallory", time.Now().Add(30*time.Second)), same)
	ev := resume("future")
	if ev.Type != session.EventPlay {
		t.Fatalf("resume: %s %s %s", ev.Type, ev.Code, ev.Message)
	}
	var v stateView
	json.Unmarshal(ev.Play, &v)
	t.Logf("turn_start 30 s ahead: Black's clock %+v, running %q", v.Clock.B, v.Clock.Running)
	if v.Clock.Running != "b" || v.Clock.B.MainMS > 60000 {
		t.Errorf("turn_start 30 s ahead: Black's clock %+v of a 60 s control", v.Clock.B)
	}
	m.find("mallory", "future").leave(true)

	// A main time of 9e18 ms.
	big := humanToMove("rich", "mallory", time.Now())
	big.Main[0] = 9e18
	plant(t, rs.URL, "t36:", big, same)
	ev = resume("rich")
	t.Logf("main_ms 9e18: %s %s %s", ev.Type, ev.Code, ev.Message)
	if ev.Type != session.EventError || ev.Code != session.CodeInvalidField {
		t.Errorf("main_ms 9e18: %s %s %s, want invalid_field", ev.Type, ev.Code, ev.Play)
	}

	// An ended game (nobody drives it) with a main time of 9e18 ms.
	over := humanToMove("over", "mallory", time.Now())
	over.Main[0], over.Status, over.Result = 9e18, statusEnded, &Result{Winner: "w", Reason: "resign", End: "resign"}
	plant(t, rs.URL, "t36:", over, same)
	cl.HDel(context.Background(), "t36:owner", "over")
	ev = resume("over")
	t.Logf("an ended game's main_ms 9e18: %s %s %s", ev.Type, ev.Code, ev.Message)
	if ev.Type != session.EventError || ev.Code != session.CodeInvalidField {
		t.Errorf("an ended game's main_ms 9e18: %s %s %s, want invalid_field", ev.Type, ev.Code, ev.Play)
	}

	// 60 MB of junk under a game's key.
	plant(t, rs.URL, "t36:", humanToMove("junk", "mallory", time.Now()), func([]byte) []byte { return make([]byte, 60<<20) })
	before := sentBytes(t, cl)
	ev = resume("junk")
	sent := sentBytes(t, cl) - before
	t.Logf("60 MB of junk: %s %s %s; redis-server sent %d bytes", ev.Type, ev.Code, ev.Message, sent)
	if ev.Type != session.EventError || sent > 64<<10 {
		t.Errorf("60 MB of junk: %s %s, %d bytes sent", ev.Type, ev.Code, sent)
	}
	before = sentBytes(t, cl)
	_, _, err := m.cfg.Store.Load(context.Background(), "junk")
	sent = sentBytes(t, cl) - before
	t.Logf("Load of 60 MB of junk: %v; redis-server sent %d bytes", err, sent)
	if err == nil || sent > 64<<10 {
		t.Errorf("Load of 60 MB of junk: %v, %d bytes sent", err, sent)
	}
	waitIdle(t)
}
