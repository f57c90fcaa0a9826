package kifu

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/usid/usid/shogi"
)

const spaces = " \t　"

var kifKinds = map[string]shogi.Kind{
	"歩": shogi.Pawn, "香": shogi.Lance, "桂": shogi.Knight, "銀": shogi.Silver, "金": shogi.Gold,
	"角": shogi.Bishop, "飛": shogi.Rook, "玉": shogi.King, "王": shogi.King,
	"と": shogi.ProPawn, "成香": shogi.ProLance, "杏": shogi.ProLance, "成桂": shogi.ProKnight, "圭": shogi.ProKnight,
	"成銀": shogi.ProSilver, "全": shogi.ProSilver, "馬": shogi.Horse, "龍": shogi.Dragon, "竜": shogi.Dragon,
}

var kifEnds = []struct {
	word string
	end  End
}{
	{"投了", EndResign}, {"中断", EndAbort}, {"千日手", EndRepetition}, {"持将棋", EndImpasse},
	{"切れ負け", EndTimeUp}, {"時間切れ", EndTimeUp}, {"反則勝ち", EndIllegalWin}, {"反則負け", EndIllegalLoss},
	{"詰み", EndMate}, {"不詰", EndNoMate}, {"入玉勝ち", EndDeclareWin}, {"宣言勝ち", EndDeclareWin},
	{"引き分け", EndDraw},
}

// endOfKIF returns the terminal word s starts with, or "".
func endOfKIF(s string) End {
	for _, e := range kifEnds {
		if strings.HasPrefix(s, e.word) {
			return e.end
		}
	}
	return ""
}

// digitValue reads a file or rank digit: ASCII, full-width or a kanji
// numeral; 0 if r is none.
func digitValue(r rune) int {
	switch {
	case r >= '1' && r <= '9':
		return int(r - '0')
	case r >= '１' && r <= '９':
		return int(r-'１') + 1
	}
	if i := strings.IndexRune("一二三四五六七八九", r); i >= 0 {
		return i/3 + 1
	}
	return 0
}

// notation is a move as KIF or KI2 writes it.
type notation struct {
	same    bool
	to      shogi.Square
	kind    shogi.Kind // as written: the piece before it moves
	mods    string     // 右左直上引寄 as written
	drop    bool
	promote int // 1 成, -1 不成, 0 not written
	from    shogi.Square
	hasFrom bool
}

// addMod records the modifier r once: a repeated one says nothing more
// (filterMods applies each alike), and appending every copy would make a
// run of them cost its square (a 64 KiB run of 右 took 0.2-0.3 s).
func (n *notation) addMod(r rune) {
	if !strings.ContainsRune(n.mods, r) {
		n.mods += string(r)
	}
}

// parseNotation reads a move at the start of s and returns the rest.
func parseNotation(s string) (notation, string, bool) {
	n := notation{to: shogi.NoSquare, from: shogi.NoSquare}
	if strings.HasPrefix(s, "同") {
		n.same = true
		s = strings.TrimLeft(s[len("同"):], spaces)
	} else {
		f, w1 := utf8.DecodeRuneInString(s)
		r, w2 := utf8.DecodeRuneInString(s[w1:])
		fv, rv := digitValue(f), digitValue(r)
		if fv == 0 || rv == 0 {
			return n, s, false
		}
		n.to = shogi.NewSquare(fv, rv)
		s = s[w1+w2:]
		// "同" may follow the square ("２四同歩"): the square is then written
		// twice; accept it.
		s = strings.TrimPrefix(s, "同")
		s = strings.TrimLeft(s, "　")
	}
	found := false
	for _, name := range []string{"成香", "成桂", "成銀"} {
		if strings.HasPrefix(s, name) {
			n.kind, s, found = kifKinds[name], s[len(name):], true
			break
		}
	}
	if !found {
		r, w := utf8.DecodeRuneInString(s)
		k, ok := kifKinds[string(r)]
		if !ok {
			return n, s, false
		}
		n.kind, s = k, s[w:]
	}
	for s != "" {
		switch {
		case strings.HasPrefix(s, "不成"):
			n.promote, s = -1, s[len("不成"):]
		case strings.HasPrefix(s, "生"):
			n.promote, s = -1, s[len("生"):]
		case strings.HasPrefix(s, "成"):
			n.promote, s = 1, s[len("成"):]
		case strings.HasPrefix(s, "打"):
			n.drop, s = true, s[len("打"):]
		case strings.HasPrefix(s, "行"), strings.HasPrefix(s, "入"):
			n.addMod('上')
			s = s[len("行"):]
		default:
			r, w := utf8.DecodeRuneInString(s)
			if strings.ContainsRune("右左直上引寄", r) {
				n.addMod(r)
				s = s[w:]
				continue
			}
			if len(s) >= 4 && s[0] == '(' && s[3] == ')' && s[1] >= '1' && s[1] <= '9' && s[2] >= '1' && s[2] <= '9' {
				n.from, n.hasFrom = shogi.NewSquare(int(s[1]-'0'), int(s[2]-'0')), true
				s = s[4:]
			}
			return n, s, true
		}
	}
	return n, s, true
}

