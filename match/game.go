package match

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	gameseam "github.com/usid/usid/game"
	"github.com/usid/usid/play"
	"github.com/usid/usid/session"
	"github.com/usid/usid/usi"
)

// Game is one game of a match, as GET /v1/matches/{id} shows it.
type Game struct {
	// Index is the game's number in the match, from 0 (games 2k and 2k+1
	// are a pair): a match's games are listed in its order, and while games
	// are played on several pods one may end before another of a lower
	// index. Watch is the path of its watch page (/watch/{match}/{index}):
	// live while it is played, the whole game once it ended.
	Index int    `json:"index"`
	Watch string `json:"watch"`
	// Opening is the index of the opening it started from; First the
	// index of the player who moved first from there.
	Opening int `json:"opening"`
	First   int `json:"first"`
	// Sides is the player index of each side ("b", "w" as the game's
	// positions name them).
	Sides map[string]int `json:"sides"`
	// Winner is the winner's player index, nil for a draw; Done false
	// while the game is played (winner and reason are then absent).
	Winner *int   `json:"-"`
	Done   bool   `json:"-"`
	Reason string `json:"reason,omitempty"`
	// Detail says more of the end: the illegal move and why, the
	// adjudication's rule, the declaration's points.
	Detail string `json:"detail,omitempty"`
	// Position is the game's start (the opening's) and every move played.
	Position session.Position `json:"position"`
	// Record is the game in its game's record format, as POST
	// /v1/records/export answers it ({"kif": ...}, {"pgn": ...}), once it
	// ended; absent for a game whose rules have no record format.
	Record any `json:"record,omitempty"`
	// Evals are the players' own evaluations, one per move an engine
	// chose, and Line the latest in full: GET /v1/matches/{id}/games/{n}
	// answers them (the match's GET leaves them out: it stays small).
	Evals []Line `json:"-"`
	Line  *Line  `json:"-"`
}

// MarshalJSON writes winner as the contract has it: 0, 1 or null once the
// game ended, absent while it is played.
func (g Game) MarshalJSON() ([]byte, error) {
	type plain Game
	v := struct {
		plain
		Winner json.RawMessage `json:"winner,omitempty"`
	}{plain: plain(g)}
	if g.Done {
		v.Winner = json.RawMessage("null")
		if g.Winner != nil {
			v.Winner = json.RawMessage(fmt.Sprint(*g.Winner))
		}
	}
	return json.Marshal(v)
}

// table is what a game needs of its match: the players' names for the
// record, the limits or clock, the rules of adjudication and the caps.
type table struct {
	game     gameseam.Game
	players  [2]Player
	limits   *session.Limits
	clock    *play.TimeControl
	adj      *Adjudication
	maxPlies int
	lag      time.Duration
	margin   time.Duration
	event    string
}

