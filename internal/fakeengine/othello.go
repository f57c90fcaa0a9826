// The othello modes: a USI-X engine with the habits the public othello
// engines were seen to have, and an engine written to the UOI draft. Their
// board is a small one of their own (play, flip, list the squares that
// flip something), enough to answer a legal move and to play an illegal
// one as real engines do; usi's TestOthelloAgreesWithRules checks it
// against package othello.

package fakeengine

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"sync"
)

// USI-X modes. Every one of them is the USI-X engine below with one habit
// more, and every one exits (status 1, a Python traceback on stderr) on
// what real othello engines crash on: a position that is not one token of
// 64 cells and the side to move (say, written with spaces, or an SFEN), a
// move that is not a lower-case square or "pass" ("D3"), a position
// keyword other than startpos and sfen.
const (
	// USIX is a well-behaved USI-X engine: usi answered with id, the
	// option max_depth and usiok; "score_scale_and_type" with "scoretype
	// stone min -64 max 64"; "position startpos|sfen <pos> moves ..." played
	// on its board (illegal moves too, as real engines do); a plain go
	// prints "info depth 1 score 2 nodes 10 pv <move>" and answers the first
	// square that flips something (in a1 b1 ... h8 order), "bestmove pass"
	// when there is none; go infinite and go ponder answer at stop or
	// ponderhit only (as the python-dlothello engines do); gameover is
	// ignored.
	USIX = "usix"
	// USIXAuther writes "id auther Y_Hyodo" (sic), as the USI-X samples do.
	USIXAuther = "usix-auther"
	// USIXEmptyID writes "id name " and "id author " with empty values.
	USIXEmptyID = "usix-empty-id"
	// USIXScoreType =answer: "score_scale_and_type" is answered with
	// "scoretype stones min -64 max 64" (=stones), "scoretype WP min 0 max
	// 100" (=WP), "scoretype other min -100 max 100" (=other), or not at all
	// (=none), as real engines answered it.
	USIXScoreType = "usix-scoretype"
	// USIXFloat reports float scores: "info score 41.0 pv <move>" and
	// "info string no_search_score -73.0".
	USIXFloat = "usix-float"
	// USIXWinOutside declares "scoretype other min -100 max 100" and reports
	// "info score 10000 pv <move>", a win outside its own scale.
	USIXWinOutside = "usix-win-outside"
	// USIXNoInfo prints no info line at all: only bestmove.
	USIXNoInfo = "usix-no-info"
	// USIXPass answers every go with "bestmove pass ponder b6", as engines
	// do after the end of the game.
	USIXPass = "usix-pass"
	// USIXInfiniteAtOnce answers go infinite at once, then ignores stop (the
	// USI-X samples Step1 and Step2).
	USIXInfiniteAtOnce = "usix-infinite-at-once"
	// USIXIgnoreMoveTime takes "go movetime N" (beyond the spec's go
	// words, as usid's own engine does) but ignores its time: it answers
	// only at stop, as under go infinite.
	USIXIgnoreMoveTime = "usix-ignore-movetime"
	// USIXPassMisplay answers an illegal move (the first occupied square)
	// when the position's move list holds a pass, as Azisai misplays one; a
	// position sent without moves is answered well.
	USIXPassMisplay = "usix-pass-misplay"
	// USIXIllegalPV plays as USIX, but its info line's pv goes on past
	// the best move with two occupied squares (d4 e5: illegal whatever
	// came before), as a hostile engine's line would.
	USIXIllegalPV = "usix-illegal-pv"
	// USIXDiscs plays greedily and scores what it sees: its best move is
	// the one after which the side to move has the most discs over the
	// other (the first such square), its score that difference ("info
	// depth 1 score <n> nodes 10 pv <move>"; with no move, the difference
	// on the board and "bestmove pass"). =side gives the score from
	// another side, as engines seen do: =other (the side not to move),
	// =black or =white (always that side's); none: the side to move's.
	USIXDiscs = "usix-discs"

	// UOI is an engine written to the UOI draft: "uoi" answered with a "#"
	// comment, "id name", "id auther", "option name use_book default true"
	// (no type) and uoiok; "score scale and type" with "scoretype WP min 0
	// max 100"; "position <ofen>" (65 characters, '0' for white) and "pass
	// <ofen>" (no answer) set its board; go takes only btime, wtime, binc,
	// winc and infinite; it answers the last square that flips something (in
	// a1 b1 ... h8 order) and names squares the draft's way (letter the row,
	// digit the column): "info score 10 pv <move>" (with "pv None"
	// when it must pass), a comment line "# bestmove a1 ...", then "bestmove
	// <move>". It ignores usi and uci, and exits (status 1) on any other
	// position, on go with another parameter, and on a shogi gameover; it
	// reads "gameover <result> by <reason> bstone N wstone N".
	UOI = "uoi"
)