// resolve turns a written move into a legal move of the current position.
func (b *builder) resolve(n notation, line int) (shogi.Move, *Error) {
	if err := b.ended(line); err != nil {
		return shogi.Move{}, err
	}
	pos := &b.cur.pos
	to := n.to
	if n.same {
		if b.cur.to == shogi.NoSquare {
			return shogi.Move{}, b.moveError(line, CodeRecordSyntax, "同 without a move before")
		}
		to = b.cur.to
	}
	turn := pos.Turn()
	if n.hasFrom && !n.drop {
		usi := n.from.String() + to.String()
		if n.promote == 1 {
			usi += "+"
		}
		m, err := pos.CheckMove(usi)
		if err != nil {
			e := err.(*shogi.Error)
			return m, b.moveError(line, e.Code, "%s", e.Message)
		}
		if k := pos.At(n.from).Kind(); k != n.kind {
			return m, b.moveError(line, CodeMoveNotation, "the piece on %s is a %s, not a %s", n.from, k, n.kind)
		}
		return m, nil
	}
	// No source square (KI2, or a KIF drop): find the legal moves the
	// notation fits.
	var cands []shogi.Move
	var firstErr *shogi.Error
	try := func(usi string) {
		m, err := pos.CheckMove(usi)
		if err != nil {
			if e := err.(*shogi.Error); firstErr == nil || firstErr.Code == shogi.CodeUnreachable && e.Code != shogi.CodeUnreachable {
				firstErr = e
			}
			return
		}
		cands = append(cands, m)
	}
	if !n.drop {
		for s := shogi.Square(0); s < 81; s++ {
			p := pos.At(s)
			if p == shogi.NoPiece || p.Color() != turn || p.Kind() != n.kind {
				continue
			}
			usi := s.String() + to.String()
			if n.promote == 1 {
				usi += "+"
			}
			try(usi)
		}
	}
	if len(cands) == 0 && n.kind <= shogi.Gold && n.promote != 1 && n.mods == "" {
		// A drop is written 打 only where a piece on the board could
		// move there too.
		if n.drop || firstErr == nil || pos.Hand(turn, n.kind) > 0 {
			firstErr = nil
			try(string(n.kind.Letter()) + "*" + to.String())
		}
	}
	if len(cands) == 0 {
		if firstErr != nil {
			return shogi.Move{}, b.moveError(line, firstErr.Code, "%s", firstErr.Message)
		}
		return shogi.Move{}, b.moveError(line, CodeMoveNotation, "no %s can move to %s", n.kind, to)
	}
	cands = filterMods(cands, n.mods, turn)
	switch len(cands) {
	case 0:
		return shogi.Move{}, b.moveError(line, CodeMoveNotation, "no %s moving to %s fits %q", n.kind, to, n.mods)
	case 1:
		return cands[0], nil
	}
	return shogi.Move{}, b.moveError(line, CodeMoveAmbiguous, "%d pieces can move to %s; the move does not say which (右, 左, 上, 引, 寄, 直)", len(cands), to)
}

