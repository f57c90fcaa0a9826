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
// 20) set the match; usid's engine has 100 ms a move.

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

// gtpGame plays a game between eng and the GTP engine g from the start,
// after the opening moves (played by both), eng having Black if engBlack.
// It returns eng's final margin; an illegal or unreadable GTP move loses
// the game for g (and is reported).
func gtpGame(tb testing.TB, eng Player, g *gtp, opening []int, engBlack bool) int {
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
				return b.FinalScore()
			}
			return -b.FinalScore()
		}
		if black == engBlack {
			play(eng.Move(b))
			continue
		}
		if mv == 0 { // gtp's side must pass: told, not asked
			play(Pass)
			continue
		}
		ans, err := g.ask("genmove " + colour())
		if err != nil {
			tb.Fatal(err)
		}
		m := Pass
		if !strings.EqualFold(ans, "pass") {
			sq := strings.ToLower(ans)
			if len(sq) != 2 || sq[0] < 'a' || sq[0] > 'h' || sq[1] < '1' || sq[1] > '8' {
				tb.Errorf("gtp move %q", ans)
				return 64
			}
			m = int(sq[1]-'1')*8 + int(sq[0]-'a')
		}
		if (m == Pass) != (mv == 0) || (m != Pass && mv&(1<<uint(m)) == 0) {
			tb.Errorf("gtp played an illegal %q", ans)
			return 64
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

// BenchmarkGRhino plays usid's engine (100 ms a move) against gtp-rhino,
// colours alternating over pairs of games from the same random 4-ply
// opening, and reports the engine's wins, losses and draws.
func BenchmarkGRhino(b *testing.B) {
	path := os.Getenv("GRHINO")
	if path == "" {
		path = "/usr/games/gtp-rhino"
	}
	level, games := envInt("GRHINO_LEVEL", 5), envInt("GRHINO_GAMES", 20)
	g := startGTP(b, path, fmt.Sprintf("--level=%d", level))
	eng := EnginePlayer{Searcher: NewSearcher(16, 1), Limits: Limits{Level: MaxLevel}, MoveTime: 100 * time.Millisecond}
	rng := rand.New(rand.NewPCG(31, 32))
	var r MatchResult
	for b.Loop() {
		r = MatchResult{}
		var open []int
		for i := range games {
			if i%2 == 0 {
				open = openingMoves(4, rng)
			}
			m := gtpGame(b, eng, g, open, i%2 == 0)
			// Progress as it comes (a game at grhino's level 5 takes minutes).
			fmt.Fprintf(os.Stderr, "grhino level %d, game %d (usid's engine %s): margin %+d\n", level, i+1, map[bool]string{true: "black", false: "white"}[i%2 == 0], m)
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
