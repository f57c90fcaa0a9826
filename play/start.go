package play

import (
	"context"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	gameseam "github.com/usid/usid/game"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/probe"
	"github.com/usid/usid/session"
	"github.com/usid/usid/usi"
)

// Options are play_start's settings (the request's "play").
type Options struct {
	Side string `json:"side"` // the human's side: "b" (Black, sente) or "w"
	// Handicap is a KIF 手合割 name (香落ち, 角落ち, 飛車落ち, 飛香落ち,
	// 二枚落ち, 四枚落ち, 六枚落ち, ...); without it the game starts from the
	// request's position (the board's), by default the initial one.
	Handicap string `json:"handicap"`
	Clock    Sides  `json:"clock"`
	Level    *Level `json:"level"`
	// Ponder lets the engine think on the human's time, where its profile
	// says it can (a USI_Ponder option).
	Ponder bool `json:"ponder"`
}

// check validates o against the caps; it returns the error to answer.
func (o *Options) check(c session.Caps) *session.Error {
	if o.Side != "b" && o.Side != "w" {
		return newError(session.CodeInvalidField, "play.side %q: want \"b\" or \"w\"", clipID(o.Side))
	}
	maxMS := c.MaxClock.Milliseconds()
	for i, tc := range []TimeControl{o.Clock.B, o.Clock.W} {
		side := "play.clock." + "bw"[i:i+1]
		for _, f := range []struct {
			name string
			v    int64
		}{{"main_ms", tc.MainMS}, {"byoyomi_ms", tc.ByoyomiMS}, {"inc_ms", tc.IncMS}} {
			if f.v < 0 || f.v > maxMS {
				return newError(session.CodeInvalidField, "%s.%s %d: want 0..%d", side, f.name, f.v, maxMS)
			}
		}
		if tc.ByoyomiMS > 0 && tc.IncMS > 0 {
			return newError(session.CodeInvalidField, "%s: byoyomi_ms and inc_ms cannot be used together", side)
		}
		if tc.MainMS == 0 && tc.ByoyomiMS == 0 && tc.IncMS == 0 {
			return newError(session.CodeInvalidField, "%s: no time at all; set main_ms, byoyomi_ms or inc_ms", side)
		}
	}
	if l := o.Level; l != nil {
		if l.MoveTimeMS < 0 || l.MoveTimeMS > c.MaxMoveTime.Milliseconds() {
			return newError(session.CodeInvalidField, "play.level.movetime_ms %d: want 0..%d", l.MoveTimeMS, c.MaxMoveTime.Milliseconds())
		}
		if l.Depth < 0 || l.Depth > c.MaxDepth {
			return newError(session.CodeInvalidField, "play.level.depth %d: want 0..%d", l.Depth, c.MaxDepth)
		}
		if l.Random < 0 || l.Random > 100 {
			return newError(session.CodeInvalidField, "play.level.random %d: want 0..100", l.Random)
		}
		if (l.Option == "") != (l.Value == "") {
			return newError(session.CodeInvalidField, "play.level: option and value go together")
		}
		if len(l.Option) > 64 || len(l.Value) > 64 || len(l.ID) > 64 {
			return newError(session.CodeInvalidField, "play.level: id, option or value longer than 64 bytes")
		}
		if l.ID != "" && l.Option != "" {
			return newError(session.CodeInvalidField, "play.level: an id or an option, not both")
		}
		if len(l.Options) > 0 && l.ID == "" || len(l.Options) > maxLevelOptions {
			return newError(session.CodeInvalidField, "play.level.options: a level's, set by the server (name the level by id)")
		}
		for k, v := range l.Options {
			if len(k) > 64 || len(v) > 64 {
				return newError(session.CodeInvalidField, "play.level.options: a name or value longer than 64 bytes")
			}
		}
	}
	return nil
}

