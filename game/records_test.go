package game_test

import (
	"encoding/json"
	"testing"

	"github.com/usid/usid/game"
	_ "github.com/usid/usid/game/builtin"
)

// TestRecordFormats: every format names one game (the routes choose the
// game by it), and each game's first format is its own.
func TestRecordFormats(t *testing.T) {
	seen := map[string]string{}
	for _, g := range game.All() {
		rs, ok := g.(game.Records)
		if !ok {
			continue
		}
		if len(rs.Formats()) == 0 {
			t.Errorf("%s reads no format", g.Name())
		}
		for _, f := range rs.Formats() {
			if seen[f] != "" {
				t.Errorf("format %s is %s's and %s's", f, seen[f], g.Name())
			}
			seen[f] = g.Name()
			if h, _ := game.RecordsFor(f); h != g {
				t.Errorf("RecordsFor(%s) = %v, want %s", f, h, g.Name())
			}
		}
	}
	for f, name := range map[string]string{"kif": "shogi", "csa": "shogi", "pgn": "chess", "transcript": "othello"} {
		if seen[f] != name {
			t.Errorf("format %s: %q, want %s", f, seen[f], name)
		}
	}
	if g, r := game.RecordsFor("sgf"); g != nil || r != nil {
		t.Errorf("sgf: %v", g)
	}
}

// TestRecordPosition: the API's position shape, moves never null, the
// variant only when set.
func TestRecordPosition(t *testing.T) {
	for _, tc := range []struct {
		p    game.RecordPosition
		want string
	}{
		{game.RecordPosition{Field: "sfen", Start: "startpos"}, `{"sfen":"startpos","moves":[]}`},
		{game.RecordPosition{Field: "fen", Start: "x", Moves: []string{"e1h1"}, Variant: "chess960"}, `{"fen":"x","moves":["e1h1"],"variant":"chess960"}`},
	} {
		if b, err := json.Marshal(tc.p); err != nil || string(b) != tc.want {
			t.Errorf("%s %v, want %s", b, err, tc.want)
		}
	}
}
