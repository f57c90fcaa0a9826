package pool

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/internal/testwait"
)

// TestProbeAbortsLoggedAsExpected (issue 37): the probe tries each go
// limit on a spare engine, and gpsusi aborts on those it lacks ("unknown
// option in go depth", "terminate called after throwing an instance of
// 'std::runtime_error'"): the first start's log showed these as warnings,
// with nothing saying they were expected. The fake engine aborts the same
// way on go depth; its stderr is logged at Info with an "expected" note,
// and nothing the probe provoked is a warning. A serving engine's stderr
// is still a warning (TestFakeStderrLogged in package usi).
func TestProbeAbortsLoggedAsExpected(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p, err := New([]EngineConfig{fake(fakeengine.AbortOn+"=depth", 1)}, Options{Logger: log, ProfileDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the fake engine's profile", time.Minute, func() bool { return p.Profile("fake") != nil })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p.Close(ctx)
	stderr := 0
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r struct {
			Level, Msg, Line, Expected string
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if r.Msg != "engine stderr" {
			continue
		}
		stderr++
		if r.Level != "INFO" || r.Expected == "" || !strings.Contains(line, `"engine":"fake/probe"`) {
			t.Errorf("the probe's engine's stderr: %s, want INFO with an expected note", line)
		}
	}
	if stderr == 0 {
		t.Errorf("no stderr logged: the fake did not abort on go depth?\n%s", out.String())
	}
}
