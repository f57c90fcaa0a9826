package server

import (
	"testing"

	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/pool"
)

// TestFalseMatesRefused: engines answering the false mates of issue 16 get
// engine_error, never result mate; gpsusi's true mate is "forced".
func TestFalseMatesRefused(t *testing.T) {
	liar := func(name, line string) pool.EngineConfig {
		return pool.EngineConfig{Name: name, Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.MateLine + "=" + line},
			Capabilities: pool.Capabilities{CheckmateAnswer: ptr(true)}}
	}
	e, _ := fakeServer(t, liar("defender-mates", "S*8f_9e8f"), liar("escape", "R*5b_5a6a_G*6b"), liar("junk", "R*5b_5a6a_G*6b_resign"))
	for _, tt := range []struct{ engine, sfen string }{
		{"defender-mates", "r8/9/9/9/k8/9/9/1P7/KL7 b Sr2b4g3s4n3l17p 1"},
		{"escape", "4k4/9/9/9/9/9/9/9/4K4 b RGr1b2g4s4n4l18p 1"},
		{"junk", "4k4/9/9/9/9/9/9/9/4K4 b RGr1b2g4s4n4l18p 1"},
	} {
		code, _, p := call(t, e, "POST", "/v1/mate", map[string]any{"engine": tt.engine, "position": map[string]any{"sfen": tt.sfen}, "timeout_ms": 2000})
		if code != 502 || p["code"] != "engine_error" {
			t.Errorf("%s: %d %v, want 502 engine_error", tt.engine, code, p)
		}
	}
	code, _, p := call(t, shared, "POST", "/v1/mate", map[string]any{"engine": "gps", "position": map[string]any{"sfen": mateIn5}, "timeout_ms": 10000})
	if code != 200 || p["result"] != "mate" || p["verified"] != "forced" {
		t.Errorf("gpsusi's mate in 5: %d %v, want mate, verified forced", code, p)
	}
}
