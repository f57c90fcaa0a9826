package shogi

import (
	"slices"
	"strings"
	"testing"

	"github.com/usid/usid/internal/rules/rulestest"
)

// addSeeds seeds a fuzz target with every SFEN of testdata/.
func addSeeds(f *testing.F, add func(sfen, moves string)) {
	for _, r := range rulestest.ReadTSV(f, "positions.tsv") {
		add(r[2], r[3])
	}
	for _, name := range []string{"perft-published.tsv", "perft-random.tsv"} {
		for _, r := range rulestest.ReadTSV(f, name) {
			add(r[0], "")
		}
	}
	for _, r := range rulestest.ReadTSV(f, "games.tsv") {
		add("startpos", r[0])
		add(r[1], "")
	}
}

// FuzzSFEN: parsing never panics, errors carry a code, and printing a parsed
// position gives canonical SFEN that parses back to the same position.
func FuzzSFEN(f *testing.F) {
	addSeeds(f, func(sfen, _ string) { f.Add(sfen) })
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseSFEN(s)
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Code == "" || e.Message == "" {
				t.Fatalf("ParseSFEN(%q): error %#v has no code or message", s, err)
			}
			return
		}
		out := p.SFEN()
		q, err := ParseSFEN(out)
		if err != nil {
			t.Fatalf("ParseSFEN(%q) printed %q, which does not parse: %v", s, out, err)
		}
		if *q != *p {
			t.Fatalf("round trip of %q changed the position: %q", s, q.SFEN())
		}
		if q.SFEN() != out {
			t.Fatalf("printing is not canonical: %q then %q", out, q.SFEN())
		}
		if p.Validate() == nil {
			for _, m := range p.LegalMoves() {
				if !p.IsLegal(m) {
					t.Fatalf("%s: generated %s is not legal", out, m)
				}
			}
		}
	})
}

// FuzzMoveList: Load never panics on any SFEN and move list; a refused move
// names its index, and accepted moves always lead to a legal position.
func FuzzMoveList(f *testing.F) {
	addSeeds(f, func(sfen, moves string) { f.Add(sfen, moves) })
	f.Fuzz(func(t *testing.T, sfen, moves string) {
		ms := strings.Fields(moves)
		p, errs := Load(sfen, ms)
		for _, e := range errs {
			if e.Code == "" || e.Message == "" || e.MoveIndex >= len(ms) {
				t.Fatalf("Load(%q, %q): bad error %+v", sfen, moves, e)
			}
		}
		if p == nil {
			return
		}
		if len(errs) == 1 && errs[0].MoveIndex >= 0 || errs == nil {
			if v := p.Validate(); v != nil {
				t.Fatalf("Load(%q, %q) reached a position that breaks the rules: %v", sfen, moves, Errors(v))
			}
		}
	})
}

// FuzzPlayout plays a random walk from a seed position, steered by the fuzz
// bytes: each byte pair either plays a generated move or tries an arbitrary
// move shape, and the generator and the checker must agree on it.
func FuzzPlayout(f *testing.F) {
	var sfens []string
	addSeeds(f, func(sfen, _ string) {
		if _, errs := Load(sfen, nil); errs == nil {
			sfens = append(sfens, sfen)
		}
	})
	for i := range sfens {
		f.Add(uint16(i), []byte{0, 1, 2, 3, 200, 17, 90, 4})
	}
	f.Fuzz(func(t *testing.T, which uint16, steps []byte) {
		p, errs := Load(sfens[int(which)%len(sfens)], nil)
		if errs != nil {
			t.Fatal(Errors(errs))
		}
		for i := 0; i+1 < len(steps); i += 2 {
			legal := p.LegalMoves()
			if steps[i]&1 == 1 {
				m := arbitraryMove(steps[i], steps[i+1])
				if got, want := p.IsLegal(m), slices.Contains(legal, m); got != want {
					t.Fatalf("%s: IsLegal(%s) = %v, generator says %v", p.SFEN(), m, got, want)
				}
				continue
			}
			if len(legal) == 0 {
				return
			}
			m := legal[int(steps[i+1])%len(legal)]
			if err := p.Play(m); err != nil {
				t.Fatalf("%s: generated %s refused: %v", p.SFEN(), m, err)
			}
			if v := p.Validate(); v != nil {
				t.Fatalf("%s after %s: %v", p.SFEN(), m, Errors(v))
			}
		}
	})
}

func arbitraryMove(a, b byte) Move {
	to := Square(b % 81)
	if a&2 != 0 {
		return Move{From: NoSquare, To: to, Drop: Kind(a>>2)%7 + Pawn}
	}
	return Move{From: Square((a >> 2) % 81), To: to, Promote: b >= 162}
}
