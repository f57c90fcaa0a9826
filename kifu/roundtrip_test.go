package kifu

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/usid/usid/shogi"
)

// sameLines compares two lines move by move, with their comments, times
// (in the whole seconds KIF writes; written as 0 when the export wrote
// times and the move had none)
// and variations; it returns the first difference.
func sameLines(a, b []Move, timesWritten bool, path string) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%s: %d moves, then %d: %v / %v", path, len(a), len(b), usis(a), usis(b))
	}
	for i := range a {
		p := fmt.Sprintf("%s/%d", path, i+1)
		ta := a[i].TimeMS
		if ta < 0 && timesWritten {
			ta = 0
		}
		if ta > 0 {
			ta -= ta % 1000 // KIF writes whole seconds
		}
		if a[i].USI != b[i].USI || a[i].Comment != b[i].Comment || ta != b[i].TimeMS {
			return fmt.Sprintf("%s: %s %q %d, then %s %q %d", p, a[i].USI, a[i].Comment, ta, b[i].USI, b[i].Comment, b[i].TimeMS)
		}
		if len(a[i].Variations) != len(b[i].Variations) {
			return fmt.Sprintf("%s: %d variations, then %d", p, len(a[i].Variations), len(b[i].Variations))
		}
		for j := range a[i].Variations {
			if d := sameLines(a[i].Variations[j], b[i].Variations[j], timesWritten, fmt.Sprintf("%s.v%d", p, j)); d != "" {
				return d
			}
		}
	}
	return ""
}

func roundTrip(t testing.TB, r *Record) *Record {
	t.Helper()
	out, err := ExportKIF(r)
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	back, err := Parse([]byte(out), Options{})
	if err != nil {
		t.Fatalf("re-import: %v\n%s", err, out)
	}
	if back.Format != FormatKIF || back.StartSFEN != r.StartSFEN || back.End != r.End || back.Comment != r.Comment || back.Handicap != r.Handicap {
		t.Fatalf("re-import: format %s start %s end %q comment %q handicap %q; want start %s end %q comment %q handicap %q\n%s",
			back.Format, back.StartSFEN, back.End, back.Comment, back.Handicap, r.StartSFEN, r.End, r.Comment, r.Handicap, out)
	}
	if d := sameLines(r.Moves, back.Moves, hasTimes(r.Moves), ""); d != "" {
		t.Fatalf("re-import: %s\n%s", d, out)
	}
	return back
}

// TestRoundTrip: every test record, exported as KIF and read again, gives
// the same start, moves, variations, comments, times, end and players.
func TestRoundTrip(t *testing.T) {
	for _, e := range readExpected(t) {
		t.Run(e.file, func(t *testing.T) {
			r := parseFile(t, e.file)
			back := roundTrip(t, r)
			if back.Black != r.Black || back.White != r.White || back.Event != r.Event || back.Date != r.Date {
				t.Errorf("players %q %q event %q date %q, want %q %q %q %q", back.Black, back.White, back.Event, back.Date, r.Black, r.White, r.Event, r.Date)
			}
		})
	}
}

// TestExportKIF: the exported text of a known game, line by line where it
// matters (Kifu for Windows' layout), and evaluations as ShogiHome's
// comment lines.
func TestExportKIF(t *testing.T) {
	r := parseFile(t, "kfw-game-a.kif")
	cp, mate := 120, -3
	r.Moves[0].Eval = &Eval{CP: &cp, Depth: 12, PV: []string{"3c3d", "2g2f"}, Engine: "fairy"}
	r.Moves[1].Eval = &Eval{Mate: &mate}
	out, err := ExportKIF(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"手合割：平手\n",
		"先手：先手太郎\n",
		"   1 ７六歩(77)   ( 0:12/00:00:12)\n*#評価値=120\n*#読み筋=△３四歩(33)▲２六歩(27)\n*#深さ=12\n*#エンジン=fairy\n",
		"   2 ３四歩(33)   ( 0:05/00:00:05)\n*#詰み=後手勝ち:3手\n",
		"  22 同　歩(23)   ( 0:20/00:01:02)\n",
		"  24 ２三歩打     ( 0:09/00:01:11)\n",
		"  35 ６五角打     ( 2:02/00:06:21)\n*疑問の一手\n",
		"  39 投了\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("export lacks %q:\n%s", want, out)
		}
	}
	back, err := Parse([]byte(out), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := back.Moves[0].Comment; c != "#評価値=120\n#読み筋=△３四歩(33)▲２六歩(27)\n#深さ=12\n#エンジン=fairy" {
		t.Errorf("evaluation comment read back as %q", c)
	}
	// A custom start is written as a board diagram and read back.
	tsume := parseFile(t, "bod-tsume.kif")
	out, _ = ExportKIF(tsume)
	if !strings.Contains(out, "|v玉 ・ ・") && !strings.Contains(out, "| ・ ・ ・ ・ ・ ・ ・ ・v玉|一") {
		t.Errorf("no board diagram:\n%s", out)
	}
	roundTrip(t, tsume)
}

