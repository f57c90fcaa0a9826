package shogi

import (
	"slices"
	"strings"
	"testing"
)

func TestSFENCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{"startpos", StartSFEN},
		{StartSFEN, StartSFEN},
		{"lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b -", StartSFEN},
		{"  lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL \t b  -  1 ", StartSFEN},
		// Hands in any order come out as R B G S N L P, Black first.
		{"4k4/9/9/9/9/9/9/9/4K4 b 2p3PbRgGsSnNlL2B 7", "4k4/9/9/9/9/9/9/9/4K4 b R2BGSNL3Pbgsnl2p 7"},
		{"4k4/9/9/9/9/9/9/9/4K4 w 18p 3", "4k4/9/9/9/9/9/9/9/4K4 w 18p 3"},
		{"4k4/9/9/9/9/9/9/9/4K4 w pppp 3", "4k4/9/9/9/9/9/9/9/4K4 w 4p 3"},
		{"4k4/9/9/9/9/9/9/9/4K4 b 1P1p 1", "4k4/9/9/9/9/9/9/9/4K4 b Pp 1"},
		// Runs of empty squares may be split; they are merged.
		{"4k22/9/9/9/9/9/9/9/4K4 b - 1", "4k4/9/9/9/9/9/9/9/4K4 b - 1"},
		{"8l/1l+R2P3/p2pBG1pp/kps1p4/Nn1P2G2/P1P1P2PP/1PS6/1KSG3+r1/LN2+p3L w Sbgn3p 124",
			"8l/1l+R2P3/p2pBG1pp/kps1p4/Nn1P2G2/P1P1P2PP/1PS6/1KSG3+r1/LN2+p3L w Sbgn3p 124"},
	}
	for _, tt := range tests {
		p, err := ParseSFEN(tt.in)
		if err != nil {
			t.Errorf("ParseSFEN(%q): %v", tt.in, err)
			continue
		}
		if got := p.SFEN(); got != tt.want {
			t.Errorf("ParseSFEN(%q).SFEN()\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
}

func TestSFENSyntaxErrors(t *testing.T) {
	const board = "4k4/9/9/9/9/9/9/9/4K4"
	tests := []struct {
		in   string
		want Code
	}{
		{"", CodeSFENFields},
		{"start", CodeSFENFields},
		{board + " b", CodeSFENFields},
		{board + " b - 1 extra", CodeSFENFields},
		{"4k4/9/9/9/9/9/9/4K4 b - 1", CodeSFENRanks},
		{"4k4/9/9/9/9/9/9/9/4K4/9 b - 1", CodeSFENRanks},
		{"4k4/9/9/9/9/9/9/9/4K4/ b - 1", CodeSFENRanks},
		{"4k5/9/9/9/9/9/9/9/4K4 b - 1", CodeSFENRankWidth},
		{"4k3/9/9/9/9/9/9/9/4K4 b - 1", CodeSFENRankWidth},
		{"4k4/9/9/9/9/9/9/9/4K4P b - 1", CodeSFENRankWidth},
		{"4k4/9/9/9/9/0/9/9/4K4 b - 1", CodeSFENPiece},
		{"4x4/9/9/9/9/9/9/9/4K4 b - 1", CodeSFENPiece},
		{"4k4/9/9/9/9/9/9/9/4K3\x00 b - 1", CodeSFENPiece},
		{"4k4/9/9/9/9/9/9/9/3+GK4 b - 1", CodeSFENPromotion},
		{"4k4/9/9/9/9/9/9/9/3+kK4 b - 1", CodeSFENPromotion},
		{"4k4/9/9/9/9/9/9/9/3++PK4 b - 1", CodeSFENPromotion},
		{"4k4/9/9/9/9/9/9/9/3+1K4 b - 1", CodeSFENPromotion},
		{"4k4/9/9/9/9/9/9/9/4K3+ b - 1", CodeSFENPromotion},
		{board + " x - 1", CodeSFENSide},
		{board + " B - 1", CodeSFENSide},
		{board + " b -- 1", CodeSFENHand},
		{board + " b 0P 1", CodeSFENHand},
		{board + " b 2 1", CodeSFENHand},
		{board + " b 100P 1", CodeSFENHand},
		{board + " b +P 1", CodeSFENHand},
		{board + " b X 1", CodeSFENHand},
		{board + " b 90P90P 1", CodeSFENHand},
		{board + " b - 0", CodeSFENMoveNumber},
		{board + " b - -3", CodeSFENMoveNumber},
		{board + " b - +3", CodeSFENMoveNumber},
		{board + " b - 1.5", CodeSFENMoveNumber},
		{board + " b - 99999999999999999999", CodeSFENMoveNumber},
	}
	for _, tt := range tests {
		_, err := ParseSFEN(tt.in)
		e, ok := err.(*Error)
		if !ok || e.Code != tt.want {
			t.Errorf("ParseSFEN(%q) = %v, want code %s", tt.in, err, tt.want)
			continue
		}
		if e.Message == "" || e.MoveIndex != -1 {
			t.Errorf("ParseSFEN(%q): error %+v lacks a message or has a move index", tt.in, e)
		}
	}
}

func TestValidateRules(t *testing.T) {
	tests := []struct {
		sfen string
		want []Code // nil: legal
	}{
		{"4k4/9/9/9/9/9/9/9/9 b 2r2b4g4s4n4l18p 1", nil}, // tsume: one king is enough
		{"9/9/9/9/9/k8/9/9/1R2K4 b Gr2b3g4s4n4l18p 1", nil},
		{"9/9/9/9/9/9/9/9/9 b - 1", []Code{CodeNoKing}},
		{"4k4/9/9/9/9/9/9/9/3KK4 b - 1", []Code{CodeTwoKings}},
		{"4k4/9/9/9/9/9/9/9/4K4 b k 1", []Code{CodeKingInHand}},
		{"4k4/9/9/9/9/9/9/9/4K4 b 3B 1", []Code{CodeTooManyPieces}},
		{"4k4/9/9/9/9/9/9/9/4K4 b 19P 1", []Code{CodeTooManyPieces}},
		{"4k4/9/9/9/4P4/4P4/9/9/4K4 b - 1", []Code{CodeNifu}},
		{"4k4/9/9/9/4+P4/4P4/9/9/4K4 b - 1", nil}, // a tokin is no pawn for nifu
		{"4k4/9/9/9/4p4/4P4/9/9/4K4 b - 1", nil},
		{"P3k4/9/9/9/9/9/9/9/4K4 b - 1", []Code{CodeDeadPiece}},
		{"4k4/N8/9/9/9/9/9/9/4K4 b - 1", []Code{CodeDeadPiece}},
		{"4k4/9/9/9/9/9/9/n8/4K4 b - 1", []Code{CodeDeadPiece}},
		{"4k4/9/9/9/9/9/9/9/l3K4 b - 1", []Code{CodeDeadPiece}},
		{"4k4/9/9/9/9/9/9/9/L3K4 b - 1", nil},
		{"4k4/9/9/9/9/9/9/9/4K4 b - 1", nil},
		{"4k4/9/9/9/9/9/9/9/4r3K b - 1", nil}, // Black is in check and to move: fine
		{"4k4/9/9/9/9/9/9/9/4r3K w - 1", []Code{CodeOpponentInCheck}},
		{"4k4/9/9/9/4R4/9/9/9/8K b - 1", []Code{CodeOpponentInCheck}},
		{"4k4/9/9/9/4r4/9/9/9/4K4 w - 1", []Code{CodeOpponentInCheck}},
		{"PPP1k4/9/9/9/9/9/9/9/4KK3 b 2G 1", []Code{CodeDeadPiece, CodeDeadPiece, CodeDeadPiece, CodeTwoKings}},
	}
	for _, tt := range tests {
		p := mustParse(t, tt.sfen)
		got := codes(p.Validate())
		if !slices.Equal(got, tt.want) {
			t.Errorf("Validate(%q) = %v, want %v", tt.sfen, got, tt.want)
		}
	}
}

func TestParseMove(t *testing.T) {
	good := []struct {
		in   string
		want Move
	}{
		{"7g7f", Move{From: NewSquare(7, 7), To: NewSquare(7, 6)}},
		{"8h2b+", Move{From: NewSquare(8, 8), To: NewSquare(2, 2), Promote: true}},
		{"P*5e", Move{From: NoSquare, To: NewSquare(5, 5), Drop: Pawn}},
		{"R*1a", Move{From: NoSquare, To: NewSquare(1, 1), Drop: Rook}},
		{"9a1i", Move{From: NewSquare(9, 1), To: NewSquare(1, 9)}},
	}
	for _, tt := range good {
		got, err := ParseMove(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseMove(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			continue
		}
		if s := got.String(); s != tt.in {
			t.Errorf("ParseMove(%q).String() = %q", tt.in, s)
		}
	}
	for _, in := range []string{"", "7g", "7g7", "7g7f=", "7g7f++", "0a1a", "7j7f", "7g7g", "K*5e", "p*5e", "P*0e", "P*5e+", "+P*5e", "7G7F", "7g7f\n", " 7g7f", "resign"} {
		if m, err := ParseMove(in); err == nil {
			t.Errorf("ParseMove(%q) = %v, want an error", in, m)
		} else if err.(*Error).Code != CodeMoveSyntax {
			t.Errorf("ParseMove(%q): code %s, want %s", in, err.(*Error).Code, CodeMoveSyntax)
		}
	}
}

func TestCheckMove(t *testing.T) {
	const (
		uchi  = "8k/6S2/8G/9/9/9/9/9/4K4 b P 1" // P*1b mates: illegal; P*5e stalemates: legal
		pin   = "4k4/9/9/9/4r4/9/9/4S4/4K4 b - 1"
		check = "4k4/9/9/9/4r4/9/9/9/4K4 b G 1"
	)
	tests := []struct {
		sfen, move string
		want       Code // "" for legal
	}{
		{"startpos", "7g7f", ""},
		{"startpos", "7g7f+", CodePromotionZone},
		{"startpos", "7g7e", CodeUnreachable},
		{"startpos", "5e5d", CodeEmptySource},
		{"startpos", "3c3d", CodeOpponentPiece},
		{"startpos", "5i4i", CodeCaptureOwn},
		{"startpos", "8h7g", CodeCaptureOwn},
		{"startpos", "8h6f", CodeUnreachable}, // blocked by the pawn on 7g
		{"startpos", "2h2a", CodeUnreachable},
		{"startpos", "P*5e", CodeDropNotInHand},
		{"startpos", "5i5h+", CodePromotionNotAllowed},
		{"startpos", "bad", CodeMoveSyntax},
		{uchi, "P*1b", CodeUchifuzume},
		{uchi, "P*5e", ""},
		{"kg7/9/1G7/9/9/9/9/9/9 b P 1", "P*9b", ""}, // the gold can take the pawn
		{"kn7/9/1G7/9/9/9/9/9/9 b P 1", "P*9b", CodeUchifuzume},
		{"k8/9/1S7/9/9/9/9/9/9 b P 1", "P*9b", ""}, // the king escapes to 8a
		{"4k4/9/9/9/9/9/9/9/4K4 b P 1", "P*4a", CodeDropDead},
		{"4k4/9/9/9/9/9/9/9/4K4 b N 1", "N*5b", CodeDropDead},
		{"4k4/9/9/9/9/9/9/9/4K4 b N 1", "N*5c", ""},
		{"4k4/9/9/9/9/9/9/9/4K4 w n 1", "N*5h", CodeDropDead},
		{"4k4/9/9/9/9/9/9/9/4K4 w l 1", "L*4i", CodeDropDead},
		{"4k4/9/9/9/9/9/9/9/4K4 b P 1", "P*5i", CodeDropOccupied},
		{"4k4/9/9/9/9/4P4/9/9/4K4 b P 1", "P*5d", CodeDropNifu},
		{"4k4/9/9/9/9/4+P4/9/9/4K4 b P 1", "P*5d", ""},
		{"4k4/P8/9/9/9/9/9/9/4K4 b - 1", "9b9a", CodePromotionRequired},
		{"4k4/P8/9/9/9/9/9/9/4K4 b - 1", "9b9a+", ""},
		{"4k4/9/N8/9/9/9/9/9/4K4 b - 1", "9c8a", CodePromotionRequired},
		{"4k4/9/9/N8/9/9/9/9/4K4 b - 1", "9d8b", CodePromotionRequired},
		{"4k4/9/9/9/N8/9/9/9/4K4 b - 1", "9e8c", ""}, // optional in the zone
		{"4k4/9/9/9/N8/9/9/9/4K4 b - 1", "9e8c+", ""},
		{"4k4/9/9/9/9/9/9/9/L3K4 b - 1", "9i9b", ""},
		{"4k4/9/9/9/9/9/9/9/L3K4 b - 1", "9i9a", CodePromotionRequired},
		{"4k4/1S7/9/9/9/9/9/9/4K4 b - 1", "8b8e+", CodeUnreachable},
		{"4k4/1S7/9/9/9/9/9/9/4K4 b - 1", "8b7c+", ""}, // leaving the zone may promote
		{"4k4/9/9/1S7/9/9/9/9/4K4 b - 1", "8d8c+", ""}, // entering it too
		{"4k4/9/9/9/9/9/9/9/4K+B3 b - 1", "4i3h+", CodePromotionNotAllowed},
		{"4k4/9/9/9/9/9/9/9/4K+B3 b - 1", "4i4h", ""}, // a horse steps orthogonally
		{"4k4/9/9/9/9/9/9/9/4K+B3 b - 1", "4i9d", ""},
		{"4k4/9/9/9/9/9/9/G8/4K4 b - 1", "9h8i", CodeUnreachable}, // gold: no backward diagonal
		{pin, "5h4g", CodeSelfCheck},
		{pin, "5h5g", ""},
		{check, "5i5h", CodeSelfCheck}, // along the rook's line, behind the king
		{check, "5i4h", ""},
		{check, "G*5f", ""},
		{check, "G*4f", CodeSelfCheck},
		{"4k4/9/9/9/4r4/9/9/3+b5/4K4 b - 1", "5i5h", CodeSelfCheck}, // double check...
		{"4k4/9/9/9/4r4/9/9/3+b5/4K4 b - 1", "5i6h", ""},            // ...the king captures the horse
		{"4k4/9/9/9/4r4/9/9/3+b5/4K4 b G 1", "G*5h", CodeSelfCheck},
	}
	for _, tt := range tests {
		p, errs := Load(tt.sfen, nil)
		if errs != nil {
			t.Fatalf("Load(%q): %v", tt.sfen, Errors(errs))
		}
		before := p.SFEN()
		m, err := p.CheckMove(tt.move)
		var got Code
		if err != nil {
			got = err.(*Error).Code
		}
		if got != tt.want {
			t.Errorf("%s: CheckMove(%q) = %v, want code %q", tt.sfen, tt.move, err, tt.want)
		}
		if p.SFEN() != before {
			t.Errorf("%s: CheckMove(%q) changed the position", tt.sfen, tt.move)
		}
		if err == nil {
			if !slices.Contains(p.LegalMoves(), m) {
				t.Errorf("%s: %s is legal but LegalMoves omits it", tt.sfen, tt.move)
			}
		} else if m2, perr := ParseMove(tt.move); perr == nil && slices.Contains(p.LegalMoves(), m2) {
			t.Errorf("%s: %s is refused but LegalMoves lists it", tt.sfen, tt.move)
		}
	}
}

func TestLoadMoveIndex(t *testing.T) {
	p, errs := Load("startpos", []string{"7g7f", "3c3d", "8h2b+", "3a2b", "B*4e", "gibberish"})
	if len(errs) != 1 || errs[0].Code != CodeMoveSyntax || errs[0].MoveIndex != 5 {
		t.Fatalf("got errors %v, want one move_syntax at index 5", Errors(errs))
	}
	want := "lnsgkg1nl/1r5s1/pppppp1pp/6p2/5B3/2P6/PP1PPPPPP/7R1/LNSGKGSNL w b 6"
	if got := p.SFEN(); got != want {
		t.Errorf("position before the bad move\n got %s\nwant %s", got, want)
	}
	if !strings.Contains(errs[0].Error(), "move 5") {
		t.Errorf("Error() = %q, want it to name move 5", errs[0].Error())
	}
}

func TestQueries(t *testing.T) {
	mate, errs := Load("4k4/9/4P4/9/9/9/9/9/4K4 b G 1", []string{"G*5b"})
	if errs != nil {
		t.Fatal(Errors(errs))
	}
	if !mate.InCheck() || !mate.IsCheckmate() || len(mate.LegalMoves()) != 0 {
		t.Errorf("after the mate line: in check %v, checkmate %v, moves %v", mate.InCheck(), mate.IsCheckmate(), mate.LegalMoves())
	}
	stale, _ := Load("8k/6S2/8G/9/9/9/9/9/4K4 b P 1", []string{"P*5e"})
	if stale.InCheck() || stale.IsCheckmate() || len(stale.LegalMoves()) != 0 {
		t.Errorf("stalemate: in check %v, checkmate %v, moves %v", stale.InCheck(), stale.IsCheckmate(), stale.LegalMoves())
	}
	start := Startpos()
	if start.InCheck() || start.IsCheckmate() || len(start.LegalMoves()) != 30 {
		t.Errorf("startpos: in check %v, checkmate %v, %d moves", start.InCheck(), start.IsCheckmate(), len(start.LegalMoves()))
	}
}

func TestParsePositionCommand(t *testing.T) {
	tests := []struct {
		in, sfen string
		moves    []string
		err      Code
	}{
		{"startpos", "startpos", nil, ""},
		{"position startpos moves 7g7f 3c3d", "startpos", []string{"7g7f", "3c3d"}, ""},
		{"sfen 4k4/9/9/9/9/9/9/9/4K4 b - 1 moves 5i5h", "4k4/9/9/9/9/9/9/9/4K4 b - 1", []string{"5i5h"}, ""},
		{"sfen 4k4/9/9/9/9/9/9/9/4K4 b -", "4k4/9/9/9/9/9/9/9/4K4 b -", nil, ""},
		{"startpos moves", "startpos", []string{}, ""},
		{"", "", nil, CodePositionSyntax},
		{"fen 4k4", "", nil, CodePositionSyntax},
		{"startpos 7g7f", "", nil, CodePositionSyntax},
		{"sfen 4k4/9/9/9/9/9/9/9/4K4 b moves 7g7f", "", nil, CodeSFENFields},
	}
	for _, tt := range tests {
		sfen, moves, err := ParsePositionCommand(tt.in)
		var code Code
		if err != nil {
			code = err.(*Error).Code
		}
		if code != tt.err || sfen != tt.sfen || !slices.Equal(moves, tt.moves) {
			t.Errorf("ParsePositionCommand(%q) = %q, %q, %v; want %q, %q, %s", tt.in, sfen, moves, err, tt.sfen, tt.moves, tt.err)
		}
	}
}
