package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"
)

// TestEveryGameOutOfTheBox (issue 42): the built-in configuration, with
// nothing laid over it but gps left out (its probe is slow, and fairy is
// a shogi engine too), serves an engine for each game: GET /v1/engines
// lists shogi, chess and othello engines, each available, and each
// analyses its game's start at once; stockfish and usid's othello engine
// (this binary, "@self") have levels.
func TestEveryGameOutOfTheBox(t *testing.T) {
	if _, err := os.Stat("/usr/games/stockfish"); err != nil {
		t.Fatalf("stockfish is missing (%v): apt-get install stockfish (make deps)", err)
	}
	m, addr := runLayers(t, "engines:\n  - {name: gps, disabled: true}\n")
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		m.Close(ctx)
	}()
	base := "http://" + addr
	resp, err := http.Get(base + "/v1/engines")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Engines []struct {
			Name      string                     `json:"name"`
			Available bool                       `json:"available"`
			ID        struct{ Name string }      `json:"id"`
			Profile   *struct{ Protocol string } `json:"profile"`
			Levels    []struct{ ID string }      `json:"levels"`
		} `json:"engines"`
	}
	json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	protocols := map[string]string{}
	for _, e := range got.Engines {
		if !e.Available || e.Profile == nil {
			t.Errorf("engine %s: available %v, profile %v", e.Name, e.Available, e.Profile)
			continue
		}
		protocols[e.Name] = e.Profile.Protocol
		t.Logf("%s (%s, %s): %d levels", e.Name, e.ID.Name, e.Profile.Protocol, len(e.Levels))
		if (e.Name == "stockfish" || e.Name == "othello") && len(e.Levels) < 5 {
			t.Errorf("engine %s has levels %v", e.Name, e.Levels)
		}
	}
	if protocols["fairy"] != "usi" || protocols["stockfish"] != "uci" || protocols["othello"] != "usix" {
		t.Fatalf("engines by protocol %v: want fairy usi, stockfish uci, othello usix", protocols)
	}
	for _, c := range []struct{ engine, position string }{
		{"fairy", `{"sfen":"startpos","moves":[]}`},
		{"stockfish", `{"fen":"startpos","moves":["e2e4"]}`},
		{"othello", `{"othello":"startpos","moves":["f5"]}`},
	} {
		body := `{"engine":"` + c.engine + `","position":` + c.position + `,"limits":{"movetime_ms":200}}`
		resp, err := http.Post(base+"/v1/analyze", "application/json", bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		var a struct {
			BestMove string `json:"bestmove"`
		}
		json.NewDecoder(resp.Body).Decode(&a)
		resp.Body.Close()
		if resp.StatusCode != 200 || a.BestMove == "" {
			t.Errorf("%s analyses %s: %d %+v", c.engine, c.position, resp.StatusCode, a)
		}
	}
}
