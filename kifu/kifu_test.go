package kifu

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/usid/usid/shogi"
)

type expected struct {
	file, format, handicap, end, start string
	moves                              []string
	final                              string
}

func readExpected(t testing.TB) []expected {
	t.Helper()
	f, err := os.Open("testdata/expected.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []expected
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || l[0] == '#' {
			continue
		}
		c := strings.Split(l, "\t")
		if len(c) != 7 {
			t.Fatalf("expected.tsv: %d columns in %q", len(c), l)
		}
		out = append(out, expected{c[0], c[1], c[2], c[3], c[4], strings.Fields(c[5]), c[6]})
	}
	return out
}

func parseFile(t testing.TB, name string) *Record {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(data, Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// TestRecords: every record of the test data gives the moves written by
// hand in expected.tsv, its start and final position, format and handicap.
func TestRecords(t *testing.T) {
	exp := readExpected(t)
	files, _ := filepath.Glob("testdata/*")
	listed := map[string]bool{"expected.tsv": true, "README.md": true, "fuzz": true}
	for _, e := range exp {
		listed[e.file] = true
		t.Run(e.file, func(t *testing.T) {
			r := parseFile(t, e.file)
			if string(r.Format) != e.format || r.Handicap != e.handicap || string(r.End) != e.end || r.StartSFEN != e.start {
				t.Errorf("format %q handicap %q end %q start %q, want %q %q %q %q", r.Format, r.Handicap, r.End, r.StartSFEN, e.format, e.handicap, e.end, e.start)
			}
			if got := r.USIMoves(); !reflect.DeepEqual(got, e.moves) && !(len(got) == 0 && len(e.moves) == 0) {
				t.Errorf("moves\n got %v\nwant %v", got, e.moves)
			}
			p, err := r.Final()
			if err != nil || p.SFEN() != e.final {
				t.Errorf("final %v (%v), want %s", p, err, e.final)
			}
		})
	}
	for _, f := range files {
		if !listed[filepath.Base(f)] {
			t.Errorf("%s is not in expected.tsv", f)
		}
	}
}

func TestHeaderCommentsTimes(t *testing.T) {
	r := parseFile(t, "kfw-game-a.kif")
	if r.Black != "先手太郎" || r.White != "後手花子" || r.Event != "usid 研究会" || r.Date != "2024/03/02 10:00:00" {
		t.Errorf("header: black %q white %q event %q date %q", r.Black, r.White, r.Event, r.Date)
	}
	if r.Comment != "対局前のコメント" {
		t.Errorf("record comment %q", r.Comment)
	}
	if c := r.Moves[3].Comment; c != "振り飛車を明示" {
		t.Errorf("move 4 comment %q", c)
	}
	if c := r.Moves[34].Comment; c != "疑問の一手" {
		t.Errorf("move 35 comment %q", c)
	}
	if r.Moves[20].TimeMS != 65000 || r.Moves[34].TimeMS != 122000 || r.Moves[0].TimeMS != 12000 {
		t.Errorf("times %d %d %d, want 65000 122000 12000", r.Moves[20].TimeMS, r.Moves[34].TimeMS, r.Moves[0].TimeMS)
	}
	if r.Moves[0].Line != 11 || r.Moves[37].Line != 50 {
		t.Errorf("lines %d %d, want 11 50", r.Moves[0].Line, r.Moves[37].Line)
	}

	c := parseFile(t, "floodgate-game-a.csa")
	if c.Black != "usid-black" || c.White != "usid-white" || !strings.HasPrefix(c.Event, "wdoor+floodgate") || c.Date != "2024/03/02 10:00:00" {
		t.Errorf("csa header: %q %q %q %q", c.Black, c.White, c.Event, c.Date)
	}
	if c.Moves[0].TimeMS != 12000 || c.Moves[34].TimeMS != 122000 {
		t.Errorf("csa times %d %d", c.Moves[0].TimeMS, c.Moves[34].TimeMS)
	}
	if c.Moves[0].Comment != "** 45 -3334FU +2726FU" {
		t.Errorf("csa comment %q", c.Moves[0].Comment)
	}
	// Both describe the same game: the same moves and times.
	for i := range r.Moves {
		if r.Moves[i].USI != c.Moves[i].USI || r.Moves[i].TimeMS != c.Moves[i].TimeMS {
			t.Errorf("move %d: kif %s %d, csa %s %d", i+1, r.Moves[i].USI, r.Moves[i].TimeMS, c.Moves[i].USI, c.Moves[i].TimeMS)
		}
	}

	h := parseFile(t, "shogihome-game-b.kifu")
	if h.Moves[0].Comment != "#評価値=52\n#読み筋=△８四歩▲２六歩\n#深さ=12\n#エンジン=Test Engine" {
		t.Errorf("shogihome comment %q", h.Moves[0].Comment)
	}
	k := parseFile(t, "handicap-kyo.kif")
	if k.Black != "下手の人" || k.White != "上手の人" {
		t.Errorf("handicap players %q %q", k.Black, k.White)
	}
}

func usis(line []Move) []string {
	out := make([]string, len(line))
	for i, m := range line {
		out[i] = m.USI
	}
	return out
}

func TestVariations(t *testing.T) {
	r := parseFile(t, "variations.kif")
	m := r.Moves
	if len(m[4].Variations) != 1 || !reflect.DeepEqual(usis(m[4].Variations[0]), []string{"3i4h", "8b4b"}) {
		t.Fatalf("variation at move 5: %v", m[4].Variations)
	}
	if m[4].Variations[0][0].Comment != "変化5手目" || m[1].Comment != "本譜" {
		t.Errorf("comments %q %q", m[4].Variations[0][0].Comment, m[1].Comment)
	}
	v := m[1].Variations
	if len(v) != 2 || !reflect.DeepEqual(usis(v[0]), []string{"8c8d", "2g2f", "8d8e"}) || !reflect.DeepEqual(usis(v[1]), []string{"4a3b"}) {
		t.Fatalf("variations at move 2: %v", v)
	}
	if sub := v[0][1].Variations; len(sub) != 1 || !reflect.DeepEqual(usis(sub[0]), []string{"7i6h", "3c3d"}) {
		t.Fatalf("variation at move 3 of the 8四歩 line: %v", sub)
	}
	if r.CountMoves() != 8+2+3+2+1 {
		t.Errorf("CountMoves %d, want 16", r.CountMoves())
	}
}

// TestKI2Relative: the relative notation picks the piece the Japan Shogi
// Association's rules name (seen from the side that moves).
func TestKI2Relative(t *testing.T) {
	cases := []struct {
		sfen, move, want string
	}{
		// Golds on 4i and 6i, both can go to 5h: Black's right is file 1.
		{"4k4/9/9/9/9/9/9/9/3GKG3 b - 1", "▲５八金右", "4i5h"},
		{"4k4/9/9/9/9/9/9/9/3GKG3 b - 1", "▲５八金左", "6i5h"},
		// White's right is file 9.
		{"3gkg3/9/9/9/9/9/9/9/4K4 w - 1", "△５二金右", "6a5b"},
		{"3gkg3/9/9/9/9/9/9/9/4K4 w - 1", "△５二金左", "4a5b"},
		// Straight up (直) or sideways (寄).
		{"4k4/9/9/9/9/9/9/3G5/4G3K b - 1", "▲５八金直", "5i5h"},
		{"4k4/9/9/9/9/9/9/3G5/4G3K b - 1", "▲５八金寄", "6h5h"},
		// Silvers on 4d and 4f to 5e: 引 (back) and 上 (up).
		{"4k4/9/9/5S3/9/5S3/9/9/4K4 b - 1", "▲５五銀引", "4d5e"},
		{"4k4/9/9/5S3/9/5S3/9/9/4K4 b - 1", "▲５五銀上", "4f5e"},
		// Three golds: 左上 (leftmost of those moving up).
		{"4k4/9/9/9/9/9/9/9/3GGG2K b - 1", "▲５八金左", "6i5h"},
		{"4k4/9/9/9/9/9/9/9/3GGG2K b - 1", "▲５八金直", "5i5h"},
		// Rooks on 9b and 1b to 5b: 右/左.
		{"4k4/R7R/9/9/9/9/9/9/4K4 b - 1", "▲５二飛右", "1b5b"},
		{"4k4/R7R/9/9/9/9/9/9/4K4 b - 1", "▲５二飛左", "9b5b"},
		// A drop where a board piece could move too needs 打.
		{"4k4/9/9/9/9/9/9/4G4/4K4 b G 1", "▲５七金打", "G*5g"},
		{"4k4/9/9/9/9/9/9/4G4/4K4 b G 1", "▲５七金", "5h5g"},
		// No board piece can go there: a drop without 打.
		{"4k4/9/9/9/9/9/9/9/4K4 b G 1", "▲５五金", "G*5e"},
		// Promotion written, and 不成.
		{"4k4/9/9/4S4/9/9/9/9/4K4 b - 1", "▲５三銀成", "5d5c+"},
		{"4k4/9/9/4S4/9/9/9/9/4K4 b - 1", "▲５三銀不成", "5d5c"},
	}
	for _, c := range cases {
		r, err := Parse([]byte("手合割：その他\n"+bodOf(t, c.sfen)+c.move+"\n"), Options{Format: FormatKI2})
		if err != nil {
			t.Errorf("%s %s: %v", c.sfen, c.move, err)
			continue
		}
		if got := r.USIMoves(); len(got) != 1 || got[0] != c.want {
			t.Errorf("%s %s: %v, want %s", c.sfen, c.move, got, c.want)
		}
	}
}

// bodOf writes a board diagram with ExportKIF's own writer.
func bodOf(t testing.TB, sfen string) string {
	p, err := shogi.ParseSFEN(sfen)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	writeBOD(&b, p)
	return b.String()
}

// TestBadRecords: the first bad line and its code.
func TestBadRecords(t *testing.T) {
	kif := "手合割：平手\n手数----指手---------消費時間--\n   1 ７六歩(77)\n"
	cases := []struct {
		name, text string
		line       int
		code       shogi.Code
		index      int
	}{
		{"kif unreachable", kif + "   2 ３五歩(33)\n", 4, shogi.CodeUnreachable, 1},
		{"kif empty source", kif + "   2 ３四歩(35)\n", 4, shogi.CodeEmptySource, 1},
		{"kif wrong piece", kif + "   2 ３四銀(33)\n", 4, CodeMoveNotation, 1},
		{"kif opponent piece", kif + "   2 ７五歩(76)\n", 4, shogi.CodeOpponentPiece, 1},
		{"kif move number", kif + "   3 ３四歩(33)\n", 4, CodeRecordSyntax, -1},
		{"kif garbage", kif + "   2 ３四歩(33)\nこんにちは\n", 5, CodeRecordSyntax, -1},
		{"kif after end", kif + "   2 投了\n   3 ２六歩(27)\n", 5, CodeRecordSyntax, -1},
		{"kif drop not in hand", kif + "   2 ５五角打\n", 4, shogi.CodeDropNotInHand, 1},
		{"kif unknown handicap", "手合割：九枚落ち\n手数----指手---------消費時間--\n   1 ７六歩(77)\n", 1, CodeRecordSyntax, -1},
		{"kif variation without line", kif + "変化：5手\n   5 ２六歩(27)\n", 4, CodeRecordSyntax, -1},
		{"kif bad bod", "後手の持駒：なし\n|v香v桂|一\n", 2, CodeRecordSyntax, -1},
		{"kif bod two kings", "後手の持駒：なし\n" + bodRows("4k4/9/9/9/9/9/9/9/3KK4") + "先手の持駒：なし\n", 1, shogi.CodeTwoKings, -1},
		{"ki2 ambiguous", "手合割：平手\n▲７六歩　△３四歩　▲５八金\n", 2, CodeMoveAmbiguous, 2},
		{"ki2 no such move", "手合割：平手\n▲７六歩　△３四歩　▲５五飛\n", 2, shogi.CodeUnreachable, 2},
		{"ki2 wrong side", "▲７六歩　▲３四歩\n", 1, CodeRecordSyntax, 1},
		{"ki2 nifu drop", "手合割：平手\n▲７六歩　△３四歩　▲２六歩　△８四歩　▲２五歩　△８五歩\n▲２四歩　△同　歩　▲同　飛　△３二金　▲７七歩\n", 3, shogi.CodeDropNifu, 10},
		{"csa wrong piece", "PI\n+\n+7776FU\n-3334KA\n", 4, CodeMoveNotation, 1},
		{"csa illegal", "PI\n+\n+7776FU\n-3335FU\n", 4, shogi.CodeUnreachable, 1},
		{"csa wrong side", "PI\n+\n+7776FU\n+2726FU\n", 4, CodeRecordSyntax, 1},
		{"csa self check", "P1-OU *  *  *  *  *  *  *  * \nP2 *  *  *  *  *  *  *  *  * \nP3 *  *  *  *  *  *  *  *  * \nP4 *  *  *  *  *  *  *  *  * \nP5 *  *  *  *  *  *  *  *  * \nP6 *  *  *  *  *  *  *  *  * \nP7 *  *  *  *  *  *  *  *  * \nP8-HI *  *  *  *  *  *  *  * \nP9+OU+KI *  *  *  *  *  *  * \n+\n+8988KI\n", 11, shogi.CodeSelfCheck, 0},
		{"csa partial board", "P1-OU *  *  *  *  *  *  *  * \n+\n", 1, CodeRecordSyntax, -1},
		{"csa unknown special", "PI\n+\n%FOO\n", 3, CodeRecordSyntax, -1},
		{"usi bad move", "position startpos moves 7g7f 3c3d\n8h3b\n", 2, shogi.CodeUnreachable, 2},
		{"usi syntax", "position startpos 7g7f\n", 1, shogi.CodePositionSyntax, -1},
		{"sfen nifu", "4k4/9/9/9/9/9/4P4/4P4/4K4 b - 1\n", 1, shogi.CodeNifu, -1},
		{"empty", "  \n\n", 0, CodeRecordFormat, -1},
		{"not a record", "hello world\n", 0, CodeRecordFormat, -1},
		{"encoding", "\xff\xfe\xfd", 0, CodeRecordEncoding, -1},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.text), Options{})
		e, ok := err.(*Error)
		if !ok {
			t.Errorf("%s: %v, want a *kifu.Error", c.name, err)
			continue
		}
		if e.Line != c.line || e.Code != c.code || e.MoveIndex != c.index {
			t.Errorf("%s: line %d code %s index %d (%s), want line %d code %s index %d", c.name, e.Line, e.Code, e.MoveIndex, e.Message, c.line, c.code, c.index)
		}
	}
}

