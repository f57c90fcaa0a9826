package chess

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

func BenchmarkPerft5(b *testing.B) {
	p := Startpos()
	for b.Loop() {
		if n := p.Perft(5); n != 4865609 {
			b.Fatalf("perft(5) = %d", n)
		}
	}
}

// stockfishPath is Debian's stockfish, the reference the perft benchmark
// runs beside.
const stockfishPath = "/usr/games/stockfish"

// BenchmarkPerft5VsStockfish runs perft 5 from the start position here and
// in Debian's stockfish ("go perft 5", timed from the command to its "Nodes
// searched" line, the engine started and ready beforehand), in turns in
// one loop so both see the same machine load. It reports each side's time
// per perft and their ratio (usid's time over stockfish's).
func BenchmarkPerft5VsStockfish(b *testing.B) {
	if _, err := os.Stat(stockfishPath); err != nil {
		b.Fatalf("%s is missing (install Debian's stockfish: apt-get install stockfish): %v", stockfishPath, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, stockfishPath)
	cmd.WaitDelay = 5 * time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		io.WriteString(in, "quit\n")
		in.Close()
		cmd.Wait()
	}()
	out := bufio.NewScanner(outPipe)
	until := func(prefix string) string {
		for out.Scan() {
			if strings.HasPrefix(out.Text(), prefix) {
				return out.Text()
			}
		}
		b.Fatalf("stockfish ended before %q: %v", prefix, out.Err())
		return ""
	}
	io.WriteString(in, "uci\n")
	until("uciok")
	io.WriteString(in, "isready\n")
	until("readyok")

	p := Startpos()
	var ours, theirs time.Duration
	for b.Loop() {
		t0 := time.Now()
		n := p.Perft(5)
		ours += time.Since(t0)
		io.WriteString(in, "position startpos\n")
		t0 = time.Now()
		io.WriteString(in, "go perft 5\n")
		line := until("Nodes searched:")
		theirs += time.Since(t0)
		sf, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(line, "Nodes searched:")), 10, 64)
		if n != 4865609 || sf != n {
			b.Fatalf("perft(5): usid %d, stockfish %d, want 4865609", n, sf)
		}
	}
	runs := float64(b.N)
	b.ReportMetric(float64(ours.Nanoseconds())/runs, "usid-ns/perft")
	b.ReportMetric(float64(theirs.Nanoseconds())/runs, "stockfish-ns/perft")
	b.ReportMetric(float64(ours)/float64(theirs), "usid/stockfish")
}

// BenchmarkValidateFEN is one full load of a middle-game FEN: syntax,
// rules, checks.
func BenchmarkValidateFEN(b *testing.B) {
	const fen = "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10"
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := Load(fen, nil, Standard); errs != nil {
			b.Fatal(Errors(errs))
		}
	}
}

func BenchmarkLegalMoves(b *testing.B) {
	p := mustLoad(b, "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", Standard)
	var buf [MaxMoves]Move
	for b.Loop() {
		if n := len(p.appendLegal(buf[:0])); n != 48 {
			b.Fatalf("%d moves, want 48", n)
		}
	}
}
