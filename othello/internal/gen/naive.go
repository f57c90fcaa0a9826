package main

// A deliberately plain othello: an 8×8 array of bytes, moves found by walking
// each direction square by square. It shares no code with package othello,
// so that the corpus it writes checks that package from outside.

import (
	"strconv"
	"strings"
)

type board struct {
	cell [8][8]byte // [row][column]: 'X', 'O' or '-'; row 0 is rank 1 (top), column 0 is file a
	side byte       // 'X' (Black) or 'O' (White) to move
	num  int        // move number
}

var dirs = [8][2]int{{-1, -1}, {-1, 0}, {-1, 1}, {0, -1}, {0, 1}, {1, -1}, {1, 0}, {1, 1}}

func other(c byte) byte {
	if c == 'X' {
		return 'O'
	}
	return 'X'
}

func start() board {
	var b board
	for r := range b.cell {
		for c := range b.cell[r] {
			b.cell[r][c] = '-'
		}
	}
	b.cell[3][3], b.cell[4][4] = 'O', 'O'
	b.cell[3][4], b.cell[4][3] = 'X', 'X'
	b.side, b.num = 'X', 1
	return b
}

func (b *board) discs() (x, o int) {
	for r := 0; r < 8; r++ {
		for c := 0; c < 8; c++ {
			switch b.cell[r][c] {
			case 'X':
				x++
			case 'O':
				o++
			}
		}
	}
	return
}

// flips lists the squares a disc of side put on (r, c) turns over.
func (b *board) flips(side byte, r, c int) [][2]int {
	if b.cell[r][c] != '-' {
		return nil
	}
	var out [][2]int
	for _, d := range dirs {
		var line [][2]int
		rr, cc := r+d[0], c+d[1]
		for rr >= 0 && rr < 8 && cc >= 0 && cc < 8 && b.cell[rr][cc] == other(side) {
			line = append(line, [2]int{rr, cc})
			rr, cc = rr+d[0], cc+d[1]
		}
		if len(line) > 0 && rr >= 0 && rr < 8 && cc >= 0 && cc < 8 && b.cell[rr][cc] == side {
			out = append(out, line...)
		}
	}
	return out
}

// squares lists the squares where side may play, top row first.
func (b *board) squares(side byte) []string {
	var out []string
	for r := 0; r < 8; r++ {
		for c := 0; c < 8; c++ {
			if len(b.flips(side, r, c)) > 0 {
				out = append(out, name(r, c))
			}
		}
	}
	return out
}

// legal lists the legal moves: squares, or "pass" alone, or none at the end.
func (b *board) legal() []string {
	if sq := b.squares(b.side); len(sq) > 0 {
		return sq
	}
	if len(b.squares(other(b.side))) > 0 {
		return []string{"pass"}
	}
	return nil
}

func name(r, c int) string { return string([]byte{byte('a' + c), byte('1' + r)}) }

// play plays a move known to be legal.
func (b *board) play(m string) {
	if m != "pass" {
		r, c := int(m[1]-'1'), int(m[0]-'a')
		for _, f := range b.flips(b.side, r, c) {
			b.cell[f[0]][f[1]] = b.side
		}
		b.cell[r][c] = b.side
	}
	b.side = other(b.side)
	b.num++
}

