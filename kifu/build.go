package kifu

import (
	"strings"

	"github.com/usid/usid/shogi"
)

// node is a move of the record's tree while it is read; the root holds the
// start position.
type node struct {
	parent   *node
	children []*node // children[0] continues the line; the rest are variations
	move     Move
	pos      shogi.Position // after the move
	ply      int            // the move's number (root: the ply before the first move)
	index    int            // index of the move in its line (from the line's first move)
	to       shogi.Square   // the move's destination (同)
	end      End
	comment  commentText // the move's comment lines, joined at finish
}

// commentText gathers comment lines. Joining them as they come would copy
// the text so far for each line: quadratic in the lines (a 64 KiB record of
// one-character lines cost 0.8 CPU-seconds).
type commentText struct{ b strings.Builder }

// add appends a line; leading empty lines are dropped, as the text so far
// is empty.
func (c *commentText) add(s string) {
	if c.b.Len() > 0 {
		c.b.WriteByte('\n')
	}
	c.b.WriteString(s)
}

func (c *commentText) String() string { return c.b.String() }

// builder grows the tree of a record as its lines are read.
type builder struct {
	root  *node
	cur   *node
	count int
	max   int
}

func newBuilder(start *shogi.Position, firstPly, max int) *builder {
	root := &node{pos: *start, ply: firstPly - 1, to: shogi.NoSquare, index: -1}
	return &builder{root: root, cur: root, max: max}
}

// startPosition parses and validates an SFEN built from a record; line is
// where the position was written.
func startPosition(sfen string, line int) (*shogi.Position, *Error) {
	p, err := shogi.ParseSFEN(sfen)
	if err != nil {
		e := err.(*shogi.Error)
		return nil, errorf(line, e.Code, "%s", e.Message)
	}
	if errs := p.Validate(); errs != nil {
		return nil, errorf(line, errs[0].Code, "%s", errs[0].Message)
	}
	return p, nil
}

// play checks the USI move s in the current position and appends it to the
// current line.
func (b *builder) play(s string, line int) *Error {
	if b.cur.end != "" {
		return errorf(line, CodeRecordSyntax, "a move after the line ended (%s)", b.cur.end)
	}
	m, err := b.cur.pos.CheckMove(s)
	if err != nil {
		e := err.(*shogi.Error)
		return &Error{Line: line, Code: e.Code, Message: e.Message, MoveIndex: b.cur.index + 1}
	}
	return b.playMove(m, line)
}

func (b *builder) playMove(m shogi.Move, line int) *Error {
	if b.count >= b.max {
		return errorf(line, CodeRecordTooLong, "more than %d moves", b.max)
	}
	b.count++
	n := &node{parent: b.cur, move: Move{USI: m.String(), Line: line, TimeMS: -1}, pos: b.cur.pos, ply: b.cur.ply + 1, index: b.cur.index + 1, to: m.To}
	if err := n.pos.Play(m); err != nil {
		e := err.(*shogi.Error)
		return &Error{Line: line, Code: e.Code, Message: e.Message, MoveIndex: n.index}
	}
	b.cur.children = append(b.cur.children, n)
	b.cur = n
	return nil
}

// ended refuses a move after its line ended (投了, %TORYO, ...).
func (b *builder) ended(line int) *Error {
	if b.cur.end != "" {
		return errorf(line, CodeRecordSyntax, "a move after the line ended (%s)", b.cur.end)
	}
	return nil
}

// moveError wraps a shogi error of the move about to be played.
func (b *builder) moveError(line int, code shogi.Code, format string, args ...any) *Error {
	e := errorf(line, code, format, args...)
	e.MoveIndex = b.cur.index + 1
	return e
}

// branch starts a variation: an alternative to move number ply of the line
// read last, so the next move is played after move ply-1 of that line.
func (b *builder) branch(ply, line int) *Error {
	n := b.cur
	for n != nil && n.ply > ply-1 {
		n = n.parent
	}
	if n == nil || n.ply != ply-1 || n == b.cur || n.end != "" {
		return errorf(line, CodeRecordSyntax, "a variation at move %d, which the line before does not have", ply)
	}
	if len(n.children) > 0 && n.children[0].end != "" {
		// Alternatives to a resignation (or another end) have no place in
		// the data model, whose lines hold moves only.
		return errorf(line, CodeRecordSyntax, "a variation replacing the end of a line (%s) is not supported", n.children[0].end)
	}
	b.cur = n
	return nil
}

// comment adds a comment line to the current move (or to rc, the record's,
// before the first move).
func (b *builder) comment(rc *commentText, text string) {
	n := b.cur
	if n.end != "" {
		// A comment after the end (floodgate's summary) goes to the last
		// move: lines hold moves only.
		n = n.parent
	}
	if n == b.root {
		rc.add(text)
		return
	}
	n.comment.add(text)
}

// finish turns the tree into the record's lines, with rc as the record's
// comment.
func (b *builder) finish(r *Record, rc *commentText) {
	r.Comment = rc.String()
	r.StartSFEN = b.root.pos.SFEN()
	r.Moves = lineOf(b.root)
	for n := b.root; len(n.children) > 0; n = n.children[0] {
		if n.children[0].end != "" {
			r.End = n.children[0].end
		}
	}
}

