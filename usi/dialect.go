// Dialects: USI and UCI, its chess parent, differ in a few words, in how a
// position and a move are written and in how a mate search is asked and
// answered. A Dialect is that difference as data; everything else (the
// process, the handshake's shape, options, isready, searches, info lines)
// is one code path.

package usi

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Dialect is one protocol of the USI/UCI family. The values DialectUSI,
// DialectUCI, DialectUSIX and DialectUOI are the dialects usid speaks; the
// Engine, the pool and the sessions take them as they are. The fields after
// MateInMoves are what the othello dialects word differently; their zero
// values are USI's and UCI's behaviour.
type Dialect struct {
	Name    string // "usi", "uci", "usix", "uoi"
	Hello   string // the first command ("usi", "uci", "uoi")
	HelloOK string // its answer at the end of the handshake ("usiok", "uciok", "uoiok")
	NewGame string // "usinewgame", "ucinewgame", "uoinewgame"
	// PositionWord introduces a position other than the start position
	// ("sfen", "fen"; "" for UOI's bare "position <ofen>").
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

	// GoParams, when not nil, are the only go parameters the dialect has
	// ("btime", "wtime", "binc", "winc", "byoyomi", "nodes", "infinite",
	// "ponder", ...): GoLine refuses any other with ErrBadCommand rather
	// than send an engine a word it may crash on. nil: every parameter.
	GoParams []string
	// TriedGo are go parameters beyond GoParams that some engines of the
	// dialect take (USI-X: depth and movetime, which usid's own othello
	// engine does): GoLine writes them, the probe tries them, and usid
	// sends them only to an engine whose profile found them native.
	// HasGo does not count them.
	TriedGo []string
	// Resign: "bestmove resign" is the engine's resignation (USI-X, UOI).
	// USI has it with its GameOver; UCI has none.
	Resign bool
	// MovesAlways: the position command says "moves" also before an empty
	// list ("position sfen <pos> moves"), as the othello GUIs write it.
	MovesAlways bool
	// PositionOnly: the position command takes no moves (UOI): the caller
	// sends the position reached, PositionLine refuses moves.
	PositionOnly bool
	// StartPosition is the start position's text, for a dialect with no
	// "startpos" word (UOI): PositionLine writes it for an empty position.
	StartPosition string
	// EnginePosition, when set, turns a position text that passed
	// CheckPosition into the engine's own writing (UOI: the ofen, see
	// OFEN).
	EnginePosition func(string) string
	// EngineMove, when set, renames a move between usid's notation and the
	// engine's, both ways (UOI's squares are transposed: TransposeSquare);
	// the parser applies it to every move the engine writes, the command
	// builders to every move sent.
	EngineMove func(string) string
	// PassCommand: the dialect tells an engine that must pass with "pass
	// <position>" instead of go (UOI); see Go.Pass.
	PassCommand bool
	// ScoreQuery is the command that asks the engine for the scale of its
	// scores ("score_scale_and_type" in USI-X, "score scale and type" in
	// UOI), answered by "scoretype ..." (ScoreScale); "" for none. Engine
	// sends it after the handshake.
	ScoreQuery string
	// BareScores: "info score 41.0" is a score, a number in the engine's
	// declared scale without cp or mate (Score.Scaled).
	BareScores bool
	// LooseID: "id auther" (sic) is the author, and an empty "id name " or
	// "id author " is no error, as the othello engines write them.
	LooseID bool
	// UntypedOptions: "option name X default Y" without a type is a string
	// option (the UOI draft's example).
	UntypedOptions bool
	// Comments: a line that starts with '#' is a comment (UOI), never a
	// message.
	Comments bool
	// StoneGameOver: the dialect has "gameover black_win|white_win|draw by
	// <reason> bstone N wstone N" (UOI), sent by Engine.GameOverStones.
	StoneGameOver bool
}

