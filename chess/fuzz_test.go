package chess

import (
	"strings"
	"testing"

	"github.com/usid/usid/internal/rules/rulestest"
)

// addSeeds seeds a fuzz target with every position of testdata/.
func addSeeds(f *testing.F, add func(fen, moves string)) {
	for _, r := range rulestest.ReadTSV(f, "fens.tsv") {
		fen, moves, _ := strings.Cut(r[2], " moves ")
		add(strings.TrimPrefix(fen, "fen "), moves)
	}
	for _, name := range []string{"perft.tsv", "perft-random.tsv"} {
		for _, r := range rulestest.ReadTSV(f, name) {
			add(r[1], "")
		}
	}
	add(StartFEN, "e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 e1g1")
}

// FuzzFEN: parsing never panics, errors carry a code and a message, and a
// parsed position prints as FEN that parses back to the same position and
// prints the same; a valid one's moves all lead to valid positions, each
// accepted by CheckMove and named by its SAN.
func FuzzFEN(f *testing.F) {
	addSeeds(f, func(fen, _ string) { f.Add(fen, false) })
	f.Fuzz(func(t *testing.T, s string, c960 bool) {
		v := Standard
		if c960 {
			v = Chess960
		}
		p, err := ParseFEN(s, v)
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Code == "" || e.Message == "" {
				t.Fatalf("ParseFEN(%q): error %#v has no code or message", s, err)
			}
			return
		}
		out := p.FEN()
		q, err := ParseFEN(out, v)
		if err != nil {
			t.Fatalf("ParseFEN(%q) printed %q, which does not parse: %v", s, out, err)
		}
		if *q != *p || q.FEN() != out {
			t.Fatalf("round trip of %q changed the position: %q then %q", s, out, q.FEN())
		}
		errs := p.Validate()
		for _, e := range errs {
			if e.Code == "" || e.Message == "" {
				t.Fatalf("%q: error without code or message", s)
			}
		}
		if errs != nil {
			return
		}
		for _, m := range p.LegalMoves() {
			if got, err := p.CheckMove(m.String()); err != nil || got != m {
				t.Fatalf("%s: CheckMove(%s) = %v, %v", out, m, got, err)
			}
			if got, err := p.ParseSAN(p.SAN(m)); err != nil || got != m {
				t.Fatalf("%s: ParseSAN(%s) = %v, %v", out, p.SAN(m), got, err)
			}
			q := *p
			q.Play(m)
			if e := q.Validate(); e != nil {
				t.Fatalf("%s then %s: %v", out, m, Errors(e))
			}
		}
	})
}

// FuzzLoad: Load never panics on any FEN and move list; a refused move
// names its index, and accepted moves always lead to a valid position.
func FuzzLoad(f *testing.F) {
	addSeeds(f, func(fen, moves string) { f.Add(fen, moves) })
	f.Fuzz(func(t *testing.T, fen, moves string) {
		ms := strings.Fields(moves)
		for _, v := range []Variant{Standard, Chess960} {
			p, errs := Load(fen, ms, v)
			for _, e := range errs {
				if e.Code == "" || e.Message == "" || e.MoveIndex >= len(ms) {
					t.Fatalf("Load(%q, %q): bad error %+v", fen, moves, e)
				}
			}
			if p != nil && (errs == nil || errs[0].MoveIndex >= 0) {
				if e := p.Validate(); e != nil {
					t.Fatalf("Load(%q, %q) reached a position that breaks the rules: %v", fen, moves, Errors(e))
				}
			}
		}
	})
}

// FuzzSAN: any string given to ParseSAN either names a legal move or is
// refused with a SAN code.
func FuzzSAN(f *testing.F) {
	for _, s := range []string{"e4", "Nf3", "exd5", "e8=Q", "O-O", "0-0-0", "Nbd7", "R1a3", "Qh4e1", "b8Q+", "Kxe2#"} {
		f.Add(s)
	}
	positions := []*Position{Startpos(), mustLoad(f, "r3k2r/1P6/8/8/8/2N1N3/8/R3K2R w KQkq - 0 1", Standard)}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range positions {
			m, err := p.ParseSAN(s)
			if err != nil {
				if e, ok := err.(*Error); !ok || (e.Code != CodeSANSyntax && e.Code != CodeSANIllegal && e.Code != CodeSANAmbiguous) {
					t.Fatalf("ParseSAN(%q): %v", s, err)
				}
				continue
			}
			if _, err := p.CheckMove(m.String()); err != nil {
				t.Fatalf("ParseSAN(%q) = %s, which is illegal: %v", s, m, err)
			}
		}
	})
}