// moveCode returns the code refusing m, or "" if it is legal. The order of
// the checks is the one package othello documents.
func (b *board) moveCode(m string) string {
	isSquare := len(m) == 2 && m[0] >= 'a' && m[0] <= 'h' && m[1] >= '1' && m[1] <= '8'
	if m != "pass" && !isSquare {
		return "move_syntax"
	}
	mine, theirs := b.squares(b.side), b.squares(other(b.side))
	if len(mine) == 0 && len(theirs) == 0 {
		return "game_over"
	}
	if m == "pass" {
		if len(mine) > 0 {
			return "pass_not_allowed"
		}
		return ""
	}
	if contains(mine, m) {
		return ""
	}
	if b.cell[m[1]-'1'][m[0]-'a'] != '-' {
		return "occupied"
	}
	if len(mine) == 0 && contains(theirs, m) {
		return "wrong_side"
	}
	return "flips_nothing"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (b *board) token() string {
	var sb strings.Builder
	for r := 0; r < 8; r++ {
		for c := 0; c < 8; c++ {
			sb.WriteByte(b.cell[r][c])
		}
	}
	if b.side == 'X' {
		sb.WriteByte('B')
	} else {
		sb.WriteByte('W')
	}
	return sb.String() + strconv.Itoa(b.num)
}

// ofen writes the UOI draft's ofen: the same cells, 0 (zero) for white, no
// move number.
func (b *board) ofen() string {
	t := b.token()[:65]
	return strings.ReplaceAll(t[:64], "O", "0") + t[64:]
}

// parse reads "startpos", a USI-X token or (when its first 64 characters hold
// a zero and no letter O) a UOI ofen, and returns the syntax code if any.
func parse(s string) (board, string) {
	if s == "startpos" {
		return start(), ""
	}
	ofen := len(s) >= 64 && strings.Contains(s[:64], "0") && !strings.Contains(s[:64], "O")
	white := byte('O')
	if ofen {
		white = '0'
	}
	if len(s) < 65 || ofen && len(s) != 65 {
		return board{}, "othello_length"
	}
	var b board
	n := 0
	for i := 0; i < 64; i++ {
		ch := s[i]
		switch ch {
		case 'X', '-':
		case white:
			ch = 'O'
		default:
			return board{}, "othello_cell"
		}
		b.cell[i/8][i%8] = ch
		if ch != '-' {
			n++
		}
	}
	switch s[64] {
	case 'B':
		b.side = 'X'
	case 'W':
		b.side = 'O'
	default:
		return board{}, "othello_side"
	}
	b.num = max(n-3, 1)
	if rest := s[65:]; rest != "" {
		if len(rest) > 4 || rest[0] == '0' {
			return board{}, "othello_move_number"
		}
		for _, d := range []byte(rest) {
			if d < '0' || d > '9' {
				return board{}, "othello_move_number"
			}
		}
		b.num, _ = strconv.Atoi(rest)
	}
	return b, ""
}

// ruleCodes lists the rules the board breaks: an empty centre square, a disc
// that no chain of touching discs links to the occupied centre.
func (b *board) ruleCodes() []string {
	var codes []string
	empty := false
	var seen [8][8]bool
	var queue [][2]int
	for _, rc := range [][2]int{{3, 3}, {3, 4}, {4, 3}, {4, 4}} {
		if b.cell[rc[0]][rc[1]] == '-' {
			empty = true
		} else {
			seen[rc[0]][rc[1]] = true
			queue = append(queue, rc)
		}
	}
	if empty {
		codes = append(codes, "centre_empty")
	}
	for len(queue) > 0 {
		rc := queue[0]
		queue = queue[1:]
		for _, d := range dirs {
			r, c := rc[0]+d[0], rc[1]+d[1]
			if r >= 0 && r < 8 && c >= 0 && c < 8 && !seen[r][c] && b.cell[r][c] != '-' {
				seen[r][c] = true
				queue = append(queue, [2]int{r, c})
			}
		}
	}
	anyCentre := false
	for _, rc := range [][2]int{{3, 3}, {3, 4}, {4, 3}, {4, 4}} {
		anyCentre = anyCentre || b.cell[rc[0]][rc[1]] != '-'
	}
	for r := 0; r < 8 && anyCentre; r++ {
		for c := 0; c < 8; c++ {
			if b.cell[r][c] != '-' && !seen[r][c] {
				return append(codes, "isolated_disc")
			}
		}
	}
	return codes
}

// perft counts move paths: a pass is a ply, an ended game one path.
func (b *board) perft(depth int) uint64 {
	if depth == 0 {
		return 1
	}
	moves := b.legal()
	if len(moves) == 0 {
		return 1
	}
	var n uint64
	for _, m := range moves {
		q := *b
		q.play(m)
		n += q.perft(depth - 1)
	}
	return n
}

// result returns "black|white|draw B-W" by the WOF rule (empties to the
// winner, shared in a draw), for an ended game.
func (b *board) result() string {
	x, o := b.discs()
	e := 64 - x - o
	switch {
	case x > o:
		return "black " + strconv.Itoa(x+e) + "-" + strconv.Itoa(o)
	case o > x:
		return "white " + strconv.Itoa(x) + "-" + strconv.Itoa(o+e)
	}
	return "draw " + strconv.Itoa(x+e/2) + "-" + strconv.Itoa(o+e-e/2)
}
