package kifu

import (
	"bytes"
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/text/encoding/japanese"
)

// sjis encodes s as Shift_JIS (code page 932), as a .kif file is.
func sjis(t testing.TB, s string) []byte {
	t.Helper()
	b, err := japanese.ShiftJIS.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// commentBomb is a Shift_JIS KIF of about size bytes: a move, then
// one-character comment lines (4 bytes each), half of them before the
// moves (the record's comment), half after the move (its comment).
func commentBomb(t testing.TB, size int) []byte {
	var b strings.Builder
	b.WriteString("手合割：平手\n")
	n := size / 4
	for range n / 2 {
		b.WriteString("*あ\n")
	}
	b.WriteString("手数----指手---------消費時間--\n   1 ７六歩(77)\n")
	for range n - n/2 {
		b.WriteString("*い\n")
	}
	return sjis(t, b.String())
}

// normalRecord is a Shift_JIS KIF of about size bytes as GUIs write them:
// game A with a comment on each move, then 変化 blocks replaying its
// moves from various plies.
func normalRecord(t testing.TB, size int) []byte {
	data, err := os.ReadFile("testdata/kfw-game-a.kif")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.Moves {
		r.Moves[i].Comment = "ここは定跡通り。次の一手が大切な局面です。"
	}
	for k := 0; ; k++ {
		out, err := ExportKIF(r)
		if err != nil {
			t.Fatal(err)
		}
		if b := sjis(t, out); len(b) >= size {
			return b
		}
		at := 4 + k%30
		v := append([]Move(nil), r.Moves[at:]...)
		for i := range v {
			v[i].Variations = nil
		}
		r.Moves[at].Variations = append(r.Moves[at].Variations, v)
	}
}

// allocated is the bytes Parse allocates for data.
func allocated(t *testing.T, data []byte) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := Parse(data, Options{}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestParseLinear: the work of reading comment lines grows with their
// number, not its square (before: each line copied the comment so far, and
// a 64 KiB record of one-character comment lines cost 0.8 CPU-seconds).
// Measured in bytes allocated, which do not depend on the machine's load:
// twice the lines may cost about twice the bytes, not four times.
func TestParseLinear(t *testing.T) {
	small, large := allocated(t, commentBomb(t, 32<<10)), allocated(t, commentBomb(t, 64<<10))
	if large > 3*small {
		t.Errorf("32 KiB of comment lines allocate %d bytes, 64 KiB %d: %.1f times (linear: about 2)", small, large, float64(large)/float64(small))
	}
	if large > 64*(64<<10) {
		t.Errorf("a 64 KiB record allocates %d bytes, over 64 times its size", large)
	}
	csa := func(size int) []byte {
		var b strings.Builder
		b.WriteString("V2.2\nPI\n+\n")
		for range size / 8 {
			b.WriteString("'あ\n")
		}
		b.WriteString("+7776FU\n")
		for range size / 8 {
			b.WriteString("'い\n")
		}
		return sjis(t, b.String())
	}
	if small, large := allocated(t, csa(32<<10)), allocated(t, csa(64<<10)); large > 3*small {
		t.Errorf("CSA: 32 KiB of comment lines allocate %d bytes, 64 KiB %d", small, large)
	}
	r, err := Parse(commentBomb(t, 64<<10), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(r.Comment, "\n") + 1; n != 8192 || strings.Count(r.Moves[0].Comment, "い") != 8192 {
		t.Errorf("comments read: %d record lines, %d move lines", n, strings.Count(r.Moves[0].Comment, "い"))
	}
}

func BenchmarkParseCommentBomb(b *testing.B) { benchParse(b, commentBomb(b, 64<<10)) }
func BenchmarkParseNormal(b *testing.B)      { benchParse(b, normalRecord(b, 64<<10)) }

func benchParse(b *testing.B, data []byte) {
	if !bytes.Contains(data, []byte{0x82}) { // Shift_JIS lead byte of hiragana/full-width
		b.Fatal("not Shift_JIS")
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
