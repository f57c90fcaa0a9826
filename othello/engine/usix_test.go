package engine

import (
	"bufio"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/usid/usid/othello"
)

// session drives Serve through pipes, as the pool drives the process.
type session struct {
	t     testing.TB
	in    *io.PipeWriter
	lines chan string
	done  chan error
}

// lineWait bounds every wait for a line: far beyond the normal case (a
// broken engine fails the test rather than hang it).
const lineWait = 30 * time.Second

func startSession(t testing.TB) *session {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &session{t: t, in: inW, lines: make(chan string, 1024), done: make(chan error, 1)}
	go func() {
		err := Serve(inR, outW, Config{HashMB: 1, Seed: 1})
		outW.Close()
		s.done <- err
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	t.Cleanup(func() {
		inW.Close()
		for range s.lines { // drain until Serve returns
		}
		if err := <-s.done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s
}

func (s *session) send(lines ...string) {
	s.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(s.in, l+"\n"); err != nil {
			s.t.Fatalf("send %q: %v", l, err)
		}
	}
}

// until reads lines up to and including the first that starts with
// prefix, and returns them all.
func (s *session) until(prefix string) []string {
	s.t.Helper()
	var got []string
	timeout := time.After(lineWait)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("output ended before %q; got %q", prefix, got)
			}
			got = append(got, l)
			if strings.HasPrefix(l, prefix) {
				return got
			}
		case <-timeout:
			s.t.Fatalf("no %q within %v; got %q", prefix, lineWait, got)
		}
	}
}

func bestMove(t testing.TB, lines []string) string {
	t.Helper()
	f := strings.Fields(lines[len(lines)-1])
	if len(f) < 2 || f[0] != "bestmove" {
		t.Fatalf("not a bestmove: %q", lines[len(lines)-1])
	}
	return f[1]
}

// checkLegal fails unless move is a legal answer in p: a legal square, or
// pass when p has none (also when the game is over).
func checkLegal(t testing.TB, p *othello.Position, move string) {
	t.Helper()
	legal := p.LegalMoveStrings()
	if len(legal) == 0 || legal[0] == "pass" {
		if move != "pass" {
			t.Fatalf("%s: bestmove %s, want pass", p.Token(), move)
		}
		return
	}
	for _, m := range legal {
		if m == move {
			return
		}
	}
	t.Fatalf("%s: bestmove %s is not legal (%v)", p.Token(), move, legal)
}

