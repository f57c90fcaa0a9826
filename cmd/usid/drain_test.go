package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/usid/usid"
	"github.com/usid/usid/internal/proc"
	"github.com/usid/usid/internal/testwait"
)

// TestDrainOnSIGTERM runs a real usid with searches and WebSocket sessions in
// flight, sends SIGTERM, and checks that every client got its result or a
// clear going-away close, and that no engine process outlives usid.
func TestDrainOnSIGTERM(t *testing.T) {
	cfg := strings.Replace(string(usid.DefaultConfig), "shutdown_grace: 30s", "shutdown_grace: 20s", 1)
	path := t.TempDir() + "/usid.yaml"
	os.WriteFile(path, []byte(cfg), 0o644)
	cmd, addr, logs := startUsid(t, "--addr", "127.0.0.1:0", "--config", path)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("usid's log:\n%s", logs())
		}
	})
	base := "http://" + addr
	// Every engine warm: gpsusi's profile takes a while to probe, and the
	// REST search needs it.
	testwait.For(t, "two idle fairy engines and one idle gps", 3*time.Minute, func() bool {
		return enginesIn(base, "fairy", "idle") == 2 && enginesIn(base, "gps", "idle") == 1
	})
	engines := proc.Children(cmd.Process.Pid)

	type wsResult struct {
		types []string
		close websocket.StatusCode
	}
	session := func(req string, started chan<- struct{}, out chan<- wsResult) {
		ctx := context.Background()
		c, _, err := websocket.Dial(ctx, "ws://"+addr+"/v1/ws", nil)
		if err != nil {
			t.Error(err)
			close(started)
			out <- wsResult{}
			return
		}
		c.Write(ctx, websocket.MessageText, []byte(req))
		var r wsResult
		once := false
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				r.close = websocket.CloseStatus(err)
				break
			}
			var ev map[string]any
			json.Unmarshal(b, &ev)
			r.types = append(r.types, ev["type"].(string))
			if ev["type"] == "info" && !once {
				once = true
				close(started)
			}
		}
		out <- r
	}
	// The REST search first, long enough to be in flight at the SIGTERM
	// however long the sessions below take to start, from a position out of
	// gpsusi's opening book (from the start it answers a book move at once).
	restDone := make(chan string, 1)
	go func() {
		resp, err := http.Post(base+"/v1/analyze", "application/json", strings.NewReader(`{"engine":"gps","position":{"sfen":"ln1g2snl/1r1s1kgb1/p1pppp1pp/1p4p2/9/2P1P4/PPBP1PPPP/2G3SR1/LN2KGSNL b - 15"},"limits":{"movetime_ms":6000}}`))
		if err != nil {
			restDone <- err.Error()
			return
		}
		defer resp.Body.Close()
		var body map[string]any
		json.NewDecoder(resp.Body).Decode(&body)
		restDone <- resp.Status + " " + func() string { s, _ := body["bestmove"].(string); return s }()
	}()
	var early string // the REST answer, if it came before its search was seen
	testwait.For(t, "the REST search on gps", time.Minute, func() bool {
		select {
		case early = <-restDone:
			return true
		default:
			return enginesIn(base, "gps", "busy") == 1
		}
	})
	if early != "" {
		t.Fatalf("the REST search ended before the SIGTERM: %q", early)
	}
	startedA, startedB := make(chan struct{}), make(chan struct{})
	resA, resB := make(chan wsResult, 1), make(chan wsResult, 1)
	go session(`{"type":"analyze","id":"bounded","engine":"fairy","limits":{"movetime_ms":3000}}`, startedA, resA)
	go session(`{"type":"analyze","id":"open","engine":"fairy"}`, startedB, resB)
	<-startedA
	<-startedB

	cmd.Process.Signal(syscall.SIGTERM)
	sigterm := time.Now()
	// Readiness fails as the drain starts (or the listener is already closed).
	testwait.For(t, "/readyz 503 during the drain", 10*time.Second, func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return true
		}
		resp.Body.Close()
		return resp.StatusCode == 503
	})
	for name, ch := range map[string]chan wsResult{"bounded": resA, "open": resB} {
		r := <-ch
		joined := strings.Join(r.types, " ")
		if !strings.Contains(joined, "closing") || !strings.Contains(joined, "bestmove") || r.close != websocket.StatusGoingAway {
			t.Errorf("%s session: events %s, close %v; want closing, bestmove, then 1001", name, lastN(r.types, 6), r.close)
		}
	}
	if got := <-restDone; !strings.HasPrefix(got, "200 OK ") || len(got) < len("200 OK 7g7f") {
		t.Errorf("REST search in flight: %q, want 200 with a bestmove", got)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("usid exit: %v", err)
		}
	case <-time.After(25 * time.Second):
		t.Fatal("usid outlived its grace period")
	}
	t.Logf("SIGTERM to exit: %v", time.Since(sigterm).Round(time.Millisecond))
	for _, pid := range engines {
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("engine %d outlived usid", pid)
		}
	}
}

func lastN(s []string, n int) []string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// enginesIn reads usid_pool_engines{engine, state} from /metrics (-1 if absent).
func enginesIn(base, engine, state string) int {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	prefix := `usid_pool_engines{engine="` + engine + `",state="` + state + `"} `
	for l := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), prefix); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}