// filterMods keeps the candidate moves the relative notation fits, seen
// from the side that moves: 上 forward, 引 back, 寄 sideways, 直 straight
// forward, 右 and 左 the rightmost and leftmost of the pieces.
func filterMods(cands []shogi.Move, mods string, turn shogi.Color) []shogi.Move {
	fwd := func(m shogi.Move) int { // rows gained toward the opponent
		d := m.From.Rank() - m.To.Rank()
		if turn == shogi.White {
			d = -d
		}
		return d
	}
	right := func(m shogi.Move) int { // larger is further right
		if turn == shogi.White {
			return m.From.File()
		}
		return -m.From.File()
	}
	keep := func(ok func(shogi.Move) bool) {
		out := cands[:0]
		for _, m := range cands {
			if !m.IsDrop() && ok(m) {
				out = append(out, m)
			}
		}
		cands = out
	}
	for _, r := range mods {
		switch r {
		case '上':
			keep(func(m shogi.Move) bool { return fwd(m) > 0 })
		case '引':
			keep(func(m shogi.Move) bool { return fwd(m) < 0 })
		case '寄':
			keep(func(m shogi.Move) bool { return fwd(m) == 0 })
		case '直':
			keep(func(m shogi.Move) bool { return fwd(m) == 1 && m.From.File() == m.To.File() })
		}
	}
	for _, r := range mods {
		if r != '右' && r != '左' || len(cands) == 0 {
			continue
		}
		best := right(cands[0])
		for _, m := range cands {
			if v := right(m); r == '右' && v > best || r == '左' && v < best {
				best = v
			}
		}
		keep(func(m shogi.Move) bool { return right(m) == best })
	}
	return cands
}

// kifState reads a KIF or KI2 record line by line.
type kifState struct {
	r         *Record
	f         Format
	b         *builder
	max       int
	bd        *board
	bdLine    int
	rows      int
	handicap  string
	hcLine    int
	moveN     int
	turnWhite bool
	started   bool        // the first main-line move has been read
	comment   commentText // the record's comment
}

func parseKIF(lines []string, f Format, max int) (*Record, *Error) {
	st := &kifState{r: &Record{Format: f}, f: f, max: max}
	for i, raw := range lines {
		if err := st.line(strings.TrimRight(raw, spaces), i+1); err != nil {
			return nil, err
		}
	}
	if st.b == nil {
		if err := st.begin(len(lines)); err != nil {
			return nil, err
		}
	}
	st.b.finish(st.r, &st.comment)
	return st.r, nil
}

// begin fixes the start position, once the header is over.
func (st *kifState) begin(line int) *Error {
	if st.b != nil {
		return nil
	}
	var sfen string
	at := line
	switch {
	case st.bd != nil:
		if st.rows != 9 {
			return errorf(st.bdLine, CodeRecordSyntax, "the board diagram has %d ranks, want 9", st.rows)
		}
		if st.turnWhite {
			st.bd.turn = shogi.White
		}
		st.bd.moveN = st.moveN + 1
		sfen, at = st.bd.sfen(), st.bdLine
	case st.handicap != "":
		sfen = handicapSFEN(st.handicap)
		if sfen == "" {
			return errorf(st.hcLine, CodeRecordSyntax, "手合割 %q is no known handicap (and no board diagram gives the start)", st.handicap)
		}
		at = st.hcLine
	default:
		sfen = shogi.StartSFEN
	}
	p, err := startPosition(sfen, at)
	if err != nil {
		return err
	}
	st.b = newBuilder(p, p.MoveNumber(), st.max)
	return nil
}

