package rules

import (
	"encoding/json"
	"testing"
)

func TestErrorJSON(t *testing.T) {
	for _, c := range []struct {
		e    *Error
		want string
	}{
		{Newf("no_king", "Black has %s", "none"), `{"code":"no_king","message":"Black has none"}`},
		{&Error{Code: "self_check", Message: "m", MoveIndex: 0}, `{"code":"self_check","message":"m","move_index":0}`},
	} {
		b, err := json.Marshal(c.e)
		if err != nil || string(b) != c.want {
			t.Errorf("got %s, %v, want %s", b, err, c.want)
		}
	}
}

func TestPlayMovesNamesTheRefusedMove(t *testing.T) {
	var played []string
	check := func(s string) (string, error) {
		if s == "bad" {
			return "", Newf("move_syntax", "bad")
		}
		return s, nil
	}
	errs := PlayMoves([]string{"a", "b", "bad", "c"}, check, func(m string) { played = append(played, m) })
	if len(errs) != 1 || errs[0].MoveIndex != 2 || len(played) != 2 {
		t.Fatalf("got %v, played %v, want the error at move 2 after 2 played", errs, played)
	}
	if got := Errors(errs).Error(); got != "move_syntax: move 2: bad" {
		t.Errorf("got %q", got)
	}
}

type pos struct {
	check bool
	legal []string
}

func (p pos) SideLetter() string   { return "w" }
func (p pos) InCheck() bool        { return p.check }
func (p pos) LegalMoves() []string { return p.legal }

func TestJudge(t *testing.T) {
	if f := Judge(pos{check: true}, nil); !f.Valid || !f.Checkmate || f.Stalemate || f.LegalMoves == nil || f.Errors == nil {
		t.Errorf("mate: got %+v", f)
	}
	if f := Judge(pos{}, nil); !f.Stalemate || f.Checkmate {
		t.Errorf("stalemate: got %+v", f)
	}
	bad := []*Error{Newf("no_king", "x")}
	if f := Judge(pos{check: true, legal: []string{"a"}}, bad); f.Valid || f.InCheck || len(f.LegalMoves) != 0 || f.SideToMove != "w" {
		t.Errorf("illegal position: got %+v, want no check or moves reported", f)
	}
	if f := Judge(nil, bad); f.Valid || f.SideToMove != "" {
		t.Errorf("unparsed: got %+v", f)
	}
}
