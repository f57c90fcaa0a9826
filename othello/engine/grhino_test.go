package engine

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Matches against Debian's grhino, whose gtp-rhino speaks GTP (not USI-X):
// not run by the tests. Install its data and unpack the program:
//
//	apt-get install grhino-data     # /usr/share/grhino (patterns, book)
//	apt-get download grhino && dpkg-deb -x grhino_*.deb /tmp/grhino
//	GRHINO=/tmp/grhino/usr/games/gtp-rhino go test -run '^$' -bench GRhino -benchtime 1x ./othello/engine
//
// GRHINO_LEVEL (1..5, default 5, its strongest) and GRHINO_GAMES (default
// 20) set the match. usid's engine has 100 ms a move, or with
// GRHINO_TIME=equal the time gtp-rhino takes a move (equalMoveTime), or
// with GRHINO_TIME=total as much time over the game (totalMoveTime). Each game's
// line tells both sides' wall and CPU time a move. GRHINO_SEED (default
// 31) draws the openings: matches with different seeds can run at once,
// as shards of one match.

// gtp is a GTP engine process.
type gtp struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startGTP(tb testing.TB, path string, args ...string) *gtp {
	cmd := exec.Command(path, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatalf("%s: %v (see grhino_test.go for how to install it)", path, err)
	}
	g := &gtp{cmd: cmd, in: in, out: bufio.NewReader(out)}
	tb.Cleanup(func() {
		g.ask("quit")
		in.Close()
		cmd.Wait()
	})
	return g
}

// ask sends a command and returns the answer's text ("= text"), or an
// error for "? text" or a closed pipe.
func (g *gtp) ask(command string) (string, error) {
	if _, err := io.WriteString(g.in, command+"\n"); err != nil {
		return "", err
	}
	var lines []string
	for {
		l, err := g.out.ReadString('\n')
		if err != nil {
			return "", err
		}
		l = strings.TrimRight(l, "\r\n")
		if l == "" && len(lines) > 0 {
			break
		}
		if l != "" {
			lines = append(lines, l)
		}
	}
	text := strings.Join(lines, "\n")
	if strings.HasPrefix(text, "?") {
		return "", fmt.Errorf("%s: %s", command, text)
	}
	return strings.TrimSpace(strings.TrimPrefix(text, "=")), nil
}

// cpu returns the CPU time the GTP process has used so far (user and
// system, from /proc), or 0 where that cannot be read.
func (g *gtp) cpu() time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", g.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// The fields after the command's name (in parentheses): utime and
	// stime are the 12th and 13th, in clock ticks (100 a second on Linux).
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	var u, st int64
	fmt.Sscan(f[11], &u)
	fmt.Sscan(f[12], &st)
	return time.Duration(u+st) * 10 * time.Millisecond
}

// gameTime is the time each side of a game took: wall time over its moves
// (a move's wall time counts other processes' turns on a shared machine,
// the same for both sides), and CPU time.
type gameTime struct {
	usid, rhino       time.Duration // wall
	usidCPU, rhinoCPU time.Duration
	usidN, rhinoN     int // moves timed
}

// equalMoveTime is usid's time for its next move in the equal-time mode:
// the mean wall time of gtp-rhino's moves so far in this game (1 s before
// its first), at least the 100 ms of the default mode. A running mean
// rather than the last move alone: one instant book move or one long
// search does not decide the next move's time; over a game the two sides'
// totals come out close, and each game's line shows them.
func (t *gameTime) equalMoveTime() time.Duration {
	if t.rhinoN == 0 {
		return time.Second
	}
	return max(t.rhino/time.Duration(t.rhinoN), 100*time.Millisecond)
}

// totalMoveTime is usid's time for its next move in the equal-total mode:
// what brings its total after the move to its moves times gtp-rhino's mean
// so far, so that a lag behind gtp-rhino's long middle-game searches is
// made up on the next moves (1 s before gtp-rhino's first move; at least
// 100 ms, at most three means).
func (t *gameTime) totalMoveTime() time.Duration {
	if t.rhinoN == 0 {
		return time.Second
	}
	mean := t.rhino / time.Duration(t.rhinoN)
	return min(max(mean*time.Duration(t.usidN+1)-t.usid, 100*time.Millisecond), 3*mean)
}

func perMove(d time.Duration, n int) time.Duration {
	if n == 0 {
		return 0
	}
	return (d / time.Duration(n)).Round(time.Millisecond)
}