// checkIncrements refuses what clocks with increments (chess's) do not
// have: a byoyomi; a period of moves is 1..1000 moves.
func (o *Options) checkIncrements(game string) *session.Error {
	for i, tc := range []TimeControl{o.Clock.B, o.Clock.W} {
		side := "play.clock." + "bw"[i:i+1]
		if tc.ByoyomiMS > 0 {
			return newError(session.CodeInvalidField, "%s.byoyomi_ms: %s clocks have increments (inc_ms) and periods of moves (moves), no byoyomi", side, game)
		}
		if tc.Moves < 0 || tc.Moves > 1000 {
			return newError(session.CodeInvalidField, "%s.moves %d: want 1..1000", side, tc.Moves)
		}
		if tc.Moves > 0 && tc.MainMS == 0 {
			return newError(session.CodeInvalidField, "%s: a period of moves needs main_ms", side)
		}
	}
	return nil
}

// start serves play_start.
func (m *Manager) start(ctx context.Context, who session.Caller, req *session.Request, emit func(*session.Event)) *session.Error {
	svc := m.cfg.Service
	var o Options
	if len(req.Play) == 0 {
		return newError(session.CodeInvalidField, "play_start needs play: side, clock, level")
	}
	if err := session.DecodeStrict(req.Play, &o); err != nil {
		return newError(session.CodeBadRequest, "play: %s", session.JSONError(err))
	}
	if err := o.check(svc.Caps); err != nil {
		return err
	}
	engine := req.Engine
	if engine == "" {
		engine = svc.EngineFor(req.Position)
	}
	if svc.Pool == nil || !slices.Contains(svc.Pool.Engines(), engine) {
		return newError(session.CodeUnknownEngine, "no engine named %q", clipID(engine))
	}
	prof := svc.Pool.Profile(engine)
	if prof != nil && prof.MateOnly {
		return newError(session.CodeUnsupported, "engine %s only solves mates; choose another to play", engine)
	}
	pos := req.Position
	if o.Handicap != "" {
		var start string
		if h, ok := gameseam.Default().(gameseam.Handicaps); ok {
			start = h.HandicapStart(o.Handicap)
		}
		if start == "" {
			return newError(session.CodeInvalidField, "play.handicap %q: not a handicap this server knows", clipID(o.Handicap))
		}
		if pos != nil && (pos.Game != "" || pos.Start != "" || len(pos.Moves) > 0) {
			return newError(session.CodeInvalidField, "a handicap game starts from the handicap's position: send no position")
		}
		pos = &session.Position{Start: start}
	}
	chk, perr := session.CheckPosition(pos, svc.Caps.MaxMoves)
	if perr != nil {
		return perr
	}
	rules := chk.Game()
	if prof != nil && prof.Game() != rules.Name() {
		return newError(session.CodeGameMismatch, "engine %s plays %s; the position is of %s", engine, prof.Game(), rules.Name())
	}
	if _, ok := chk.Position.(gameseam.Lister); o.Level != nil && o.Level.Random > 0 && !ok {
		return newError(session.CodeInvalidField, "play.level.random: %s positions do not list their moves", rules.Name())
	}
	if d := usi.DialectNamed(rules.Dialects()[0]); d != nil && !d.Byoyomi {
		if err := o.checkIncrements(rules.Name()); err != nil {
			return err
		}
	} else if o.Clock.B.Moves > 0 || o.Clock.W.Moves > 0 {
		return newError(session.CodeInvalidField, "play.clock: moves (a period of moves) is for chess clocks; %s has byoyomi", rules.Name())
	}
	st := &State{Owner: who.Client, Networks: who.Networks}
	st.Moves, st.TimesMS, st.ClocksMS = []string{}, []int64{}, []int64{}
	start, serr := rules.Check(chk.Start(), chk.Variant(), nil)
	if serr != nil { // checked by CheckPosition
		return newError(string(serr.Code), "%s", serr.Message)
	}
	b := newBoard(start)
	setStart(st, start)
	// The position's moves, written in the game's notation, not timed.
	for _, mv := range chk.USI.Moves {
		note, _ := b.check(mv) // checked by CheckPosition
		st.Moves = append(st.Moves, mv)
		if notes := b.notes(st); notes != nil {
			*notes = append(*notes, note)
		}
		st.TimesMS = append(st.TimesMS, 0)
		st.ClocksMS = append(st.ClocksMS, 0)
		b.play(mv)
	}
	if r := b.over(); r != nil {
		return newError(session.CodeInvalidField, "the game is over in that position (%s)", r.Reason)
	}
	engSide := 1
	if o.Side == "w" {
		engSide = 0
	}
	if o.Clock.of(engSide).IncMS > 0 && prof != nil && prof.Goes("binc") != probe.Native {
		return newError(session.CodeUnsupported, "engine %s does not take binc/winc; give it byoyomi", engine)
	}
	if d := usi.DialectNamed(prof.Protocol); prof != nil && d != nil && !d.HasGo("byoyomi") && (o.Clock.B.ByoyomiMS > 0 || o.Clock.W.ByoyomiMS > 0) {
		return newError(session.CodeUnsupported, "engine %s speaks %s, whose clocks have no byoyomi; give it increments", engine, d.Name)
	}
	if who.Budget != nil {
		if wait := who.Budget.Take(context.WithoutCancel(ctx), 0); wait > 0 {
			return newError(session.CodeTooManyRequests, "this client's engine time is spent; retry in %ds", int(wait.Seconds())+1)
		}
	}
	level, lerr := m.levelOf(o.Level, engine)
	if lerr != nil {
		return lerr
	}
	if err := m.admit(who); err != nil {
		return err
	}
	st.ID = newID()
	st.Engine, st.Human, st.Handicap, st.TC, st.Level = engine, o.Side, o.Handicap, o.Clock, level
	st.Ponder = o.Ponder && prof != nil && prof.PonderOption != ""
	st.Pre = len(chk.USI.Moves)
	st.Main = [2]int64{o.Clock.B.MainMS, o.Clock.W.MainMS}
	st.Status = statusPlaying
	st.TurnStart = time.Now()
	if m.shared != nil {
		// The bounds over every instance sharing the store; this instance
		// holds the game's lease from now.
		got, err := m.shared.Admit(ctx, st, Bounds{PerClient: m.cfg.MaxPerClient, PerNetwork: m.cfg.MaxPerNetwork, Games: m.cfg.MaxGames}, m.orphan())
		switch {
		case err != nil:
			m.unadmit(who)
			m.cfg.Logger.Warn("game not admitted", "err", err)
			return newError(session.CodeUnavailable, "the games' store failed; retry")
		case got == "client":
			m.unadmit(who)
			return errPerClient(m.cfg.MaxPerClient)
		case strings.HasPrefix(got, "network:"):
			m.unadmit(who)
			net := got[len("network:"):]
			return errPerNetwork(&session.Full{What: "network", Network: net, Max: session.NetworkBound(m.cfg.MaxPerNetwork, slices.Index(who.Networks, net))})
		case got != "ok":
			m.unadmit(who)
			return errFull(m.cfg.MaxGames)
		}
	}
	g := newGame(m, who, st, b)
	m.register(g)
	g.begin(ctx, req.ID, emit)
	return nil
}

