package kifu

import (
	"fmt"
	"strings"

	"github.com/usid/usid/shogi"
)

var endWords = map[End]string{
	EndResign: "投了", EndAbort: "中断", EndRepetition: "千日手", EndImpasse: "持将棋", EndTimeUp: "切れ負け",
	EndIllegalWin: "反則勝ち", EndIllegalLoss: "反則負け", EndMate: "詰み", EndNoMate: "不詰",
	EndDeclareWin: "入玉勝ち", EndDraw: "引き分け",
}

// ExportKIF writes r as a UTF-8 KIF record: its header lines, 手合割 (or a
// board diagram for a start that is no handicap), the main line with
// consumed times where known (in whole seconds, KIF's unit), each move's
// comment and evaluation as "*" lines, then its variations as 変化 blocks
// (the last branch first, as Kifu for Windows writes them, so that each
// block continues the line read just before it). Every move must be legal
// and every time at most MaxTimeMS: r comes from Parse or was checked.
//
// The result reads back to the same game by construction: everything the
// reader takes for structure (moves, times, board diagrams, 手合割, 変化,
// 手数 lines) is written by the exporter itself, comments are "*" lines
// whatever they hold, and a header line is written only where the reader
// reads that very line back as that very header; any other header field
// (one shaped like a board row, 変化, a 手数 line, a move, a comment...) is
// written as a "#" line, which KIF readers ignore.
func ExportKIF(r *Record) (string, error) {
	start, err := shogi.ParseSFEN(r.StartSFEN)
	if err != nil {
		return "", err
	}
	if err := checkTimes(r.Moves); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("#KIF version=2.0 encoding=UTF-8\n")
	for _, f := range r.Header {
		if f.Key == "手合割" {
			continue // the start decides it, below
		}
		writeHeader(&b, kifKey(f.Key), f.Value)
	}
	if h := handicapOf(r.StartSFEN); h != "" {
		fmt.Fprintf(&b, "手合割：%s\n", h)
	} else {
		writeBOD(&b, start)
	}
	b.WriteString("手数----指手---------消費時間--\n")
	writeComment(&b, r.Comment)
	w := kifWriter{b: &b, times: hasTimes(r.Moves)}
	if err := w.line(start, shogi.NoSquare, r.Moves, r.End); err != nil {
		return "", err
	}
	return b.String(), nil
}

// writeHeader writes key：value as a header line if the reader reads that
// line, at the head of a record, as exactly this header and nothing else;
// else as an ignored "#" line.
func writeHeader(b *strings.Builder, key, value string) {
	value = strings.Trim(oneLine(value), spaces)
	line := key + "：" + value
	st := &kifState{r: &Record{Format: FormatKIF}, f: FormatKIF, max: 1}
	if err := st.line(strings.TrimRight(line, spaces), 1); err == nil && st.b == nil && st.bd == nil && st.handicap == "" &&
		st.moveN == 0 && !st.turnWhite && st.comment.b.Len() == 0 && len(st.r.Header) == 1 && st.r.Header[0] == (Field{key, value}) {
		b.WriteString(line + "\n")
		return
	}
	b.WriteString("#" + line + "\n")
}

