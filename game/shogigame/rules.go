package shogigame

import (
	"strings"

	"github.com/usid/usid/shogi"
)

// The rules a game ends by, beyond checkmate: 千日手 (the same position
// four times; a side that gave check with every move of the repetition
// loses), 入玉宣言 (the 27-point declaration) and the move cap.

// positionKey names a position for repetition: board, side to move and
// hands, without the move number.
func positionKey(p *shogi.Position) string {
	s := p.SFEN()
	if i := strings.LastIndexByte(s, ' '); i > 0 {
		s = s[:i]
	}
	return s
}

// history is the positions of a game, for 千日手: keys[i] and check[i] are
// the position after i plies (0: the start) and whether its side to move
// is in check.
type history struct {
	keys  []string
	check []bool
	count map[string]int
}

func newHistory(start *shogi.Position) *history {
	h := &history{count: map[string]int{}}
	h.add(start)
	return h
}

func (h *history) add(p *shogi.Position) {
	k := positionKey(p)
	h.keys = append(h.keys, k)
	h.check = append(h.check, p.InCheck())
	h.count[k]++
}

// repetition reports the state of the last position: rep is true when it
// has now occurred four times (千日手); then checker is the side that gave
// check with every one of its moves since the position's first occurrence
// (it loses), or noColor for a draw. mover(i) is the side that played ply i
// (the move into position i).
func (h *history) repetition(mover func(i int) shogi.Color) (rep bool, checker int) {
	n := len(h.keys) - 1
	last := h.keys[n]
	if h.count[last] < 4 {
		return false, noColor
	}
	first := 0
	for i, k := range h.keys {
		if k == last {
			first = i
			break
		}
	}
	perpetual := [2]bool{true, true}
	moved := [2]bool{}
	for i := first + 1; i <= n; i++ {
		c := mover(i)
		moved[c] = true
		if !h.check[i] {
			perpetual[c] = false
		}
	}
	for c := range 2 {
		if moved[c] && perpetual[c] {
			return true, c
		}
	}
	return true, noColor
}

const noColor = -1

// declarationPoints returns whether side c, to move in p, may declare a
// win (入玉宣言, the 27-point rule as the CSA and the JSA's tournament
// rules have it): its king in the enemy camp, at least ten other pieces of
// its own there, not in check, and at least 28 points (Black) or 27
// (White) counting the pieces in the enemy camp other than the king and
// those in hand, rook and bishop (promoted or not) 5, every other piece 1.
// why says which condition failed.
func declarationPoints(p *shogi.Position, c shogi.Color) (ok bool, points int, why string) {
	camp := func(s shogi.Square) bool {
		if c == shogi.Black {
			return s.Rank() <= 3
		}
		return s.Rank() >= 7
	}
	value := func(k shogi.Kind) int {
		switch k.Base() {
		case shogi.Bishop, shogi.Rook:
			return 5
		}
		return 1
	}
	if p.Turn() != c {
		return false, 0, "not_to_move"
	}
	if !camp(p.KingSquare(c)) {
		return false, 0, "king_not_in_camp"
	}
	pieces := 0
	for s := shogi.Square(0); s < 81; s++ {
		pc := p.At(s)
		if pc == 0 || pc.Color() != c || pc.Kind() == shogi.King || !camp(s) {
			continue
		}
		pieces++
		points += value(pc.Kind())
	}
	for k := shogi.Pawn; k <= shogi.Gold; k++ {
		points += p.Hand(c, k) * value(k)
	}
	need := 28
	if c == shogi.White {
		need = 27
	}
	switch {
	case pieces < 10:
		return false, points, "too_few_pieces"
	case p.InCheck():
		return false, points, "in_check"
	case points < need:
		return false, points, "too_few_points"
	}
	return true, points, ""
}
