package pgn

import (
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// bombSize is the size of the texts BenchmarkRead compares: 60 KB, the
// comment bomb of issue 35.
const bombSize = 60 << 10

// repeat is head, then unit as many times as fill about size bytes, then
// tail.
func repeat(head, unit, tail string, size int) string {
	return head + strings.Repeat(unit, max(1, (size-len(head)-len(tail))/len(unit))) + tail
}

// numbered is head, then unit with %d replaced by 1, 2, ... up to about
// size bytes, then tail.
func numbered(head, unit, tail string, size int) string {
	var b strings.Builder
	b.WriteString(head)
	for i := 1; b.Len() < size-len(tail); i++ {
		fmt.Fprintf(&b, unit, i)
	}
	b.WriteString(tail)
	return b.String()
}

// bombs are the shapes a reader can be quadratic in, each a function of
// the text's size: many small parts where the reader might copy what it
// has read so far for each part, or look through it.
var bombs = []struct {
	name string
	text func(size int) string
}{
	{"comments", func(n int) string { return repeat("1. e4 ", "{a}", " *", n) }},
	{"game_comments", func(n int) string { return repeat("", "{a}", " 1. e4 *", n) }},
	{"line_comments", func(n int) string { return repeat("1. e4 ", ";a\n", "*", n) }},
	{"variation_comments", func(n int) string { return repeat("1. e4 (", "{a}", " 1. d4) *", n) }},
	{"comments_nags", func(n int) string { return repeat("1. e4 ", "{a} $1 ", " *", n) }},
	{"comments_variations", func(n int) string { return repeat("1. e4 ", "{a} (1. d4) ", " *", n) }},
	{"nags", func(n int) string { return repeat("1. e4", " $1", " *", n) }},
	{"commands", func(n int) string { return repeat("1. e4 ", "{[%clk 0:03:00] [%eval 0.1]}", " *", n) }},
	{"open_commands", func(n int) string { return repeat("1. e4 {", "[%clk ", "} *", n) }},
	{"unclosed_commands", func(n int) string { return repeat("1. e4 {", "[%clk 0:03:00 ", "]} *", n) }},
	{"variations", func(n int) string { return repeat("1. e4", " (1. d4)", " *", n) }},
	{"nested_variations", func(n int) string {
		nest := strings.Repeat("(1... d5 ", MaxDepth) + strings.Repeat(")", MaxDepth)
		return repeat("1. e4 e5 ", nest, " *", n)
	}},
	{"tags", func(n int) string { return numbered("", "[T%d \"x\"]\n", "*", n) }},
	{"tag_value", func(n int) string { return repeat(`[Event "`, "x", "\"]\n*", n) }},
	{"games", func(n int) string { return repeat("", "1. e4 *\n", "", n) }},
}

// normalPGN is a collection of about size bytes of games as they come:
// testdata/games.pgn (tags, comments, variations, NAGs) again and again.
func normalPGN(t testing.TB, size int) string {
	g := readFile(t, "games.pgn")
	return strings.Repeat(g+"\n", size/(len(g)+1)+1)
}

// allocated is the bytes Parse allocates for text.
func allocated(t *testing.T, text string) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := Parse(text); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// cpu is the CPU time Parse takes for text on its thread, the least of 5
// runs: unlike wall time, it does not count the time other processes hold
// the machine's cores.
func cpu(t *testing.T, text string) time.Duration {
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
		if _, err := Parse(text); err != nil {
			t.Fatal(err)
		}
		least = min(least, thread()-start)
	}
	return least
}

