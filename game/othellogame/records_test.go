package othellogame

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/usid/usid/game"
)

// FuzzRecords: any text is read or refused without a panic; a transcript
// read has a line for every square and a pass for every move without one,
// and is written back (Export) to the same squares, which read back to the
// same moves.
func FuzzRecords(f *testing.F) {
	for _, s := range []string{"f5d6c3d3c4", "F5 d6\nC3\r\nd3", "f5f5", "f5\nz9", "", " \n", "f5d6c3d3c4f4f6f3e6e7d7g6f8f7g5h6h4e8g4c6c5c7b6b5a6",
		"f5f4c3e6g4b2d3e3f3g3g2h3e7f1g5c5f2e8c4d6h5e2g1h2d2d1b5b4c7a5a4h6c2b3f8c6h1f6b6a6a1e1a7b7f7g6c1b8d7c8g7h4h7a2d8g8a3a8b1h8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		out, err := Game.(game.Records).Parse([]byte(text), "transcript", 10000)
		if err != nil {
			if err.Code == "" || err.Message == "" {
				t.Fatalf("%q: an error without code or message: %+v", text, err)
			}
			return
		}
		a := out.(transcriptAnswer)
		if len(a.Plies) != len(a.Position.Moves) {
			t.Fatalf("%q: %d plies, %d moves", text, len(a.Plies), len(a.Position.Moves))
		}
		plies := make([]game.RecordPly, 0, len(a.Plies))
		for i, p := range a.Plies {
			if (p.Move == "pass") != (p.Line == 0) || p.Line > strings.Count(text, "\n")+1 || p.Move != a.Position.Moves[i] {
				t.Fatalf("%q: ply %d %+v", text, i, p)
			}
			plies = append(plies, game.RecordPly{Move: p.Move})
		}
		w, werr := Game.(game.Records).Export(&game.RecordGame{Plies: plies}, 10000)
		if werr != nil {
			t.Fatalf("%q: read, yet not written: %v", text, werr)
		}
		e := w.(transcriptExport)
		if e.Transcript != strings.ToLower(strings.Join(strings.Fields(text), "")) || e.End != a.End {
			t.Fatalf("%q written %+v, read end %q", text, e, a.End)
		}
		back, berr := Game.(game.Records).Parse([]byte(e.Transcript), "", 10000)
		if berr != nil || strings.Join(back.(transcriptAnswer).Position.Moves, " ") != strings.Join(a.Position.Moves, " ") {
			t.Fatalf("%q: read back %+v %v", text, back, berr)
		}
	})
}

// TestRecordPositionShape: a transcript's position is the API's othello
// position.
func TestRecordPositionShape(t *testing.T) {
	out, err := Game.(game.Records).Parse([]byte("f5"), "", 10)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out)
	if !strings.Contains(string(b), `"position":{"othello":"startpos","moves":["f5"]}`) {
		t.Errorf("%s", b)
	}
	if _, err := Game.(game.Records).Parse([]byte("f5d6"), "", 1); err == nil || err.Code != "record_too_long" {
		t.Errorf("over max moves: %v", err)
	}
}
