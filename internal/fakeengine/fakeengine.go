// Package fakeengine is the one scripted USI engine of usid's tests, for the
// faults real engines do not produce on demand: hanging on stop, slow or
// failed starts, dying at a set time or mid-search, floods and garbage on
// stdout, a doctored mate line, and the dialects that package probe learns;
// and the othello engines (USI-X and the UOI draft, othello.go), of which
// no real one is packaged.
//
// A test binary runs it as a child process of itself, as os/exec's own tests
// do: TestMain calls RunIfRequested first, and tests start the engine with
// Path() and Env(mode). It is never part of the usid binary.
//
// usid-bench uses it too: mode stamped-info prints timestamped info lines,
// and mode stamp-hub has one hub process (ServeHub, hub.go) print them for
// hundreds of engine processes, so that a benchmark measures usid rather
// than its engines.
//
// Each engine is a process of its own, started and reaped by the test that
// uses it (or by the usi.Engine the test starts); Path and Env are safe for
// concurrent use.
package fakeengine

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/usid/usid/shogi"
)

// EnvMode names the environment variable that selects the mode.
const EnvMode = "USID_FAKE_ENGINE"

// EnvPIDFile names a file the engine writes its pid to as it starts, so that
// a test can check on the process even when the engine's start failed.
const EnvPIDFile = "USID_FAKE_ENGINE_PIDFILE"

// EnvStarts names a file the engine appends a line to (its pid) as it
// starts, in every mode: a test counts the processes a pool started.
const EnvStarts = "USID_FAKE_ENGINE_STARTS"

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
	StampHub    = "stamp-hub"    // go infinite: the hub at $USID_FAKE_ENGINE_HUB prints StampedInfo's lines (hub.go)

	// Dialects that usid must learn by probing (package probe).
	AbortOn        = "abort-on"        // =params separated by '_': exits (status 134) on a go with any of them
	IgnoreMoveTime = "ignore-movetime" // go movetime searches until stop
	ShortMoveTime  = "short-movetime"  // go movetime T answers after T/4 (a byoyomi less a margin)
	MateBestMove   = "mate-bestmove"   // answers go mate with bestmove
	DeafAfterMate  = "deaf-after-mate" // answers go mate with checkmate G*5b, then never a go again
	MateOnly       = "mate-only"       // answers go mate with checkmate G*5b, a plain go with bestmove resign
	SlowReady      = "slow-ready"      // =duration: every isready takes that long
	StrictOrder    = "strict-order"    // exits (status 1) on isready after usinewgame, as sunfish4 does
	HashLimit      = "hash-limit"      // =MB: advertises USI_Hash 8192, exits at isready if the hash is above MB
	StdoutError    = "stdout-error"    // prints an error on stdout at isready and exits (status 1)
	UCI            = "uci"             // a chess engine: answers uci, not usi (uci.go)
	NoDepth        = "no-depth"        // info lines carry neither depth nor nodes
	MateUntilStop  = "mate-until-stop" // a go mate runs until stop, then answers checkmate nomate
	ReadyTwice     = "ready-twice"     // exits (status 0) on an isready that follows another isready, as sunfish4 does
	OneReady       = "one-ready"       // answers the first isready; exits (status 0, "bye" on stderr) on any later one
	StartposHang   = "startpos-hang"   // after a position sfen, "position startpos moves ..." makes it stop reading stdin, as gpsusi does
	SparseNodes    = "sparse-nodes"    // =nps: counts nodes at nps by its own clock from go; reports info nodes only every 200,000 nodes; ignores go nodes
	OvershootNodes = "overshoot-nodes" // go nodes N searches N+3000 nodes up to 10,000 (a small limit's slack), twice N above
	AnalyseMode    = "analyse-mode"    // advertises USI_AnalyseMode and USI_OwnBook; answers from its book (bestmove, no info) unless AnalyseMode is true and OwnBook false

	// Faults.
	IllegalBestMove = "illegal-bestmove" // from the start position, a plain go answers bestmove 5a5c (illegal)
	NoUSIOK         = "no-usiok"         // answers usi with its id and options but never usiok
	Deaf            = "deaf"             // never reads stdin again after usiok
	SlowFirstReady  = "slow-first-ready" // =duration: the first isready is answered that late, the others at once
	DieMidSearch    = "die-mid-search"   // a go prints three info lines and exits (status 3)
	BadBestMove     = "bad-bestmove"     // a plain go answers a bare "bestmove"
	IgnoreQuit      = "ignore-quit"      // stays alive after quit
	Flood           = "flood"            // a plain go prints 200,000 info lines (multipv 1 and 2, nodes 1..200000) at once
	Starved         = "starved"          // the first plain go on each position after moves answers a bare bestmove (no info) when its movetime is up (at once without one), as a stockfish starved of CPU does when its time runs out before its first iteration ends; later gos on it search
	Garbage         = "garbage"          // binary bytes, a 1 MB line and malformed messages around usiok and in a go's output
	CRLF            = "crlf"             // ends lines with CR LF and separates option fields with tabs and runs of spaces
	Stderr          = "stderr"           // writes three lines to stderr at usi, the second 10,000 bytes long
	Grandchild      = "grandchild"       // starts a child (sleep 60) that holds stdout; its pid is the id author, "child <pid>"

	// Players (package play): a game's go answers so. A game's go is one
	// with a clock after a position with moves, or (for IgnoreClock) one
	// whose btime or wtime is above the probe's 1 s, so that an engine
	// moving first from a start without moves is a player too.
	BestMoveAs  = "bestmove-as"  // =answer: answers bestmove <answer> (resign, win)
	IgnoreClock = "ignore-clock" // searches until stop, whatever its clock says

	// Instruments.
	EchoOptions = "echo-options" // every go first prints "info string Style=<value> newgame=<bool> searches=<n>": what the engine was told, and the gos since usinewgame (what a hash cleared there would hold)
)

