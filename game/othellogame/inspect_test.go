package othellogame

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestInspectWords (issue 44): othello's verdict speaks othello's words:
// no in_check and no checkmate, which the game has not; game_over, the
// result and the legal moves it has.
func TestInspectWords(t *testing.T) {
	for _, tt := range []struct {
		moves []string
		want  []string
	}{
		{[]string{"f5", "d6"}, []string{`"valid":true`, `"side_to_move":"b"`, `"game_over":false`, `"legal_moves":[`, `"errors":[]`}},
		{[]string{"f5", "f5"}, []string{`"valid":false`, `"code":"occupied"`}},
	} {
		b, err := json.Marshal(Game.Inspect("startpos", "", tt.moves, false))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for _, w := range tt.want {
			if !strings.Contains(s, w) {
				t.Errorf("%v: %s lacks %s", tt.moves, s, w)
			}
		}
		for _, no := range []string{"in_check", "checkmate", "stalemate"} {
			if strings.Contains(s, no) {
				t.Errorf("%v: %s has %s, which othello has not", tt.moves, s, no)
			}
		}
	}
}
