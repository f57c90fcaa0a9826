package match

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/usid/usid/internal/etag"
	"github.com/usid/usid/match/stats"
	"github.com/usid/usid/session"
)

// Statuses of a match.
const (
	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusDone      = "done"
	StatusCancelled = "cancelled"
	StatusFailed    = "failed"
)

// Match is one match in progress or ended. Its lock guards what View
// reads; the games themselves are played by its workers.
type Match struct {
	id    string
	owner session.Caller
	c     *checked
	table *table

	ctx    context.Context // the match's, cancelled by Cancel and Close
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	status  string
	err     *Error
	games   []*Game // by game index; nil: not started
	next    int     // the next game index to hand out
	stopped bool    // no more games are handed out (decided, cancelled, failed)
	ended   time.Time
	// version counts the changes; enc is the encoding of encVersion, tag
	// its ETag.
	version, encVersion uint64
	enc                 []byte
	tag                 string
}

// View is a match as GET /v1/matches/{id} answers it.
type View struct {
	ID      string     `json:"id"`
	Status  string     `json:"status"`
	Game    string     `json:"game"`
	Players []Player   `json:"players"`
	Planned int        `json:"planned"`
	Games   []*Game    `json:"games"`
	Score   Score      `json:"score"`
	Pairs   *[5]int    `json:"pairs,omitempty"`
	Elo     *EloView   `json:"elo,omitempty"`
	SPRT    *SPRTView  `json:"sprt,omitempty"`
	Error   *ErrorView `json:"error,omitempty"`
}

// Score is the games' results from players[0]'s side.
type Score struct {
	Wins   int `json:"wins"`
	Draws  int `json:"draws"`
	Losses int `json:"losses"`
}

// EloView is the Elo difference of players[0] over players[1]: from the
// pairs where there are some (pentanomial), else from the games. Values
// that are infinite (all wins) are null.
type EloView struct {
	Value *float64    `json:"value"`
	CI95  [2]*float64 `json:"ci95"`
	LOS   float64     `json:"los"`
	NElo  *float64    `json:"nelo,omitempty"`
	Model string      `json:"model"` // "pentanomial" or "trinomial"
}

// SPRTView is the test's state.
type SPRTView struct {
	Elo0     float64 `json:"elo0"`
	Elo1     float64 `json:"elo1"`
	Alpha    float64 `json:"alpha"`
	Beta     float64 `json:"beta"`
	Model    string  `json:"model"`
	LLR      float64 `json:"llr"`
	Lower    float64 `json:"lower"`
	Upper    float64 `json:"upper"`
	Decision *string `json:"decision"`
}

// ErrorView is why a match failed.
type ErrorView struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// counts are the ended games' score from players[0]'s side and the
// pentanomial counts of the pairs whose both games ended.
func (mt *Match) counts() (Score, stats.Pentanomial) {
	var s Score
	var p stats.Pentanomial
	points := func(g *Game) int { // players[0]'s, in half points
		switch {
		case g.Winner == nil:
			return 1
		case *g.Winner == 0:
			return 2
		}
		return 0
	}
	for i, g := range mt.games {
		if g == nil || !g.Done {
			continue
		}
		switch points(g) {
		case 2:
			s.Wins++
		case 1:
			s.Draws++
		default:
			s.Losses++
		}
		if i%2 == 1 && mt.games[i-1] != nil && mt.games[i-1].Done {
			p[points(g)+points(mt.games[i-1])]++
		}
	}
	return s, p
}

// View is the match's state now.
func (mt *Match) View() *View {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	return mt.viewLocked()
}

// Encoded is View encoded and its ETag (etag.Of: the same answer is
// tagged alike on every pod), made once per change of the match: a match
// polled while a long game is played costs a copy of bytes, not an
// encoding, and a poll with the tag a 304.
func (mt *Match) Encoded() (body []byte, tag string) {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	if mt.enc == nil || mt.encVersion != mt.version {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // as the server's other answers
		enc.Encode(mt.viewLocked())
		mt.enc, mt.tag, mt.encVersion = b.Bytes(), etag.Of(b.Bytes()), mt.version
	}
	return mt.enc, mt.tag
}