var comments = []string{"", "", "", "好手", "*二重のアスタリスク", "変化：3手", "   1 ７六歩(77)", "&しおり風", "#シャープ", "line one\nline two", "評価値 +120"}

// randomLine plays up to n random legal moves from p.
func randomLine(rng *rand.Rand, p shogi.Position, n int, depth int, budget *int) []Move {
	var line []Move
	for i := 0; i < n && *budget > 0; i++ {
		legal := p.LegalMoves()
		if len(legal) == 0 {
			break
		}
		m := legal[rng.IntN(len(legal))]
		mv := Move{USI: m.String(), TimeMS: int64(rng.IntN(4000)) * 1000, Comment: comments[rng.IntN(len(comments))]}
		*budget--
		if depth < 3 && rng.IntN(8) == 0 {
			for k := rng.IntN(2) + 1; k > 0; k-- {
				alt := legal[rng.IntN(len(legal))]
				if alt == m {
					continue
				}
				q := p
				_ = q.Play(alt)
				v := append([]Move{{USI: alt.String(), TimeMS: 1000}}, randomLine(rng, q, rng.IntN(6), depth+1, budget)...)
				mv.Variations = append(mv.Variations, v)
			}
		}
		line = append(line, mv)
		if err := p.Play(m); err != nil {
			panic(err)
		}
	}
	return line
}

var propertyStarts = []string{
	shogi.StartSFEN,
	"lnsgkgsn1/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",
	"4k4/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",
	"8k/9/8P/9/9/9/9/9/9 b G2r2b3g4s4n4l17p 1",
	"lnsgkgsnl/1r5b1/ppppppp1p/9/9/2P4R1/PP1PPPP1P/1B7/LNSGKGSNL w Pp 12",
}

// TestPropertyRoundTrip: random games with random variations, comments and
// times survive export to KIF and import.
func TestPropertyRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 2024))
	for i := 0; i < 200; i++ {
		sfen := propertyStarts[i%len(propertyStarts)]
		p, err := shogi.ParseSFEN(sfen)
		if err != nil {
			t.Fatal(err)
		}
		budget := 400
		r := &Record{StartSFEN: p.SFEN(), Moves: randomLine(rng, *p, rng.IntN(150), 0, &budget), Comment: comments[rng.IntN(len(comments))]}
		r.Handicap = handicapOf(r.StartSFEN)
		if rng.IntN(2) == 0 {
			r.End = EndResign
		}
		r.Header = []Field{{"先手", "a"}, {"後手", "b"}}
		roundTrip(t, r)
	}
}

// TestPropertyKI2: every legal move of random positions can be written in
// KI2 (a piece, a square and some of 右左上引寄直, 打, 成/不成) so that the
// resolver finds exactly that move, and a move that is the only one of its
// piece to its square needs no relative word.
func TestPropertyKI2(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	modSets := []string{"", "右", "左", "上", "引", "寄", "直", "右上", "右引", "右寄", "左上", "左引", "左寄"}
	positions := 0
	for g := 0; g < 40; g++ {
		p := *shogi.Startpos()
		for ply := 0; ply < 120; ply++ {
			legal := p.LegalMoves()
			if len(legal) == 0 {
				break
			}
			positions++
			b := newBuilder(&p, 1, 10)
			for _, m := range legal {
				n := notation{to: m.To, from: shogi.NoSquare, drop: m.IsDrop()}
				if m.IsDrop() {
					n.kind = m.Drop
				} else {
					n.kind = p.At(m.From).Kind()
					if m.Promote {
						n.promote = 1
					}
				}
				found := false
				for _, mods := range modSets {
					n.mods = mods
					got, err := b.resolve(n, 1)
					if err == nil && got == m {
						found = true
						break
					}
					if mods == "" && err == nil && got != m {
						t.Fatalf("%s: %v written without relative words resolves to %v", p.SFEN(), m, got)
					}
				}
				if !found {
					t.Fatalf("%s: no KI2 notation resolves to %v", p.SFEN(), m)
				}
			}
			_ = p.Play(legal[rng.IntN(len(legal))])
		}
	}
	t.Logf("%d positions, every legal move written and resolved", positions)
}