// playGame plays one game from opening op, player first moving first,
// on seats; progress is called with the game after each move. It returns
// the ended game, or an error that ends the match (an engine missing,
// the owner's engine time spent, a cancellation).
func (t *table) playGame(ctx context.Context, op gameseam.Position, opening, first int, seats [2]*seat, progress func(*Game)) (*Game, *Error) {
	start, serr := t.game.Check(op.Start(), op.Variant(), nil)
	if serr != nil {
		return nil, invalid("opening %d: %s", opening, serr.Message)
	}
	m, pos := start.Match(), gameseam.Position(start)
	for _, mv := range op.Moves() {
		if _, err := m.Check(mv); err != nil {
			return nil, invalid("opening %d: %s", opening, err.Message)
		}
		m.Play(mv)
		pos, _ = pos.Play(mv)
	}
	g := &Game{Opening: opening, First: first, Position: session.Position{Game: t.game.Name(), Start: start.Start(), Variant: start.Variant(), Moves: slices.Clone(op.Moves())}}
	if g.Position.Moves == nil {
		g.Position.Moves = []string{}
	}
	firstSide := m.Turn()
	playerOf := func(side string) int {
		if side == firstSide {
			return first
		}
		return 1 - first
	}
	g.Sides = map[string]int{gameseam.Black: playerOf(gameseam.Black), gameseam.White: playerOf(gameseam.White)}
	for _, s := range seats {
		if err := s.newGame(ctx); err != nil {
			return nil, err
		}
	}
	progress(g)
	clk := newClock(t.clock)
	adj := newAdjudicator(t.adj)
	var res *gameseam.Result
	for res == nil {
		if len(g.Position.Moves)-len(op.Moves()) >= t.maxPlies {
			res = &gameseam.Result{Reason: "max_plies", End: "draw", Detail: fmt.Sprintf("%d plies played: a draw by the match's cap", t.maxPlies)}
			if t.game.Name() == "shogi" {
				res.End = "impasse" // 持将棋 by the move cap, as play has it
			}
			break
		}
		side := m.Turn()
		p := playerOf(side)
		if f := gameseam.ForcedMove(pos); f != "" {
			// A move the rules force (othello's pass): no engine is asked.
			res = t.play(m, &pos, g, f)
			continue
		}
		var flag time.Duration
		if clk != nil {
			flag = clk.allowance(p, t.lag) + time.Millisecond
		}
		rep, err := seats[p].search(ctx, t.request(g.Position, side, p, clk), flag)
		if err != nil {
			if err.Code != session.CodeEngineError {
				return nil, err
			}
			why := "engine_error"
			if strings.Contains(err.Message, "is illegal") {
				why = "illegal_move"
			}
			res = &gameseam.Result{Winner: gameseam.Other(side), Reason: why, End: "illegal_loss", Detail: err.Message}
			break
		}
		if rep.line != nil {
			l := *rep.line
			l.Ply = len(g.Position.Moves)
			g.Line = &l
			g.Evals = append(g.Evals, Line{Ply: l.Ply, Score: l.Score, Depth: l.Depth})
		}
		if clk != nil && clk.charge(p, rep.elapsed, t.lag) {
			res = &gameseam.Result{Winner: gameseam.Other(side), Reason: "time", End: "time_up",
				Detail: fmt.Sprintf("%s's move took %v", t.players[p].Engine, rep.elapsed.Round(time.Millisecond))}
			if m.CannotWin(gameseam.Other(side)) {
				res.Winner, res.Detail = "", res.Detail+"; the opponent cannot win: a draw"
			}
			break
		}
		switch {
		case rep.move == "win":
			if res = m.Declare(side); res == nil {
				res = &gameseam.Result{Winner: gameseam.Other(side), Reason: "illegal_declaration", End: "illegal_loss", Detail: "this game has no declaration"}
			}
		case pos.NoMove(rep.move):
			res = &gameseam.Result{Winner: gameseam.Other(side), Reason: "resign", End: "resign", Detail: "the engine answered bestmove " + rep.move}
		default:
			if _, cerr := m.Check(rep.move); cerr != nil {
				// The rules decide, whatever the session let through.
				res = &gameseam.Result{Winner: gameseam.Other(side), Reason: "illegal_move", End: "illegal_loss",
					Detail: fmt.Sprintf("%s played %s: %s", t.players[p].Engine, clip(rep.move), cerr.Message)}
				break
			}
			res = t.play(m, &pos, g, rep.move)
			if res == nil {
				res = adj.after(side, rep, len(g.Position.Moves)-len(op.Moves()))
			}
		}
		progress(g)
	}
	g.Done, g.Reason, g.Detail = true, res.Reason, res.Detail
	if res.Winner != "" {
		w := playerOf(res.Winner)
		g.Winner = &w
	}
	g.Record = t.record(start, op, g, m, res, firstSide, first)
	return g, nil
}

// play plays a checked move on the match, the position and the record.
func (t *table) play(m gameseam.Match, pos *gameseam.Position, g *Game, mv string) *gameseam.Result {
	res := m.Play(mv)
	*pos, _ = (*pos).Play(mv)
	g.Position.Moves = append(g.Position.Moves, mv)
	return res
}

