package othello

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/usid/usid/internal/rules/rulestest"
)

// TestCorpusPositions loads every row of testdata/positions.tsv (written by
// the naive reference in internal/gen) and compares: the codes refused (with
// the index of a refused move), the position reached, its legal moves and
// the result of an ended game.
func TestCorpusPositions(t *testing.T) {
	rows := rulestest.ReadTSV(t, "positions.tsv")
	for _, r := range rows {
		expect, label, pos, moves, reached, legal, result := r[0], r[1], r[2], strings.Fields(r[3]), r[4], r[5], r[6]
		p, errs := Load(pos, moves)
		var got []string
		for _, e := range errs {
			c := string(e.Code)
			if e.MoveIndex >= 0 {
				c += "@" + strconv.Itoa(e.MoveIndex)
			}
			got = append(got, c)
		}
		if expect == "legal" {
			if errs != nil {
				t.Errorf("%s: Load(%q, %v) = %v, want legal", label, pos, moves, Errors(errs))
				continue
			}
		} else if g := strings.Join(got, ","); g != expect {
			t.Errorf("%s: Load(%q, %v) refused with %s, want %s (%v)", label, pos, moves, g, expect, Errors(errs))
			continue
		}
		if p == nil {
			if reached != "" {
				t.Errorf("%s: no position reached, want %s", label, reached)
			}
			continue
		}
		if p.Token() != reached {
			t.Errorf("%s: reached %s, want %s", label, p.Token(), reached)
		}
		if expect != "legal" {
			continue
		}
		if g := strings.Join(p.LegalMoveStrings(), " "); g != legal {
			t.Errorf("%s: legal moves %q, want %q", label, g, legal)
		}
		res, over := p.Outcome()
		g := ""
		if over {
			g = fmt.Sprintf("%s %d-%d", res.Winner, res.Black, res.White)
		}
		if g != result {
			t.Errorf("%s: result %q, want %q", label, g, result)
		}
	}
	if len(rows) < 300 {
		t.Errorf("only %d rows", len(rows))
	}
}

// TestCorpusPerft compares perft(1..3) of positions along random games
// (passes and ended games among them) with the naive reference's counts.
func TestCorpusPerft(t *testing.T) {
	for _, r := range rulestest.ReadTSV(t, "perft-random.tsv") {
		p := mustLoad(t, r[0])
		for d, c := range r[1:] {
			want, _ := strconv.ParseUint(c, 10, 64)
			if got := p.Perft(d + 1); got != want {
				t.Errorf("perft(%d) of %s = %d, want %d", d+1, r[0], got, want)
			}
		}
	}
}

// TestCorpusTranscripts reads whole games as transcripts (passes left out),
// compares the moves with passes put back, the end and the result, and
// writes them back.
func TestCorpusTranscripts(t *testing.T) {
	for _, r := range rulestest.ReadTSV(t, "transcripts.tsv") {
		text, want, token, result := r[0], r[1], r[2], r[3]
		ms, err := ParseTranscript(nil, text)
		if err != nil {
			t.Errorf("ParseTranscript(%.20s...): %v", text, err)
			continue
		}
		if got := strings.Join(rulesStrings(ms), " "); got != want {
			t.Errorf("ParseTranscript(%.20s...) = %s\nwant %s", text, got, want)
		}
		p := Startpos()
		for _, m := range ms {
			if err := p.Play(m); err != nil {
				t.Fatal(err)
			}
		}
		if p.Token() != token {
			t.Errorf("%.20s...: ends in %s, want %s", text, p.Token(), token)
		}
		res, over := p.Outcome()
		if g := fmt.Sprintf("%s %d-%d", res.Winner, res.Black, res.White); !over || g != result {
			t.Errorf("%.20s...: result %s (over %v), want %s", text, g, over, result)
		}
		if got := Transcript(ms); got != strings.ToLower(text) {
			t.Errorf("Transcript = %s, want %s", got, strings.ToLower(text))
		}
	}
}

func rulesStrings(ms []Move) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.String()
	}
	return out
}

func mustLoad(t testing.TB, pos string, moves ...string) *Position {
	t.Helper()
	p, errs := Load(pos, moves)
	if errs != nil {
		t.Fatalf("Load(%q, %v): %v", pos, moves, Errors(errs))
	}
	return p
}
