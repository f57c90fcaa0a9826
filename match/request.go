package match

import (
	"fmt"
	"strings"
	"unicode"

	gameseam "github.com/usid/usid/game"
	"github.com/usid/usid/match/stats"
	"github.com/usid/usid/play"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/session"
)

// Request is a match as POST /v1/matches takes it.
type Request struct {
	Players []Player `json:"players"`
	// Games is how many games; Pairs how many pairs of games (each
	// opening played twice, colours swapped). One of them; an odd Games
	// leaves its last pair one game short.
	Games int `json:"games"`
	Pairs int `json:"pairs"`
	// Limits bound each move's search (movetime_ms, nodes, depth); Clock
	// gives each player a clock the server keeps instead (play's time
	// control, the same for both). One of them.
	Limits *session.Limits   `json:"limits"`
	Clock  *play.TimeControl `json:"clock"`
	// Openings are the positions games start from, each played twice
	// with colours swapped, in turn; none: the game's default set.
	Openings []*session.Position `json:"openings"`
	SPRT     *SPRT               `json:"sprt"`
	// Concurrency is how many games run at once (default 1).
	Concurrency int           `json:"concurrency"`
	Adjudicate  *Adjudication `json:"adjudicate"`
}

// Player is one side of a match: an engine, the options its sessions set
// (values as the engine takes them; only the options its operator lets
// clients set), and optionally a level (play's: a strength option and a
// time per move).
type Player struct {
	Engine  string            `json:"engine"`
	Options map[string]string `json:"options,omitempty"`
	Level   *play.Level       `json:"level,omitempty"`
}

// SPRT is a match's sequential test (package stats): elo0 and elo1 in
// normalized Elo, alpha and beta default 0.05.
type SPRT struct {
	Elo0  float64  `json:"elo0"`
	Elo1  float64  `json:"elo1"`
	Alpha *float64 `json:"alpha"`
	Beta  *float64 `json:"beta"`
	// Model is the Elo elo0 and elo1 are in: "normalized" (the default,
	// fishtest's and fastchess's) or "logistic".
	Model string `json:"model"`
}

func (s *SPRT) test() stats.SPRT {
	t := stats.SPRT{Elo0: s.Elo0, Elo1: s.Elo1, Alpha: 0.05, Beta: 0.05, Model: s.Model}
	if t.Model == "" {
		t.Model = stats.Normalized
	}
	if s.Alpha != nil {
		t.Alpha = *s.Alpha
	}
	if s.Beta != nil {
		t.Beta = *s.Beta
	}
	return t
}

// Adjudication ends games by the engines' scores, as cutechess-cli's
// -resign and -draw do: Resign, a game whose mover's score stayed at
// Score centipawns or more below zero for Moves of its moves in a row is
// lost by it; Draw, once Plies were played, a game whose both sides'
// scores stayed within Score of zero for Moves moves each is drawn. The
// record says so.
type Adjudication struct {
	Resign *Rule `json:"resign"`
	Draw   *Rule `json:"draw"`
}

// Rule is one adjudication rule.
type Rule struct {
	Moves int `json:"moves"`
	Score int `json:"score"`
	Plies int `json:"plies,omitempty"`
}

// Error is a refused request, with a stable code (session's).
type Error = session.Error

func invalid(format string, args ...any) *Error {
	return &Error{Code: session.CodeInvalidField, Message: fmt.Sprintf(format, args...), MoveIndex: -1}
}

// checked is a request checked against the rules and the server's bounds.
type checked struct {
	Request
	game     gameseam.Game
	openings []gameseam.Position // each opening's start and moves
	games    int
	sprt     *stats.SPRT
}

