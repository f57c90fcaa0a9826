package engine

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/usid/usid/othello"
)

// Name and Author are what the engine answers to usi.
const (
	Name   = "usid-othello"
	Author = "usid"
)

// Config sets up an engine for ServeUSIX: the table's size (megabytes;
// the Hash option changes it) and the seed of the weaker levels' noise (0:
// from the clock).
type Config struct {
	HashMB int
	Seed   uint64
}

// DefaultHashMB and MaxHashMB bound the Hash option: othello's searches
// fill no more than a few tens of megabytes in the time a game gives.
const (
	DefaultHashMB = 16
	MaxHashMB     = 64
)

// maxLine bounds a command line; a longer one is refused (and skipped).
const maxLine = 64 << 10

// ServeUSIX speaks USI-X on r (commands) and w (answers) until quit or the
// end of r, with the default configuration.
func ServeUSIX(r io.Reader, w io.Writer) error { return Serve(r, w, Config{}) }

// Serve is ServeUSIX with a configuration. Commands are read while a search
// runs (stop, ponderhit, isready are answered at once); the search writes
// its info lines and bestmove itself. Every bad command is answered by
// "info string error ..." and otherwise ignored.
func Serve(r io.Reader, w io.Writer, cfg Config) error {
	if cfg.HashMB <= 0 {
		cfg.HashMB = DefaultHashMB
	}
	if cfg.Seed == 0 {
		cfg.Seed = uint64(time.Now().UnixNano())
	}
	e := &server{out: bufio.NewWriter(w), cfg: cfg, level: MaxLevel, hashMB: cfg.HashMB}
	e.pos, e.havePos = othello.Startpos(), true
	defer e.stopSearch()
	br := bufio.NewReaderSize(r, 4096)
	for {
		line, err := readLine(br)
		if err != nil {
			if errors.Is(err, errLong) {
				e.errorf("line longer than %d bytes skipped", maxLine)
				continue
			}
			if err == io.EOF {
				return nil
			}
			return err
		}
		if !e.command(line) {
			return nil
		}
	}
}

var errLong = errors.New("line too long")

// readLine reads one line without its end (\n or \r\n), refusing (and
// skipping) one longer than maxLine.
func readLine(br *bufio.Reader) (string, error) {
	var buf []byte
	long := false
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > maxLine {
			long, buf = true, buf[:0]
		} else {
			buf = append(buf, chunk...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(buf) > 0 && !long:
			return strings.TrimRight(string(buf), "\r\n"), nil
		case err != nil:
			return "", err
		case long:
			return "", errLong
		}
		return strings.TrimRight(string(buf), "\r\n"), nil
	}
}

// server is the protocol's state. Its fields are the reading goroutine's,
// except out (shared with the search, under mu).
type server struct {
	mu  sync.Mutex
	out *bufio.Writer

	cfg      Config
	level    int
	hashMB   int
	searcher *Searcher

	pos     *othello.Position
	havePos bool // false after a refused position command

	search *running
}

// running is a search in progress.
type running struct {
	ctl  Control
	done chan struct{}
	// hold is closed when bestmove may be written: at once for a timed
	// search, at stop for go infinite, at stop or ponderhit for go ponder.
	hold     chan struct{}
	holdOnce sync.Once
	ponder   bool
	params   GoParams // of its go, for a ponderhit without clocks
	white    bool
	empties  int
}

func (r *running) release() { r.holdOnce.Do(func() { close(r.hold) }) }

func (e *server) println(s string) {
	e.mu.Lock()
	e.out.WriteString(s)
	e.out.WriteByte('\n')
	e.out.Flush()
	e.mu.Unlock()
}

func (e *server) errorf(format string, args ...any) {
	msg := strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, fmt.Sprintf(format, args...))
	e.println("info string error " + msg)
}