// Level times (issue 37): a level bounds the engine's time as well as its
// play, as lishogi's and ShogiHome's levels do. A strength option set low
// makes an engine choose worse moves, not think less: at Skill Level -20
// with 1 min + 5 s byoyomi fairy-stockfish took 31 s for its first move.
// A level that sets a strength option without a movetime_ms is given one
// by where its value lies in the option's range (the engine's, narrowed
// by the operator's client_options): pool.LevelMoveTime, LevelMinMS at
// the bottom, doubling at each fifth of the range, none at the top (full
// strength).
// maxLevelOptions bounds the options of a stored game's level (a level
// sets one or two: UCI_LimitStrength and UCI_Elo).
const maxLevelOptions = 4

// strengthOption matches the names engines give a strength option (Skill
// Level, UCI_Elo, Strength, ...): the play panel offers these as levels.
var strengthOption = regexp.MustCompile(`(?i)skill|level|strength|elo`)

// levelTimed is l with the time per move its strength option implies (see
// levelMinMS) when it sets none; l itself otherwise.
func (m *Manager) levelTimed(l *Level, engine string) *Level {
	if l == nil || l.Option == "" || l.MoveTimeMS > 0 || !strengthOption.MatchString(l.Option) {
		return l
	}
	v, err := strconv.ParseInt(l.Value, 10, 64)
	if err != nil {
		return l
	}
	for _, k := range m.cfg.Service.Pool.Status() {
		if k.Name != engine {
			continue
		}
		var lo, hi int64
		var hasLo, hasHi bool
		if j := slices.IndexFunc(k.Options, func(o usi.Option) bool { return o.Name == l.Option }); j >= 0 {
			o := k.Options[j]
			if o.Type != usi.TypeSpin {
				return l
			}
			lo, hasLo, hi, hasHi = o.Min, o.HasMin, o.Max, o.HasMax
		}
		// The operator's bounds narrow the engine's.
		if r, ok := k.ClientOptions[l.Option]; ok {
			if r.Min != nil && (!hasLo || int64(*r.Min) > lo) {
				lo, hasLo = int64(*r.Min), true
			}
			if r.Max != nil && (!hasHi || int64(*r.Max) < hi) {
				hi, hasHi = int64(*r.Max), true
			}
		}
		if !hasLo || !hasHi {
			return l
		}
		ms := pool.LevelMoveTime(v, lo, hi)
		if ms == 0 {
			return l
		}
		c := *l
		c.MoveTimeMS = ms
		return &c
	}
	return l
}

