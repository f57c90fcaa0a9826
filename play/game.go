package play

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/usid/usid/session"
)

const (
	statusPlaying = "playing"
	statusEnded   = "ended"
)

// lateLease is how late the engine's process may come for its search
// (its clock starting then) before the page is told the clock again.
const lateLease = 100 * time.Millisecond

// game is one game in progress or ended. mu guards everything below it.
type game struct {
	m     *Manager
	owner string
	who   session.Caller
	sess  *session.Session // drives the engine; closed when the game ends
	stop  context.CancelFunc

	mu  sync.Mutex
	st  State
	b   *board // the rules, after st.Moves
	seq int    // search ids

	// The subscriber: the connection that gets the game's events.
	emit    func(*session.Event)
	subID   string
	subCtx  context.Context
	unwatch func() bool // stops watching subCtx

	flag  *time.Timer // the side to move's time running out
	grace *time.Timer // the player gone: abandonment
	idle  *time.Timer // the player's turn lasting Config.Idle: abandonment

	search     string // id of the engine's search for its move ("": none)
	ponderID   string // id of the search pondering on ponderMove
	ponderMove string
	ponderDone bool // the ponder search has ended already (no ponderhit possible)
	setup      bool // the engine's new game is being set up
	// resumed: the turn began on another instance, whose clock stands (the
	// engine's search starts on the clock it has left).
	resumed bool
}

func newGame(m *Manager, who session.Caller, st *State, b *board) *game {
	return &game{m: m, owner: who.Client, who: who, st: *st, b: b}
}

// colorName is side c's letter: "b" (0) or "w" (1).
func colorName(c int) string { return "bw"[c : c+1] }

// colorOf is the index of side name ("b" 0, "w" 1).
func colorOf(name string) int {
	if name == "w" {
		return 1
	}
	return 0
}

func itoa(n int) string { return strconv.Itoa(n) }

// humanColor is the human's side, an index into "bw".
func (g *game) humanColor() int {
	if g.st.Human == "b" {
		return 0
	}
	return 1
}

// begin starts the engine's session and the first turn.
func (g *game) begin(ctx context.Context, id string, emit func(*session.Event)) {
	g.setUp(ctx, id, emit)
	defer g.mu.Unlock()
	now := time.Now()
	g.st.TurnStart = now
	if g.b.turn() == g.humanColor() {
		g.startTurn(now)
	}
	g.publish()
}

// resume drives a game taken over from another instance: the engine's
// session and new game, the clock of the side to move running on from the
// turn's start as saved (its timer armed now), the subscriber told.
func (g *game) resume(ctx context.Context, id string, emit func(*session.Event)) {
	g.setUp(ctx, id, emit)
	defer g.mu.Unlock()
	g.resumed = g.b.turn() != g.humanColor()
	if g.resumed {
		// The engine waited for a process on the other instance: its
		// clock stood, and stands until this instance's search has one.
		g.standWait(time.Now())
	}
	g.st.EngineWaits = time.Time{}
	g.armFlag()
	g.publish()
}

// setUp starts the engine's session (its events read by loop), attaches
// the subscriber, and asks for the level and the engine's new game
// (usinewgame, and isready where its profile allows) before any search, so
// that the engine's clock does not pay for them: an engine to move starts
// thinking once newgame is ready. It returns with g.mu held.
func (g *game) setUp(ctx context.Context, id string, emit func(*session.Event)) {
	g.sess = g.m.cfg.Service.NewSession()
	g.sess.SetCaller(g.who)
	lctx, cancel := context.WithCancel(context.Background())
	g.stop = cancel
	g.m.sessions.Add(1)
	go g.loop(lctx)
	g.mu.Lock()
	g.attachLocked(ctx, id, emit)
	if l := g.st.Level; l != nil && l.Option != "" {
		g.sess.Serve(&session.Request{Type: session.TypeSetOption, ID: "level", Engine: g.st.Engine, Name: l.Option, Value: l.Value})
	}
	if l := g.st.Level; l != nil {
		// A level's options in a stable order (UCI_Elo before
		// UCI_LimitStrength: the rating is in place when the limit is on).
		for _, name := range slices.Sorted(maps.Keys(l.Options)) {
			g.sess.Serve(&session.Request{Type: session.TypeSetOption, ID: "level", Engine: g.st.Engine, Name: name, Value: l.Options[name]})
		}
	}
	g.sess.Serve(&session.Request{Type: session.TypeNewGame, ID: "newgame", Engine: g.st.Engine})
	g.setup = true
}