// TestParseLinear: the work of reading grows with the text, not its
// square, whatever the text is made of (before: each comment copied the
// comments of its move so far, and 60 KB of "{a}" allocated 450 MB in
// 222-308 ms; each tag pair looked through the tags before it). Sixteen
// times the text may cost about sixteen times the work (up to twice that
// where a slice doubles), not 256 times. Work is measured twice: in bytes
// allocated, which do not depend on the machine's load, and in CPU time on
// the parsing thread, for work that allocates nothing (the least of 5 runs,
// with a wide margin: machines are shared).
func TestParseLinear(t *testing.T) {
	const small, large = bombSize / 16, bombSize
	for _, b := range bombs {
		a, z := allocated(t, b.text(small)), allocated(t, b.text(large))
		if ratio := float64(z) / float64(a); ratio > 48 {
			t.Errorf("%s: %d bytes of text allocate %d bytes, %d bytes %d: %.1f times (linear: 16 to 32)",
				b.name, small, a, large, z, ratio)
		}
		if z > 160*large {
			t.Errorf("%s: %d bytes of text allocate %d bytes, over 160 times its size", b.name, large, z)
		}
		a2, z2 := cpu(t, b.text(small)), cpu(t, b.text(large))
		t.Logf("%s: %d bytes of text: %d bytes allocated, %v of CPU; %d bytes: %.1f and %.1f times that",
			b.name, small, a, a2, large, float64(z)/float64(a), float64(z2)/float64(a2))
		if ratio := float64(z2) / float64(a2); ratio > 48 {
			t.Errorf("%s: %d bytes of text take %v of CPU, %d bytes %v: %.1f times (linear: about 16)",
				b.name, small, a2, large, z2, float64(z2)/float64(a2))
		}
	}
}

// TestParseBombs: what the bombs are read as (comments joined by a space,
// in order, where they belong).
func TestParseBombs(t *testing.T) {
	parse := func(text string) *Game {
		t.Helper()
		gs, err := Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		return gs[0]
	}
	want := strings.TrimSpace(strings.Repeat("a ", 1000))
	if g := parse(repeat("1. e4 ", "{a}", " *", 6+3*1000+2)); g.Moves[0].Comment != want {
		t.Errorf("comments: %q", g.Moves[0].Comment)
	}
	if g := parse(repeat("", "{a}", " 1. e4 *", 3*1000+8)); g.Comment != want || g.Moves[0].Comment != "" {
		t.Errorf("game comments: %q, %q", g.Comment, g.Moves[0].Comment)
	}
	if g := parse(repeat("1. e4 (", "{ a }", " 1. d4) *", 7+5*1000+9)); g.Moves[0].Variations[0][0].Before != want || g.Moves[0].Comment != "" {
		t.Errorf("comments before a variation: %q", g.Moves[0].Variations[0][0].Before)
	}
	if g := parse(repeat("1. e4 ", "{a} (1. d4) ", " *", 6+12*1000+2)); g.Moves[0].Comment != want || len(g.Moves[0].Variations) != 1000 {
		t.Errorf("comments between variations: %q, %d variations", g.Moves[0].Comment, len(g.Moves[0].Variations))
	}
	if g := parse("{x} {} 1. e4 ; y\n{z} $1 {} {w} (1. d4 {v} {u}) ; t\ne5 {s} *"); g.Comment != "x" ||
		g.Moves[0].Comment != "y z w t" || g.Moves[0].Variations[0][0].Comment != "v u" || g.Moves[1].Comment != "s" {
		t.Errorf("mixed comments: %+v", g)
	}
	if g := parse(numbered("", "[T%d \"x\"]\n", "*", 20000)); len(g.Tags) < 1000 || g.Tag("T1000") != "x" {
		t.Errorf("tags: %d", len(g.Tags))
	}
}

// BenchmarkRead compares the bombs with a normal PGN of the same size
// (go test -bench Read ./chess/pgn).
func BenchmarkRead(b *testing.B) {
	run := func(b *testing.B, text string) {
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Parse(text); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("normal", func(b *testing.B) { run(b, normalPGN(b, bombSize)) })
	for _, bomb := range bombs {
		b.Run(bomb.name, func(b *testing.B) { run(b, bomb.text(bombSize)) })
	}
}