// FuzzParse: no input panics or hangs; a record that parses (KIF, KI2, CSA
// with any header keys, comments and times, USI, SFEN) exports to KIF that
// parses to the same game (sameGame: start, lines, comments, times, end;
// no header read back as anything else).
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.*")
	for _, name := range files {
		if strings.HasSuffix(name, ".tsv") || strings.HasSuffix(name, ".md") {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("▲５八金右　△同　金\n"))
	f.Add([]byte("PI82HI22KA\n-\n-5152OU\n%TORYO\n"))
	f.Add([]byte("変化：1手\n"))
	// CSA keys and times KIF reads as structure (issue 25).
	f.Add([]byte("$変化:3手\n$手数----:x\n$+---:x\n$手数＝9:x\nPI19KY\n+\n+7776FU\nT999999999\n-3334FU\nT0.5\n%TORYO\n"))
	f.Add([]byte("$|v香v桂v銀v金v玉v金v銀v桂v香|一:x\n$|v歩v歩v歩v歩v歩v歩v歩v歩v歩|三:x\n$後手の持駒:飛\n$後手番:\nPI82HI22KA\n-\n-5142OU\n'*c\n"))
	f.Add([]byte("N+|v香v桂v銀v金v玉v金v銀v桂v香|一\n$*x:y\n$   1 ７六歩(77):x\n$９ ８ ７:x\n+7776FU,T12.25\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(data, Options{MaxMoves: 500})
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T %v is not a *kifu.Error", err, err)
			}
			return
		}
		out, err := ExportKIF(r)
		if err != nil {
			t.Fatalf("export of a parsed record: %v", err)
		}
		back, err := Parse([]byte(out), Options{MaxMoves: 500})
		if err != nil {
			t.Fatalf("re-import: %v\n%s", err, out)
		}
		if d := sameGame(r, back); d != "" {
			t.Fatalf("re-import: %s\n%s", d, out)
		}
	})
}

// exportedFields are the header fields an export of r may write: r's
// fields with CSA's keys in KIF's words, values on one line without outer
// spaces, and the start's 手合割.
func exportedFields(r *Record) []Field {
	out := []Field{{"手合割", handicapOf(r.StartSFEN)}}
	for _, f := range r.Header {
		out = append(out, Field{kifKey(f.Key), strings.Trim(oneLine(f.Value), spaces)})
	}
	return out
}

// sameGame compares a record with what its KIF export read back as: the
// start, every line with its comments, times (in the whole seconds KIF
// writes) and variations, the end, the record's comment; and no header
// field the export did not write from r (nothing of a header came back as
// something else). It returns the first difference.
func sameGame(r, back *Record) string {
	if back.Format != FormatKIF || back.StartSFEN != r.StartSFEN || back.End != r.End || back.Comment != r.Comment || back.Handicap != r.Handicap {
		return fmt.Sprintf("format %s start %s end %q comment %q handicap %q; want start %s end %q comment %q handicap %q",
			back.Format, back.StartSFEN, back.End, back.Comment, back.Handicap, r.StartSFEN, r.End, r.Comment, r.Handicap)
	}
	if d := sameLines(r.Moves, back.Moves, hasTimes(r.Moves), ""); d != "" {
		return d
	}
	written := exportedFields(r)
	for _, f := range back.Header {
		if !slices.Contains(written, f) {
			return fmt.Sprintf("header %q: %q came back, which the export did not write from %v", f.Key, f.Value, r.Header)
		}
	}
	return ""
}