func (st *kifState) line(t string, ln int) *Error {
	s := strings.TrimLeft(t, spaces)
	if s == "" {
		return nil
	}
	switch s[0] {
	case '#', '&':
		return nil // ignored lines and bookmarks (しおり)
	case '*':
		if st.b == nil {
			st.comment.add(s[1:])
			return nil
		}
		st.b.comment(&st.comment, s[1:])
		return nil
	case '|':
		return st.boardRow(s, ln)
	case '+':
		if strings.HasPrefix(s, "+--") {
			st.bdStart(ln)
			return nil
		}
	}
	switch {
	case strings.HasPrefix(s, "手数----") || strings.HasPrefix(s, "手数――"):
		return st.begin(ln)
	case strings.HasPrefix(s, "変化"):
		return st.variation(s, ln)
	case strings.HasPrefix(s, "まで"):
		if st.f == FormatKI2 && st.b != nil && st.b.cur != st.b.root {
			return st.ki2End(s, ln)
		}
		return nil
	case strings.HasPrefix(s, "手数＝") || strings.HasPrefix(s, "手数="):
		v := strings.TrimPrefix(s, "手数")
		v = strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(v, "＝"), "="), spaces)
		n := 0
		for n < len(v) && isDigit(v[n]) {
			n++
		}
		if st.b != nil || n == 0 {
			return errorf(ln, CodeRecordSyntax, "a move count (手数) that is not a number before the moves")
		}
		st.moveN, _ = strconv.Atoi(v[:n])
		return nil
	case s == "後手番" || s == "上手番":
		st.turnWhite = true
		return nil
	case s == "先手番" || s == "下手番":
		st.turnWhite = false
		return nil
	case isFileLabels(s):
		st.bdStart(ln)
		return nil
	}
	if st.f == FormatKIF && isKIFMoveLine(s) {
		return st.kifMove(s, ln)
	}
	if st.f == FormatKI2 && strings.ContainsAny(s, "▲△☗☖▼▽") {
		return st.ki2Moves(s, ln)
	}
	if key, val, ok := headerLine(s); ok && (st.b == nil || st.b.cur == st.b.root) {
		return st.header(key, val, ln)
	}
	return errorf(ln, CodeRecordSyntax, "a line %s does not allow: %q", st.f, clip(s))
}

func clip(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		return string([]rune(s)[:40]) + "…"
	}
	return s
}

func isFileLabels(s string) bool {
	return strings.HasPrefix(s, "９ ８") || strings.HasPrefix(s, "９　８") || strings.HasPrefix(s, "9 8 7")
}

// headerLine splits "key：value" (a full-width or ASCII colon).
func headerLine(s string) (key, val string, ok bool) {
	i := strings.Index(s, "：")
	w := len("：")
	if j := strings.IndexByte(s, ':'); i < 0 || j >= 0 && j < i {
		i, w = j, 1
	}
	if i <= 0 {
		return "", "", false
	}
	key = s[:i]
	if strings.ContainsAny(key, spaces) || isDigit(key[0]) {
		return "", "", false
	}
	return key, strings.Trim(s[i+w:], spaces), true
}

func (st *kifState) header(key, val string, ln int) *Error {
	switch key {
	case "先手の持駒", "下手の持駒", "後手の持駒", "上手の持駒":
		if st.b != nil {
			return errorf(ln, CodeRecordSyntax, "a board diagram after the moves began")
		}
		st.bdStart(ln)
		c := shogi.Black
		if key[0:3] == "後" || key[0:3] == "上" {
			c = shogi.White
		}
		return st.hand(c, val, ln)
	}
	if st.b != nil && key == "手合割" {
		return errorf(ln, CodeRecordSyntax, "手合割 after the moves began")
	}
	st.r.Header = append(st.r.Header, Field{Key: key, Value: val})
	switch key {
	case "手合割":
		st.handicap, st.hcLine = val, ln
		if val == "その他" {
			st.handicap = ""
		}
		st.r.Handicap = ""
	case "先手", "下手":
		st.r.Black = val
	case "後手", "上手":
		st.r.White = val
	case "棋戦":
		st.r.Event = val
	case "開始日時", "対局日":
		if st.r.Date == "" {
			st.r.Date = val
		}
	}
	return nil
}

func (st *kifState) bdStart(ln int) {
	if st.bd == nil {
		st.bd = &board{}
		st.bdLine = ln
	}
}