// live reports whether g is in progress on this instance.
func (g *game) live() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.st.Status == statusPlaying
}

// leave lets g, in progress, go to another instance: saved and its lease
// given up when hand (asked for, or a drain), else only forgotten (its
// lease was lost). This instance stops driving it: its timers, its
// engine's session. It reports whether g was in progress.
func (g *game) leave(hand bool) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.st.Status != statusPlaying {
		return false
	}
	if hand {
		if err := g.m.shared.Hand(context.Background(), &g.st); err != nil {
			g.m.cfg.Logger.Warn("game not handed back", "game", g.st.ID, "err", err)
		}
	}
	g.st.Status = "left" // never saved: every path checks statusPlaying
	if g.flag != nil {
		g.flag.Stop()
	}
	if g.grace != nil {
		g.grace.Stop()
	}
	if g.idle != nil {
		g.idle.Stop()
	}
	g.search, g.ponderID = "", ""
	sess, stop := g.sess, g.stop
	go func() {
		sess.Close()
		stop()
	}()
	g.m.left(g)
	return true
}

// loop reads the engine session's events until the game has closed it.
func (g *game) loop(ctx context.Context) {
	defer g.m.sessions.Done()
	for {
		evs, err := g.sess.Next(ctx)
		if err != nil {
			return
		}
		for _, ev := range evs {
			g.engineEvent(ev)
		}
	}
}

// startTurn starts the clock of the side to move at now, and the engine's
// search when it is the engine's turn.
func (g *game) startTurn(now time.Time) {
	g.st.TurnStart = now
	g.turn()
}

// turn starts the engine's search when it is the engine's turn, on the
// clock it has left, and arms the flag.
func (g *game) turn() {
	if g.b.turn() != g.humanColor() && g.setup {
		g.search = "" // newgame's ready starts the turn again
		return
	}
	if g.b.turn() != g.humanColor() {
		g.st.EngineWaits = time.Time{}
		g.seq++
		g.search = "m" + strconv.Itoa(g.seq)
		g.sess.Serve(g.goRequest(g.search, g.st.Moves, false, time.Since(g.st.TurnStart)))
	}
	g.armFlag()
}

// standWait moves the turn's start on by the time the engine waited for
// a process (State.EngineWaits) until now: its clock stood meanwhile.
func (g *game) standWait(now time.Time) {
	if w := g.st.EngineWaits; !w.IsZero() && !w.Before(g.st.TurnStart) && !w.After(now) {
		g.st.TurnStart = g.st.TurnStart.Add(now.Sub(w))
	}
	g.st.EngineWaits = time.Time{}
}