// end closes the current line with a terminal (投了, %TORYO, ...).
func (b *builder) end(e End, line int, timeMS int64) *Error {
	if b.cur.end != "" {
		return errorf(line, CodeRecordSyntax, "the line has already ended")
	}
	if len(b.cur.children) > 0 {
		// A variation that only ends the line (resigns instead of a move)
		// has no place in the data model, whose lines hold moves only.
		return errorf(line, CodeRecordSyntax, "a variation that only ends the line (%s) is not supported", e)
	}
	n := &node{parent: b.cur, end: e, ply: b.cur.ply + 1, index: b.cur.index + 1, pos: b.cur.pos, to: shogi.NoSquare}
	n.move.TimeMS = timeMS
	n.move.Line = line
	b.cur.children = append(b.cur.children, n)
	b.cur = n
	return nil
}

// lineOf returns the line that continues after n: its first child, that
// child's first child, ...; every move's siblings become its variations.
func lineOf(n *node) []Move {
	var out []Move
	for len(n.children) > 0 && n.children[0].end == "" {
		c := n.children[0]
		m := c.move
		m.Comment = c.comment.String()
		for _, alt := range n.children[1:] {
			first := alt.move
			first.Comment = alt.comment.String()
			v := append([]Move{first}, lineOf(alt)...)
			m.Variations = append(m.Variations, v)
		}
		out = append(out, m)
		n = c
	}
	return out
}

// board collects a position written square by square (BOD, CSA).
type board struct {
	sq    [81]shogi.Piece
	hands [2][shogi.King]int
	turn  shogi.Color
	moveN int
}

func (bd *board) sfen() string {
	var b strings.Builder
	for r := 1; r <= 9; r++ {
		empty := 0
		for f := 9; f >= 1; f-- {
			p := bd.sq[shogi.NewSquare(f, r)]
			if p == shogi.NoPiece {
				empty++
				continue
			}
			if empty > 0 {
				b.WriteByte(byte('0' + empty))
				empty = 0
			}
			b.WriteString(p.String())
		}
		if empty > 0 {
			b.WriteByte(byte('0' + empty))
		}
		if r < 9 {
			b.WriteByte('/')
		}
	}
	b.WriteByte(' ')
	b.WriteString(bd.turn.String())
	b.WriteByte(' ')
	n := b.Len()
	for _, c := range []shogi.Color{shogi.Black, shogi.White} {
		for _, k := range []shogi.Kind{shogi.Rook, shogi.Bishop, shogi.Gold, shogi.Silver, shogi.Knight, shogi.Lance, shogi.Pawn} {
			cnt := bd.hands[c][k]
			if cnt == 0 {
				continue
			}
			if cnt > 1 {
				b.WriteString(itoa(cnt))
			}
			l := k.Letter()
			if c == shogi.White {
				l += 'a' - 'A'
			}
			b.WriteByte(l)
		}
	}
	if b.Len() == n {
		b.WriteByte('-')
	}
	mn := bd.moveN
	if mn < 1 {
		mn = 1
	}
	b.WriteByte(' ')
	b.WriteString(itoa(mn))
	return b.String()
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var buf [20]byte
	i := len(buf)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}

// handicaps are the KIF 手合割 names and their start positions; the
// handicap giver (上手) is White and moves first.
var handicaps = []struct{ name, sfen string }{
	{"平手", shogi.StartSFEN},
	{"香落ち", "lnsgkgsn1/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"},
	{"右香落ち", "1nsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"},
	{"角落ち", "lnsgkgsnl/1r7/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"},
	{"飛車落ち", "lnsgkgsnl/7b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"},
	{"飛香落ち", "lnsgkgsn1/7b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"},
	{"二枚落ち", "lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"},
	{"三枚落ち", "lnsgkgsn1/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"},
	{"四枚落ち", "1nsgkgsn1/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"},
	{"五枚落ち", "2sgkgsn1/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"},
	{"左五枚落ち", "1nsgkgs2/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"},
	{"六枚落ち", "2sgkgs2/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"},
	{"左七枚落ち", "2sgkg3/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"},
	{"右七枚落ち", "3gkgs2/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"},
	{"八枚落ち", "3gkg3/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"},
	{"十枚落ち", "4k4/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"},
}

// handicapSFEN returns the start of a 手合割 name, or "" if unknown.
func handicapSFEN(name string) string {
	for _, h := range handicaps {
		if h.name == name {
			return h.sfen
		}
	}
	return ""
}

// HandicapSFEN returns the start position of a KIF 手合割 name (香落ち,
// 角落ち, 飛車落ち, 飛香落ち, 二枚落ち, 四枚落ち, 六枚落ち, ...; the handicap
// giver is White and moves first), or "" if the name is unknown.
func HandicapSFEN(name string) string { return handicapSFEN(name) }

// PlayerKeys are the KIF header keys of the players of a game from the
// start sfen (canonical): 下手 and 上手 in a handicap game, else 先手 and 後手.
func PlayerKeys(sfen string) (black, white string) {
	if h := handicapOf(sfen); h != "" && h != "平手" {
		return "下手", "上手"
	}
	return "先手", "後手"
}

// handicapOf names the handicap whose start sfen is, or "".
func handicapOf(sfen string) string {
	for _, h := range handicaps {
		if h.sfen == sfen {
			return h.name
		}
	}
	return ""
}