func isOthelloMode(mode string) bool {
	return mode == USIX || strings.HasPrefix(mode, USIX+"-") || mode == UOI
}

// obrd is an othello board: cells 'X', 'O', '-' in a1 b1 ... h1 a2 ... h8
// order (row-major from the top left), and the side to move.
type obrd struct {
	cell  [64]byte
	white bool
}

func startBoard() obrd {
	b, _ := boardFromToken("---------------------------OX------XO---------------------------B1")
	return b
}

// boardFromToken reads a USI-X position token (also an ofen, with '0').
func boardFromToken(tok string) (obrd, bool) {
	var b obrd
	if len(tok) < 65 {
		return b, false
	}
	for i := range 64 {
		switch c := tok[i]; c {
		case 'X', 'O', '-':
			b.cell[i] = c
		case '0':
			b.cell[i] = 'O'
		default:
			return b, false
		}
	}
	switch tok[64] {
	case 'B':
	case 'W':
		b.white = true
	default:
		return b, false
	}
	return b, true
}

func (b *obrd) colors() (me, them byte) {
	if b.white {
		return 'O', 'X'
	}
	return 'X', 'O'
}

var odirs = [8][2]int{{-1, -1}, {-1, 0}, {-1, 1}, {0, -1}, {0, 1}, {1, -1}, {1, 0}, {1, 1}}

// flips returns the squares a disc on i would flip.
func (b *obrd) flips(i int) []int {
	if b.cell[i] != '-' {
		return nil
	}
	me, them := b.colors()
	var out []int
	r0, c0 := i/8, i%8
	for _, d := range odirs {
		var run []int
		r, c := r0+d[0], c0+d[1]
		for 0 <= r && r < 8 && 0 <= c && c < 8 && b.cell[r*8+c] == them {
			run = append(run, r*8+c)
			r, c = r+d[0], c+d[1]
		}
		if len(run) > 0 && 0 <= r && r < 8 && 0 <= c && c < 8 && b.cell[r*8+c] == me {
			out = append(out, run...)
		}
	}
	return out
}

// legal lists the squares that flip something, in index order.
func (b *obrd) legal() []int {
	var out []int
	for i := range 64 {
		if len(b.flips(i)) > 0 {
			out = append(out, i)
		}
	}
	return out
}

// discs is the side to move's discs less the other side's.
func (b *obrd) discs() int {
	me, them := b.colors()
	n := 0
	for _, c := range b.cell {
		switch c {
		case me:
			n++
		case them:
			n--
		}
	}
	return n
}

// greedy is the move after which the side to move has the most discs over
// the other (the first such square; -1: none) and that difference, from
// the side to move.
func (b *obrd) greedy() (best, score int) {
	best, score = -1, b.discs()
	for _, i := range b.legal() {
		a := *b
		a.play(i)
		if d := -a.discs(); best < 0 || d > score {
			best, score = i, d
		}
	}
	return best, score
}

// scoreFrom turns a score from the side to move into one from side
// ("": the side to move; "other", "black", "white").
func (b *obrd) scoreFrom(side string, score int) int {
	switch {
	case side == "other", side == "black" && b.white, side == "white" && !b.white:
		return -score
	}
	return score
}

