// Command usid bridges browsers and HTTP clients to USI shogi engines.
//
//	usid [--addr :8080] [--config FILE]  serve HTTP and WebSocket clients
//	usid validate              read USI or UCI positions on stdin, print JSON verdicts
//	usid perft --depth N [pos] count legal move paths from a shogi or chess position
//	usid othello-engine        usid's own othello engine: USI-X on stdin and stdout
//
// See README.md for the service itself.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage:
  usid [--addr ADDR] [--config FILE]    serve (default :8080, the built-in engine configuration)
  usid validate [--chess|--chess960]    read positions on stdin, one per line; print one JSON verdict
                                        per line
  usid perft --depth N [--divide] [--chess|--chess960] [position]
                                        count legal move paths (default position: startpos)
  usid othello-engine                   usid's own othello engine: speaks USI-X on stdin and stdout
                                        (an engine entry: path usid, args [othello-engine])

A position is shogi in USI syntax ("startpos [moves 7g7f ...]", "sfen <SFEN> [moves ...]") or
chess in UCI syntax ("fen <FEN> [moves e2e4 ...]"; a FEN of 6 fields or the first 4). The first
word decides: "fen" is chess, "sfen" shogi, and "startpos" is shogi's start unless --chess
(standard chess) or --chess960 (Chess960 castling: X-FEN or Shredder-FEN letters, castling moves
written king-takes-rook, e1h1) is given; those flags also set the variant of "fen" positions.
`

// run is main without the process: tests call it with their own streams.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || (len(args[0]) > 0 && args[0][0] == '-' && args[0] != "-h" && args[0] != "--help") {
		return runServe(ctx, args, stderr)
	}
	switch args[0] {
	case "validate":
		return runValidate(ctx, args[1:], stdin, stdout, stderr)
	case "perft":
		return runPerft(args[1:], stdout, stderr)
	case "othello-engine":
		return runOthelloEngine(args[1:], stdin, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "usid: unknown command %q\n%s", args[0], usage)
	return 2
}
