package chess

import "testing"

func TestSAN(t *testing.T) {
	cases := []struct {
		fen  string
		v    Variant
		uci  string
		want string
	}{
		{StartFEN, Standard, "e2e4", "e4"},
		{StartFEN, Standard, "g1f3", "Nf3"},
		{"r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", Standard, "e1g1", "O-O"},
		{"r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", Standard, "e1c1", "O-O-O"},
		{"r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", Chess960, "e1h1", "O-O"},
		{"rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3", Standard, "e5f6", "exf6"},
		{"4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", Standard, "b7b8q", "b8=Q+"},
		{"2r1k3/1P6/8/8/8/8/8/4K3 w - - 0 1", Standard, "b7c8n", "bxc8=N"},
		{"4k3/8/8/8/8/8/4K3/R6R w - - 0 1", Standard, "a1d1", "Rad1"},
		{"4k3/8/8/8/8/8/4K3/R6R w - - 0 1", Standard, "h1f1", "Rhf1"},
		{"4k3/8/8/8/8/8/8/R3K2R w - - 0 1", Standard, "a1d1", "Rd1"},
		{"4k3/8/8/8/8/R7/8/R3K3 w - - 0 1", Standard, "a3a2", "R3a2"},
		{"7k/2N5/8/8/8/2N1N3/8/4K3 w - - 0 1", Standard, "c3d5", "Nc3d5"},
		{"7k/2N5/8/8/8/2N1N3/8/4K3 w - - 0 1", Standard, "e3d5", "Ned5"},
		{"7k/2N5/8/8/8/2N1N3/8/4K3 w - - 0 1", Standard, "c7d5", "N7d5"},
		{"7k/8/6K1/8/8/8/8/R7 w - - 0 1", Standard, "a1a8", "Ra8#"},
		{"4k3/8/8/8/8/8/3q4/4K3 w - - 0 1", Standard, "e1d2", "Kxd2"},
		// A pinned knight does not count for disambiguation.
		{"4k3/4r3/8/8/8/2N5/4N3/4K3 w - - 0 1", Standard, "c3d5", "Nd5"},
	}
	for _, c := range cases {
		p := mustLoad(t, c.fen, c.v)
		m, err := p.CheckMove(c.uci)
		if err != nil {
			t.Fatalf("%s: %s: %v", c.fen, c.uci, err)
		}
		if got := p.SAN(m); got != c.want {
			t.Errorf("%s: SAN(%s) = %q, want %q", c.fen, c.uci, got, c.want)
		}
		if back, err := p.ParseSAN(c.want); err != nil || back != m {
			t.Errorf("%s: ParseSAN(%q) = %v, %v; want %s", c.fen, c.want, back, err, c.uci)
		}
	}
}

func TestParseSANErrors(t *testing.T) {
	cases := []struct {
		fen, san string
		code     Code
	}{
		{StartFEN, "e5", CodeSANIllegal},
		{StartFEN, "Nf4", CodeSANIllegal},
		{StartFEN, "O-O", CodeSANIllegal},
		{StartFEN, "Zf3", CodeSANSyntax},
		{StartFEN, "", CodeSANSyntax},
		{StartFEN, "e2e4", CodeSANSyntax},
		{StartFEN, "ed3", CodeSANSyntax},
		{StartFEN, "xd3", CodeSANSyntax},
		{StartFEN, "Nf3g5h1", CodeSANSyntax},
		{"4k3/8/8/8/8/2N1N3/8/4K3 w - - 0 1", "Nd5", CodeSANAmbiguous},
		{"4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b8", CodeSANIllegal},
		{"4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b8=K", CodeSANSyntax},
	}
	for _, c := range cases {
		p := mustLoad(t, c.fen, Standard)
		_, err := p.ParseSAN(c.san)
		if e, ok := err.(*Error); !ok || e.Code != c.code {
			t.Errorf("%s: ParseSAN(%q) = %v, want code %s", c.fen, c.san, err, c.code)
		}
	}
	// Lenient forms seen in PGN files: zeros for castling, no "=".
	p := mustLoad(t, "r3k2r/1P6/8/8/8/8/8/R3K2R w KQkq - 0 1", Standard)
	for _, s := range []string{"0-0", "0-0-0+", "b8Q", "bxa8Q+", "Kf1"} {
		if _, err := p.ParseSAN(s); err != nil {
			t.Errorf("ParseSAN(%q): %v", s, err)
		}
	}
}

// TestSANRoundTrip: every legal move's SAN is unique among the position's
// moves and parses back to the move.
func TestSANRoundTrip(t *testing.T) {
	for _, p := range randomPositions(t, 400, 4) {
		seen := map[string]Move{}
		for _, m := range p.LegalMoves() {
			s := p.SAN(m)
			if o, dup := seen[s]; dup {
				t.Fatalf("%s: %s and %s both write %q", p.FEN(), o, m, s)
			}
			seen[s] = m
			back, err := p.ParseSAN(s)
			if err != nil || back != m {
				t.Fatalf("%s: ParseSAN(%q) = %v, %v; want %s", p.FEN(), s, back, err, m)
			}
		}
	}
}