// HasGo reports whether the dialect has the go parameter param ("byoyomi",
// "movetime", "mate", ...), so that a caller can emulate the limits it
// lacks instead of asking for them.
func (d *Dialect) HasGo(param string) bool {
	if d.GoParams == nil {
		switch param {
		case "byoyomi":
			return d.Byoyomi
		case "binc", "winc":
			return true
		}
		return true
	}
	return slices.Contains(d.GoParams, param)
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

// DialectNamed returns DialectUSI, DialectUCI, DialectUSIX or DialectUOI by
// name, or nil.
func DialectNamed(name string) *Dialect {
	switch name {
	case DialectUSI.Name:
		return DialectUSI
	case DialectUCI.Name:
		return DialectUCI
	case DialectUSIX.Name:
		return DialectUSIX
	case DialectUOI.Name:
		return DialectUOI
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
// Position.FEN holds a UCI position, Position.SFEN any other dialect's (a
// USI SFEN, an othello position token); the other must be empty. In a
// PositionOnly dialect (UOI) it is "position <pos>": moves are refused, the
// start position is written out, and the text is turned into the engine's
// writing (EnginePosition).
func (d *Dialect) PositionLine(p Position) (string, error) {
	text, other := p.SFEN, p.FEN
	if d.PositionWord == "fen" {
		text, other = p.FEN, p.SFEN
	}
	if other != "" {
		return "", fmt.Errorf("%w: a %s position in a %s engine's position command", ErrBadCommand, map[bool]string{true: "FEN", false: "SFEN"}[other == p.FEN], d.Name)
	}
	if d.PositionOnly && len(p.Moves) > 0 {
		return "", fmt.Errorf("%w: a %s position command takes no moves: send the position reached", ErrBadCommand, d.Name)
	}
	b := make([]byte, 0, 16+len(text)+6*len(p.Moves))
	b = append(b, "position "...)
	if (text == "" || text == "startpos") && d.StartPosition != "" {
		text = d.StartPosition
	}
	if text == "" || text == "startpos" {
		b = append(b, "startpos"...)
	} else {
		pos, err := d.enginePosition(text)
		if err != nil {
			return "", err
		}
		if d.PositionWord != "" {
			b = append(b, d.PositionWord...)
			b = append(b, ' ')
		}
		b = append(b, pos...)
	}
	if len(p.Moves) > 0 || (d.MovesAlways && !d.PositionOnly) {
		b = append(b, " moves"...)
		var err error
		if b, err = d.appendMoves(b, "position", p.Moves); err != nil {
			return "", err
		}
	}
	return string(b), nil
}

// enginePosition checks a position text and writes it as the engine reads it.
func (d *Dialect) enginePosition(text string) (string, error) {
	if err := d.CheckPosition(text); err != nil {
		return "", err
	}
	if d.EnginePosition != nil {
		return d.EnginePosition(text), nil
	}
	return text, nil
}

// PassLine builds "pass <position>" (UOI): what an engine whose side must
// pass is told instead of go. p must have no moves, as in PositionLine.
func (d *Dialect) PassLine(p Position) (string, error) {
	if !d.PassCommand {
		return "", fmt.Errorf("%w: %s has no pass command", ErrBadCommand, d.Name)
	}
	line, err := d.PositionLine(p)
	if err != nil {
		return "", err
	}
	return "pass" + line[len("position"):], nil
}

func (d *Dialect) appendMoves(b []byte, what string, moves []string) ([]byte, error) {
	for i, m := range moves {
		if !d.IsMove(m) {
			return nil, fmt.Errorf("%w: %s move %d %q is not a %s move", ErrBadCommand, what, i+1, clip(m), strings.ToUpper(d.Name))
		}
		if d.EngineMove != nil {
			m = d.EngineMove(m)
		}
		b = append(b, ' ')
		b = append(b, m...)
	}
	return b, nil
}

// checkGoParams refuses a go parameter the dialect does not have.
func (d *Dialect) checkGoParams(g Go) error {
	if d.GoParams == nil {
		return nil
	}
	c := g.Clock
	inc := c != nil && (c.BInc > 0 || c.WInc > 0)
	for _, u := range []struct {
		name string
		on   bool
	}{
		{"ponder", g.Ponder}, {"mate", g.Mate}, {"movestogo", g.MovesToGo != 0}, {"depth", g.Depth != 0},
		{"nodes", g.Nodes != 0}, {"movetime", g.MoveTime != 0}, {"infinite", g.Infinite},
		{"searchmoves", len(g.SearchMoves) > 0}, {"btime", c != nil}, {"binc", inc},
		{"byoyomi", c != nil && !inc && d.Byoyomi},
	} {
		if u.on && !slices.Contains(d.GoParams, u.name) && !slices.Contains(d.TriedGo, u.name) {
			return fmt.Errorf("%w: %s has no go %s", ErrBadCommand, d.Name, u.name)
		}
	}
	return nil
}

// GoLine builds the go command in d. In UCI a mate search is "go mate
// <MateMoves>", the clock "wtime btime [winc binc]" (no byoyomi); in USI
// "go mate <ms>|infinite" and Shogidokoro's clock.
func (d *Dialect) GoLine(g Go) (string, error) {
	if err := d.checkGoParams(g); err != nil {
		return "", err
	}
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