func TestHandshake(t *testing.T) {
	s := startSession(t)
	s.send("usi")
	got := s.until("usiok")
	want := []string{"id name usid-othello", "id author usid", "option name level type spin default 20 min 0 max 20", "option name Hash type spin default 16 min 1 max 64", "usiok"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("usi answered\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	s.send("score_scale_and_type")
	if got := s.until("scoretype"); got[0] != "scoretype stones min -64 max 64" {
		t.Errorf("score_scale_and_type answered %q", got)
	}
	s.send("setoption name USI_Hash value 256", "setoption name USI_Ponder value false", "isready")
	if got := s.until("readyok"); len(got) != 1 {
		t.Errorf("isready answered %q", got)
	}
	s.send("usinewgame", "position startpos moves", "go depth 3")
	lines := s.until("bestmove")
	checkLegal(t, othello.Startpos(), bestMove(t, lines))
	s.send("quit")
}

// infoFields reads an info line's numbers by name.
func infoFields(t testing.TB, line string) map[string]int {
	f := strings.Fields(line)
	m := map[string]int{}
	for i := 1; i+1 < len(f); i++ {
		if n, err := strconv.Atoi(f[i+1]); err == nil {
			m[f[i]] = n
		}
		if f[i] == "pv" || f[i] == "string" {
			break
		}
	}
	return m
}

func TestDepthAndNodesLimits(t *testing.T) {
	s := startSession(t)
	s.send("position startpos moves f5 d6 c3 d3 c4", "go depth 5")
	lines := s.until("bestmove")
	deepest := 0
	for _, l := range lines[:len(lines)-1] {
		f := infoFields(t, l)
		for _, k := range []string{"depth", "score", "nodes", "nps", "time"} {
			if _, ok := f[k]; !ok {
				t.Errorf("info line without %s: %q", k, l)
			}
		}
		if !strings.Contains(l, " pv ") {
			t.Errorf("info line without pv: %q", l)
		}
		deepest = max(deepest, f["depth"])
	}
	if deepest != 5 {
		t.Errorf("go depth 5 searched to depth %d", deepest)
	}
	p, _ := othello.Load("startpos", strings.Fields("f5 d6 c3 d3 c4"))
	checkLegal(t, p, bestMove(t, lines))

	s.send("go nodes 3000")
	lines = s.until("bestmove")
	for _, l := range lines[:len(lines)-1] {
		if n := infoFields(t, l)["nodes"]; n > 3000 {
			t.Errorf("go nodes 3000 reported %d nodes: %q", n, l)
		}
	}
	checkLegal(t, p, bestMove(t, lines))
	z := NewSearcher(1, 1)
	end := endPositions(4, 1, 12)[0]
	for _, b := range []Board{boardOf(p), end} {
		for _, limit := range []uint64{1, 100, 5000} {
			if res := z.Search(b, Limits{Level: MaxLevel, Nodes: limit, SolveEmpties: 20}, new(Control), nil); res.Nodes > limit {
				t.Errorf("nodes %d searched %d", limit, res.Nodes)
			}
		}
	}
}

// TestStopEndsInfinite: go infinite answers nothing until stop, then at
// once.
func TestStopEndsInfinite(t *testing.T) {
	s := startSession(t)
	s.send("position startpos", "go infinite")
	s.until("info depth 3 ")
	s.send("isready")
	for _, l := range s.until("readyok") {
		if strings.HasPrefix(l, "bestmove") {
			t.Fatalf("bestmove before stop: %q", l)
		}
	}
	s.send("stop")
	stopped := time.Now()
	checkLegal(t, othello.Startpos(), bestMove(t, s.until("bestmove")))
	if d := time.Since(stopped); d > 2*time.Second {
		t.Errorf("bestmove %v after stop (ceiling 2s)", d)
	}
}

// TestPonder: go ponder waits for ponderhit (or stop), then answers
// within the time ponderhit gives.
func TestPonder(t *testing.T) {
	s := startSession(t)
	s.send("position startpos moves f5", "go ponder btime 1000 wtime 1000 byoyomi 300")
	s.until("info depth 2 ")
	s.send("isready")
	for _, l := range s.until("readyok") {
		if strings.HasPrefix(l, "bestmove") {
			t.Fatalf("bestmove before ponderhit: %q", l)
		}
	}
	s.send("ponderhit")
	hit := time.Now()
	p, _ := othello.Load("startpos", []string{"f5"})
	checkLegal(t, p, bestMove(t, s.until("bestmove")))
	// The ceilings are TestTimeLimits': twice the clock plus 200 ms.
	if d := time.Since(hit); d > 2800*time.Millisecond {
		t.Errorf("bestmove %v after ponderhit with 1000 ms and 300 ms byoyomi", d)
	}
	// A ponderhit with its own clock: 200 ms of byoyomi alone now.
	s.send("go ponder btime 60000 wtime 60000 byoyomi 60000")
	s.until("info depth 2 ")
	s.send("ponderhit btime 0 wtime 0 byoyomi 200")
	hit = time.Now()
	checkLegal(t, p, bestMove(t, s.until("bestmove")))
	// (The go's own clock would give it most of a minute.)
	if d := time.Since(hit); d > 600*time.Millisecond {
		t.Errorf("bestmove %v after ponderhit with 200 ms byoyomi", d)
	}
}

// TestTimeLimits: the answer comes within the time the clock gives (the
// side's time, its increment and byoyomi): the engine never loses on time.
// The ceiling is twice the clock plus 200 ms: a machine shared with many
// processes may leave the engine without a core for a while (at load 30
// on two cores a 200 ms byoyomi was answered in 480 ms under -race); an
// engine that ignored the clock would take its default second or more.
func TestTimeLimits(t *testing.T) {
	s := startSession(t)
	for _, c := range []struct {
		goCmd string
		limit time.Duration
	}{
		{"go movetime 200", 200 * time.Millisecond},
		{"go btime 300 wtime 300", 300 * time.Millisecond},
		{"go btime 0 wtime 0 byoyomi 200", 200 * time.Millisecond},
		{"go btime 0 wtime 0 binc 200 winc 200", 200 * time.Millisecond},
		{"go btime 5 wtime 5", 5 * time.Millisecond},
	} {
		s.send("position startpos moves f5 d6", c.goCmd)
		start := time.Now()
		lines := s.until("bestmove")
		if d := time.Since(start); d > 2*c.limit+200*time.Millisecond {
			t.Errorf("%s: answered in %v", c.goCmd, d)
		}
		p, _ := othello.Load("startpos", []string{"f5", "d6"})
		checkLegal(t, p, bestMove(t, lines))
	}
}

// TestPassAndGameOver: a side without a square answers pass, as does a
// position where the game is over (what the USI-X engines answer).
func TestPassAndGameOver(t *testing.T) {
	s := startSession(t)
	pass := mustPassToken(t)
	over := "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXW"
	for _, tok := range []string{pass, over} {
		p, err := othello.ParsePosition(tok)
		if err != nil {
			t.Fatal(err)
		}
		if tok == pass && !p.MustPass() || tok == over && !p.IsOver() {
			t.Fatalf("%s is not the case it should test", tok)
		}
		s.send("position sfen "+tok+" moves", "go btime 1000 wtime 1000")
		if m := bestMove(t, s.until("bestmove")); m != "pass" {
			t.Errorf("%s: bestmove %s, want pass", tok, m)
		}
	}
}

// TestBadInput: refused positions and unknown words are told with info
// string error; go after a refused position resigns rather than guess.
func TestBadInput(t *testing.T) {
	s := startSession(t)
	for _, bad := range []string{
		"position sfen ---------------------------OX------XO---------------------------B 1 moves",
		"position startpos moves D3",
		"position startpos moves d3 d3",
		"position fen 8/8/8/8/8/8/8/8 w - - 0 1",
		"position sfen " + strings.Repeat("-", 64) + "B moves",
	} {
		s.send(bad)
		if got := s.until("info string error"); !strings.Contains(got[len(got)-1], "position refused") {
			t.Errorf("%q answered %q", bad, got)
		}
		s.send("go depth 2")
		if m := bestMove(t, s.until("bestmove")); m != "resign" {
			t.Errorf("go after %q: bestmove %s, want resign", bad, m)
		}
	}
	for _, bad := range []string{"frobnicate", "go depth x", "setoption name level value 99", "setoption name nope value 1"} {
		s.send(bad)
		s.until("info string error")
	}
	s.send("position startpos", "go depth 1")
	checkLegal(t, othello.Startpos(), bestMove(t, s.until("bestmove")))
	s.send(strings.Repeat("x", maxLine+10))
	s.until("info string error line longer")
	s.send("isready")
	s.until("readyok")
}

// TestLevelZeroIsImmediate: the weakest level answers without searching.
func TestLevelZeroIsImmediate(t *testing.T) {
	s := startSession(t)
	s.send("setoption name level value 0", "position startpos", "go btime 60000 wtime 60000 byoyomi 10000")
	lines := s.until("bestmove")
	if len(lines) != 1 {
		t.Errorf("level 0 searched: %q", lines)
	}
	checkLegal(t, othello.Startpos(), bestMove(t, lines))
}

// TestExactInfo: in the endgame the score is the exact margin and says so.
func TestExactInfo(t *testing.T) {
	b := endPositions(5, 1, 10)[0]
	want := minimax(b)
	tok := tokenOf(b, true)
	s := startSession(t)
	s.send("position sfen "+tok+" moves", "go btime 10000 wtime 10000")
	lines := s.until("bestmove")
	last := lines[len(lines)-2]
	if !strings.HasSuffix(last, " string exact") || infoFields(t, last)["score"] != want {
		t.Errorf("last info %q, want score %d and string exact", last, want)
	}
}

// tokenOf writes b as a USI-X token, the side to move being Black or
// White as black says.
func tokenOf(b Board, black bool) string {
	var sb strings.Builder
	bl, wh := b.P, b.O
	if !black {
		bl, wh = wh, bl
	}
	for i := 0; i < 64; i++ {
		switch {
		case bl&(1<<uint(i)) != 0:
			sb.WriteByte('X')
		case wh&(1<<uint(i)) != 0:
			sb.WriteByte('O')
		default:
			sb.WriteByte('-')
		}
	}
	if black {
		sb.WriteByte('B')
	} else {
		sb.WriteByte('W')
	}
	return sb.String()
}

// mustPassToken finds, in random games, a position whose side to move must
// pass.
func mustPassToken(t testing.TB) string {
	rng := rand.New(rand.NewPCG(9, 9))
	for range 1000 {
		tok := ""
		randomGame(rng, func(_ Board, p *othello.Position) {
			if tok == "" && p.MustPass() {
				tok = p.Token()
			}
		})
		if tok != "" {
			return tok
		}
	}
	t.Fatal("no position where a side must pass in 1000 random games")
	return ""
}