// RunIfRequested runs the fake engine and exits the process when EnvMode is
// set; otherwise it returns at once. Call it first thing in TestMain.
func RunIfRequested() {
	if mode := os.Getenv(EnvMode); mode != "" {
		os.Exit(Main(mode))
	}
}

// appendLine appends line to the file named name, creating it.
func appendLine(name, line string) error {
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, werr := fmt.Fprintln(f, line)
	return errors.Join(werr, f.Close())
}

// Path is the executable to start: the running test binary.
func Path() string { return os.Args[0] }

// Env is the environment that makes Path act as the fake engine in mode.
func Env(mode string) []string { return append(os.Environ(), EnvMode+"="+mode) }

// Main runs the engine in mode on stdin/stdout and returns the exit status.
func Main(mode string) int {
	if f := os.Getenv(EnvPIDFile); f != "" {
		if err := os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "fakeengine: %v\n", err)
			return 2
		}
	}
	if f := os.Getenv(EnvStarts); f != "" {
		if err := appendLine(f, strconv.Itoa(os.Getpid())); err != nil {
			fmt.Fprintf(os.Stderr, "fakeengine: %v\n", err)
			return 2
		}
	}
	mode, arg, _ := strings.Cut(mode, "=")
	dur := func() time.Duration {
		d, err := time.ParseDuration(arg)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fakeengine: mode %s needs a duration: %v\n", mode, err)
			os.Exit(2)
		}
		return d
	}
	if isUCIMode(mode) {
		return mainUCI(mode)
	}
	if isOthelloMode(mode) {
		return mainOthello(mode, arg)
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

	var hub *hubClient
	if mode == StampHub {
		var err error
		if hub, err = dialHub(os.Getenv(EnvHub)); err != nil {
			fmt.Fprintf(os.Stderr, "fakeengine: mode %s: hub: %v\n", mode, err)
			return 2
		}
	}

	author := "usid tests"
	if mode == Grandchild {
		c := exec.Command("sleep", "60")
		c.Stdout = os.Stdout
		if err := c.Start(); err != nil {
			fmt.Fprintf(os.Stderr, "fakeengine: %v\n", err)
			return 2
		}
		author = "child " + strconv.Itoa(c.Process.Pid)
	}

	var mu sync.Mutex
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	eol := "\n"
	if mode == CRLF {
		eol = "\r\n"
	}
	say := func(lines ...string) {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range lines {
			out.WriteString(l)
			out.WriteString(eol)
		}
		out.Flush()
	}

	var stop chan struct{} // non-nil while an infinite search runs
	move := "7g7f"         // the answer for the current position
	hash := 16
	newGame, mated := false, false
	readies := 0
	style := "Normal"
	last := ""                                // the previous command's first word
	searches := 0                             // gos since usinewgame (EchoOptions)
	sawSFEN := false                          // a position sfen came (StartposHang)
	posLine, starved := "", map[string]bool{} // the position, those answered bare (Starved)
	inGame := false                           // the last position had moves (BestMoveAs, IgnoreClock)
	analyse, ownBook := false, true           // AnalyseMode's options
	nps, _ := strconv.ParseInt(arg, 10, 64)   // SparseNodes
	if nps <= 0 {
		nps = 20000
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if !hangAt.IsZero() && time.Now().After(hangAt) {
			time.Sleep(time.Hour) // alive, but deaf
		}
		words := strings.Fields(in.Text())
		if len(words) == 0 {
			continue
		}
		prev := last
		last = words[0]
		switch words[0] {
		case "usi":
			if mode == SlowStart {
				time.Sleep(dur())
			}
			hashDefault := "16"
			if mode == HashLimit {
				hashDefault = "8192"
				hash = 8192
			}
			switch mode {
			case Stderr:
				fmt.Fprintf(os.Stderr, "hello from stderr\n%s\nafter the long line\n", strings.Repeat("e", 10000))
			case Garbage:
				say("\x00\x01\xfe\xff garbage", strings.Repeat("x", 1<<20), "bestmove", "info depth x",
					"", "  \t ", "option name", "option name Weird type nonsense", "joho readyok?")
			}
			say("id name Fake "+mode, "id author "+author)
			if mode == CRLF {
				say("option\tname  USI_Hash\ttype spin   default "+hashDefault+" min 1\tmax 65536",
					"option name MultiPV type spin default 1 min 1 max 10",
					"option name Style type combo default Normal var Solid var Normal var Risky")
			} else {
				say("option name USI_Hash type spin default "+hashDefault+" min 1 max 65536",
					"option name MultiPV type spin default 1 min 1 max 10",
					"option name Style type combo default Normal var Solid var Normal var Risky",
					"option name Book File type string default <empty>",
					"option name Clear Hash type button",
					"option name USI_Ponder type check default false")
			}
			if mode == AnalyseMode {
				say("option name USI_AnalyseMode type check default false", "option name USI_OwnBook type check default true")
			}
			if mode == NoUSIOK {
				continue
			}
			say("usiok")
			if mode == Deaf {
				time.Sleep(time.Hour)
			}
		case "setoption":
			if len(words) == 5 && words[2] == "USI_Hash" {
				hash, _ = strconv.Atoi(words[4])
			}
			if len(words) == 5 && words[2] == "Style" {
				style = words[4]
			}
			if len(words) == 5 && words[2] == "USI_AnalyseMode" {
				analyse = words[4] == "true"
			}
			if len(words) == 5 && words[2] == "USI_OwnBook" {
				ownBook = words[4] == "true"
			}
		case "position":
			if mode == StartposHang && sawSFEN && len(words) > 2 && words[1] == "startpos" && words[2] == "moves" {
				// gpsusi plays the moves on the previous board, looping for ever
				// in its main thread: it reads nothing again, stop and quit included.
				time.Sleep(time.Hour)
			}
			sawSFEN = sawSFEN || (len(words) > 1 && words[1] == "sfen")
			move = legalMove(in.Text())
			posLine = in.Text()
			inGame = contains(words, "moves") && words[len(words)-1] != "moves"
		case "usinewgame":
			newGame, searches = true, 0
		case "gameover":
			newGame = false
		case "isready":
			readies++
			switch mode {
			case SlowFirstReady:
				if readies == 1 {
					d := dur()
					go func() {
						time.Sleep(d)
						say("readyok")
					}()
					continue
				}
			case SlowReady:
				time.Sleep(dur())
			case ReadyTwice:
				if prev == "isready" {
					return 0
				}
			case OneReady:
				if readies > 1 {
					fmt.Fprintln(os.Stderr, "bye: one isready is enough")
					return 0
				}
			case StrictOrder:
				if newGame {
					return 1
				}
			case HashLimit:
				if limit, _ := strconv.Atoi(arg); hash > limit {
					say(fmt.Sprintf("info string Error : cannot allocate %d MB for the hash", hash))
					return 1
				}
			case StdoutError:
				say("Error! : failed to read nn.bin")
				return 1
			}
			say("readyok")
		case "go":
			searches++
			switch mode {
			case DieMidSearch:
				say("info depth 1 pv 7g7f", "info depth 2 pv 7g7f 3c3d", "info depth 3 pv 7g7f 3c3d 2g2f")
				return 3
			case Flood:
				flood(&mu, out, eol)
				continue
			case Garbage:
				say("info depth 1 pv 7g7f", strings.Repeat("y", 1<<20), "\x01\x02 info depth 2 score cp 5 tbhits 0 pv 7g7f 3c3d",
					"bestmove 7g7f ponder 3c3d")
				continue
			case BadBestMove:
				say("bestmove")
				continue
			}
			if mode == EchoOptions {
				say(fmt.Sprintf("info string Style=%s newgame=%v searches=%d", style, newGame, searches))
			}
			if mode == AbortOn {
				for _, p := range strings.Split(arg, "_") {
					if contains(words, p) {
						fmt.Fprintf(os.Stderr, "unknown option in go %s\n", p)
						return 134
					}
				}
			}
			if mode == DeafAfterMate && mated {
				continue
			}
			if len(words) > 1 && words[1] == "mate" {
				mated = true
				switch mode {
				case MateLine:
					say("checkmate " + strings.ReplaceAll(arg, "_", " "))
				case MateBestMove:
					say("bestmove G*5b")
				case MateOnly, DeafAfterMate:
					say("checkmate G*5b")
				case MateUntilStop:
					stop = make(chan struct{})
					go func(stop chan struct{}) {
						<-stop
						say("checkmate nomate")
					}(stop)
				default:
					say("checkmate notimplemented")
				}
				continue
			}
			if mode == MateOnly {
				say("bestmove resign")
				continue
			}
			clock := contains(words, "btime")
			if inGame && clock && mode == BestMoveAs {
				say("info depth 1 score cp 10 nodes 100 pv "+move, "bestmove "+arg)
				continue
			}
			if mode == IgnoreClock && clock && (inGame || longClock(words)) {
				words = append(words, "infinite")
			}
			if mode == AnalyseMode && (!analyse || ownBook) {
				say("bestmove " + move) // from the book: no evaluation
				continue
			}
			if i := index(words, "nodes"); i >= 0 && i+1 < len(words) && mode == OvershootNodes {
				n, _ := strconv.ParseInt(words[i+1], 10, 64)
				if n > 10000 {
					n *= 2
				} else {
					n += 3000
				}
				say(fmt.Sprintf("info depth 5 score cp 10 nodes %d pv %s", n, move), "bestmove "+move)
				continue
			}
			if mode == SparseNodes {
				stop = make(chan struct{})
				go sparseSearch(words, nps, move, stop, say)
				continue
			}
			if i := index(words, "movetime"); i >= 0 && i+1 < len(words) && (mode == IgnoreMoveTime || mode == ShortMoveTime) {
				if mode == ShortMoveTime {
					ms, _ := strconv.Atoi(words[i+1])
					time.Sleep(time.Duration(ms) * time.Millisecond / 4)
					say("info depth 1 score cp 10 nodes 100 pv "+move, "bestmove "+move)
					continue
				}
				words = append(words, "infinite")
			}
			if !contains(words, "infinite") && !contains(words, "ponder") {
				if mode == IllegalBestMove && move == "7g7f" {
					say("info depth 1 score cp 10 nodes 100 pv 5a5c", "bestmove 5a5c")
					continue
				}
				if mode == NoDepth {
					say("info score cp 10 pv "+move, "bestmove "+move)
					continue
				}
				if mode == Starved && inGame && len(starved) < 1000 && !starved[posLine] {
					starved[posLine] = true
					if i := index(words, "movetime"); i >= 0 && i+1 < len(words) {
						// Its time spent before a first iteration ended.
						ms, _ := strconv.Atoi(words[i+1])
						time.Sleep(time.Duration(min(ms, 5000)) * time.Millisecond)
					}
					say("bestmove " + move)
					continue
				}
				if move != "7g7f" { // not the start: one legal move, no ponder
					say("info depth 1 score cp 10 nodes 100 pv "+move, "bestmove "+move)
					continue
				}
				say("info depth 1 score cp 10 nodes 100 pv 7g7f", "info depth 2 score cp 12 nodes 300 pv 7g7f 3c3d", "bestmove 7g7f ponder 3c3d")
				continue
			}
			stop = make(chan struct{})
			if hub != nil {
				best := "bestmove 7g7f ponder 3c3d"
				if move != "7g7f" {
					best = "bestmove " + move
				}
				if err := hub.goSearch(best); err != nil {
					fmt.Fprintf(os.Stderr, "fakeengine: hub: %v\n", err)
					return 2
				}
				continue
			}
			go search(mode, interval, move, stop, say)
		case "stop":
			if stop != nil && hub != nil {
				stop = nil
				if err := hub.stop(); err != nil {
					fmt.Fprintf(os.Stderr, "fakeengine: hub: %v\n", err)
					return 2
				}
				continue
			}
			if stop != nil && mode != IgnoreStop {
				close(stop)
				stop = nil
			}
		case "ponderhit":
			// The ponder search becomes the real one and, in this script,
			// ends at once as a stop would end it.
			if stop != nil && hub == nil && mode != IgnoreStop {
				close(stop)
				stop = nil
			}
		case "quit":
			if mode != IgnoreQuit {
				return 0
			}
		}
	}
	return 0
}

