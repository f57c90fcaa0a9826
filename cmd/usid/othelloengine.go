package main

import (
	"fmt"
	"io"

	"github.com/usid/usid/othello/engine"
)

// runOthelloEngine runs usid's othello engine on the process's streams, as
// the pool starts any engine. It takes no arguments: its settings are USI-X
// options.
func runOthelloEngine(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "usid othello-engine: no arguments expected, got %q\n", args)
		return 2
	}
	if err := engine.ServeUSIX(stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "usid othello-engine: %v\n", err)
		return 1
	}
	return 0
}