// goRequest is the go for the engine's search (or its pondering, on
// moves that end with the ponder move); spent is what the engine's clock
// has run in this turn already (a turn taken over from another instance).
func (g *game) goRequest(id string, moves []string, ponder bool, spent time.Duration) *session.Request {
	eng := 1 - g.humanColor()
	// Both clocks say the engine's own time (and increment): Debian's
	// Fairy-Stockfish 11.1 reads the opponent's clock as its own in USI
	// (told btime 600000 wtime 0 byoyomi 1000 as White it thinks 3 s, told
	// btime 0 wtime 0 about 0.93 s), and so would lose on time against a
	// player with more time left. An engine learns the human's time from
	// nothing else but uses it little. Its times are told less the
	// engine margin: what the pipe, the session and a loaded machine add
	// between its bestmove and the server's clock (GUIs call it a network
	// delay setting).
	tc := g.st.TC.of(eng)
	margin := g.m.cfg.EngineMargin.Milliseconds()
	left := g.st.Main[eng] - spent.Milliseconds() // below 0: into the byoyomi
	main := max(left-margin, 0)
	b, w := main, main
	r := &session.Request{Type: session.TypeGo, ID: id, Engine: g.st.Engine, Ponder: ponder,
		Position: g.b.position(moves), BTime: &b, WTime: &w}
	if l := g.st.Level; l != nil {
		r.Depth, r.Random = l.Caps()
	}
	if g.st.FEN != "" {
		return g.chessGo(r, eng, main)
	}
	switch {
	case g.st.Level != nil && g.st.Level.MoveTimeMS > 0:
		// A weaker engine: told it has a byoyomi of the level's time only
		// (never more than its real time), while its real clock runs.
		zero := int64(0)
		limit := max(min(g.st.Level.MoveTimeMS, left+tc.ByoyomiMS+tc.IncMS-margin), 1)
		r.BTime, r.WTime, r.Byoyomi = &zero, &zero, &limit
	case tc.IncMS > 0:
		bi, wi := tc.IncMS, tc.IncMS
		r.BInc, r.WInc = &bi, &wi
	default:
		by := tc.ByoyomiMS
		if main == 0 {
			by = max(by+left-margin, min(by, 100))
		}
		r.Byoyomi = &by
	}
	return r
}

// armFlag sets the timer that ends the game when the side to move's time
// runs out.
func (g *game) armFlag() {
	if g.flag != nil {
		g.flag.Stop()
	}
	c := g.b.turn()
	ply, began := len(g.st.Moves), g.st.TurnStart
	d := allowance(g.st.TC.of(c), g.st.Main[c], g.m.cfg.Lag) - time.Since(began) + time.Millisecond
	g.flag = time.AfterFunc(d, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.st.Status != statusPlaying || len(g.st.Moves) != ply || !g.st.TurnStart.Equal(began) || !g.st.EngineWaits.IsZero() {
			return // moved meanwhile, or the engine's clock stands
		}
		g.timeLoss(c)
	})
	g.armIdle()
}

// armIdle sets the timer that ends the game when the player's turn has
// lasted Config.Idle whatever the clock (a player connected but not
// playing holds a slot no longer); on the engine's turn it stops it.
func (g *game) armIdle() {
	if g.idle != nil {
		g.idle.Stop()
	}
	if g.b.turn() != g.humanColor() {
		return
	}
	ply, began := len(g.st.Moves), g.st.TurnStart
	g.idle = time.AfterFunc(g.m.cfg.Idle-time.Since(began), func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.st.Status != statusPlaying || len(g.st.Moves) != ply || !g.st.TurnStart.Equal(began) {
			return // moved meanwhile
		}
		g.end(g.absent("no move for " + g.m.cfg.Idle.String()))
	})
}

// absent is the end of a game whose player left it (no connection for
// Config.Grace, or no move for Config.Idle): lost, or aborted when the
// player made no move in it (nothing was played to lose).
func (g *game) absent(why string) *Result {
	h := g.humanColor()
	if g.st.Played[h] == 0 {
		return &Result{Reason: "aborted", End: "abort", Detail: "abandoned before the player's first move: " + why}
	}
	return &Result{Winner: colorName(h ^ 1), Reason: "abandoned", End: "abort", Detail: why}
}

// timeLoss ends the game lost on time by side c; a draw when its
// opponent has no way to win (a chess side with its king alone).
func (g *game) timeLoss(c int) {
	if g.b.cannotWin(c ^ 1) {
		g.end(&Result{Reason: "time", End: "time_up", Detail: "the opponent cannot win: a draw"})
		return
	}
	g.end(&Result{Winner: colorName(c ^ 1), Reason: "time", End: "time_up"})
}