// play puts the side's disc on i (-1: a pass), whatever the rules say, and
// flips what it flips.
func (b *obrd) play(i int) {
	if i >= 0 {
		me, _ := b.colors()
		for _, f := range b.flips(i) {
			b.cell[f] = me
		}
		b.cell[i] = me
	}
	b.white = !b.white
}

// usixName is square i in USI-X: file letter (column), rank digit (row).
func usixName(i int) string { return string([]byte{'a' + byte(i%8), '1' + byte(i/8)}) }

// uoiName is square i in the UOI draft: letter the row, digit the column.
func uoiName(i int) string { return string([]byte{'a' + byte(i/8), '1' + byte(i%8)}) }

// usixIndex reads a USI-X square ("pass": -1); ok is false for anything else.
func usixIndex(s string) (int, bool) {
	if s == "pass" {
		return -1, true
	}
	if len(s) != 2 || s[0] < 'a' || s[0] > 'h' || s[1] < '1' || s[1] > '8' {
		return 0, false
	}
	return int(s[0]-'a') + 8*int(s[1]-'1'), true
}

// OthelloMoves lists the legal moves of a USI-X position token in USI-X
// notation ("pass" when the side to move has none), for tests that check
// a fake engine's answer; ok is false for a malformed token.
func OthelloMoves(token string) (moves []string, ok bool) {
	b, ok := boardFromToken(token)
	if !ok {
		return nil, false
	}
	for _, i := range b.legal() {
		moves = append(moves, usixName(i))
	}
	if len(moves) == 0 {
		moves = []string{"pass"}
	}
	return moves, true
}

// OthelloAfter plays USI-X moves from a position token (empty: the start)
// and returns the position reached as a token, for tests; ok is false for a
// malformed token or move.
func OthelloAfter(token string, moves ...string) (string, bool) {
	b := startBoard()
	if token != "" {
		var ok bool
		if b, ok = boardFromToken(token); !ok {
			return "", false
		}
	}
	for _, m := range moves {
		i, ok := usixIndex(m)
		if !ok {
			return "", false
		}
		b.play(i)
	}
	side := "B"
	if b.white {
		side = "W"
	}
	return string(b.cell[:]) + side, true
}

// crash is what a Python engine does with input it did not expect.
func crash(what string) int {
	fmt.Fprintf(os.Stderr, "Traceback (most recent call last):\n  File \"engine.py\", line 42, in <module>\nValueError: %s\n", what)
	return 1
}