// gtpGame plays a game between eng and the GTP engine g from the start,
// after the opening moves (played by both), eng having Black if engBlack;
// with mode "equal" or "total", eng's time a move is equalMoveTime or
// totalMoveTime. It returns eng's
// final margin and the sides' times; an illegal or unreadable GTP move
// loses the game for g (and is reported).
func gtpGame(tb testing.TB, eng EnginePlayer, g *gtp, opening []int, engBlack bool, mode string) (int, gameTime) {
	var t gameTime
	if _, err := g.ask("clear_board"); err != nil {
		tb.Fatal(err)
	}
	b := Board{P: 1<<28 | 1<<35, O: 1<<27 | 1<<36}
	black := true // black to move
	colour := func() string {
		if black {
			return "black"
		}
		return "white"
	}
	play := func(m int) {
		// A pass is not told: gtp-rhino refuses "play <colour> pass", and
		// every play and genmove names its colour.
		if m != Pass {
			if _, err := g.ask("play " + colour() + " " + strings.ToUpper(moveName(m))); err != nil {
				tb.Fatal(err)
			}
		}
		if m == Pass {
			b = b.Pass()
		} else {
			b = b.Play(m, Flips(b.P, b.O, m))
		}
		black = !black
	}
	for _, m := range opening {
		play(m)
	}
	for {
		mv := Moves(b.P, b.O)
		if mv == 0 && Moves(b.O, b.P) == 0 {
			if black == engBlack {
				return b.FinalScore(), t
			}
			return -b.FinalScore(), t
		}
		if black == engBlack {
			switch mode {
			case "equal":
				eng.MoveTime = t.equalMoveTime()
			case "total":
				eng.MoveTime = t.totalMoveTime()
			}
			start, cpu := time.Now(), cpuTime()
			m := eng.Move(b)
			t.usid += time.Since(start)
			t.usidCPU += cpuTime() - cpu
			t.usidN++
			play(m)
			continue
		}
		if mv == 0 { // gtp's side must pass: told, not asked
			play(Pass)
			continue
		}
		start, cpu := time.Now(), g.cpu()
		ans, err := g.ask("genmove " + colour())
		if err != nil {
			tb.Fatal(err)
		}
		t.rhino += time.Since(start)
		t.rhinoCPU += g.cpu() - cpu
		t.rhinoN++
		m := Pass
		if !strings.EqualFold(ans, "pass") {
			sq := strings.ToLower(ans)
			if len(sq) != 2 || sq[0] < 'a' || sq[0] > 'h' || sq[1] < '1' || sq[1] > '8' {
				tb.Errorf("gtp move %q", ans)
				return 64, t
			}
			m = int(sq[1]-'1')*8 + int(sq[0]-'a')
		}
		if (m == Pass) != (mv == 0) || (m != Pass && mv&(1<<uint(m)) == 0) {
			tb.Errorf("gtp played an illegal %q", ans)
			return 64, t
		}
		if m == Pass {
			b = b.Pass()
		} else {
			b = b.Play(m, Flips(b.P, b.O, m))
		}
		black = !black
	}
}

// openingMoves returns plies random moves from the start.
func openingMoves(plies int, rng *rand.Rand) []int {
	b := Board{P: 1<<28 | 1<<35, O: 1<<27 | 1<<36}
	var out []int
	for range plies {
		m := RandomPlayer{rng}.Move(b)
		out = append(out, m)
		if m == Pass {
			b = b.Pass()
		} else {
			b = b.Play(m, Flips(b.P, b.O, m))
		}
	}
	return out
}

func envInt(name string, def int) int {
	var v int
	if _, err := fmt.Sscan(os.Getenv(name), &v); err != nil {
		return def
	}
	return v
}

// BenchmarkGRhino plays usid's engine (100 ms a move, or gtp-rhino's time
// with GRHINO_TIME=equal or total) against gtp-rhino, colours alternating over
// pairs of games from the same random 4-ply opening, and reports the
// engine's wins, losses and draws.
func BenchmarkGRhino(b *testing.B) {
	path := os.Getenv("GRHINO")
	if path == "" {
		path = "/usr/games/gtp-rhino"
	}
	level, games := envInt("GRHINO_LEVEL", 5), envInt("GRHINO_GAMES", 20)
	mode := os.Getenv("GRHINO_TIME")
	switch mode {
	case "", "100ms", "equal", "total":
	default:
		b.Fatalf("GRHINO_TIME=%q: want equal, total, or 100ms (the default)", mode)
	}
	g := startGTP(b, path, fmt.Sprintf("--level=%d", level))
	eng := EnginePlayer{Searcher: NewSearcher(16, 1), Limits: Limits{Level: MaxLevel}, MoveTime: 100 * time.Millisecond}
	seed := uint64(envInt("GRHINO_SEED", 31))
	rng := rand.New(rand.NewPCG(seed, 32))
	var r MatchResult
	for b.Loop() {
		r = MatchResult{}
		var open []int
		for i := range games {
			if i%2 == 0 {
				open = openingMoves(4, rng)
			}
			m, t := gtpGame(b, eng, g, open, i%2 == 0, mode)
			// Progress as it comes (a game at grhino's level 5 takes minutes).
			fmt.Fprintf(os.Stderr, "grhino level %d, seed %d, game %d (usid's engine %s): margin %+d; a move: usid %v wall %v CPU (%d moves), gtp-rhino %v wall %v CPU (%d moves)\n",
				level, seed, i+1, map[bool]string{true: "black", false: "white"}[i%2 == 0], m,
				perMove(t.usid, t.usidN), perMove(t.usidCPU, t.usidN), t.usidN,
				perMove(t.rhino, t.rhinoN), perMove(t.rhinoCPU, t.rhinoN), t.rhinoN)
			switch {
			case m > 0:
				r.Wins++
			case m < 0:
				r.Losses++
			default:
				r.Draws++
			}
		}
	}
	b.ReportMetric(float64(r.Wins), "wins")
	b.ReportMetric(float64(r.Losses), "losses")
	b.ReportMetric(float64(r.Draws), "draws")
}

// TestTotalMoveTime: the equal-total mode makes up a lag within three of
// gtp-rhino's means a move, and gives 100 ms when usid's engine is ahead.
func TestTotalMoveTime(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		t    gameTime
		want time.Duration
	}{
		{gameTime{}, s},
		{gameTime{rhino: 30 * s, rhinoN: 3, usid: 14 * s, usidN: 2}, 16 * s},
		{gameTime{rhino: 30 * s, rhinoN: 3, usid: 4 * s, usidN: 2}, 26 * s},
		{gameTime{rhino: 30 * s, rhinoN: 3, usid: 1 * s, usidN: 5}, 30 * s},
		{gameTime{rhino: 30 * s, rhinoN: 3, usid: 40 * s, usidN: 3}, 100 * time.Millisecond},
	} {
		if got := c.t.totalMoveTime(); got != c.want {
			t.Errorf("%+v: %v, want %v", c.t, got, c.want)
		}
	}
}
