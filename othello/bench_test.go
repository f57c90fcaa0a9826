package othello

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkLegalMoves lists the moves of a mid-game position with many.
func BenchmarkLegalMoves(b *testing.B) {
	p := mustLoad(b, "------------------X-------XXX-----OXOO-----XX------X------------W8")
	var buf [MaxMoves]Move
	for b.Loop() {
		if n := len(p.appendLegal(buf[:0])); n != 7 {
			b.Fatalf("%d moves, want 7", n)
		}
	}
}

// BenchmarkValidateToken is one full validation of a token: syntax and rules.
func BenchmarkValidateToken(b *testing.B) {
	const tok = "-X--OX----XOOO-XOOOXOXOXOOOXXXOOXXOOOXO--XOOOOXXXXXXOXOXO-XO-OOOB49"
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := Load(tok, nil); errs != nil {
			b.Fatal(Errors(errs))
		}
	}
}

// BenchmarkValidateGame loads a whole random game from the start, move by move.
func BenchmarkValidateGame(b *testing.B) {
	moves := randomGame(1)
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := Load("startpos", moves); errs != nil {
			b.Fatal(Errors(errs))
		}
	}
}

// BenchmarkTranscript reads a whole game's transcript, passes put back.
func BenchmarkTranscript(b *testing.B) {
	p := Startpos()
	var ms []Move
	for _, s := range randomGame(1) {
		m, _ := p.CheckMove(s)
		p.do(m)
		ms = append(ms, m)
	}
	text := Transcript(ms)
	for b.Loop() {
		if _, err := ParseTranscript(nil, text); err != nil {
			b.Fatal(err)
		}
	}
}

// randomGame returns a reproducible random game to its end, passes included.
func randomGame(seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 0))
	p := Startpos()
	var moves []string
	for {
		ms := p.LegalMoves()
		if len(ms) == 0 {
			return moves
		}
		m := ms[rng.IntN(len(ms))]
		p.do(m)
		moves = append(moves, m.String())
	}
}