// command handles one line and reports whether to go on.
func (e *server) command(line string) bool {
	f := strings.Fields(line)
	if len(f) == 0 {
		return true
	}
	switch f[0] {
	case "usi":
		e.println("id name " + Name)
		e.println("id author " + Author)
		e.println(fmt.Sprintf("option name level type spin default %d min 0 max %d", MaxLevel, MaxLevel))
		e.println(fmt.Sprintf("option name Hash type spin default %d min 1 max %d", DefaultHashMB, MaxHashMB))
		e.println("usiok")
	case "isready":
		if e.search == nil {
			e.ready()
		}
		e.println("readyok")
	case "setoption":
		e.setOption(f[1:])
	case "usinewgame":
		e.stopSearch()
		if e.searcher != nil {
			e.searcher.Clear()
		}
	case "position":
		e.position(line)
	case "go":
		e.stopSearch()
		e.goCmd(f[1:])
	case "stop":
		e.stopSearch()
	case "ponderhit":
		e.ponderHit(f[1:])
	case "score_scale_and_type":
		e.println("scoretype stones min -64 max 64")
	case "quit":
		return false
	case "gameover":
		// Not sent by othello GUIs; nothing to do.
	default:
		e.errorf("unknown command %q", clip(f[0]))
	}
	return true
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// ready makes the searcher (and its table) if it is not there yet.
func (e *server) ready() {
	if e.searcher == nil {
		e.searcher = NewSearcher(e.hashMB, e.cfg.Seed)
	}
}

func (e *server) setOption(args []string) {
	// setoption name <name> [value <value>]; names have no spaces here.
	if len(args) < 2 || args[0] != "name" {
		e.errorf("setoption: want \"setoption name <name> value <value>\"")
		return
	}
	name, value := args[1], ""
	if len(args) >= 4 && args[2] == "value" {
		value = args[3]
	}
	switch strings.ToLower(name) {
	case "level":
		n, err := strconv.Atoi(value)
		if err != nil || n < 0 || n > MaxLevel {
			e.errorf("setoption level: want 0..%d, got %q", MaxLevel, clip(value))
			return
		}
		e.level = n
	case "hash", "usi_hash":
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 {
			e.errorf("setoption %s: want a number of megabytes, got %q", name, clip(value))
			return
		}
		n = min(n, MaxHashMB)
		if n != e.hashMB && e.search == nil {
			e.hashMB, e.searcher = n, nil // made again at isready or go
		}
	case "usi_ponder", "ponder":
		// Pondering needs no preparation: go ponder is always served.
	default:
		e.errorf("setoption: no option %q", clip(name))
	}
}

func (e *server) position(line string) {
	token, moves, err := othello.ParsePositionCommand(line)
	if err == nil {
		p, errs := othello.Load(token, moves)
		if errs == nil {
			e.pos, e.havePos = p, true
			return
		}
		err = othello.Errors(errs)
	}
	e.havePos = false
	e.errorf("position refused: %v", err)
}

// parseGo reads go's parameters; unknown words and bad numbers are told
// and skipped.
func (e *server) parseGo(args []string) GoParams {
	var g GoParams
	for i := 0; i < len(args); i++ {
		word := args[i]
		switch word {
		case "infinite":
			g.Infinite = true
			continue
		case "ponder":
			g.Ponder = true
			continue
		case "btime", "wtime", "binc", "winc", "byoyomi", "movetime", "depth", "nodes", "movestogo":
		default:
			e.errorf("go: unknown parameter %q", clip(word))
			continue
		}
		if i+1 >= len(args) {
			e.errorf("go: %s without a value", word)
			break
		}
		i++
		v, err := strconv.ParseInt(args[i], 10, 64)
		if err != nil || v < 0 {
			e.errorf("go: %s %q is not a number of 0 or more", word, clip(args[i]))
			continue
		}
		switch word {
		case "btime":
			g.BTime, g.timed = v, true
		case "wtime":
			g.WTime, g.timed = v, true
		case "binc":
			g.BInc, g.timed = v, true
		case "winc":
			g.WInc, g.timed = v, true
		case "byoyomi":
			g.Byoyomi, g.timed = v, true
		case "movetime":
			g.MoveTime = v
		case "depth":
			g.Depth = int(min(v, 64))
		case "nodes":
			g.Nodes = uint64(v)
		}
	}
	return g
}

// boardOf converts a position of package othello to the search's board.
func boardOf(p *othello.Position) Board {
	var black, white uint64
	for s := othello.Square(0); s < 64; s++ {
		switch p.At(s) {
		case othello.BlackDisc:
			black |= 1 << uint(s)
		case othello.WhiteDisc:
			white |= 1 << uint(s)
		}
	}
	if p.Turn() == othello.White {
		return Board{P: white, O: black}
	}
	return Board{P: black, O: white}
}

func (e *server) goCmd(args []string) {
	g := e.parseGo(args)
	if !e.havePos {
		e.errorf("go: no position (the last one was refused)")
		e.println("bestmove resign")
		return
	}
	e.ready()
	b := boardOf(e.pos)
	white := e.pos.Turn() == othello.White
	r := &running{done: make(chan struct{}), hold: make(chan struct{}), ponder: g.Ponder, params: g, white: white, empties: b.NumEmpties()}
	start := time.Now()
	soft, hard := Budget(g, white, r.empties)
	r.ctl.SetDeadlines(after(start, soft), after(start, hard))
	if !g.Infinite && !g.Ponder {
		r.release()
	}
	lim := Limits{Depth: g.Depth, Nodes: g.Nodes, Level: e.level, SolveEmpties: solveEmpties(hard)}
	e.search = r
	z := e.searcher
	go func() {
		defer close(r.done)
		res := z.Search(b, lim, &r.ctl, func(in Info) { e.println(infoLine(in)) })
		<-r.hold
		line := "bestmove " + moveName(res.Move)
		if res.Ponder != NoMove && res.Move >= 0 {
			line += " ponder " + moveName(res.Ponder)
		}
		e.println(line)
	}()
}

func after(t time.Time, d time.Duration) time.Time {
	if d == 0 {
		return time.Time{}
	}
	return t.Add(d)
}

// ponderHit turns a pondering search into a timed one: its clock starts
// now, from the times ponderhit carries or else those of its go.
func (e *server) ponderHit(args []string) {
	r := e.search
	if r == nil || !r.ponder {
		return
	}
	g := e.parseGo(args)
	if !g.timed && g.MoveTime == 0 {
		g = r.params
	}
	g.Ponder = false
	start := time.Now()
	soft, hard := Budget(g, r.white, r.empties)
	r.ctl.SetDeadlines(after(start, soft), after(start, hard))
	r.ponder = false
	r.release()
}

// stopSearch ends the search in progress, if any, and waits for its
// bestmove.
func (e *server) stopSearch() {
	r := e.search
	if r == nil {
		return
	}
	r.ctl.Stop()
	r.release()
	<-r.done
	e.search = nil
}

func moveName(m int) string {
	if m < 0 {
		return "pass"
	}
	return othello.Square(m).String()
}

// infoLine writes an iteration's state: depth, the score in discs (the
// declared scale), nodes, nps, time in milliseconds and the pv; an exact
// endgame score says so with "string exact" at the end.
func infoLine(in Info) string {
	ms := in.Time.Milliseconds()
	nps := in.Nodes * 1000 / uint64(max(ms, 1))
	var b strings.Builder
	fmt.Fprintf(&b, "info depth %d score %d nodes %d nps %d time %d", in.Depth, in.Score, in.Nodes, nps, ms)
	if len(in.PV) > 0 {
		b.WriteString(" pv")
		for _, m := range in.PV {
			b.WriteString(" " + moveName(m))
		}
	}
	if in.Exact {
		b.WriteString(" string exact")
	}
	return b.String()
}