// request is the search for the move of player p (on side) at position.
func (t *table) request(at session.Position, side string, p int, clk *clock) *session.Request {
	pos := at
	pos.Moves = slices.Clone(at.Moves)
	lvl := t.players[p].Level
	if clk == nil {
		l := *t.limits
		if lvl != nil && lvl.MoveTimeMS > 0 && (l.MoveTimeMS == 0 || lvl.MoveTimeMS < l.MoveTimeMS) {
			l.MoveTimeMS = lvl.MoveTimeMS
		}
		if lvl != nil && lvl.Depth > 0 && (l.Depth == 0 || lvl.Depth < l.Depth) {
			l.Depth = lvl.Depth
		}
		// (An analysis has no random share: a level with one is played on a clock.)
		return &session.Request{Type: session.TypeAnalyze, Position: &pos, Limits: &l}
	}
	// Both clocks say the engine's own time, as play tells its engine
	// (Debian's Fairy-Stockfish reads the opponent's clock as its own).
	left := max(clk.main[p]-t.margin.Milliseconds(), 0)
	b, w := left, left
	r := &session.Request{Type: session.TypeGo, Position: &pos, BTime: &b, WTime: &w}
	if lvl != nil {
		r.Depth, r.Random = lvl.Caps()
	}
	tc := clk.tc
	switch {
	case lvl != nil && lvl.MoveTimeMS > 0:
		zero, by := int64(0), max(min(lvl.MoveTimeMS, clk.main[p]+tc.ByoyomiMS+tc.IncMS-t.margin.Milliseconds()), 1)
		r.BTime, r.WTime = &zero, &zero
		if tc.IncMS > 0 || tc.ByoyomiMS == 0 && t.game.Notation() != "kif" {
			r.BTime, r.WTime = &by, &by
			if d := usi.DialectNamed(t.game.Dialects()[0]); d != nil && !d.Byoyomi && d.HasGo("movestogo") {
				// A chess clock: the level's time is for this one move,
				// as a game against usid tells it (play's chessGo).
				one := 1
				r.MovesToGo = &one
			}
		} else {
			r.Byoyomi = &by
		}
	case tc.IncMS > 0:
		bi, wi := tc.IncMS, tc.IncMS
		r.BInc, r.WInc = &bi, &wi
	case t.game.Notation() == "kif":
		by := max(tc.ByoyomiMS-t.margin.Milliseconds(), min(tc.ByoyomiMS, 100))
		r.Byoyomi = &by
	}
	return r
}

// label is the player as a record names it: its engine, and its options
// and level where it has some ("fairy (Skill Level -20)").
func (p Player) label() string {
	var set []string
	for _, k := range slices.Sorted(maps.Keys(p.Options)) {
		set = append(set, k+" "+p.Options[k])
	}
	if l := p.Level; l != nil && l.ID != "" {
		set = append(set, "level "+l.ID)
	}
	if l := p.Level; l != nil && l.Option != "" {
		set = append(set, l.Option+" "+l.Value)
	}
	if l := p.Level; l != nil && l.MoveTimeMS > 0 {
		set = append(set, fmt.Sprintf("%d ms", l.MoveTimeMS))
	}
	if l := p.Level; l != nil && l.Depth > 0 {
		set = append(set, fmt.Sprintf("depth %d", l.Depth))
	}
	if l := p.Level; l != nil && l.Random > 0 {
		set = append(set, fmt.Sprintf("%d%% random", l.Random))
	}
	if len(set) == 0 {
		return p.Engine
	}
	return p.Engine + " (" + strings.Join(set, ", ") + ")"
}

