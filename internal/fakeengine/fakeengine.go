// Package fakeengine is a scripted USI engine for tests, for the faults real
// engines do not produce on demand: hanging on stop, slow or failed starts,
// dying at a set time, answering with a doctored mate line.
//
// A test binary runs it as a child process of itself, as os/exec's own tests
// do: TestMain calls RunIfRequested first, and tests start the engine with
// Path() and Env(mode). It is never part of the usid binary.
package fakeengine

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// EnvMode names the environment variable that selects the mode.
const EnvMode = "USID_FAKE_ENGINE"

// Modes. A mode may carry an argument after '=', as in "slow-start=2s".
const (
	Normal      = "normal"       // a well-behaved engine
	IgnoreStop  = "ignore-stop"  // never answers stop during go infinite
	SlowStart   = "slow-start"   // =duration: waits that long before usiok
	ExitNow     = "exit-now"     // exits with status 7 before reading anything
	DieAfter    = "die-after"    // =duration: exits with status 3 that long after starting
	MateLine    = "mate-line"    // =moves separated by '_': answers go mate with checkmate <moves>
	StampedInfo = "stamped-info" // [=interval, default 1ms] go infinite: an info line per interval with "string t=<unix ns>"
	Hang        = "hang"         // =duration: stops reading stdin that long after starting
)

// RunIfRequested runs the fake engine and exits the process when EnvMode is
// set; otherwise it returns at once. Call it first thing in TestMain.
func RunIfRequested() {
	if mode := os.Getenv(EnvMode); mode != "" {
		os.Exit(Main(mode))
	}
}

// Path is the executable to start: the running test binary.
func Path() string { return os.Args[0] }

// Env is the environment that makes Path act as the fake engine in mode.
func Env(mode string) []string { return append(os.Environ(), EnvMode+"="+mode) }

// Main runs the engine in mode on stdin/stdout and returns the exit status.
func Main(mode string) int {
	mode, arg, _ := strings.Cut(mode, "=")
	dur := func() time.Duration {
		d, err := time.ParseDuration(arg)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fakeengine: mode %s needs a duration: %v\n", mode, err)
			os.Exit(2)
		}
		return d
	}
	switch mode {
	case ExitNow:
		return 7
	case DieAfter:
		d := dur()
		time.AfterFunc(d, func() { os.Exit(3) })
	}

	interval := time.Millisecond // info lines of an infinite search
	if mode == StampedInfo && arg != "" {
		interval = dur() // usid-bench: a rate below usid's per-client info rate
	}

	hangAt := time.Time{}
	if mode == Hang {
		hangAt = time.Now().Add(dur())
	}

	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	say := func(lines ...string) {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range lines {
			out.WriteString(l + "\n")
		}
		out.Flush()
	}

	var stop chan struct{} // non-nil while an infinite search runs
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if !hangAt.IsZero() && time.Now().After(hangAt) {
			time.Sleep(time.Hour) // alive, but deaf
		}
		words := strings.Fields(in.Text())
		if len(words) == 0 {
			continue
		}
		switch words[0] {
		case "usi":
			if mode == SlowStart {
				time.Sleep(dur())
			}
			say("id name Fake "+mode, "id author usid tests",
				"option name USI_Hash type spin default 16 min 1 max 1024",
				"option name MultiPV type spin default 1 min 1 max 10",
				"option name Style type combo default Normal var Solid var Normal var Risky",
				"option name Book File type string default <empty>",
				"option name Clear Hash type button",
				"usiok")
		case "isready":
			say("readyok")
		case "go":
			if len(words) > 1 && words[1] == "mate" {
				if mode == MateLine {
					say("checkmate " + strings.ReplaceAll(arg, "_", " "))
				} else {
					say("checkmate notimplemented")
				}
				continue
			}
			if !contains(words, "infinite") && !contains(words, "ponder") {
				say("info depth 1 score cp 10 nodes 100 pv 7g7f", "info depth 2 score cp 12 nodes 300 pv 7g7f 3c3d", "bestmove 7g7f ponder 3c3d")
				continue
			}
			stop = make(chan struct{})
			go search(mode, interval, stop, say)
		case "stop":
			if stop != nil && mode != IgnoreStop {
				close(stop)
				stop = nil
			}
		case "ponderhit":
		case "quit":
			return 0
		}
	}
	return 0
}

// search streams info lines, one per interval, until stop is closed, then
// answers bestmove.
func search(mode string, interval time.Duration, stop chan struct{}, say func(...string)) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for depth := 1; ; depth++ {
		select {
		case <-stop:
			say("bestmove 7g7f ponder 3c3d")
			return
		case <-tick.C:
			line := "info depth " + strconv.Itoa(depth) + " score cp 15 nodes " + strconv.Itoa(depth*1000) + " pv 7g7f 3c3d"
			if mode == StampedInfo { // no pv: "string" runs to the end of the line
				line = "info depth " + strconv.Itoa(depth) + " nodes " + strconv.Itoa(depth) + " string t=" + strconv.FormatInt(time.Now().UnixNano(), 10)
			}
			say(line)
			if mode != StampedInfo {
				time.Sleep(20 * time.Millisecond) // a gentle stream
			}
		}
	}
}

func contains(words []string, w string) bool {
	for _, x := range words {
		if x == w {
			return true
		}
	}
	return false
}