// boardRow reads "|v香v桂 ・ ...|一".
func (st *kifState) boardRow(s string, ln int) *Error {
	if st.b != nil {
		return errorf(ln, CodeRecordSyntax, "a board diagram after the moves began")
	}
	st.bdStart(ln)
	rs := []rune(s[1:])
	if len(rs) < 19 || rs[18] != '|' || st.rows >= 9 {
		return errorf(ln, CodeRecordSyntax, "a board diagram rank is \"|\", 9 squares of 2 characters, \"|\"")
	}
	rank := st.rows + 1
	for i := 0; i < 9; i++ {
		mark, pc := rs[2*i], rs[2*i+1]
		if pc == '・' {
			continue
		}
		k, ok := kifKinds[string(pc)]
		if !ok {
			return errorf(ln, CodeRecordSyntax, "%q is no piece", string(pc))
		}
		c := shogi.Black
		switch mark {
		case 'v', 'V':
			c = shogi.White
		case ' ', '^', '　':
		default:
			return errorf(ln, CodeRecordSyntax, "%q before a piece is neither \" \" nor \"v\"", string(mark))
		}
		st.bd.sq[shogi.NewSquare(9-i, rank)] = shogi.NewPiece(c, k)
	}
	st.rows++
	return nil
}

// hand reads "銀二　歩十八" or "なし".
func (st *kifState) hand(c shogi.Color, val string, ln int) *Error {
	if val == "なし" || val == "" {
		return nil
	}
	for _, item := range strings.FieldsFunc(val, func(r rune) bool { return strings.ContainsRune(spaces+"、,", r) }) {
		r, w := utf8.DecodeRuneInString(item)
		k, ok := kifKinds[string(r)]
		if !ok || k > shogi.Gold {
			return errorf(ln, CodeRecordSyntax, "%q is no piece that can be held", string(r))
		}
		n, ok := kanjiCount(item[w:])
		if !ok {
			return errorf(ln, CodeRecordSyntax, "%q is no count", item[w:])
		}
		st.bd.hands[c][k] += n
	}
	return nil
}

// kanjiCount reads "" (one), "二".."十八", or digits.
func kanjiCount(s string) (int, bool) {
	if s == "" {
		return 1, true
	}
	if v, err := strconv.Atoi(s); err == nil && v > 0 && v <= 18 {
		return v, true
	}
	n, tens := 0, false
	for _, r := range s {
		switch {
		case r == '十' && !tens && n == 0:
			tens, n = true, 10
		case strings.ContainsRune("一二三四五六七八九", r):
			d := strings.IndexRune("一二三四五六七八九", r)/3 + 1
			if n%10 != 0 || n == 0 && tens {
				return 0, false
			}
			n += d
		default:
			return 0, false
		}
	}
	return n, n > 0 && n <= 18
}

// variation reads "変化：9手".
func (st *kifState) variation(s string, ln int) *Error {
	v := strings.TrimLeft(strings.TrimPrefix(s, "変化"), "：:"+spaces)
	v = strings.TrimSuffix(strings.TrimRight(v, spaces), "手")
	n, err := strconv.Atoi(v)
	if err != nil || st.b == nil {
		return errorf(ln, CodeRecordSyntax, "a variation is \"変化：N手\" after the moves")
	}
	return st.b.branch(n, ln)
}

