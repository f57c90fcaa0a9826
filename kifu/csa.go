package kifu

import (
	"strconv"
	"strings"

	"github.com/usid/usid/shogi"
)

var csaKinds = map[string]shogi.Kind{
	"FU": shogi.Pawn, "KY": shogi.Lance, "KE": shogi.Knight, "GI": shogi.Silver, "KI": shogi.Gold,
	"KA": shogi.Bishop, "HI": shogi.Rook, "OU": shogi.King, "TO": shogi.ProPawn, "NY": shogi.ProLance,
	"NK": shogi.ProKnight, "NG": shogi.ProSilver, "UM": shogi.Horse, "RY": shogi.Dragon,
}

var csaEnds = map[string]End{
	"%TORYO": EndResign, "%CHUDAN": EndAbort, "%SENNICHITE": EndRepetition, "%JISHOGI": EndImpasse,
	"%TIME_UP": EndTimeUp, "%ILLEGAL_MOVE": EndIllegalLoss, "%+ILLEGAL_ACTION": EndIllegalWin,
	"%-ILLEGAL_ACTION": EndIllegalWin, "%TSUMI": EndMate, "%FUZUMI": EndNoMate, "%KACHI": EndDeclareWin,
	"%HIKIWAKE": EndDraw, "%MAX_MOVES": EndImpasse,
}

// csaState reads a CSA record.
type csaState struct {
	r      *Record
	rc     commentText // the record's comment
	b      *builder
	max    int
	bd     *board
	pLine  int  // first position line
	rows   int  // P1..P9 seen (bitmask count)
	seen   uint // P1..P9 rows seen
	al     bool // 00AL used
	posSet bool // PI, P1..P9 or P+/P- given
	pi     bool // PI given
}

func parseCSA(lines []string, max int) (*Record, *Error) {
	st := &csaState{r: &Record{Format: FormatCSA}, max: max, bd: &board{}}
	for i, raw := range lines {
		ln := i + 1
		l := strings.TrimRight(raw, " \t")
		if l == "" {
			continue
		}
		if l[0] == '\'' {
			// Comments: "'*" is a comment for the record, "'**" an
			// engine's evaluation (floodgate); both kept.
			st.comment(l[1:])
			continue
		}
		if l[0] == '$' || l[0] == 'N' && len(l) > 1 && (l[1] == '+' || l[1] == '-') {
			if err := st.header(l, ln); err != nil {
				return nil, err
			}
			continue
		}
		// Several statements may share a line, separated by commas.
		for _, stmt := range strings.Split(l, ",") {
			if err := st.statement(strings.TrimSpace(stmt), ln); err != nil {
				return nil, err
			}
		}
	}
	if st.b == nil {
		if err := st.begin(len(lines), shogi.Black); err != nil {
			return nil, err
		}
	}
	st.b.finish(st.r, &st.rc)
	return st.r, nil
}

func (st *csaState) comment(c string) {
	if st.b == nil {
		st.rc.add(c)
		return
	}
	st.b.comment(&st.rc, c)
}

func (st *csaState) header(l string, ln int) *Error {
	if l[0] == 'N' {
		key, val := l[:2], strings.TrimSpace(l[2:])
		st.r.Header = append(st.r.Header, Field{Key: key, Value: val})
		if l[1] == '+' {
			st.r.Black = val
		} else {
			st.r.White = val
		}
		return nil
	}
	i := strings.IndexByte(l, ':')
	if i < 2 {
		return errorf(ln, CodeRecordSyntax, "a CSA header is \"$KEY:value\"")
	}
	key, val := l[1:i], strings.TrimSpace(l[i+1:])
	st.r.Header = append(st.r.Header, Field{Key: key, Value: val})
	switch key {
	case "EVENT":
		st.r.Event = val
	case "START_TIME":
		st.r.Date = val
	}
	return nil
}

// begin fixes the start position when the first move (or turn) comes.
func (st *csaState) begin(ln int, turn shogi.Color) *Error {
	at := st.pLine
	if !st.posSet {
		// A record without a position starts from the standard one.
		st.setHirate()
		at = ln
	}
	if st.seen != 0 && st.seen != 0x1ff {
		return errorf(st.pLine, CodeRecordSyntax, "the position gives some of the ranks P1..P9, not all")
	}
	st.bd.turn = turn
	st.bd.moveN = 1
	p, err := startPosition(st.bd.sfen(), at)
	if err != nil {
		return err
	}
	st.b = newBuilder(p, 1, st.max)
	return nil
}

