package shogi

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkValidateSFEN is one full validation of a mid-game SFEN: syntax,
// rules, and the check test of the side not to move.
func BenchmarkValidateSFEN(b *testing.B) {
	const sfen = "1n1nk2n1/l1s6/p1p1p1sgl/1r1g2ppp/P2p2P1L/2P1PpgP1/LS1P5/3KG+r+b2/BN6S w P3p 86"
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := Load(sfen, nil); errs != nil {
			b.Fatal(Errors(errs))
		}
	}
}

// BenchmarkValidateGame150 validates a 150-move game from the start position.
func BenchmarkValidateGame150(b *testing.B) {
	moves := randomGame(b, 150)
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := Load("startpos", moves); errs != nil {
			b.Fatal(Errors(errs))
		}
	}
}

func BenchmarkLegalMoves(b *testing.B) {
	p := mustParse(b, "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w GR5pnsg 1")
	var buf [MaxMoves]Move
	for b.Loop() {
		if n := len(p.appendLegal(buf[:0])); n != 207 {
			b.Fatalf("%d moves, want 207", n)
		}
	}
}

// randomGame returns a reproducible random game of n legal moves.
func randomGame(tb testing.TB, n int) []string {
	for seed := uint64(1); ; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0))
		p := Startpos()
		var moves []string
		for len(moves) < n {
			ms := p.LegalMoves()
			if len(ms) == 0 {
				break
			}
			m := ms[rng.IntN(len(ms))]
			p.do(m)
			moves = append(moves, m.String())
		}
		if len(moves) == n {
			return moves
		}
		if seed > 100 {
			tb.Fatal("no random game lasted long enough")
		}
	}
}