// kifMove reads "  12 同　歩(23)   ( 0:05/00:01:02) +".
func (st *kifState) kifMove(s string, ln int) *Error {
	if err := st.begin(ln); err != nil {
		return err
	}
	b := st.b
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	num, err := strconv.Atoi(s[:i])
	if err != nil {
		return errorf(ln, CodeRecordSyntax, "a move number is too large")
	}
	if !st.started && b.cur == b.root && len(b.root.children) == 0 && num >= 1 && num <= 1<<20 {
		// The first move's number sets the count (a diagram may omit 手数).
		b.root.ply = num - 1
	}
	st.started = true
	if num != b.cur.ply+1 {
		return errorf(ln, CodeRecordSyntax, "move number %d where %d was expected", num, b.cur.ply+1)
	}
	rest := strings.TrimLeft(s[i:], spaces)
	if e := endOfKIF(rest); e != "" {
		for _, w := range kifEnds {
			if w.end == e && strings.HasPrefix(rest, w.word) {
				rest = rest[len(w.word):]
				break
			}
		}
		t, ok := kifTime(rest)
		if !ok {
			return errorf(ln, CodeRecordSyntax, "unexpected text after %s", e)
		}
		return b.end(e, ln, t)
	}
	rest = strings.TrimLeft(rest, "▲△☗☖")
	n, rest, ok := parseNotation(rest)
	if !ok {
		return b.moveError(ln, CodeRecordSyntax, "not a KIF move: %q", clip(s[i:]))
	}
	t, ok := kifTime(rest)
	if !ok {
		return b.moveError(ln, CodeRecordSyntax, "unexpected text after the move: %q", clip(rest))
	}
	m, perr := b.resolve(n, ln)
	if perr != nil {
		return perr
	}
	if perr := b.playMove(m, ln); perr != nil {
		return perr
	}
	b.cur.move.TimeMS = t
	return nil
}

// kifTime reads what may follow a KIF move: "( 0:16/00:00:16)", then "+"
// (the move has variations); -1 when no time is written.
func kifTime(s string) (int64, bool) {
	s = strings.Trim(s, spaces)
	s = strings.TrimRight(strings.TrimSuffix(s, "+"), spaces)
	if s == "" {
		return -1, true
	}
	if s[0] != '(' || s[len(s)-1] != ')' {
		return 0, false
	}
	in := strings.Trim(s[1:len(s)-1], spaces)
	if j := strings.IndexByte(in, '/'); j >= 0 {
		in = strings.Trim(in[:j], spaces)
	}
	var total int64
	parts := strings.Split(in, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	for _, p := range parts {
		v, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil || v < 0 || v > MaxTimeMS/1000 {
			return 0, false
		}
		total = total*60 + v
		if total > MaxTimeMS/1000 {
			return 0, false
		}
	}
	return total * 1000, true
}

// ki2Moves reads a line of KI2 moves: "▲７六歩　△３四歩　▲２六歩".
func (st *kifState) ki2Moves(s string, ln int) *Error {
	if err := st.begin(ln); err != nil {
		return err
	}
	b := st.b
	st.started = true
	for s != "" {
		r, w := utf8.DecodeRuneInString(s)
		if !strings.ContainsRune("▲△☗☖▼▽", r) {
			return b.moveError(ln, CodeRecordSyntax, "a KI2 move starts with ▲ or △: %q", clip(s))
		}
		white := r == '△' || r == '☖' || r == '▽'
		if white != (b.cur.pos.Turn() == shogi.White) {
			return b.moveError(ln, CodeRecordSyntax, "a move by the side not to move: %q", clip(s))
		}
		n, rest, ok := parseNotation(s[w:])
		if !ok {
			return b.moveError(ln, CodeRecordSyntax, "not a KI2 move: %q", clip(s))
		}
		if n.hasFrom {
			return b.moveError(ln, CodeRecordSyntax, "a KI2 move has no source square: %q", clip(s))
		}
		m, perr := b.resolve(n, ln)
		if perr != nil {
			return perr
		}
		if perr := b.playMove(m, ln); perr != nil {
			return perr
		}
		s = strings.TrimLeft(rest, spaces)
	}
	return nil
}

// ki2End reads "まで76手で先手の勝ち" at the end of a KI2 line.
func (st *kifState) ki2End(s string, ln int) *Error {
	var e End
	switch {
	case strings.Contains(s, "千日手"):
		e = EndRepetition
	case strings.Contains(s, "持将棋"):
		e = EndImpasse
	case strings.Contains(s, "中断"):
		e = EndAbort
	case strings.Contains(s, "反則"):
		e = EndIllegalLoss
	case strings.Contains(s, "詰み"):
		e = EndMate
	case strings.Contains(s, "勝ち"):
		e = EndResign
	default:
		return nil
	}
	if st.b.cur.end != "" {
		return nil
	}
	return st.b.end(e, ln, -1)
}