// record is the ended game in its game's record format, or nil.
func (t *table) record(start gameseam.Position, op gameseam.Position, g *Game, m gameseam.Match, res *gameseam.Result, firstSide string, first int) any {
	recs, ok := t.game.(gameseam.Records)
	if !ok {
		return nil
	}
	name := func(side string) string {
		p := first
		if side != firstSide {
			p = 1 - first
		}
		return t.players[p].label()
	}
	rg := &gameseam.RecordGame{Start: start.Start(), Variant: start.Variant(), End: m.RecordEnd(res),
		Header:  &gameseam.RecordHeader{Black: name(gameseam.Black), White: name(gameseam.White), Event: t.event, Fields: []gameseam.RecordField{}},
		Comment: res.Reason}
	if res.Detail != "" {
		rg.Comment += ": " + res.Detail
	}
	for _, mv := range g.Position.Moves {
		rg.Plies = append(rg.Plies, gameseam.RecordPly{Move: mv})
	}
	out, err := recs.Export(rg, len(rg.Plies)+1)
	if err != nil {
		return nil
	}
	return out
}

// clock is both players' main time under tc, counted by the server: a
// move's time is its search's, from the engine's process being given it
// to its bestmove (the time the search waited for a process does not
// count).
type clock struct {
	tc   play.TimeControl
	main [2]int64 // by player
}

func newClock(tc *play.TimeControl) *clock {
	if tc == nil {
		return nil
	}
	return &clock{tc: *tc, main: [2]int64{tc.MainMS, tc.MainMS}}
}

// allowance is how long player p may take for its move before it loses
// on time (lag included).
func (c *clock) allowance(p int, lag time.Duration) time.Duration {
	ms := c.main[p]
	if c.tc.IncMS == 0 {
		ms += c.tc.ByoyomiMS
	}
	return time.Duration(ms)*time.Millisecond + lag
}

// charge counts elapsed against player p and reports a loss on time: the
// move came more than lag after p's time (main, then byoyomi; with an
// increment, main alone) ran out.
func (c *clock) charge(p int, elapsed, lag time.Duration) (flagged bool) {
	used, grace := elapsed.Milliseconds(), lag.Milliseconds()
	if c.tc.IncMS > 0 {
		c.main[p] -= used
		if c.main[p] < -grace {
			return true
		}
		c.main[p] = max(c.main[p], 0) + c.tc.IncMS
		return false
	}
	over := used - c.main[p]
	c.main[p] = max(c.main[p]-used, 0)
	return over > c.tc.ByoyomiMS+grace
}

// adjudicator counts the moves in a row that meet each adjudication rule.
type adjudicator struct {
	a      *Adjudication
	resign map[string]int // by side: its moves in a row at -Score or below
	draw   map[string]int // by side: its moves in a row within Score of 0
}

func newAdjudicator(a *Adjudication) *adjudicator {
	return &adjudicator{a: a, resign: map[string]int{}, draw: map[string]int{}}
}

// after counts side's move (rep's score) played at ply (from the opening)
// and says whether the game is adjudicated.
func (j *adjudicator) after(side string, rep *reply, ply int) *gameseam.Result {
	if j.a == nil {
		return nil
	}
	if r := j.a.Resign; r != nil {
		if rep.scored && rep.score <= -r.Score {
			j.resign[side]++
		} else {
			j.resign[side] = 0
		}
		if j.resign[side] >= r.Moves {
			return &gameseam.Result{Winner: gameseam.Other(side), Reason: "adjudication", End: "resign",
				Detail: fmt.Sprintf("resign: the mover's score at -%d or below for %d moves", r.Score, r.Moves)}
		}
	}
	if r := j.a.Draw; r != nil {
		if rep.scored && ply > r.Plies && rep.score >= -r.Score && rep.score <= r.Score {
			j.draw[side]++
		} else {
			j.draw[side] = 0
		}
		if j.draw[side] >= r.Moves && j.draw[gameseam.Other(side)] >= r.Moves {
			return &gameseam.Result{Reason: "adjudication", End: "draw",
				Detail: fmt.Sprintf("draw: both scores within %d of 0 for %d moves each", r.Score, r.Moves)}
		}
	}
	return nil
}
