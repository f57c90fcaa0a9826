package match

import "github.com/usid/usid/session"

// Line is a player's own evaluation of a position it moved from: the last
// line (multipv 1) its search reported, the score from the mover's side.
// A match game's watchers see these lines rather than a search of their
// own: the players' searches already say what each side thought, and a
// separate analysis would take engine time from the match.
type Line struct {
	// Ply is the position's: the moves played before it (the opening's
	// included).
	Ply   int           `json:"ply"`
	Score session.Score `json:"score"`
	Depth int           `json:"depth,omitempty"`
	Nodes int64         `json:"nodes,omitempty"`
	// PV is the line's first maxLinePV moves: the latest line only (a
	// game's evaluations keep the score and depth).
	PV []string `json:"pv,omitempty"`
}

// maxLinePV bounds a line's moves kept: enough to show the idea.
const maxLinePV = 12

func lineOf(ev *session.Event) *Line {
	l := &Line{Score: *ev.Score, Depth: ev.Depth, Nodes: ev.Nodes}
	if len(ev.PV) > 0 {
		l.PV = append([]string(nil), ev.PV[:min(len(ev.PV), maxLinePV)]...)
	}
	return l
}

// GameView is one game of a match as its watch page reads it (GET
// /v1/matches/{id}/games/{n}): the match's state and players, the game,
// the players' evaluations so far and the latest line.
type GameView struct {
	Match   string   `json:"match"`
	Status  string   `json:"status"`
	Players []Player `json:"players"`
	Game    *Game    `json:"game"`
	// Evals by ply (the mover's side), Line the latest with its moves.
	Evals []Line `json:"evals"`
	Line  *Line  `json:"line,omitempty"`
}

// Game is game n as it stands, or nil when it has not started (or was
// not kept: a game cut short by a cancellation is not part of the match).
func (mt *Match) Game(n int) *GameView {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	if n < 0 || n >= len(mt.games) || mt.games[n] == nil {
		return nil
	}
	g := mt.games[n]
	cp := *g
	v := &GameView{Match: mt.id, Status: mt.status, Players: mt.c.Players, Game: &cp, Evals: g.Evals, Line: g.Line}
	if v.Evals == nil {
		v.Evals = []Line{}
	}
	return v
}