// flood writes 200,000 info lines and a bestmove in one go, faster than any
// reader takes them.
func flood(mu *sync.Mutex, out *bufio.Writer, eol string) {
	const n = 200000
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i <= n; i++ {
		fmt.Fprintf(out, "info depth %d multipv %d nodes %d pv 7g7f 3c3d%s", i/100, 1+i%2, i, eol)
	}
	fmt.Fprintf(out, "bestmove 7g7f ponder 3c3d%s", eol)
	out.Flush()
}

// search streams info lines, one per interval, until stop is closed, then
// answers bestmove.
func search(mode string, interval time.Duration, move string, stop chan struct{}, say func(...string)) {
	best, pv := "bestmove 7g7f ponder 3c3d", "7g7f 3c3d"
	if move != "7g7f" {
		best, pv = "bestmove "+move, move
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	line := func(depth int) string {
		switch mode {
		case NoDepth:
			return "info score cp 15 pv " + pv
		case StampedInfo: // no pv: "string" runs to the end of the line
			return "info depth " + strconv.Itoa(depth) + " nodes " + strconv.Itoa(depth) + " string t=" + strconv.FormatInt(time.Now().UnixNano(), 10)
		}
		return "info depth " + strconv.Itoa(depth) + " score cp 15 nodes " + strconv.Itoa(depth*1000) + " pv " + pv
	}
	depth := 1
	if mode != StampedInfo {
		// Like a real engine, the first line comes at once: a stop that
		// follows the go closely still finds a line to report.
		say(line(depth))
		depth++
	}
	for ; ; depth++ {
		select {
		case <-stop:
			say(best)
			return
		case <-tick.C:
			say(line(depth))
			if mode != StampedInfo {
				time.Sleep(20 * time.Millisecond) // a gentle stream
			}
		}
	}
}

// legalMove answers a position command with 7g7f where it is legal (the
// scripted answers are for the start), else with the first legal move.
func legalMove(line string) string {
	sfen, moves, err := shogi.ParsePositionCommand(line)
	if err != nil {
		return "7g7f"
	}
	pos, err := shogi.ParseSFEN(sfen)
	if err != nil {
		return "7g7f"
	}
	for _, m := range moves {
		mv, err := pos.CheckMove(m)
		if err != nil {
			return "7g7f"
		}
		pos.Play(mv)
	}
	if _, err := pos.CheckMove("7g7f"); err == nil {
		return "7g7f"
	}
	if legal := pos.LegalMoves(); len(legal) > 0 {
		return legal[0].String()
	}
	return "resign"
}

func index(words []string, w string) int {
	for i, x := range words {
		if x == w {
			return i
		}
	}
	return -1
}

// longClock reports whether a go's btime or wtime is above 1 s: the
// probe's clocks never are, a game's (in the tests) always is.
func longClock(words []string) bool {
	for _, w := range []string{"btime", "wtime"} {
		if i := index(words, w); i >= 0 && i+1 < len(words) {
			if ms, err := strconv.ParseInt(words[i+1], 10, 64); err == nil && ms > 1000 {
				return true
			}
		}
	}
	return false
}

func contains(words []string, w string) bool {
	for _, x := range words {
		if x == w {
			return true
		}
	}
	return false
}

// sparseSearch is SparseNodes' search: its node count is nps times the time
// since go by its own clock, so what it reports does not depend on how
// busy the machine is, only on when go and stop reach it. It prints an info
// line every 200,000 nodes, and a final one before bestmove. go nodes is
// ignored (searched until stop); byoyomi and movetime end the search by
// themselves, depth at once.
func sparseSearch(words []string, nps int64, move string, stop chan struct{}, say func(...string)) {
	const every = 200000
	start := time.Now()
	nodes := func() int64 { return int64(time.Since(start).Seconds() * float64(nps)) }
	var bound time.Duration
	for _, p := range []string{"byoyomi", "movetime"} {
		if i := index(words, p); i >= 0 && i+1 < len(words) {
			ms, _ := strconv.Atoi(words[i+1])
			bound = max(bound, time.Duration(ms)*time.Millisecond)
		}
	}
	end := make(<-chan time.Time)
	switch {
	case contains(words, "depth"):
		end = time.After(0)
	case bound > 0 && !contains(words, "infinite"):
		end = time.After(bound)
	}
	line := func(depth int, n int64) string {
		return fmt.Sprintf("info depth %d score cp 10 nodes %d nps %d pv %s", depth, n, nps, move)
	}
	next := time.NewTimer(time.Duration(float64(every) / float64(nps) * float64(time.Second)))
	defer next.Stop()
	for depth := 1; ; depth++ {
		select {
		case <-next.C:
			say(line(depth, nodes()))
			next.Reset(time.Duration(float64(every*(depth+1))/float64(nps)*float64(time.Second)) - time.Since(start))
		case <-stop:
			say(line(depth, nodes()), "bestmove "+move)
			return
		case <-end:
			say(line(depth, nodes()), "bestmove "+move)
			return
		}
	}
}
