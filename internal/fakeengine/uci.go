// The UCI modes: a chess engine that knows the rules (package chess) and
// plays the first legal move, for what Debian's stockfish will not do on
// demand.

package fakeengine

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/usid/usid/chess"
)

// UCI modes (the mode UCI itself is the well-behaved chess engine).
const (
	UCIFalseMate = "uci-false-mate" // go mate N answers "score mate 1" and a move that does not mate
	UCIIllegal   = "uci-illegal"    // a plain go answers bestmove a1a8 (illegal from the start position)
	UCINo960     = "uci-no960"      // advertises no UCI_Chess960 (an engine that cannot take Chess960)
	UCIElo       = "uci-elo"        // also advertises UCI_LimitStrength and UCI_Elo (1320..3190, as stockfish 16 does) and Skill Level 0..20: levels by Elo, beginner levels
)

// EnvLog names a file the UCI and othello modes append every line they read to, so
// that a test can show what an engine never saw.
const EnvLog = "USID_FAKE_ENGINE_LOG"

func isUCIMode(mode string) bool { return mode == UCI || strings.HasPrefix(mode, "uci-") }

// mainUCI runs a UCI mode. The engine answers "usi" in words, as Stockfish
// does, and "uci" with its options and uciok; a plain go gives two info
// lines (the second with wdl and a lowerbound) and the first legal move; go
// infinite and go ponder run until stop or ponderhit; go mate N answers a
// mate in one where there is one; a position with no legal move gets
// "bestmove (none)".
func mainUCI(mode string) int {
	var logf *os.File
	if f := os.Getenv(EnvLog); f != "" {
		var err error
		if logf, err = os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "fakeengine: %v\n", err)
			return 2
		}
		defer logf.Close()
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
	pos, _ := chess.ParseFEN(chess.StartFEN, chess.Standard)
	var stop chan struct{}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		line := in.Text()
		if logf != nil {
			fmt.Fprintln(logf, line)
		}
		words := strings.Fields(line)
		if len(words) == 0 {
			continue
		}
		switch words[0] {
		case "usi":
			say("Unknown command: '" + line + "'. Type help for more information.")
		case "uci":
			say("id name Fake chess engine", "id author usid tests",
				"option name Hash type spin default 16 min 1 max 33554432",
				"option name MultiPV type spin default 1 min 1 max 500",
				"option name Ponder type check default false")
			if mode != UCINo960 {
				say("option name UCI_Chess960 type check default false")
			}
			if mode == UCIElo {
				say("option name UCI_LimitStrength type check default false", "option name UCI_Elo type spin default 1320 min 1320 max 3190",
					"option name Skill Level type spin default 20 min 0 max 20")
			}
			say("option name UCI_AnalyseMode type check default false", "uciok")
		case "isready":
			say("readyok")
		case "position":
			fen, moves, err := chess.ParsePositionCommand(line)
			if err != nil {
				say("info string bad position")
				continue
			}
			if fen == "startpos" {
				fen = chess.StartFEN
			}
			p, errs := chess.Load(fen, moves, chess.Standard)
			if errs != nil {
				// A real engine might crash here (Stockfish's issues): the
				// log shows whether usid let such a position through.
				say("info string illegal position: " + errs[0].Error())
				continue
			}
			pos = p
		case "go":
			legal := pos.LegalMoves()
			best := "(none)"
			if len(legal) > 0 {
				best = legal[0].String()
			}
			if i := index(words, "mate"); i >= 0 {
				mateMove := ""
				for _, m := range legal {
					q := *pos
					q.Play(m)
					if q.IsCheckmate() {
						mateMove = m.String()
						break
					}
				}
				switch {
				case mode == UCIFalseMate && best != "(none)":
					say("info depth 1 score mate 1 nodes 10 pv "+best, "bestmove "+best)
				case mateMove != "":
					say("info depth 1 score mate 1 nodes 10 pv "+mateMove, "bestmove "+mateMove)
				default:
					say("info depth 1 score cp 0 nodes 10 pv "+best, "bestmove "+best)
				}
				continue
			}
			if best == "(none)" {
				score := "cp 0"
				if pos.InCheck() {
					score = "mate 0"
				}
				say("info depth 0 score "+score, "bestmove (none)")
				continue
			}
			if mode == UCIIllegal && pos.FEN() == chess.StartFEN {
				say("info depth 1 score cp 20 nodes 50 pv a1a8", "bestmove a1a8")
				continue
			}
			if contains(words, "infinite") || contains(words, "ponder") {
				stop = make(chan struct{})
				go func(stop chan struct{}) {
					say("info depth 1 score cp 20 nodes 100 time 1 pv " + best)
					<-stop
					say("info depth 2 score cp 25 wdl 500 300 200 nodes 300 time 2 pv "+best, "bestmove "+best)
				}(stop)
				continue
			}
			nodes := 300
			if i := index(words, "nodes"); i >= 0 && i+1 < len(words) {
				nodes, _ = strconv.Atoi(words[i+1])
			}
			say("info depth 1 seldepth 1 score cp 20 lowerbound nodes 100 time 1 pv "+best,
				fmt.Sprintf("info depth 2 seldepth 2 multipv 1 score cp 25 wdl 500 300 200 nodes %d nps 1000 time 2 pv %s", nodes, best),
				"bestmove "+best)
		case "stop", "ponderhit":
			if stop != nil {
				close(stop)
				stop = nil
			}
		case "quit":
			return 0
		}
	}
	return 0
}