func (st *csaState) setHirate() {
	p := shogi.Startpos()
	for s := shogi.Square(0); s < 81; s++ {
		st.bd.sq[s] = p.At(s)
	}
	st.posSet = true
}

func (st *csaState) statement(s string, ln int) *Error {
	if s == "" {
		return nil
	}
	switch {
	case s[0] == 'V':
		return nil // version
	case s[0] == 'T' && st.b != nil:
		v, err := strconv.ParseFloat(s[1:], 64)
		if err != nil || v < 0 || v > MaxTimeMS/1000 {
			return errorf(ln, CodeRecordSyntax, "a time is \"T\" and seconds: %q", clip(s))
		}
		if st.b.cur != st.b.root {
			st.b.cur.move.TimeMS = int64(v*1000 + 0.5)
		}
		return nil
	case s[0] == '%':
		if st.b == nil {
			if err := st.begin(ln, shogi.Black); err != nil {
				return err
			}
		}
		e, ok := csaEnds[s]
		if !ok {
			return errorf(ln, CodeRecordSyntax, "unknown special move %q", clip(s))
		}
		return st.b.end(e, ln, -1)
	case s == "+" || s == "-":
		if st.b != nil {
			return errorf(ln, CodeRecordSyntax, "the side to move after the moves began")
		}
		c := shogi.Black
		if s == "-" {
			c = shogi.White
		}
		return st.begin(ln, c)
	case s[0] == '+' || s[0] == '-':
		return st.move(s, ln)
	case s[0] == 'P':
		if st.b != nil {
			return errorf(ln, CodeRecordSyntax, "a position line after the moves began")
		}
		if st.pLine == 0 {
			st.pLine = ln
		}
		return st.position(s, ln)
	case s == "/":
		return errorf(ln, CodeRecordSyntax, "several games in one file; give one")
	}
	return errorf(ln, CodeRecordSyntax, "a line CSA does not allow: %q", clip(s))
}

func (st *csaState) position(s string, ln int) *Error {
	switch {
	case strings.HasPrefix(s, "PI"):
		if st.posSet {
			return errorf(ln, CodeRecordSyntax, "a second position")
		}
		st.setHirate()
		st.pi = true
		rest := s[2:]
		for len(rest) >= 4 {
			sq, ok := csaSquare(rest[:2])
			k, kok := csaKinds[rest[2:4]]
			if !ok || !kok || st.bd.sq[sq].Kind() != k {
				return errorf(ln, CodeRecordSyntax, "PI removes pieces of the start position: %q is none", rest[:4])
			}
			st.bd.sq[sq] = shogi.NoPiece
			rest = rest[4:]
		}
		if rest != "" {
			return errorf(ln, CodeRecordSyntax, "PI is followed by squares and pieces: %q", clip(rest))
		}
		return nil
	case len(s) >= 2 && s[1] >= '1' && s[1] <= '9':
		rank := int(s[1] - '0')
		if st.seen&(1<<(rank-1)) != 0 || st.pi {
			return errorf(ln, CodeRecordSyntax, "rank P%d given twice", rank)
		}
		st.seen |= 1 << (rank - 1)
		st.posSet = true
		row := s[2:]
		if len(row) < 27 {
			row += strings.Repeat(" ", 27-len(row))
		}
		if len(row) != 27 {
			return errorf(ln, CodeRecordSyntax, "a rank is 9 squares of 3 characters")
		}
		for i := 0; i < 9; i++ {
			c := row[3*i : 3*i+3]
			if strings.TrimSpace(c) == "*" {
				continue
			}
			k, ok := csaKinds[c[1:]]
			if !ok || c[0] != '+' && c[0] != '-' {
				return errorf(ln, CodeRecordSyntax, "%q is no piece", c)
			}
			color := shogi.Black
			if c[0] == '-' {
				color = shogi.White
			}
			st.bd.sq[shogi.NewSquare(9-i, rank)] = shogi.NewPiece(color, k)
		}
		return nil
	case len(s) >= 2 && (s[1] == '+' || s[1] == '-'):
		color := shogi.Black
		if s[1] == '-' {
			color = shogi.White
		}
		rest := s[2:]
		for len(rest) >= 4 {
			item := rest[:4]
			rest = rest[4:]
			if item == "00AL" {
				if st.al {
					return errorf(ln, CodeRecordSyntax, "00AL twice")
				}
				st.al = true
				st.allToHand(color)
				continue
			}
			k, ok := csaKinds[item[2:]]
			if !ok {
				return errorf(ln, CodeRecordSyntax, "%q is no piece", item[2:])
			}
			if item[:2] == "00" {
				if k > shogi.Gold {
					return errorf(ln, CodeRecordSyntax, "a %s cannot be held in hand", k)
				}
				st.bd.hands[color][k]++
				continue
			}
			sq, ok := csaSquare(item[:2])
			if !ok {
				return errorf(ln, CodeRecordSyntax, "%q is no square", item[:2])
			}
			st.bd.sq[sq] = shogi.NewPiece(color, k)
			st.posSet = true
		}
		if rest != "" {
			return errorf(ln, CodeRecordSyntax, "P%c is followed by squares and pieces: %q", s[1], clip(rest))
		}
		st.posSet = true
		return nil
	}
	return errorf(ln, CodeRecordSyntax, "a position line CSA does not allow: %q", clip(s))
}

