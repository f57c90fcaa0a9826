// Dialects: USI and UCI, its chess parent, differ in a few words, in how a
// position and a move are written and in how a mate search is asked and
// answered. A Dialect is that difference as data; everything else (the
// process, the handshake's shape, options, isready, searches, info lines)
// is one code path.

package usi

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Dialect is one protocol of the USI/UCI family. The values DialectUSI and DialectUCI are
// the dialects usid speaks; a third of the family (USI-X for othello, say)
// is one more value with its own move syntax and position check: the
// Engine, the pool and the sessions take it as they are.
type Dialect struct {
	Name    string // "usi", "uci"
	Hello   string // the first command ("usi", "uci")
	HelloOK string // its answer at the end of the handshake ("usiok", "uciok")
	NewGame string // "usinewgame", "ucinewgame"
	// PositionWord introduces a position other than the start position
	// ("sfen", "fen").
	PositionWord string
	// IsMove tells a move of this dialect in form (legality is the rules
	// packages' business).
	IsMove func(string) bool
	// CheckPosition tells a position text of this dialect in form.
	CheckPosition func(string) error
	// GameOver: the dialect has "gameover win|lose|draw" (USI); without it
	// Engine.GameOver sends nothing.
	GameOver bool
	// Byoyomi: the clock has a byoyomi (USI); UCI's has increments only.
	Byoyomi bool
	// MateInMoves: "go mate <n>" asks for a mate in n moves and is answered
	// by bestmove with a "score mate" line (UCI), rather than "go mate
	// <ms>" answered by "checkmate" (USI).
	MateInMoves bool
}

// DialectUSI is the shogi protocol, as Shogidokoro speaks it.
var DialectUSI = &Dialect{
	Name: "usi", Hello: "usi", HelloOK: "usiok", NewGame: "usinewgame", PositionWord: "sfen",
	IsMove: IsMove, CheckPosition: CheckSFEN, GameOver: true, Byoyomi: true,
}

// DialectUCI is the chess protocol USI was made from (the Huber/Meyer-Kahlen
// description): long algebraic moves ("e2e4", "e7e8q"; castling as the
// king's move, or king-takes-rook under UCI_Chess960), FEN positions,
// "go mate <moves>", no byoyomi and no gameover.
var DialectUCI = &Dialect{
	Name: "uci", Hello: "uci", HelloOK: "uciok", NewGame: "ucinewgame", PositionWord: "fen",
	IsMove: IsUCIMove, CheckPosition: CheckFEN, MateInMoves: true,
}

// DialectNamed returns DialectUSI or DialectUCI by name, or nil.
func DialectNamed(name string) *Dialect {
	switch name {
	case DialectUSI.Name:
		return DialectUSI
	case DialectUCI.Name:
		return DialectUCI
	}
	return nil
}

// MoveNone is the "move" of "bestmove (none)" (and of "bestmove 0000"): UCI
// engines answer so when the side to move has no legal move.
const MoveNone = "(none)"

// IsUCIMove reports whether s is a UCI move in form: from and to squares,
// a1..h8, and an optional promotion letter (q, r, b, n). It does not check
// legality.
func IsUCIMove(s string) bool {
	if len(s) != 4 && len(s) != 5 {
		return false
	}
	sq := func(f, r byte) bool { return 'a' <= f && f <= 'h' && '1' <= r && r <= '8' }
	if !sq(s[0], s[1]) || !sq(s[2], s[3]) {
		return false
	}
	return len(s) == 4 || strings.IndexByte("qrbn", s[4]) >= 0
}

// CheckFEN returns an error wrapping ErrBadCommand unless fen has the form of
// a FEN: 8 ranks of piece letters and digits, the side "w" or "b", castling
// ("-", KQkq, or rook files A-H/a-h as Shredder-FEN writes Chess960 rights),
// en passant ("-" or a square), and optionally the two counters, separated by
// single spaces. It does not check legality.
func CheckFEN(fen string) error {
	f := strings.Split(fen, " ")
	bad := func(why string) error { return fmt.Errorf("%w: FEN %q: %s", ErrBadCommand, clip(fen), why) }
	if len(f) != 4 && len(f) != 6 {
		return bad("want 4 or 6 space-separated fields")
	}
	ranks := strings.Split(f[0], "/")
	if len(ranks) != 8 {
		return bad("want 8 ranks")
	}
	for _, r := range ranks {
		n := 0
		for i := 0; i < len(r); i++ {
			switch c := r[i]; {
			case '1' <= c && c <= '8':
				n += int(c - '0')
			case strings.IndexByte("PNBRQKpnbrqk", c) >= 0:
				n++
			default:
				return bad(fmt.Sprintf("bad character %q on the board", c))
			}
		}
		if n != 8 {
			return bad("a rank is not 8 squares")
		}
	}
	if f[1] != "w" && f[1] != "b" {
		return bad("side to move must be w or b")
	}
	if f[2] != "-" {
		if len(f[2]) > 4 {
			return bad("bad castling field")
		}
		for i := 0; i < len(f[2]); i++ {
			if strings.IndexByte("KQkqABCDEFGHabcdefgh", f[2][i]) < 0 {
				return bad("bad castling field")
			}
		}
	}
	if ep := f[2+1]; ep != "-" && (len(ep) != 2 || ep[0] < 'a' || ep[0] > 'h' || (ep[1] != '3' && ep[1] != '6')) {
		return bad("bad en-passant square")
	}
	if len(f) == 6 && (!isNumber(f[4]) || !isNumber(f[5]) || len(f[4]) > 4 || len(f[5]) > 4) {
		return bad("bad move counters")
	}
	return nil
}