// check validates r against the server's engines and bounds.
func (m *Manager) check(r *Request) (*checked, *Error) {
	svc := m.cfg.Service
	if len(r.Players) != 2 {
		return nil, invalid("players: want 2, got %d", len(r.Players))
	}
	c := &checked{Request: *r}
	for i := range c.Players {
		p := &c.Players[i]
		if p.Engine == "" || svc.Pool == nil || !contains(svc.Pool.Engines(), p.Engine) {
			return nil, &Error{Code: session.CodeUnknownEngine, Message: fmt.Sprintf("players[%d].engine %q: no such engine", i, clip(p.Engine)), MoveIndex: -1}
		}
		prof := svc.Pool.Profile(p.Engine)
		if prof == nil {
			return nil, &Error{Code: session.CodeUnavailable, Message: fmt.Sprintf("engine %s is not ready yet; retry", p.Engine), MoveIndex: -1, Retry: 5e9}
		}
		if prof.MateOnly {
			return nil, &Error{Code: session.CodeUnsupported, Message: fmt.Sprintf("engine %s only solves mates", p.Engine), MoveIndex: -1}
		}
		g := gameseam.Named(prof.Game())
		if g == nil {
			return nil, &Error{Code: session.CodeUnsupported, Message: fmt.Sprintf("engine %s plays %s, which this server has no rules for", p.Engine, prof.Game()), MoveIndex: -1}
		}
		if c.game != nil && c.game != g {
			return nil, &Error{Code: session.CodeGameMismatch, Message: fmt.Sprintf("players[0] plays %s, players[1] %s", c.game.Name(), g.Name()), MoveIndex: -1}
		}
		c.game = g
		if len(p.Options) > 16 {
			return nil, invalid("players[%d].options: at most 16", i)
		}
		if l := p.Level; l != nil && (l.ID != "" || len(l.Options) > 0) {
			// A level named by id, as GET /v1/engines lists them and as a
			// game against usid takes it: its options, time, depth and
			// random share are the server's.
			if !l.IDOnly() || text(l.ID, 64) != nil {
				return nil, invalid("players[%d].level: name a level by its id alone (GET /v1/engines lists them), or set option, value, movetime_ms, depth, random without an id", i)
			}
			lvl, ids, ok := play.NamedLevel(svc.Pool, p.Engine, l.ID)
			if !ok {
				return nil, invalid("players[%d].level.id %q: engine %s's levels are [%s]", i, clip(l.ID), p.Engine, strings.Join(ids, ", "))
			}
			p.Level = lvl
		}
		allowed := clientOptions(svc, p.Engine)
		names := make([]string, 0, len(p.Options)+1)
		for k := range p.Options {
			names = append(names, k)
		}
		if p.Level != nil && p.Level.Option != "" {
			names = append(names, p.Level.Option)
		}
		if p.Level != nil {
			for k := range p.Level.Options {
				names = append(names, k)
			}
		}
		for _, k := range names {
			if _, ok := allowed[k]; !ok {
				// Refused now rather than by the engine's first session: the
				// values are checked there, against the operator's bounds.
				return nil, &Error{Code: session.CodeOptionNotAllowed, Message: fmt.Sprintf("players[%d]: engine %s does not let clients set %q", i, p.Engine, clip(k)), MoveIndex: -1}
			}
		}
		for k, v := range p.Options {
			if err := text(k, 64); err != nil {
				return nil, invalid("players[%d].options name: %s", i, err)
			}
			if err := text(v, 256); err != nil {
				return nil, invalid("players[%d].options[%q]: %s", i, clip(k), err)
			}
		}
		if l := p.Level; l != nil {
			if (l.Option == "") != (l.Value == "") {
				return nil, invalid("players[%d].level: option and value go together", i)
			}
			if text(l.Option, 64) != nil || text(l.Value, 64) != nil {
				return nil, invalid("players[%d].level: option or value not printable or longer than 64 bytes", i)
			}
			if l.MoveTimeMS < 0 || l.MoveTimeMS > svc.Caps.MaxMoveTime.Milliseconds() {
				return nil, invalid("players[%d].level.movetime_ms %d: want 0..%d", i, l.MoveTimeMS, svc.Caps.MaxMoveTime.Milliseconds())
			}
			if l.Depth < 0 || l.Depth > svc.Caps.MaxDepth {
				return nil, invalid("players[%d].level.depth %d: want 0..%d", i, l.Depth, svc.Caps.MaxDepth)
			}
			if l.Random < 0 || l.Random > 100 || l.Random > 0 && r.Clock == nil {
				return nil, invalid("players[%d].level.random %d: want 0..100, and a clock (an analysis has no random share)", i, l.Random)
			}
			if start, _ := g.Check("startpos", "", nil); l.Random > 0 {
				if _, ok := start.(gameseam.Lister); !ok {
					return nil, invalid("players[%d].level.random: %s positions do not list their moves", i, g.Name())
				}
			}
		}
	}
	switch {
	case r.Games != 0 && r.Pairs != 0:
		return nil, invalid("games and pairs: set one")
	case r.Pairs != 0:
		c.games = 2 * r.Pairs
	default:
		c.games = r.Games
	}
	if c.games < 1 || c.games > m.cfg.MaxGames {
		return nil, invalid("games: want 1..%d (pairs: half as many)", m.cfg.MaxGames)
	}
	if (r.Limits == nil) == (r.Clock == nil) {
		return nil, invalid("set limits (movetime_ms, nodes, depth) or clock, one of them")
	}
	if l := r.Limits; l != nil {
		if l.MoveTimeMS <= 0 && l.Nodes <= 0 && l.Depth <= 0 {
			return nil, invalid("limits: set movetime_ms, nodes or depth")
		}
		if l.MoveTimeMS < 0 || l.MoveTimeMS > svc.Caps.MaxMoveTime.Milliseconds() || l.Depth < 0 || l.Depth > svc.Caps.MaxDepth || l.Nodes < 0 || l.Nodes > svc.Caps.MaxNodes {
			return nil, invalid("limits: movetime_ms 0..%d, depth 0..%d, nodes 0..%d", svc.Caps.MaxMoveTime.Milliseconds(), svc.Caps.MaxDepth, svc.Caps.MaxNodes)
		}
	}
	if tc := r.Clock; tc != nil {
		maxMS := min(svc.Caps.MaxClock, m.cfg.MaxClock).Milliseconds()
		for _, f := range []int64{tc.MainMS, tc.ByoyomiMS, tc.IncMS} {
			if f < 0 || f > maxMS {
				return nil, invalid("clock: main_ms, byoyomi_ms and inc_ms 0..%d", maxMS)
			}
		}
		if tc.MainMS+tc.ByoyomiMS+tc.IncMS == 0 {
			return nil, invalid("clock: no time at all")
		}
		if tc.ByoyomiMS > 0 && tc.IncMS > 0 {
			return nil, invalid("clock: byoyomi_ms and inc_ms cannot be used together")
		}
		if tc.Moves != 0 {
			return nil, invalid("clock.moves: periods of moves are not taken in matches")
		}
		if tc.ByoyomiMS > 0 && c.game.Notation() != "kif" {
			return nil, invalid("clock.byoyomi_ms: %s clocks have increments (inc_ms)", c.game.Name())
		}
	}
	if r.Concurrency == 0 {
		c.Concurrency = 1
	}
	if c.Concurrency < 1 || c.Concurrency > m.cfg.MaxConcurrency {
		return nil, invalid("concurrency: want 1..%d", m.cfg.MaxConcurrency)
	}
	if s := r.SPRT; s != nil {
		t := s.test()
		if err := t.Check(); err != nil {
			return nil, invalid("sprt: %v", err)
		}
		c.sprt = &t
	}
	if a := r.Adjudicate; a != nil {
		for name, rule := range map[string]*Rule{"resign": a.Resign, "draw": a.Draw} {
			if rule != nil && (rule.Moves < 1 || rule.Moves > 100 || rule.Score < 0 || rule.Score > 100000 || rule.Plies < 0 || rule.Plies > 1000) {
				return nil, invalid("adjudicate.%s: moves 1..100, score 0..100000, plies 0..1000", name)
			}
		}
	}
	ops := r.Openings
	if len(ops) == 0 {
		ops = defaultOpenings(c.game)
	}
	if len(ops) > m.cfg.MaxOpenings {
		return nil, invalid("openings: at most %d", m.cfg.MaxOpenings)
	}
	for i, op := range ops {
		if op == nil {
			return nil, invalid("openings[%d]: null", i)
		}
		if op.Game == "" && c.game != gameseam.Default() {
			cp := *op
			cp.Game = c.game.Name()
			op = &cp
		}
		chk, err := session.CheckPosition(op, svc.Caps.MaxMoves)
		if err != nil {
			err.Message = fmt.Sprintf("openings[%d]: %s", i, err.Message)
			return nil, err
		}
		if chk.Game() != c.game {
			return nil, &Error{Code: session.CodeGameMismatch, Message: fmt.Sprintf("openings[%d] is of %s; the engines play %s", i, chk.Game().Name(), c.game.Name()), MoveIndex: -1}
		}
		if chk.Ending() != gameseam.EndNone {
			return nil, invalid("openings[%d]: the game is over there (%s)", i, chk.Ending())
		}
		c.openings = append(c.openings, chk.Position)
	}
	return c, nil
}

// clientOptions is the options the operator lets clients set on engine.
func clientOptions(svc *session.Service, engine string) map[string]pool.OptionRule {
	for _, st := range svc.Pool.Status() {
		if st.Name == engine {
			return st.ClientOptions
		}
	}
	return nil
}

func contains(names []string, n string) bool {
	for _, s := range names {
		if s == n {
			return true
		}
	}
	return false
}

// text refuses what may not go to an engine: control characters, or more
// than n bytes.
func text(s string, n int) error {
	if len(s) > n {
		return fmt.Errorf("longer than %d bytes", n)
	}
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == unicode.ReplacementChar }) >= 0 {
		return fmt.Errorf("control characters")
	}
	return nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