func bodRows(board string) string {
	return bodOf(nil, board+" b - 1")[strings.Index(bodOf(nil, board+" b - 1"), "  ９"):strings.Index(bodOf(nil, board+" b - 1"), "先手の持駒")]
}

func TestMaxMoves(t *testing.T) {
	_, err := Parse([]byte("startpos moves 7g7f 3c3d 2g2f 8c8d"), Options{MaxMoves: 3})
	if e, ok := err.(*Error); !ok || e.Code != CodeRecordTooLong || e.Line != 1 {
		t.Fatalf("%v, want record_too_long on line 1", err)
	}
	if _, err := Parse([]byte("startpos moves 7g7f 3c3d 2g2f"), Options{MaxMoves: 3}); err != nil {
		t.Fatal(err)
	}
}

func TestDetect(t *testing.T) {
	for text, want := range map[string]Format{
		"position startpos":                FormatUSI,
		"startpos moves 7g7f":              FormatUSI,
		"sfen 4k4/9/9/9/9/9/9/9/4K4 b - 1": FormatUSI,
		"4k4/9/9/9/9/9/9/9/4K4 b - 1":      FormatSFEN,
		"V2.2\nPI\n+\n":                    FormatCSA,
		"+7776FU\n":                        FormatCSA,
		"手合割：平手\n   1 ７六歩(77)\n":           FormatKIF,
		"手合割：平手\n▲７六歩\n":                   FormatKI2,
		"後手の持駒：なし\n+------+\n|v玉 ・|一\n":    FormatKIF,
		"": "",
	} {
		if got := Detect(splitLines(text)); got != want {
			t.Errorf("Detect(%q) = %q, want %q", text, got, want)
		}
	}
}