// TestExportStructureFromHeaders: what the KIF reader takes for structure
// (board-diagram rows and frames, 変化, 手数 lines, turn and hand lines,
// comments, moves) never comes out of a header: CSA keys of any shape
// export to KIF that reads back to the same game (before: 422, a shifted
// move number, or nine row-shaped keys read back as a board diagram that
// took White's rook and bishop); times of any length CSA allows too.
func TestExportStructureFromHeaders(t *testing.T) {
	rows := []string{"v香v桂v銀v金v玉v金v銀v桂v香", " ・ ・ ・ ・ ・ ・ ・ ・ ・", "v歩v歩v歩v歩v歩v歩v歩v歩v歩",
		" ・ ・ ・ ・ ・ ・ ・ ・ ・", " ・ ・ ・ ・ ・ ・ ・ ・ ・", " ・ ・ ・ ・ ・ ・ ・ ・ ・",
		" 歩 歩 歩 歩 歩 歩 歩 歩 歩", " ・ 角 ・ ・ ・ ・ ・ 飛 ・", " 香 桂 銀 金 玉 金 銀 桂 香"}
	var diagram strings.Builder
	for i, r := range rows {
		fmt.Fprintf(&diagram, "$|%s|%s:x\n", r, strings.Split("一 二 三 四 五 六 七 八 九", " ")[i])
	}
	moves := "+7776FU\nT12\n-3334FU\nT999999999\n+2726FU\nT0.5\n%TORYO\n"
	for name, rec := range map[string]string{
		"変化":               "V2.2\n$変化:3手\nPI\n+\n" + moves,
		"手数 line":          "V2.2\n$手数----指手--:x\nPI\n+\n" + moves,
		"board frame":      "V2.2\n$+---------------------------+:x\nPI\n+\n" + moves,
		"move count":       "V2.2\n$手数＝9:x\nPI19KY\n+\n" + moves,
		"board rows":       "V2.2\n" + diagram.String() + "PI\n+\n" + moves, // the rows: White without rook and bishop
		"file labels":      "V2.2\n$９ ８ ７ ６ ５ ４ ３ ２ １:x\nPI\n+\n" + moves,
		"hand":             "V2.2\n$後手の持駒:飛二　角二\nPI\n+\n" + moves,
		"turn":             "V2.2\n$後手番:\nPI\n+\n" + moves,
		"comment":          "V2.2\n$*a comment:x\nPI\n+\n" + moves,
		"ignored":          "V2.2\n$#x:y\n$&x:y\n$まで:x\nPI\n+\n" + moves,
		"move":             "V2.2\n$   1 ７六歩(77):x\n$1 ７六歩:x\nPI\n+\n" + moves,
		"handicap":         "V2.2\n$手合割:香落ち\nPI\n+\n" + moves,
		"values and names": "V2.2\nN+|v香v桂v銀v金v玉v金v銀v桂v香|一\nN-変化：3手\n$EVENT:手数＝9\nPI\n+\n" + moves,
	} {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			r, err := Parse([]byte(rec), Options{})
			if err != nil {
				t.Fatalf("the CSA record: %v", err)
			}
			out, err := ExportKIF(r)
			if err != nil {
				t.Fatalf("export: %v", err)
			}
			back, err := Parse([]byte(out), Options{})
			if err != nil {
				t.Fatalf("re-import: %v\n%s", err, out)
			}
			if d := sameGame(r, back); d != "" {
				t.Fatalf("re-import: %s\n%s", d, out)
			}
		})
	}
}

// TestPropertyHeaderFields: header fields made of what the reader takes
// for structure, in any order and mixture (as /v1/records/export takes
// them from a client, and CSA records carry them), never change the game
// the export reads back as.
func TestPropertyHeaderFields(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 2026))
	parts := []string{"|", "|v香v桂v銀v金v玉v金v銀v桂v香|一", " ・", "+---", "+--", "変化", "：", ":", "3手", "手数----", "手数――", "手数＝", "手数=", "9",
		"*", "#", "&", "まで", "後手番", "先手番", "上手番", "先手の持駒", "後手の持駒", "９ ８", "9 8 7", "   1 ７六歩(77)", "1", " ", "　", "\t",
		"\n", "\r", "手合割", "平手", "香落ち", "▲７六歩", "先手", "後手", "棋戦", "x", "N+", "EVENT", "( 0:12/00:00:12)", "投了"}
	word := func() string {
		var b strings.Builder
		for k := rng.IntN(4) + 1; k > 0; k-- {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		return b.String()
	}
	for i := 0; i < 2000; i++ {
		sfen := propertyStarts[i%len(propertyStarts)]
		p, err := shogi.ParseSFEN(sfen)
		if err != nil {
			t.Fatal(err)
		}
		budget := 40
		r := &Record{StartSFEN: p.SFEN(), Moves: randomLine(rng, *p, rng.IntN(20), 0, &budget)}
		r.Handicap = handicapOf(r.StartSFEN)
		for k := rng.IntN(12); k > 0; k-- {
			r.Header = append(r.Header, Field{Key: word(), Value: word()})
		}
		out, err := ExportKIF(r)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse([]byte(out), Options{})
		if err != nil {
			t.Fatalf("re-import: %v\nheader %q\n%s", err, r.Header, out)
		}
		if d := sameGame(r, back); d != "" {
			t.Fatalf("re-import: %s\nheader %q\n%s", d, r.Header, out)
		}
	}
}
