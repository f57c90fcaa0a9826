package othello

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/usid/usid/internal/rules/rulestest"
)

func code(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestStartpos(t *testing.T) {
	p := Startpos()
	if p.Token() != StartToken || p.Key() != StartToken[:65] {
		t.Fatalf("Token %s Key %s", p.Token(), p.Key())
	}
	if got := strings.Join(p.LegalMoveStrings(), " "); got != "d3 c4 f5 e6" {
		t.Fatalf("Black's first moves %q, want d3 c4 f5 e6", got)
	}
	if p.At(NewSquare(3, 3)) != WhiteDisc || p.At(NewSquare(4, 3)) != BlackDisc || p.WhiteToMove() || p.SideLetter() != "b" {
		t.Fatal("d4 is white, e4 black, Black to move")
	}
	q, err := ParsePosition("startpos")
	if err != nil || *q != *p {
		t.Fatalf("startpos: %v", err)
	}
}

// TestParseCodes: each syntax fault gets its code, and the message hints at
// the usual mix-ups (UOI's zero, lower case, a spaced move number).
func TestParseCodes(t *testing.T) {
	cells := StartToken[:64]
	for _, c := range []struct {
		in   string
		code Code
		hint string
	}{
		{"", CodeLength, ""},
		{cells, CodeLength, ""},
		{strings.Replace(cells, "O", "0", 1) + "B1", CodeCell, "zero"},
		{strings.Replace(cells, "X", "x", 1) + "B1", CodeCell, "upper case"},
		{cells + "b", CodeSide, ""},
		{cells + "B 1", CodeMoveNumber, "B1, not B 1"},
		{cells + "B0", CodeMoveNumber, ""},
		{cells + "B+1", CodeMoveNumber, ""},
		{cells + "B10000", CodeMoveNumber, ""},
	} {
		_, err := ParsePosition(c.in)
		if code(err) != c.code || !strings.Contains(err.Error(), c.hint) {
			t.Errorf("ParsePosition(%q) = %v, want %s (%q)", c.in, err, c.code, c.hint)
		}
	}
	p, err := ParsePosition(StartToken[:65] + "9999")
	if err != nil || p.MoveNumber() != 9999 {
		t.Fatalf("move number 9999: %v", err)
	}
	if _, err := ParseOFEN(StartToken); code(err) != CodeLength {
		t.Errorf("an ofen with a move number: %v", err)
	}
	if _, err := ParseOFEN(StartToken[:65]); code(err) != CodeCell || !strings.Contains(err.Error(), "letter O") {
		t.Errorf("a token read as ofen: %v", err)
	}
}

// TestOFEN: the ofen lists the same cells with 0 for white; conversions
// both ways; ParseAny tells the two apart by the zero.
func TestOFEN(t *testing.T) {
	const ofen = "---------------------------0X------X0---------------------------B"
	if o := Startpos().OFEN(); o != ofen {
		t.Fatalf("OFEN = %s", o)
	}
	if tok, err := OFENToToken(ofen); err != nil || tok != StartToken {
		t.Fatalf("OFENToToken = %s, %v", tok, err)
	}
	if o, err := TokenToOFEN("startpos"); err != nil || o != ofen {
		t.Fatalf("TokenToOFEN = %s, %v", o, err)
	}
	// After d3 (USI-X), d3 d4 d5 are black: asymmetric, so the naming shows.
	p := mustLoad(t, "startpos", "d3")
	o := p.OFEN()
	q, err := ParseAny(o)
	if err != nil || q.Key() != p.Key() {
		t.Fatalf("ParseAny(%s) = %v, %v", o, q, err)
	}
	if q.MoveNumber() != 2 {
		t.Errorf("guessed move number %d, want 2", q.MoveNumber())
	}
	// A board without white discs reads the same as token and as ofen.
	wipe := "----X------X-----XXXX------XXX-----XX------X-------X------------W"
	a, errA := ParsePosition(wipe)
	b, errB := ParseOFEN(wipe)
	if errA != nil || errB != nil || *a != *b {
		t.Fatalf("a board without white: %v %v", errA, errB)
	}
}

// TestUOISquares: the UOI letter is the row, the USI-X letter the column.
func TestUOISquares(t *testing.T) {
	for _, c := range [][2]string{{"d3", "c4"}, {"a1", "a1"}, {"h1", "a8"}, {"a8", "h1"}, {"f5", "e6"}, {"pass", "pass"}} {
		if u, ok := USIXToUOI(c[0]); !ok || u != c[1] {
			t.Errorf("USIXToUOI(%s) = %s, want %s", c[0], u, c[1])
		}
		if x, ok := UOIToUSIX(c[1]); !ok || x != c[0] {
			t.Errorf("UOIToUSIX(%s) = %s, want %s", c[1], x, c[0])
		}
	}
	for _, bad := range []string{"", "i1", "a9", "D3", "d", "d33"} {
		if _, ok := UOIToUSIX(bad); ok {
			t.Errorf("UOIToUSIX(%q) accepted", bad)
		}
		if _, ok := USIXToUOI(bad); ok {
			t.Errorf("USIXToUOI(%q) accepted", bad)
		}
	}
}

func TestParsePositionCommand(t *testing.T) {
	tok, moves, err := ParsePositionCommand("position sfen " + StartToken + " moves d3 c5 pass")
	if err != nil || tok != StartToken || strings.Join(moves, " ") != "d3 c5 pass" {
		t.Fatalf("got %s %v %v", tok, moves, err)
	}
	tok, moves, err = ParsePositionCommand("position sfen " + StartToken + " moves")
	if err != nil || tok != StartToken || len(moves) != 0 {
		t.Fatalf("an empty move list: %s %v %v", tok, moves, err)
	}
	if tok, _, err = ParsePositionCommand("startpos moves d3"); err != nil || tok != "startpos" {
		t.Fatalf("startpos: %v", err)
	}
	if _, _, err = ParsePositionCommand("sfen " + StartToken[:64] + " B 1"); code(err) != CodeLength {
		t.Fatalf("a spaced token: %v", err)
	}
	if _, _, err = ParsePositionCommand("fen x"); code(err) != CodePositionSyntax {
		t.Fatalf("fen: %v", err)
	}
}

func TestFinalScore(t *testing.T) {
	for _, c := range [][4]int{{33, 28, 36, 28}, {28, 33, 28, 36}, {31, 31, 32, 32}, {30, 31, 30, 34}, {64, 0, 64, 0}, {13, 0, 64, 0}, {32, 32, 32, 32}} {
		if b, w := FinalScore(c[0], c[1]); b != c[2] || w != c[3] {
			t.Errorf("FinalScore(%d, %d) = %d-%d, want %d-%d", c[0], c[1], b, w, c[2], c[3])
		}
	}
}

// TestVerdict: /v1/validate's shape, ["pass"] when the side must pass, []
// and a result when the game is over, the refused move's index.
func TestVerdict(t *testing.T) {
	v := Inspect("startpos", []string{"f5"})
	if !v.Valid || v.SideToMove != "w" || v.Othello != mustLoad(t, "startpos", "f5").Token() {
		t.Fatalf("%+v", v)
	}
	b, _ := json.Marshal(v)
	for _, want := range []string{`"valid":true`, `"othello":"`, `"side_to_move":"w"`, `"in_check":false`, `"legal_moves":["f4","d6","f6"]`, `"errors":[]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	v = Inspect("startpos", []string{"f5", "d6", "e9"})
	b, _ = json.Marshal(v)
	if v.Valid || len(v.Errors) != 1 || v.Errors[0].MoveIndex != 2 || !strings.Contains(string(b), `"code":"move_syntax"`) || !strings.Contains(string(b), `"move_index":2`) {
		t.Errorf("%s", b)
	}
	if v := Inspect("x", nil); v.Valid || v.Othello != "" || v.Errors[0].Code != CodeLength || v.LegalMoves == nil {
		t.Errorf("%+v", v)
	}
	wipe := "----X------X-----XXXX------XXX-----XX------X-------X------------W10"
	v = Inspect(wipe, nil)
	if !v.Valid || !v.GameOver || len(v.LegalMoves) != 0 || v.LegalMoves == nil || v.Result == nil || v.Result.Winner != BlackWins || v.Result.Black != 64 {
		t.Errorf("an ended game: %+v", v)
	}
}

// TestMustPassVerdict: a position where the side to move has no square
// while the opponent has one is valid, with ["pass"] its only move.
func TestMustPassVerdict(t *testing.T) {
	for _, r := range corpusRows(t, "must-pass") {
		v := Inspect(r, nil)
		if !v.Valid || len(v.LegalMoves) != 1 || v.LegalMoves[0] != "pass" || v.GameOver {
			t.Fatalf("%s: %+v", r, v)
		}
		return
	}
	t.Fatal("no must-pass row in the corpus")
}

func TestTranscript(t *testing.T) {
	ms, err := ParseTranscript(nil, "F5d6 C3d3\tc4")
	if err != nil || Transcript(ms) != "f5d6c3d3c4" || len(ms) != 5 {
		t.Fatalf("%v %v", ms, err)
	}
	for _, c := range []struct {
		in    string
		code  Code
		index int
	}{
		{"f5d", CodeMoveSyntax, 1},
		{"f5i6", CodeMoveSyntax, 1},
		{"f5-d6", CodeMoveSyntax, 1},
		{"f5f5", CodeOccupied, 1},
		{"f5a1", CodeFlipsNothing, 1},
	} {
		_, err := ParseTranscript(nil, c.in)
		var e *Error
		if !errors.As(err, &e) || e.Code != c.code || e.MoveIndex != c.index {
			t.Errorf("ParseTranscript(%q) = %v, want %s at %d", c.in, err, c.code, c.index)
		}
	}
	if ms, err := ParseTranscript(nil, ""); err != nil || len(ms) != 0 {
		t.Errorf("an empty transcript: %v %v", ms, err)
	}
}

// TestPlay: Play refuses what CheckMove refuses, with its code.
func TestPlay(t *testing.T) {
	p := Startpos()
	if err := p.Play(SquareMove(NewSquare(0, 0))); code(err) != CodeFlipsNothing {
		t.Fatalf("a1: %v", err)
	}
	if err := p.Play(Pass); code(err) != CodePassNotAllowed {
		t.Fatalf("pass: %v", err)
	}
	if err := p.Play(SquareMove(NewSquare(3, 3))); code(err) != CodeOccupied {
		t.Fatalf("d4: %v", err)
	}
	if err := p.Play(SquareMove(NewSquare(3, 2))); err != nil || p.Token() != "-------------------X-------XX------XO---------------------------W2" || p.Discs(Black) != 4 {
		t.Fatalf("d3: %v %s", err, p.Token())
	}
	if p.Notate(Pass) != "pass" || p.Notate(SquareMove(NewSquare(2, 4))) != "c5" {
		t.Fatal("Notate")
	}
}

// corpusRows returns the positions of legal corpus rows whose label starts
// with prefix and that have no moves.
func corpusRows(t *testing.T, prefix string) []string {
	var out []string
	for _, r := range rulestest.ReadTSV(t, "positions.tsv") {
		if r[0] == "legal" && strings.HasPrefix(r[1], prefix) && r[3] == "" {
			out = append(out, r[2])
		}
	}
	return out
}

// TestMoveNumberStops: the move number stops at MaxMoveNumber, so that the
// token of a position reached from one written with it reads back.
func TestMoveNumberStops(t *testing.T) {
	p := mustLoad(t, StartToken[:65]+"9998", "f5", "d6", "c3")
	if p.MoveNumber() != MaxMoveNumber {
		t.Fatalf("move number %d", p.MoveNumber())
	}
	if _, err := ParsePosition(p.Token()); err != nil {
		t.Fatal(err)
	}
	if Startpos().At(NoSquare) != Empty || Startpos().At(64) != Empty {
		t.Fatal("At off the board")
	}
}

// TestValidateEdges: a disc on the a-file is not next to one on the h-file
// a rank above (their bits are neighbours), nor the other way round.
func TestValidateEdges(t *testing.T) {
	put := func(cells ...int) string {
		b := []byte(StartToken)
		for _, c := range cells {
			b[c] = 'X'
		}
		return string(b)
	}
	for _, c := range []struct {
		tok  string
		lost string
	}{
		{put(34, 33, 32, 31), "h4 is"},     // a5 linked through c5 b5; h4 alone
		{put(34, 33, 32, 23), "h3 is"},     // h3 alone, a5's bit minus 9
		{put(29, 30, 31, 32, 40), "a5 a6"}, // h4 linked through f4 g4; a5 a6 alone
		{put(29, 30, 31, 39), "h5 is"},     // linked: h5 touches h4
	} {
		errs := mustParsePos(t, c.tok).Validate()
		if c.lost == "h5 is" {
			if errs != nil {
				t.Errorf("%s: %v", c.tok, Errors(errs))
			}
			continue
		}
		if len(errs) != 1 || errs[0].Code != CodeIsolatedDisc || !strings.Contains(errs[0].Message, c.lost) {
			t.Errorf("%s: %v, want isolated_disc for %s", c.tok, Errors(errs), c.lost)
		}
	}
}

func mustParsePos(t *testing.T, s string) *Position {
	t.Helper()
	p, err := ParsePosition(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseMove(t *testing.T) {
	if m, err := ParseMove("pass"); err != nil || m != Pass {
		t.Fatal(m, err)
	}
	if m, err := ParseMove("h8"); err != nil || m.Square() != NewSquare(7, 7) {
		t.Fatal(m, err)
	}
	for _, s := range []string{"", "H8", "i1", "a0", "pas", "a11"} {
		if _, err := ParseMove(s); code(err) != CodeMoveSyntax {
			t.Errorf("ParseMove(%q) = %v", s, err)
		}
	}
}