func (mt *Match) viewLocked() *View {
	v := &View{ID: mt.id, Status: mt.status, Game: mt.c.game.Name(), Players: mt.c.Players, Planned: mt.c.games, Games: []*Game{}}
	for i, g := range mt.games {
		if g != nil {
			cp := *g
			cp.Index, cp.Watch = i, "/watch/"+mt.id+"/"+strconv.Itoa(i)
			cp.Position.Moves = append([]string(nil), g.Position.Moves...)
			v.Games = append(v.Games, &cp)
		}
	}
	s, p := mt.counts()
	v.Score = s
	if p.Pairs() > 0 {
		pp := [5]int(p)
		v.Pairs = &pp
	}
	if e, ok := stats.FromPairs(p); ok {
		v.Elo = eloView(e, "pentanomial")
	} else if e, ok := stats.FromGames(stats.Trinomial{Wins: s.Wins, Draws: s.Draws, Losses: s.Losses}); ok {
		v.Elo = eloView(e, "trinomial")
	}
	if t := mt.c.sprt; t != nil {
		lo, hi := t.Bounds()
		llr := t.LLR(p)
		sv := &SPRTView{Elo0: t.Elo0, Elo1: t.Elo1, Alpha: t.Alpha, Beta: t.Beta, Model: t.Model, LLR: round(llr, 4), Lower: round(lo, 4), Upper: round(hi, 4)}
		if d := t.Decide(llr); d != "" {
			sv.Decision = &d
		}
		v.SPRT = sv
	}
	if mt.err != nil {
		v.Error = &ErrorView{Code: mt.err.Code, Message: mt.err.Message}
	}
	return v
}

func eloView(e stats.Estimate, model string) *EloView {
	v := &EloView{Value: finite(e.Elo), CI95: [2]*float64{finite(e.Lo), finite(e.Hi)}, LOS: round(e.LOS, 4), Model: model}
	if e.NEloMargin > 0 {
		v.NElo = finite(e.NElo)
	}
	return v
}

func finite(x float64) *float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil
	}
	r := round(x, 2)
	return &r
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// take hands out the next game index to play, or false when the match
// hands out no more.
func (mt *Match) take() (int, bool) {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	if mt.stopped || mt.next >= mt.c.games {
		return 0, false
	}
	i := mt.next
	mt.next++
	return i, true
}

// update records game i's progress; an ended game may decide the SPRT,
// which stops handing out games (those under way are played out, as
// fishtest's workers finish theirs).
func (mt *Match) update(i int, g *Game) {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	cp := g.snapshot()
	cp.Index, cp.Watch = i, "/watch/"+mt.id+"/"+strconv.Itoa(i)
	mt.games[i] = cp
	mt.version++
	if g.Done && mt.c.sprt != nil {
		_, p := mt.counts()
		if mt.c.sprt.Decide(mt.c.sprt.LLR(p)) != "" {
			mt.stopped = true
		}
	}
}

// snapshot is a copy of g that its player's later moves leave as it is.
func (g *Game) snapshot() *Game {
	cp := *g
	cp.Position.Moves = append([]string(nil), g.Position.Moves...)
	// The player only appends: the copy's evaluations are never written again.
	cp.Evals = g.Evals[:len(g.Evals):len(g.Evals)]
	return &cp
}

// fail ends the match with err (the first error wins).
func (mt *Match) fail(err *Error) {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	if mt.err == nil {
		mt.err = err
	}
	mt.version++
	mt.stopped = true
}

// run plays the match on c.Concurrency workers and sets its end.
func (mt *Match) run(ctx context.Context, svc *session.Service) {
	defer close(mt.done)
	mt.mu.Lock()
	mt.status = StatusRunning
	mt.version++
	mt.mu.Unlock()
	var wg sync.WaitGroup
	for range mt.c.Concurrency {
		wg.Go(func() { mt.work(ctx, svc) })
	}
	wg.Wait()
	mt.mu.Lock()
	defer mt.mu.Unlock()
	mt.games = keptGames(mt.games)
	switch {
	case ctx.Err() != nil:
		mt.status = StatusCancelled
	case mt.err != nil:
		mt.status = StatusFailed
	default:
		mt.status = StatusDone
	}
	mt.ended = time.Now()
	mt.version++
}

// keptGames are the games of an ended match that count: those handed out
// but not ended (a cancellation, a failure) are not part of the result,
// and pairs stay aligned: nothing after the first gap counts.
func keptGames(games []*Game) []*Game {
	kept := games[:0]
	for _, g := range games {
		if g == nil || !g.Done {
			break
		}
		kept = append(kept, g)
	}
	return kept
}

// work is one worker: its two seats, and games until none is left.
func (mt *Match) work(ctx context.Context, svc *session.Service) {
	var seats [2]*seat
	defer func() {
		for _, s := range seats {
			if s != nil {
				s.close()
			}
		}
	}()
	for i, p := range mt.c.Players {
		s, err := openSeat(ctx, svc, mt.owner, p)
		if err != nil {
			if ctx.Err() == nil {
				mt.fail(err)
			}
			return
		}
		seats[i] = s
	}
	for {
		i, ok := mt.take()
		if !ok || ctx.Err() != nil {
			return
		}
		op := i / 2 % len(mt.c.openings)
		g, err := mt.table.playGame(ctx, mt.c.openings[op], op, i%2, seats, func(g *Game) { mt.update(i, g) })
		if err != nil {
			if ctx.Err() == nil {
				mt.fail(err)
			}
			return
		}
		mt.update(i, g)
	}
}