// engineEvent handles one event of the engine's session.
func (g *game) engineEvent(ev *session.Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.st.Status != statusPlaying {
		return
	}
	switch {
	case (ev.ID == "level" || ev.ID == "newgame") && ev.Type == session.EventError:
		g.end(&Result{Reason: "aborted", End: "abort", Detail: ev.Code + ": " + ev.Message})
	case ev.ID == "newgame" && ev.Type == session.EventReady:
		g.setup = false
		if g.b.turn() != g.humanColor() && g.search == "" {
			if g.resumed {
				g.turn() // on the clock as it stands since the turn began
			} else {
				g.startTurn(time.Now())
			}
		}
	case ev.ID == g.ponderID && ev.ID != "":
		if ev.Type == session.EventBestMove || ev.Type == session.EventError {
			g.ponderDone = true // stopped before the human moved: no ponderhit
		}
	case ev.ID != g.search || g.search == "":
	case ev.Type == session.EventQueued:
		// The engine's clock runs only while its engine can search: the
		// session lent the idle engine to a waiting caller during the
		// human's turn, and no process is free now. Until one is (the
		// engine event) the clock stands and cannot fall (so a player's
		// own analysis in another tab, or a busy pool, never wins on time
		// for the player); the page shows no clock running. A wait past
		// the session's queue timeout ends the game aborted (no_engine),
		// never lost.
		if g.st.EngineWaits.IsZero() {
			g.st.EngineWaits = time.Now()
			if !g.resumed {
				g.st.TurnStart = g.st.EngineWaits // (its search had not begun)
			}
			if g.flag != nil {
				g.flag.Stop()
			}
			g.publish()
		}
	case ev.Type == session.EventEngine:
		// The engine was leased again (the session had given it back while
		// the human thought): its clock starts now, not while it waited. A
		// turn taken over from another instance runs on as it stood, less
		// the wait.
		waited, began := !g.st.EngineWaits.IsZero(), g.st.TurnStart
		if g.resumed {
			g.standWait(time.Now())
		} else {
			g.st.TurnStart, g.st.EngineWaits = time.Now(), time.Time{}
		}
		g.armFlag()
		if waited || g.st.TurnStart.Sub(began) > lateLease {
			// The clock as it really stands: the page, which counted it
			// down from the human's move, would show it short until the
			// engine's move.
			g.publish()
		}
	case ev.Type == session.EventBestMove:
		g.engineMoved(ev)
	case ev.Type == session.EventError && (ev.Code == session.CodeNoSearch || ev.Code == session.CodePreempted) && g.search[0] == 'p':
		// The ponderhit came before the pondering search had started (the
		// human answered at once), or as it gave its engine to a waiting
		// caller: search the position afresh.
		g.startTurn(time.Now())
	case ev.Type == session.EventError:
		g.end(&Result{Reason: "aborted", End: "abort", Detail: ev.Code + ": " + ev.Message})
	}
}

func (g *game) engineMoved(ev *session.Event) {
	now := time.Now()
	c := g.b.turn()
	g.search, g.resumed, g.st.EngineWaits = "", false, time.Time{}
	next, flagged := spend(g.st.TC.of(c), g.st.Main[c], now.Sub(g.st.TurnStart), g.m.cfg.Lag)
	if flagged {
		g.timeLoss(c)
		return
	}
	g.st.Main[c] = next
	switch ev.Move {
	case "resign":
		g.end(&Result{Winner: colorName(c ^ 1), Reason: "resign", End: "resign"})
		return
	case "win":
		g.declare(c)
		return
	}
	note, err := g.b.check(ev.Move)
	if err != nil { // the session checked it; never expected
		g.end(&Result{Reason: "aborted", End: "abort", Detail: "engine_error: illegal move " + ev.Move})
		return
	}
	if !g.played(ev.Move, note, now.Sub(g.st.TurnStart)) {
		return
	}
	g.startTurn(now)
	if g.st.Ponder && ev.PonderMv != "" {
		g.seq++
		g.ponderID, g.ponderMove, g.ponderDone = "p"+strconv.Itoa(g.seq), ev.PonderMv, false
		g.sess.Serve(g.goRequest(g.ponderID, append(append([]string(nil), g.st.Moves...), ev.PonderMv), true, 0))
	}
	g.publish()
}