// checkTimes refuses a time the reader would not read back.
func checkTimes(line []Move) error {
	for _, m := range line {
		if m.TimeMS > MaxTimeMS {
			return fmt.Errorf("kifu: a time of %d ms, over MaxTimeMS", m.TimeMS)
		}
		for _, v := range m.Variations {
			if err := checkTimes(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// csaKeys are CSA's header keys in KIF's words.
var csaKeys = map[string]string{"N+": "先手", "N-": "後手", "EVENT": "棋戦", "START_TIME": "開始日時", "END_TIME": "終了日時",
	"SITE": "場所", "OPENING": "戦型", "TIME_LIMIT": "持ち時間"}

// kifKey is the KIF key a header field is written with: CSA's keys in
// KIF's words, others as they are, on one line.
func kifKey(k string) string {
	if w, ok := csaKeys[k]; ok {
		return w
	}
	return oneLine(k)
}

func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// hasTimes tells whether a move of line or of its variations has a time:
// KIF writes times for every move or for none, so a time known only in a
// variation must still be written (a record read back would lose it).
func hasTimes(line []Move) bool {
	for _, m := range line {
		if m.TimeMS >= 0 {
			return true
		}
		for _, v := range m.Variations {
			if hasTimes(v) {
				return true
			}
		}
	}
	return false
}

func writeComment(b *strings.Builder, c string) {
	if c == "" {
		return
	}
	for _, l := range splitLines(c) {
		b.WriteString("*")
		b.WriteString(l)
		b.WriteString("\n")
	}
}

type kifWriter struct {
	b     *strings.Builder
	times bool
}

type branchPoint struct {
	pos   shogi.Position
	last  shogi.Square
	alts  [][]Move
	total [2]int64
}

// line writes the moves of a line from p, then its variations, the last
// branch first.
func (w *kifWriter) line(p *shogi.Position, last shogi.Square, moves []Move, end End) error {
	return w.lineTotals(p, last, moves, end, [2]int64{})
}

func (w *kifWriter) lineTotals(p *shogi.Position, last shogi.Square, moves []Move, end End, total [2]int64) error {
	q := *p
	var branches []branchPoint
	for i, m := range moves {
		if len(m.Variations) > 0 {
			branches = append(branches, branchPoint{pos: q, last: last, alts: m.Variations, total: total})
		}
		mv, err := q.CheckMove(m.USI)
		if err != nil {
			e := *err.(*shogi.Error)
			e.MoveIndex = i
			return &e
		}
		text := strings.TrimLeft(q.KIF(mv, last), "▲△")
		side := q.Turn()
		t := ""
		if w.times {
			ms := max(m.TimeMS, 0)
			total[side] += ms
			t = fmtTime(ms, total[side])
		}
		plus := ""
		if len(m.Variations) > 0 {
			plus = "+"
		}
		fmt.Fprintf(w.b, "%4d %s%s%s\n", q.MoveNumber(), padKIF(text), t, plus)
		writeComment(w.b, m.Comment)
		if m.Eval != nil {
			writeEval(w.b, &q, mv, m.Eval)
		}
		if err := q.Play(mv); err != nil {
			return err
		}
		last = mv.To
	}
	if end != "" {
		fmt.Fprintf(w.b, "%4d %s\n", q.MoveNumber(), endWords[end])
	}
	for i := len(branches) - 1; i >= 0; i-- {
		bp := branches[i]
		for _, alt := range bp.alts {
			fmt.Fprintf(w.b, "\n変化：%d手\n", bp.pos.MoveNumber())
			if err := w.lineTotals(&bp.pos, bp.last, alt, "", bp.total); err != nil {
				return err
			}
		}
	}
	return nil
}

// padKIF pads a move to the width Kifu for Windows aligns times at (the
// width of "７六歩(77)" plus spaces, counting full-width characters as two).
func padKIF(s string) string {
	w := 0
	for _, r := range s {
		if r < 0x80 {
			w++
		} else {
			w += 2
		}
	}
	if w < 13 {
		return s + strings.Repeat(" ", 13-w)
	}
	return s + " "
}

func fmtTime(ms, total int64) string {
	s, t := ms/1000, total/1000
	return fmt.Sprintf("(%2d:%02d/%02d:%02d:%02d)", s/60, s%60, t/3600, t/60%60, t%60)
}

// writeEval writes an evaluation in the comment lines ShogiHome reads
// (#評価値 from Black's side, #詰み, #読み筋, #深さ, #エンジン).
func writeEval(b *strings.Builder, before *shogi.Position, mv shogi.Move, e *Eval) {
	switch {
	case e.Mate != nil:
		who := "先手勝ち"
		if *e.Mate < 0 {
			who = "後手勝ち"
		}
		n := *e.Mate
		if n < 0 {
			n = -n
		}
		fmt.Fprintf(b, "*#詰み=%s:%d手\n", who, n)
	case e.CP != nil:
		fmt.Fprintf(b, "*#評価値=%d\n", *e.CP)
	}
	if len(e.PV) > 0 {
		after := *before
		if after.Play(mv) == nil {
			if pv, err := after.KIFLine(e.PV, mv.To); err == nil {
				fmt.Fprintf(b, "*#読み筋=%s\n", strings.Join(pv, ""))
			}
		}
	}
	if e.Depth > 0 {
		fmt.Fprintf(b, "*#深さ=%d\n", e.Depth)
	}
	if e.Engine != "" {
		fmt.Fprintf(b, "*#エンジン=%s\n", oneLine(e.Engine))
	}
}

var bodKinds = [...]string{
	shogi.Pawn: "歩", shogi.Lance: "香", shogi.Knight: "桂", shogi.Silver: "銀", shogi.Gold: "金", shogi.Bishop: "角",
	shogi.Rook: "飛", shogi.King: "玉", shogi.ProPawn: "と", shogi.ProLance: "杏", shogi.ProKnight: "圭",
	shogi.ProSilver: "全", shogi.Horse: "馬", shogi.Dragon: "龍",
}

var kanjiNums = [...]string{"", "", "二", "三", "四", "五", "六", "七", "八", "九", "十", "十一", "十二", "十三", "十四", "十五", "十六", "十七", "十八"}

// writeBOD writes p as a KIF board diagram.
func writeBOD(b *strings.Builder, p *shogi.Position) {
	hand := func(c shogi.Color) string {
		var parts []string
		for _, k := range []shogi.Kind{shogi.Rook, shogi.Bishop, shogi.Gold, shogi.Silver, shogi.Knight, shogi.Lance, shogi.Pawn} {
			if n := p.Hand(c, k); n > 0 {
				parts = append(parts, bodKinds[k]+kanjiNums[min(n, 18)])
			}
		}
		if len(parts) == 0 {
			return "なし"
		}
		return strings.Join(parts, "　")
	}
	fmt.Fprintf(b, "後手の持駒：%s\n", hand(shogi.White))
	b.WriteString("  ９ ８ ７ ６ ５ ４ ３ ２ １\n+---------------------------+\n")
	for r := 1; r <= 9; r++ {
		b.WriteString("|")
		for f := 9; f >= 1; f-- {
			pc := p.At(shogi.NewSquare(f, r))
			switch {
			case pc == shogi.NoPiece:
				b.WriteString(" ・")
			case pc.Color() == shogi.White:
				b.WriteString("v" + bodKinds[pc.Kind()])
			default:
				b.WriteString(" " + bodKinds[pc.Kind()])
			}
		}
		b.WriteString("|" + strings.Split("一 二 三 四 五 六 七 八 九", " ")[r-1] + "\n")
	}
	b.WriteString("+---------------------------+\n")
	fmt.Fprintf(b, "先手の持駒：%s\n", hand(shogi.Black))
	if p.Turn() == shogi.White {
		b.WriteString("後手番\n")
	}
	if n := p.MoveNumber(); n > 1 {
		fmt.Fprintf(b, "手数＝%d\n", n-1)
	}
}
