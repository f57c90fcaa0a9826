package shogi

import (
	"strings"
	"testing"
	"time"
)

// TestProveMateLine: the false mates of issue 16 are refused, with the move
// at fault; true tsume lines are proved.
func TestProveMateLine(t *testing.T) {
	tests := []struct {
		name, sfen, line string
		at               int // MoveIndex of the refusal, or -1 for a proof
		why              string
	}{
		// The line ends with the defender's move, which mates the attacker.
		{"defender mates", "r8/9/9/9/k8/9/9/1P7/KL7 b Sr2b4g3s4n3l17p 1", "S*8f 9e8f", 1, "ends with the defender's move"},
		// 5a6a: the king could take the rook (5a5b) and escape.
		{"defender had an escape", "4k4/9/9/9/9/9/9/9/4K4 b RGr1b2g4s4n4l18p 1", "R*5b 5a6a G*6b", 1, "5a5b"},
		{"trailing junk", "4k4/9/9/9/9/9/9/9/4K4 b RGr1b2g4s4n4l18p 1", "R*5b 5a6a G*6b resign", 3, ""},
		{"not check", "4k4/9/9/9/9/9/9/9/4K4 b RGr1b2g4s4n4l18p 1", "G*1b", 0, "does not give check"},
		// Alternatives mated as fast as the line: still correct; a wrong
		// defender choice that shortens the mate is not an escape.
		{"defender takes a worse reply", "8k/9/9/9/9/9/9/9/4K4 b RB 1", "B*3c 1a1b R*2b 1b1c 2b2d+ 1c1b 3c2b+", -1, ""},
		{"stops short", "4k4/9/9/9/9/9/9/9/4K4 b G2r2b3g4s4n4l17p 1", "G*5b", 0, "without checkmate"},
		{"empty", "4k4/9/9/9/9/9/9/9/4K4 b G 1", "", -2, "empty"},
		// Head-on gold mate, with the pawn on 5c guarding it: a proof.
		{"mate in 1", "4k4/9/4P4/9/9/9/9/9/4K4 b G2r2b3g4s4n4l17p 1", "G*5b", -1, ""},
		// gpsusi's answers.
		{"gpsusi mate in 3", "7nl/5+Rsk1/6ppp/9/9/9/9/9/4K4 b BGrb3g3s3n3l15p 1", "B*3a 2b1b G*2b", -1, ""},
		{"mate in 5", "9/9/9/9/9/k8/9/9/1R2K4 b Gr2b3g4s4n4l18p 1", "G*8f 9f9g 8f8g 9g9h 8g8h", -1, ""},
	}
	for _, tt := range tests {
		p, err := ParseSFEN(tt.sfen)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var moves []string
		if tt.line != "" {
			moves = strings.Fields(tt.line)
		}
		start := time.Now()
		proof, err := p.VerifyMateLine(moves)
		took := time.Since(start)
		if tt.at == -1 {
			if err != nil || proof != MateForced {
				t.Errorf("%s: %v %v, want a forced mate", tt.name, proof, err)
			}
			t.Logf("%s: %s in %v", tt.name, proof, took)
			continue
		}
		e, ok := err.(*Error)
		if !ok {
			t.Errorf("%s: %v %v, want refused", tt.name, proof, err)
			continue
		}
		if (tt.at >= 0 && e.MoveIndex != tt.at) || !strings.Contains(e.Message, tt.why) {
			t.Errorf("%s: %v (move %d), want move %d, %q", tt.name, e, e.MoveIndex, tt.at, tt.why)
		}
	}
}

// TestMateBudget: with a tiny budget a correct line is only checked (line),
// never refused and never called forced.
func TestMateBudget(t *testing.T) {
	p, _ := ParseSFEN("8k/9/9/9/9/9/9/9/4K4 b RB 1")
	proof, err := p.ProveMateLine(strings.Fields("B*3c 1a1b R*2b 1b1c 2b2d+ 1c1b 3c2b+"), 1)
	if err != nil || proof != MateLineOnly {
		t.Errorf("budget 1: %v %v, want %q", proof, err, MateLineOnly)
	}
}