// PositionLine builds "position startpos|<word> <pos> [moves ...]" in d.
// Position.SFEN holds a USI position, Position.FEN a UCI one; the other must
// be empty.
func (d *Dialect) PositionLine(p Position) (string, error) {
	text, other := p.SFEN, p.FEN
	if d.PositionWord == "fen" {
		text, other = p.FEN, p.SFEN
	}
	if other != "" {
		return "", fmt.Errorf("%w: a %s position in a %s engine's position command", ErrBadCommand, map[bool]string{true: "FEN", false: "SFEN"}[other == p.FEN], d.Name)
	}
	b := make([]byte, 0, 16+len(text)+6*len(p.Moves))
	b = append(b, "position "...)
	if text == "" || text == "startpos" {
		b = append(b, "startpos"...)
	} else {
		if err := d.CheckPosition(text); err != nil {
			return "", err
		}
		b = append(b, d.PositionWord...)
		b = append(b, ' ')
		b = append(b, text...)
	}
	if len(p.Moves) > 0 {
		b = append(b, " moves"...)
		var err error
		if b, err = d.appendMoves(b, "position", p.Moves); err != nil {
			return "", err
		}
	}
	return string(b), nil
}

func (d *Dialect) appendMoves(b []byte, what string, moves []string) ([]byte, error) {
	for i, m := range moves {
		if !d.IsMove(m) {
			return nil, fmt.Errorf("%w: %s move %d %q is not a %s move", ErrBadCommand, what, i+1, clip(m), strings.ToUpper(d.Name))
		}
		b = append(b, ' ')
		b = append(b, m...)
	}
	return b, nil
}

// GoLine builds the go command in d. In UCI a mate search is "go mate
// <MateMoves>", the clock "wtime btime [winc binc]" (no byoyomi); in USI
// "go mate <ms>|infinite" and Shogidokoro's clock.
func (d *Dialect) GoLine(g Go) (string, error) {
	b := make([]byte, 0, 64)
	b = append(b, "go"...)
	if g.Mate {
		if g.Ponder || g.Clock != nil || g.MovesToGo != 0 || g.Depth != 0 || g.Nodes != 0 ||
			g.MoveTime != 0 || g.Infinite || len(g.SearchMoves) > 0 {
			return "", fmt.Errorf("%w: go mate takes no other parameter", ErrBadCommand)
		}
		if g.MateTime < 0 || g.MateMoves < 0 {
			return "", fmt.Errorf("%w: negative go mate bound", ErrBadCommand)
		}
		if d.MateInMoves {
			if g.MateMoves == 0 || g.MateTime != 0 {
				return "", fmt.Errorf("%w: a %s go mate takes a number of moves (MateMoves), not a time", ErrBadCommand, d.Name)
			}
			return "go mate " + strconv.Itoa(g.MateMoves), nil
		}
		if g.MateMoves != 0 {
			return "", fmt.Errorf("%w: a %s go mate takes a time, not a number of moves", ErrBadCommand, d.Name)
		}
		if g.MateTime == 0 {
			return "go mate infinite", nil
		}
		return string(appendMillis(append(b, " mate"...), g.MateTime)), nil
	}
	if g.MateTime != 0 || g.MateMoves != 0 {
		return "", fmt.Errorf("%w: a mate bound set without Mate", ErrBadCommand)
	}
	if g.Ponder {
		b = append(b, " ponder"...) // Shogidokoro: right after "go"; UCI takes it anywhere
	}
	if c := g.Clock; c != nil {
		for _, t := range []time.Duration{c.BTime, c.WTime, c.Byoyomi, c.BInc, c.WInc} {
			if t < 0 {
				return "", fmt.Errorf("%w: negative time in go clock", ErrBadCommand)
			}
		}
		b = appendMillis(append(b, " btime"...), c.BTime)
		b = appendMillis(append(b, " wtime"...), c.WTime)
		switch {
		case c.BInc > 0 || c.WInc > 0:
			if c.Byoyomi > 0 {
				return "", fmt.Errorf("%w: go clock with both byoyomi and increments", ErrBadCommand)
			}
			b = appendMillis(append(b, " binc"...), c.BInc)
			b = appendMillis(append(b, " winc"...), c.WInc)
		case d.Byoyomi:
			b = appendMillis(append(b, " byoyomi"...), c.Byoyomi)
		case c.Byoyomi > 0:
			return "", fmt.Errorf("%w: %s has no byoyomi", ErrBadCommand, d.Name)
		}
	}
	if g.MovesToGo < 0 || g.Depth < 0 || g.Nodes < 0 || g.MoveTime < 0 {
		return "", fmt.Errorf("%w: negative go limit", ErrBadCommand)
	}
	if g.MovesToGo > 0 {
		b = strconv.AppendInt(append(b, " movestogo "...), int64(g.MovesToGo), 10)
	}
	if g.Depth > 0 {
		b = strconv.AppendInt(append(b, " depth "...), int64(g.Depth), 10)
	}
	if g.Nodes > 0 {
		b = strconv.AppendInt(append(b, " nodes "...), g.Nodes, 10)
	}
	if g.MoveTime > 0 {
		b = appendMillis(append(b, " movetime"...), g.MoveTime)
	}
	if g.Infinite {
		b = append(b, " infinite"...)
	}
	if len(g.SearchMoves) > 0 {
		// Last, because it takes every move that follows.
		b = append(b, " searchmoves"...)
		var err error
		if b, err = d.appendMoves(b, "searchmoves", g.SearchMoves); err != nil {
			return "", err
		}
	}
	return string(b), nil
}