// played records move (checked; note is its notation), taking took, and
// ends the game if the move ended it; it reports whether the game goes on.
func (g *game) played(move, note string, took time.Duration) bool {
	mover := g.b.turn()
	g.st.Moves = append(g.st.Moves, move)
	if notes := g.b.notes(&g.st); notes != nil { // (a game whose moves need no notation has none)
		*notes = append(*notes, note)
	}
	g.st.TimesMS = append(g.st.TimesMS, took.Milliseconds())
	g.periodEnd(mover)
	if len(g.st.ClocksMS) == len(g.st.Moves)-1 { // (a state stored before it was kept has none)
		g.st.ClocksMS = append(g.st.ClocksMS, g.st.Main[mover])
	}
	if r := g.b.play(move); r != nil {
		g.end(r)
		return false
	}
	if len(g.st.Moves)-g.st.Pre >= g.m.cfg.MaxPlies {
		g.end(&Result{Reason: "max_moves", End: "impasse"})
		return false
	}
	return true
}

// declare judges side c's declaration of a win (入玉宣言, by the 27-point
// rule: a win, else a loss).
func (g *game) declare(c int) {
	r := g.b.declare(c)
	if r == nil { // a game without declarations; never asked
		r = &Result{Reason: "aborted", End: "abort", Detail: "a declaration in a game without them"}
	}
	g.end(r)
}

// humanMove serves play_move.
func (g *game) humanMove(ctx context.Context, req *session.Request, emit func(*session.Event)) *session.Error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.humanTurn(); err != nil {
		return err
	}
	now := time.Now()
	c := g.b.turn()
	next, flagged := spend(g.st.TC.of(c), g.st.Main[c], now.Sub(g.st.TurnStart), g.m.cfg.Lag)
	if flagged {
		g.timeLoss(c)
		g.answer(ctx, req.ID, emit)
		return nil
	}
	note, err := g.b.check(req.Move)
	if err != nil {
		return err
	}
	g.st.Main[c] = next
	if g.played(req.Move, note, now.Sub(g.st.TurnStart)) {
		if g.ponderID != "" && !g.ponderDone && req.Move == g.ponderMove {
			// The engine thought on this very move: it plays on its clock
			// from now.
			g.search = g.ponderID
			g.st.TurnStart = now
			g.armFlag()
			g.sess.Serve(&session.Request{Type: session.TypePonderhit, ID: g.ponderID})
		} else {
			g.startTurn(now) // a new go replaces the pondering search
		}
		g.ponderID = ""
		g.publish() // (an ending move was published by end)
	}
	g.answer(ctx, req.ID, emit)
	return nil
}

// humanTurn refuses a move or a declaration out of turn.
func (g *game) humanTurn() *session.Error {
	switch {
	case g.st.Status != statusPlaying:
		return newError(session.CodeInvalidField, "game %s has ended", g.st.ID)
	case g.b.turn() != g.humanColor():
		return newError(session.CodeInvalidField, "it is the engine's turn")
	}
	return nil
}

// humanEnds serves play_resign and play_declare.
func (g *game) humanEnds(ctx context.Context, req *session.Request, emit func(*session.Event), declare bool) *session.Error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !declare {
		if g.st.Status != statusPlaying {
			return newError(session.CodeInvalidField, "game %s has ended", g.st.ID)
		}
		g.end(g.resignation())
	} else {
		if err := g.humanTurn(); err != nil {
			return err
		}
		c := g.b.turn()
		if g.b.declare(c) == nil {
			return newError(session.CodeUnsupported, "this game has no declaration of a win")
		}
		if _, flagged := spend(g.st.TC.of(c), g.st.Main[c], time.Since(g.st.TurnStart), g.m.cfg.Lag); flagged {
			g.timeLoss(c)
		} else {
			g.declare(c)
		}
	}
	g.answer(ctx, req.ID, emit)
	return nil
}