// allToHand gives c every piece that is neither on the board nor in a hand
// (the kings excepted).
func (st *csaState) allToHand(c shogi.Color) {
	total := [shogi.King]int{shogi.Pawn: 18, shogi.Lance: 4, shogi.Knight: 4, shogi.Silver: 4, shogi.Gold: 4, shogi.Bishop: 2, shogi.Rook: 2}
	for s := shogi.Square(0); s < 81; s++ {
		if p := st.bd.sq[s]; p != shogi.NoPiece && p.Kind() != shogi.King {
			total[p.Kind().Base()]--
		}
	}
	for k := shogi.Pawn; k < shogi.King; k++ {
		n := total[k] - st.bd.hands[0][k] - st.bd.hands[1][k]
		if n > 0 {
			st.bd.hands[c][k] += n
		}
	}
}

func csaSquare(s string) (shogi.Square, bool) {
	if len(s) != 2 || s[0] < '1' || s[0] > '9' || s[1] < '1' || s[1] > '9' {
		return 0, false
	}
	return shogi.NewSquare(int(s[0]-'0'), int(s[1]-'0')), true
}

// move reads "+7776FU" (the piece after the move: a promoted name for a
// promotion) or "-0055KA" (a drop).
func (st *csaState) move(s string, ln int) *Error {
	if st.b == nil {
		c := shogi.Black
		if s[0] == '-' {
			c = shogi.White
		}
		if err := st.begin(ln, c); err != nil {
			return err
		}
	}
	b := st.b
	if err := b.ended(ln); err != nil {
		return err
	}
	if len(s) != 7 {
		return b.moveError(ln, CodeRecordSyntax, "a CSA move is like +7776FU: %q", clip(s))
	}
	if (s[0] == '-') != (b.cur.pos.Turn() == shogi.White) {
		return b.moveError(ln, CodeRecordSyntax, "a move by the side not to move: %q", s)
	}
	to, ok := csaSquare(s[3:5])
	k, kok := csaKinds[s[5:7]]
	if !ok || !kok {
		return b.moveError(ln, CodeRecordSyntax, "a CSA move is like +7776FU: %q", s)
	}
	var usi string
	if s[1:3] == "00" {
		if k > shogi.Gold {
			return b.moveError(ln, CodeMoveNotation, "a %s cannot be dropped", k)
		}
		usi = string(k.Letter()) + "*" + to.String()
	} else {
		from, ok := csaSquare(s[1:3])
		if !ok {
			return b.moveError(ln, CodeRecordSyntax, "%q is no square", s[1:3])
		}
		usi = from.String() + to.String()
		have := b.cur.pos.At(from)
		if have != shogi.NoPiece && have.Kind() != k {
			if have.Kind().CanPromote() && have.Kind().Promoted() == k {
				usi += "+"
			} else {
				if _, err := b.cur.pos.CheckMove(usi); err != nil {
					e := err.(*shogi.Error)
					return b.moveError(ln, e.Code, "%s", e.Message)
				}
				return b.moveError(ln, CodeMoveNotation, "the piece on %s is a %s; the move says it becomes a %s", from, have.Kind(), k)
			}
		}
	}
	return b.play(usi, ln)
}
