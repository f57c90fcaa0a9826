package othello

import (
	"slices"
	"strings"
	"testing"

	"github.com/usid/usid/internal/rules/rulestest"
)

// addSeeds seeds a fuzz target with every position and move list of testdata/.
func addSeeds(f *testing.F, add func(pos, moves string)) {
	for _, r := range rulestest.ReadTSV(f, "positions.tsv") {
		add(r[2], r[3])
	}
	for _, r := range rulestest.ReadTSV(f, "perft-random.tsv") {
		add(r[0], "")
	}
	for _, r := range rulestest.ReadTSV(f, "transcripts.tsv") {
		add("startpos", r[1])
	}
}

// FuzzPosition: parsing (token, ofen or either) never panics, errors carry a
// code, and a parsed position prints as a canonical token and ofen that
// parse back to it.
func FuzzPosition(f *testing.F) {
	addSeeds(f, func(pos, _ string) { f.Add(pos) })
	f.Fuzz(func(t *testing.T, s string) {
		for _, parse := range []func(string) (*Position, error){ParsePosition, ParseOFEN, ParseAny} {
			p, err := parse(s)
			if err != nil {
				if e, ok := err.(*Error); !ok || e.Code == "" || e.Message == "" || e.MoveIndex != -1 {
					t.Fatalf("%q: error %#v has no code or message", s, err)
				}
				continue
			}
			tok := p.Token()
			q, err := ParsePosition(tok)
			if err != nil || *q != *p || q.Token() != tok {
				t.Fatalf("%q printed %q, which reads back as %v, %v", s, tok, q, err)
			}
			r, err := ParseOFEN(p.OFEN())
			if err != nil || r.Key() != p.Key() {
				t.Fatalf("%q: ofen %q reads back as %v, %v", s, p.OFEN(), r, err)
			}
			if p.Validate() == nil {
				legal := p.LegalMoves()
				for m := Move(0); m <= Pass; m++ {
					if p.IsLegal(m) != slices.Contains(legal, m) {
						t.Fatalf("%s: IsLegal(%s) disagrees with the generator", tok, m)
					}
				}
			}
		}
	})
}

// FuzzMoveList: Load never panics on any position and move list; a refused
// move names its index, and a list accepted up to a refused move leaves a
// valid position.
func FuzzMoveList(f *testing.F) {
	addSeeds(f, func(pos, moves string) { f.Add(pos, moves) })
	f.Fuzz(func(t *testing.T, pos, moves string) {
		ms := strings.Fields(moves)
		p, errs := Load(pos, ms)
		for _, e := range errs {
			if e.Code == "" || e.Message == "" || e.MoveIndex >= len(ms) {
				t.Fatalf("Load(%q, %q): bad error %+v", pos, moves, e)
			}
		}
		if p != nil && (errs == nil || errs[0].MoveIndex >= 0) {
			if v := p.Validate(); v != nil {
				t.Fatalf("Load(%q, %q) reached a position that breaks the rules: %v", pos, moves, Errors(v))
			}
			if q, err := ParsePosition(p.Token()); err != nil || *q != *p {
				t.Fatalf("Load(%q, %q) reached %s, which reads back as %v, %v", pos, moves, p.Token(), q, err)
			}
		}
	})
}

// FuzzTranscript: reading a transcript never panics; what it reads writes
// back as a transcript that reads to the same moves (but for trailing
// passes), and the moves are legal.
func FuzzTranscript(f *testing.F) {
	for _, r := range rulestest.ReadTSV(f, "transcripts.tsv") {
		f.Add(r[0])
	}
	f.Add("f5d6c3d3c4")
	f.Add("F5 d6\tc3")
	f.Add("f5f5")
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := ParseTranscript(nil, s)
		if err != nil {
			e, ok := err.(*Error)
			if !ok || e.Code == "" || e.MoveIndex < 0 || e.MoveIndex > len(s)/2 {
				t.Fatalf("ParseTranscript(%q): bad error %#v", s, err)
			}
			return
		}
		p := Startpos()
		for _, m := range ms {
			if err := p.Play(m); err != nil {
				t.Fatalf("ParseTranscript(%q) gave an illegal move: %v", s, err)
			}
		}
		out := Transcript(ms)
		back, err := ParseTranscript(nil, out)
		if err != nil {
			t.Fatalf("Transcript wrote %q, which does not read: %v", out, err)
		}
		for len(ms) > 0 && ms[len(ms)-1] == Pass {
			ms = ms[:len(ms)-1]
		}
		if !slices.Equal(back, ms) {
			t.Fatalf("%q: round trip gave %v, want %v", s, back, ms)
		}
	})
}

// FuzzPlayout plays a random walk from a corpus position, steered by the
// fuzz bytes: each byte pair plays a generated move or tries an arbitrary
// one, and the generator, IsLegal and Play must agree.
func FuzzPlayout(f *testing.F) {
	var starts []string
	addSeeds(f, func(pos, _ string) {
		if _, errs := Load(pos, nil); errs == nil {
			starts = append(starts, pos)
		}
	})
	for i := range starts {
		f.Add(uint16(i), []byte{0, 1, 2, 3, 200, 17, 90, 4})
	}
	f.Fuzz(func(t *testing.T, which uint16, steps []byte) {
		p := mustLoad(t, starts[int(which)%len(starts)])
		for i := 0; i+1 < len(steps); i += 2 {
			legal := p.LegalMoves()
			if steps[i]&1 == 1 {
				m := Move(steps[i+1] % 65)
				q := *p
				err := q.Play(m)
				if in := slices.Contains(legal, m); (err == nil) != in || p.IsLegal(m) != in {
					t.Fatalf("%s: %s: Play says %v, generator %v", p.Token(), m, err, in)
				}
				continue
			}
			if len(legal) == 0 {
				return
			}
			if err := p.Play(legal[int(steps[i+1])%len(legal)]); err != nil {
				t.Fatal(err)
			}
			if v := p.Validate(); v != nil {
				t.Fatalf("%s: %v", p.Token(), Errors(v))
			}
		}
	})
}