// resignation is the human's resignation. In a record the resignation
// line belongs to the side to move: on the human's turn it is 投了; on the
// engine's turn (the human resigns while the engine thinks) the record
// cannot say 投了 without naming the engine, so it ends 中断 (abort) and
// its comment says who resigned and who won. The winner is the engine
// either way.
func (g *game) resignation() *Result {
	h := g.humanColor()
	r := &Result{Winner: colorName(h ^ 1), Reason: "resign", End: "resign"}
	if g.b.turn() != h && g.b.endWords() { // (a PGN result names the winner either way)
		names := [2]string{"先手", "後手"}
		if g.st.Handicap != "" {
			names = [2]string{"下手", "上手"}
		}
		r.End = "abort"
		r.Detail = "the player resigned during the engine's turn"
		r.Comment = names[h] + "の投了（" + names[h^1] + "の手番中）により" + names[h^1] + "の勝ち"
	}
	return r
}

// answer sends the state to a request's connection when it is not the
// subscriber (which publish has told already).
func (g *game) answer(ctx context.Context, id string, emit func(*session.Event)) {
	if ctx != g.subCtx {
		emit(g.event(id, time.Now()))
	}
}

// end ends the game with r: the clocks stop, the engine's session closes
// (stopping a search; the pool ends the engine's game), the state is
// published and kept for a while.
func (g *game) end(r *Result) {
	if g.st.Status != statusPlaying {
		return
	}
	now := time.Now()
	r.End = g.b.record(r)
	// The side to move's clock stops where it stands.
	c := g.b.turn()
	at := now
	if !g.st.EngineWaits.IsZero() {
		at = g.st.EngineWaits // the engine's clock stood since
	}
	g.st.Main[c] = view(g.st.TC.of(c), g.st.Main[c], max(at.Sub(g.st.TurnStart), 0)).MainMS
	g.st.EngineWaits = time.Time{}
	g.st.Status, g.st.Result, g.st.Ended = statusEnded, r, now
	g.st.TurnStart = now
	if g.flag != nil {
		g.flag.Stop()
	}
	if g.grace != nil {
		g.grace.Stop()
	}
	if g.idle != nil {
		g.idle.Stop()
	}
	g.search, g.ponderID = "", ""
	sess, stop := g.sess, g.stop
	go func() {
		sess.Close() // stops any search and gives the engine back
		stop()
	}()
	g.m.ended(g)
	g.publish()
}

// abort ends the game without a winner (the server shuts down).
func (g *game) abort(code, msg string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.end(&Result{Reason: "aborted", End: "abort", Detail: code + ": " + msg})
}

// publish saves the state and sends it to the subscriber.
func (g *game) publish() {
	now := time.Now()
	var err error
	if g.m.shared != nil && g.st.Status == statusEnded {
		// Stored until Redis takes it (finish), without holding the game.
		g.m.finishes.Add(1)
		go g.m.finish(g.st.clone())
	} else {
		err = g.m.cfg.Store.Save(context.Background(), &g.st)
	}
	if err != nil {
		g.m.cfg.Logger.Warn("game state not saved", "game", g.st.ID, "err", err)
	}
	if g.emit != nil {
		g.emit(g.event(g.subID, now))
	}
}

func (g *game) event(id string, now time.Time) *session.Event { return stateEvent(id, &g.st, now) }

