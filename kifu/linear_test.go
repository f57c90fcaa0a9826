package kifu

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

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

// bombs are the shapes the shogi readers could be quadratic in, each a
// UTF-8 record of about size bytes made of many small parts.
var bombs = []struct {
	name string
	text func(size int) string
}{
	{"ki2_modifiers", func(n int) string { return "手合割：平手\n▲７六歩" + strings.Repeat("右", n/3) + "\n" }},
	{"kif_modifiers", func(n int) string {
		return "手合割：平手\n手数----指手---------消費時間--\n   1 ７六歩" + strings.Repeat("右", n/3) + "(77)\n"
	}},
	{"kif_header", func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "項目%d：x\n", i)
		}
		return b.String() + "手合割：平手\n手数----指手---------消費時間--\n   1 ７六歩(77)\n"
	}},
	{"ki2_comments", func(n int) string { return "手合割：平手\n▲７六歩\n" + strings.Repeat("*a\n", n/3) }},
	{"csa_header", func(n int) string {
		var b strings.Builder
		b.WriteString("V2.2\n")
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "$K%d:x\n", i)
		}
		return b.String() + "PI\n+\n+7776FU\n"
	}},
	{"csa_times", func(n int) string { return "V2.2\nPI\n+\n+7776FU\n" + strings.Repeat("T1,", n/3) + "\n" }},
	{"csa_hands", func(n int) string { return "V2.2\nPI\nP+" + strings.Repeat("00FU", n/4) + "\n+\n" }},
	{"usi_spaces", func(n int) string { return "position startpos moves 7g7f" + strings.Repeat(" \n", n/2) + "3c3d\n" }},
}

// threadCPU is the CPU time Parse takes for data on its thread, the least
// of 5 runs: unlike wall time, it does not count the time other processes
// hold the machine's cores.
func threadCPU(t *testing.T, data []byte) time.Duration {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	thread := func() time.Duration {
		var ts syscall.Timespec
		const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID (Linux): in nanoseconds, where getrusage counts ticks
		if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
			t.Fatal(errno)
		}
		return time.Duration(ts.Nano())
	}
	least := time.Duration(1<<63 - 1)
	for range 5 {
		runtime.GC()
		start := thread()
		Parse(data, Options{}) // some bombs are refused (csa_hands): the work counts all the same
		least = min(least, thread()-start)
	}
	return least
}

// TestBombsLinear: whatever a record is made of, sixteen times the text
// may cost about sixteen times the work (up to twice that where a slice
// doubles), not 256 times: in bytes allocated and in CPU time on the
// parsing thread (the least of 5 runs, with a wide margin: machines are
// shared). Before: a KI2 or KIF move's relative-position modifiers (右左上
// 引寄直) were appended one by one, copying those so far, so a 64 KiB move
// cost its square.
func TestBombsLinear(t *testing.T) {
	const small, large = 4 << 10, 64 << 10
	alloc := func(data []byte) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		Parse(data, Options{})
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	for _, b := range bombs {
		s, l := []byte(b.text(small)), []byte(b.text(large))
		a, z := alloc(s), alloc(l)
		a2, z2 := threadCPU(t, s), threadCPU(t, l)
		t.Logf("%s: %d bytes of text: %d bytes allocated, %v of CPU; %d bytes: %.1f and %.1f times that",
			b.name, len(s), a, a2, len(l), float64(z)/float64(a), float64(z2)/float64(a2))
		if ratio := float64(z) / float64(a); ratio > 48 {
			t.Errorf("%s: %d bytes of text allocate %d bytes, %d bytes %d: %.1f times (linear: 16 to 32)", b.name, len(s), a, len(l), z, ratio)
		}
		if ratio := float64(z2) / float64(a2); ratio > 48 {
			t.Errorf("%s: %d bytes of text take %v of CPU, %d bytes %v: %.1f times (linear: about 16)", b.name, len(s), a2, len(l), z2, ratio)
		}
	}
}

// TestRepeatedModifiers: a modifier written many times means what it means
// once.
func TestRepeatedModifiers(t *testing.T) {
	for _, text := range []string{bombs[0].text(64 << 10), bombs[1].text(64 << 10), "手合割：平手\n▲７六歩右右上上\n"} {
		r, err := Parse([]byte(text), Options{})
		if err != nil || len(r.Moves) != 1 || r.Moves[0].USI != "7g7f" {
			t.Errorf("%q: %v", clip(text), err)
		}
	}
}

// BenchmarkParseBombs: the bombs beside BenchmarkParseNormal's record of
// the same size (go test -bench Parse ./kifu).
func BenchmarkParseBombs(b *testing.B) {
	for _, bomb := range bombs {
		b.Run(bomb.name, func(b *testing.B) {
			data := []byte(bomb.text(64 << 10))
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				Parse(data, Options{})
			}
		})
	}
}