// mainOthello runs an othello mode (arg: the part after '=').
func mainOthello(mode, arg string) int {
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
	uoi := mode == UOI
	name := usixName
	if uoi {
		name = uoiName
	}
	board := startBoard()
	passInMoves := false
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
		switch {
		case words[0] == "usi" && !uoi, words[0] == "uoi" && uoi:
			switch mode {
			case USIXAuther:
				say("id name Fake "+mode, "id auther Y_Hyodo")
			case USIXEmptyID:
				say("id name ", "id author ")
			case UOI:
				say("# UOI fake engine, v0.0.3", "id name Fake uoi", "id auther Y_Hyodo")
			default:
				say("id name Fake "+mode, "id author usid tests")
			}
			if uoi {
				say("option name use_book default true", "uoiok")
			} else {
				say("option name max_depth type spin default 4 min 1 max 60", "usiok")
			}
		case line == "score_scale_and_type" && !uoi:
			switch {
			case mode == USIXWinOutside || mode == USIXScoreType && arg == "other":
				say("scoretype other min -100 max 100")
			case mode == USIXScoreType && arg == "stones":
				say("scoretype stones min -64 max 64")
			case mode == USIXScoreType && arg == "WP":
				say("scoretype WP min 0 max 100")
			case mode == USIXScoreType && arg == "none":
			default:
				say("scoretype stone min -64 max 64")
			}
		case line == "score scale and type" && uoi:
			say("scoretype WP min 0 max 100")
		case words[0] == "isready":
			say("readyok")
		case words[0] == "usinewgame", words[0] == "uoinewgame":
			board = startBoard()
		case words[0] == "setoption":
		case words[0] == "gameover":
			if uoi && (len(words) != 8 || words[2] != "by" || words[4] != "bstone" || words[6] != "wstone") {
				return crash("gameover: " + line)
			}
		case words[0] == "position" && uoi, words[0] == "pass" && uoi:
			if len(words) != 2 || len(words[1]) != 65 || strings.Contains(words[1], "O") {
				return crash("not an ofen: " + line)
			}
			b, ok := boardFromToken(words[1])
			if !ok {
				return crash("not an ofen: " + line)
			}
			board = b
		case words[0] == "position":
			if len(words) < 2 {
				return crash("position: " + line)
			}
			rest := words[2:]
			switch words[1] {
			case "startpos":
				board = startBoard()
			case "sfen":
				var ok bool
				if len(words) < 3 {
					return crash("position: " + line)
				}
				if board, ok = boardFromToken(words[2]); !ok || strings.Contains(words[2][:64], "0") { // a zero among the cells: an ofen (the move number may hold one)
					return crash("bad position: " + line)
				}
				rest = words[3:]
			default:
				return crash("position: " + line)
			}
			if len(rest) > 0 && rest[0] != "moves" {
				// "B 1" after the cells: a position written with spaces.
				return crash("position: " + line)
			}
			passInMoves = false
			for _, m := range rest[min(1, len(rest)):] {
				i, ok := usixIndex(m)
				if !ok {
					return crash("move: " + m)
				}
				passInMoves = passInMoves || i < 0
				board.play(i)
			}
		case words[0] == "go":
			if uoi {
				for i := 1; i < len(words); i++ {
					switch words[i] {
					case "btime", "wtime", "binc", "winc":
						i++
					case "infinite":
					default:
						return crash("go: " + line)
					}
				}
			}
			legal := board.legal()
			best, pv := "pass", "None"
			if len(legal) > 0 {
				best = name(legal[0])
				if uoi {
					best = name(legal[len(legal)-1])
				}
				pv = best
			}
			var discsInfo string
			if mode == USIXDiscs {
				i, score := board.greedy()
				discsInfo = fmt.Sprintf("info depth 1 score %d nodes 10", board.scoreFrom(arg, score))
				if i >= 0 {
					best = name(i)
					discsInfo += " pv " + best
				}
			}
			if mode == USIXPassMisplay && passInMoves {
				for i, c := range board.cell {
					if c != '-' {
						best = name(i)
						break
					}
				}
			}
			if mode == USIXIllegalPV && pv != "None" {
				pv += " d4 e5"
			}
			var info []string
			switch mode {
			case USIXNoInfo:
			case USIXDiscs:
				info = []string{discsInfo}
			case USIXFloat:
				info = []string{"info string no_search_score -73.0", "info depth 2 score 41.0 pv " + pv}
			case USIXWinOutside:
				info = []string{"info depth 2 score 10000 pv " + pv}
			case UOI:
				info = []string{"info score 10 pv " + pv, "# bestmove a1 would be a joke"}
			default:
				if pv == "None" {
					info = []string{"info depth 1 score -2 nodes 10"}
				} else {
					info = []string{"info depth 1 score 2 nodes 10 pv " + pv}
				}
			}
			answer := "bestmove " + best
			if mode == USIXPass {
				answer = "bestmove pass ponder b6"
			}
			untilStop := contains(words, "infinite") || contains(words, "ponder") || mode == USIXIgnoreMoveTime && contains(words, "movetime")
			if untilStop && mode != USIXInfiniteAtOnce {
				stop = make(chan struct{})
				go func(stop chan struct{}) {
					say(info...)
					<-stop
					say(answer)
				}(stop)
				continue
			}
			say(append(info, answer)...)
		case words[0] == "stop", words[0] == "ponderhit":
			if stop != nil {
				close(stop)
				stop = nil
			}
		case words[0] == "quit":
			return 0
		}
	}
	return 0
}