// stateEvent is the play event for st at now.
func stateEvent(id string, st *State, now time.Time) *session.Event {
	v := stateView{Public: st.Public}
	turn := 0
	if st.Status == statusPlaying {
		// The side to move is known from the moves and the start.
		turn = sideToMove(st)
		if st.EngineWaits.IsZero() {
			v.Clock.Running = "bw"[turn : turn+1]
		}
	}
	for c := range 2 {
		sc := SideClock{MainMS: st.Main[c], ByoyomiMS: st.TC.of(c).ByoyomiMS}
		if st.Status == statusPlaying && c == turn {
			at := now
			if !st.EngineWaits.IsZero() {
				at = st.EngineWaits // its clock stands while it waits
			}
			sc = view(st.TC.of(c), st.Main[c], max(at.Sub(st.TurnStart), 0))
		}
		if c == 0 {
			v.Clock.B = sc
		} else {
			v.Clock.W = sc
		}
	}
	b, _ := json.Marshal(v)
	return &session.Event{Type: session.EventPlay, ID: id, Play: b}
}

func sideToMove(st *State) int {
	first := 0
	switch {
	case st.First == "w":
		first = 1
	case st.First == "":
		// Stored before the games had one seam: an SFEN's or a FEN's
		// second field is the side to move.
		if f := strings.Fields(startOf(st, nil).Start); len(f) >= 2 && f[1] == "w" {
			first = 1
		}
	}
	return (first + len(st.Moves)) % 2
}

// attach makes the connection of ctx the game's subscriber (play_resume).
func (g *game) attach(ctx context.Context, id string, emit func(*session.Event)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.attachLocked(ctx, id, emit)
	emit(g.event(id, time.Now()))
}

func (g *game) attachLocked(ctx context.Context, id string, emit func(*session.Event)) {
	if g.unwatch != nil {
		g.unwatch()
	}
	if g.grace != nil {
		g.grace.Stop()
		g.grace = nil
	}
	g.emit, g.subID, g.subCtx = emit, id, ctx
	g.unwatch = context.AfterFunc(ctx, func() { g.detach(ctx) })
}

// detach forgets a subscriber whose connection went; a game in progress
// waits Grace for it to come back.
func (g *game) detach(ctx context.Context) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.subCtx != ctx {
		return // another connection took the game over
	}
	g.emit, g.subCtx, g.unwatch = nil, nil, nil
	if g.st.Status != statusPlaying {
		return
	}
	g.grace = time.AfterFunc(g.m.cfg.Grace, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.subCtx == nil {
			g.end(g.absent("no connection for " + g.m.cfg.Grace.String()))
		}
	})
}

// chessGo sets a chess engine's clocks as UCI has them: each side's own
// time (the engine's less the margin), the increments, and the moves to
// the next time control. A level's movetime is told as the engine's whole
// time for one move (movestogo 1), while its real clock runs as usual.
func (g *game) chessGo(r *session.Request, eng int, main int64) *session.Request {
	t := [2]int64{g.st.Main[0], g.st.Main[1]}
	t[eng] = main
	if l := g.st.Level; l != nil && l.MoveTimeMS > 0 {
		t[eng] = max(min(l.MoveTimeMS, main), 1)
		one := 1
		r.MovesToGo = &one
	} else {
		if inc := g.st.TC.B.IncMS; inc > 0 {
			r.BInc = &inc
		}
		if inc := g.st.TC.W.IncMS; inc > 0 {
			r.WInc = &inc
		}
		if n := g.toGo(eng); n > 0 {
			r.MovesToGo = &n
		}
	}
	r.BTime, r.WTime = &t[0], &t[1]
	return r
}

// toGo is side c's moves to the end of its time control's period, or 0
// when its control has no periods.
func (g *game) toGo(c int) int {
	tc := g.st.TC.of(c)
	if tc.Moves <= 0 {
		return 0
	}
	return tc.Moves - g.st.Played[c]%tc.Moves
}

// periodEnd counts a move of side c; at the end of a period of its time
// control (TimeControl.Moves moves) its main time is given again.
func (g *game) periodEnd(c int) {
	g.st.Played[c]++
	if tc := g.st.TC.of(c); tc.Moves > 0 && g.st.Played[c]%tc.Moves == 0 {
		g.st.Main[c] += tc.MainMS
	}
}