// levelOf is the level a game is played at: a level named by id becomes
// that level of the engine's (its options and time per move: see
// pool.Levels; "full" is none); the other forms (an option and value, a
// time per move) are kept, timed by levelTimed.
func (m *Manager) levelOf(l *Level, engine string) (*Level, *session.Error) {
	if l == nil || l.ID == "" {
		return m.levelTimed(l, engine), nil
	}
	if !l.IDOnly() {
		return nil, newError(session.CodeInvalidField, "play.level: a level named by id has its own options, time, depth and random share; send the id alone")
	}
	lvl, ids, ok := NamedLevel(m.cfg.Service.Pool, engine, l.ID)
	switch {
	case ok:
		return lvl, nil
	case len(ids) == 0:
		return nil, newError(session.CodeInvalidField, "play.level.id %q: engine %s has no levels (GET /v1/engines); cap its time with movetime_ms", clipID(l.ID), engine)
	}
	return nil, newError(session.CodeInvalidField, "play.level.id %q: engine %s's levels are %s", clipID(l.ID), engine, strings.Join(ids, ", "))
}

// IDOnly reports whether l names a level by its id and sets nothing else
// (the level's options, time, depth and random share are the server's).
func (l *Level) IDOnly() bool {
	return l.ID != "" && len(l.Options) == 0 && l.Option == "" && l.Value == "" && l.MoveTimeMS == 0 && l.Depth == 0 && l.Random == 0
}

// NamedLevel is engine's level id as pool.Levels derived it (its options,
// time per move, depth and random share; GET /v1/engines lists them), or
// nil for pool.FullStrength (no level). ok is false when the engine has no
// such level; levels then lists the ids it has. Safe for concurrent use.
func NamedLevel(p *pool.Pool, engine, id string) (lvl *Level, levels []string, ok bool) {
	for _, k := range p.Status() {
		if k.Name != engine {
			continue
		}
		for _, lv := range k.Levels {
			if lv.ID != id {
				levels = append(levels, lv.ID)
				continue
			}
			if lv.ID == pool.FullStrength {
				return nil, nil, true
			}
			return &Level{ID: lv.ID, Options: maps.Clone(lv.Options), MoveTimeMS: lv.MoveTimeMS, Depth: lv.Depth, Random: lv.Random}, nil, true
		}
	}
	return nil, levels, false
}
