package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/usid/usid"
	"github.com/usid/usid/internal/proc"
)

// TestDrainOnSIGTERM runs a real usid with searches and WebSocket sessions in
// flight, sends SIGTERM, and checks that every client got its result or a
// clear going-away close, and that no engine process outlives usid.
func TestDrainOnSIGTERM(t *testing.T) {
	cfg := strings.Replace(string(usid.DefaultConfig), "shutdown_grace: 30s", "shutdown_grace: 20s", 1)
	path := t.TempDir() + "/usid.yaml"
	os.WriteFile(path, []byte(cfg), 0o644)
	cmd, addr, _ := startUsid(t, "--addr", "127.0.0.1:0", "--config", path)
	base := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 && len(proc.Children(cmd.Process.Pid)) == 3 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("not ready")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// gpsusi takes a while to be ready; the REST search needs it.
	time.Sleep(3 * time.Second)
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
	startedA, startedB := make(chan struct{}), make(chan struct{})
	resA, resB := make(chan wsResult, 1), make(chan wsResult, 1)
	go session(`{"type":"analyze","id":"bounded","engine":"fairy","limits":{"movetime_ms":3000}}`, startedA, resA)
	go session(`{"type":"analyze","id":"open","engine":"fairy"}`, startedB, resB)
	restDone := make(chan string, 1)
	go func() {
		resp, err := http.Post(base+"/v1/analyze", "application/json", strings.NewReader(`{"engine":"gps","limits":{"movetime_ms":2500}}`))
		if err != nil {
			restDone <- err.Error()
			return
		}
		defer resp.Body.Close()
		var body map[string]any
		json.NewDecoder(resp.Body).Decode(&body)
		restDone <- resp.Status + " " + func() string { s, _ := body["bestmove"].(string); return s }()
	}()
	<-startedA
	<-startedB
	time.Sleep(300 * time.Millisecond)

	cmd.Process.Signal(syscall.SIGTERM)
	sigterm := time.Now()
	time.Sleep(100 * time.Millisecond)
	if resp, err := http.Get(base + "/readyz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != 503 {
			t.Errorf("/readyz during the drain: %d, want 503", resp.StatusCode)
		}
	}
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
