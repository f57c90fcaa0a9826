package shogi

import (
	"strings"
	"testing"

	"github.com/usid/usid/internal/rules/rulestest"
)

// labelCodes maps the hint labels of positions.tsv to the code usid gives.
var labelCodes = map[string]Code{
	"nifu": CodeNifu, "dead_piece": CodeDeadPiece, "too_many_pieces": CodeTooManyPieces,
	"king_in_hand": CodeKingInHand, "two_kings": CodeTwoKings,
	"syntax0": CodeSFENRanks, "syntax1": CodeSFENRanks, "syntax2": CodeSFENRankWidth,
	"syntax3": CodeSFENPromotion, "syntax4": CodeSFENSide, "syntax5": CodeSFENPiece,
	"syntax6":              CodeTooManyPieces, // a hand of 19 pawns
	"syntax7":              CodeSFENMoveNumber,
	"promote_outside_zone": CodePromotionZone, "drop_dead_lance": CodeDropDead,
	"drop_dead_knight": CodeDropDead, "uchifuzume": CodeUchifuzume, "nifu_drop": CodeDropNifu,
	"no_piece_in_hand": CodeDropNotInHand, "gold_promotes": CodePromotionNotAllowed,
	"not_a_move": CodeUnreachable, "leaves_king_in_check": CodeSelfCheck,
	"pawn_must_promote": CodePromotionRequired, "move_after_mate": CodeMoveSyntax,
	"empty_source": CodeEmptySource, "opponent_piece": CodeOpponentPiece,
}

func TestPositionsTSV(t *testing.T) {
	for i, r := range rulestest.ReadTSV(t, "positions.tsv") {
		if len(r) != 4 {
			t.Fatalf("row %d has %d columns, want 4", i+1, len(r))
		}
		verdict, label, sfen, moves := r[0], r[1], r[2], strings.Fields(r[3])
		_, errs := Load(sfen, moves)
		if got := errs == nil; got != (verdict == "legal") {
			t.Errorf("row %d (%s) %q %v: valid = %v, want %s (errors: %v)", i+1, label, sfen, moves, got, verdict, Errors(errs))
			continue
		}
		if verdict == "legal" {
			continue
		}
		want, ok := labelCodes[label]
		if !ok {
			t.Errorf("row %d: label %q has no expected code in labelCodes", i+1, label)
			continue
		}
		if !hasCode(errs, want) {
			t.Errorf("row %d (%s): codes %v, want %s", i+1, label, codes(errs), want)
		}
		if len(moves) > 0 && errs[0].Code != want {
			continue
		}
		for _, e := range errs {
			if e.Message == "" {
				t.Errorf("row %d: %s has no message", i+1, e.Code)
			}
		}
	}
}

func hasCode(errs []*Error, c Code) bool {
	for _, e := range errs {
		if e.Code == c {
			return true
		}
	}
	return false
}

func codes(errs []*Error) []Code {
	var cs []Code
	for _, e := range errs {
		cs = append(cs, e.Code)
	}
	return cs
}

func TestGamesTSV(t *testing.T) {
	for i, r := range rulestest.ReadTSV(t, "games.tsv") {
		moves := strings.Fields(r[0])
		p, errs := Load("startpos", moves)
		if errs != nil {
			t.Errorf("game %d: %v", i+1, Errors(errs))
			continue
		}
		if got, want := p.SFEN(), r[1]; got != want {
			t.Errorf("game %d: final SFEN\n got %s\nwant %s", i+1, got, want)
		}
	}
}
