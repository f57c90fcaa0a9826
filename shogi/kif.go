package shogi

import "strings"

var (
	kifFiles = [...]string{"", "１", "２", "３", "４", "５", "６", "７", "８", "９"}
	kifRanks = [...]string{"", "一", "二", "三", "四", "五", "六", "七", "八", "九"}
	kifKinds = [...]string{
		Pawn: "歩", Lance: "香", Knight: "桂", Silver: "銀", Gold: "金", Bishop: "角", Rook: "飛", King: "玉",
		ProPawn: "と", ProLance: "成香", ProKnight: "成桂", ProSilver: "成銀", Horse: "馬", Dragon: "龍",
	}
)

// KIF writes legal move m of p in Japanese KIF notation, as players read it:
// "▲７六歩(77)", "△同　角成(88)", "▲５五角打", "▲３三銀不成(44)". last is
// the destination of the move before m (NoSquare if none); a move to the same
// square is written 同. m must be legal in p.
func (p *Position) KIF(m Move, last Square) string {
	var b strings.Builder
	if p.turn == Black {
		b.WriteString("▲")
	} else {
		b.WriteString("△")
	}
	if m.To == last {
		b.WriteString("同　")
	} else {
		b.WriteString(kifFiles[m.To.File()])
		b.WriteString(kifRanks[m.To.Rank()])
	}
	if m.Drop != NoKind {
		b.WriteString(kifKinds[m.Drop])
		b.WriteString("打")
		return b.String()
	}
	k := p.board[m.From].Kind()
	b.WriteString(kifKinds[k])
	switch {
	case m.Promote:
		b.WriteString("成")
	case k.CanPromote() && (inZone(p.turn, m.From) || inZone(p.turn, m.To)):
		b.WriteString("不成")
	}
	b.WriteByte('(')
	b.WriteByte(byte('0' + m.From.File()))
	b.WriteByte(byte('0' + m.From.Rank()))
	b.WriteByte(')')
	return b.String()
}

// KIFLine writes a sequence of USI moves played from p (a principal variation
// or a mate line) in KIF notation; last is the destination of the move that
// led to p, or NoSquare. p is not changed. It stops at the first move that is
// not legal and returns its error (an *Error with MoveIndex) with the moves
// written so far.
func (p *Position) KIFLine(moves []string, last Square) ([]string, error) {
	q := *p
	out := make([]string, 0, len(moves))
	for i, s := range moves {
		m, err := q.CheckMove(s)
		if err != nil {
			e := *err.(*Error)
			e.MoveIndex = i
			return out, &e
		}
		out = append(out, q.KIF(m, last))
		q.do(m)
		last = m.To
	}
	return out, nil
}
