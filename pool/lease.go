package pool

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/usid/usid/probe"
	"github.com/usid/usid/usi"
)

// Lease is the exclusive use of one engine process until Release.
type Lease struct {
	k        *kind
	in       *instance
	acquired time.Time
	client   string
	class    Class

	mu        sync.Mutex
	released  bool
	held      time.Duration   // from acquisition to release, once released
	changed   map[string]bool // options this lease set, to restore on release
	clientSet bool            // ... some of them for a client (SetOption): the next tenant gets a new game
	taints    time.Duration   // a client's option makes the engine be replaced after the lease: what that costs
	game      bool            // the lease played with clocks, or began or ended a game itself
	endGame   bool            // EndGame: the next tenant gets a new game
	mated     bool            // a mate search ran on it
}

func (k *kind) newLeaseLocked(in *instance, client string, class Class) *Lease {
	k.leasesOut++
	k.p.m.leases.WithLabelValues(k.cfg.Name).Inc()
	k.q.granted(client)
	return &Lease{k: k, in: in, acquired: time.Now(), client: client, class: class}
}

// Acquired is when the lease began: when the pool handed the engine over.
func (l *Lease) Acquired() time.Time { return l.acquired }

// Held is the engine time the lease holds or held: from acquisition to
// release, or to now while it is not released. It is what the pool charges
// the client for fair sharing, and what a quota should charge.
func (l *Lease) Held() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return l.held
	}
	return time.Since(l.acquired)
}

// Client is the client the lease was acquired for.
func (l *Lease) Client() string { return l.client }

// Class is the priority class the lease was acquired in.
func (l *Lease) Class() Class { return l.class }

// Wanted is closed when someone waits for an engine of this kind and none
// is idle, so that a holder not using its engine can release it at once.
// It costs nothing to watch (no goroutine, no timer). Once closed, it stays
// closed: call Wanted again after a search to watch for the next caller.
func (l *Lease) Wanted() <-chan struct{} {
	k := l.k
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.wanted
}

// Urgent is closed while an Interactive caller waits for an engine of this
// kind: a Background holder watches it during a search to give way (stop,
// release, and ask again later). Like Wanted, it stays closed once closed.
func (l *Lease) Urgent() <-chan struct{} {
	k := l.k
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.urgent
}

// Engine returns the leased engine. Do not use it after Release.
func (l *Lease) Engine() *usi.Engine { return l.in.eng }

// Name returns the engine kind's configured name.
func (l *Lease) Name() string { return l.k.cfg.Name }

// Profile says what the leased engine does natively and what usid must
// emulate; it is never nil on a lease.
func (l *Lease) Profile() *probe.Profile { return l.k.Profile() }

// Go starts a search on the leased engine (see usi.Engine.Go).
//
// Searches without a clock (analyses, mates) go on in the game the engine is
// in, as in an analysis GUI that sends usinewgame once and then many
// positions: the engine keeps its hash from one lease to the next. A lease's
// first search with a clock (a game played) starts a new game, as GUIs do
// before a game's first position: gameover for the one in progress,
// isready where the profile allows, usinewgame; the game ends when the
// lease does.
func (l *Lease) Go(ctx context.Context, pos usi.Position, g usi.Go) (*usi.Search, error) {
	in := l.in
	l.mu.Lock()
	game := l.game
	playing := g.Clock != nil || g.Ponder
	if playing {
		l.game = true
	}
	l.mu.Unlock()
	if (playing && !game && !in.fresh) || !in.inGame {
		if err := l.k.newGame(ctx, in); err != nil {
			return nil, err
		}
	}
	if (pos.SFEN == "" || pos.SFEN == "startpos") && l.Profile().Avoids(probe.AvoidStartposAfterSFEN) {
		pos.SFEN = usi.StartSFEN // the engine would play the moves on its previous board
	}
	s, err := l.in.eng.Go(ctx, pos, g)
	if err != nil {
		return nil, err
	}
	in.fresh, in.played = false, true
	l.mu.Lock()
	l.mated = l.mated || g.Mate
	l.mu.Unlock()
	return s, nil
}

// EndGame makes the release end the engine's game, as after a game played
// with clocks: the next tenant's search starts a new one (usinewgame), and
// what the engine keeps from search to search (its hash) goes. For a search
// whose history repeats a position: the hash may carry that repetition
// into the next tenant's answers.
func (l *Lease) EndGame() {
	l.mu.Lock()
	l.endGame = true
	l.mu.Unlock()
}

// NewGame starts a new game for a client that asks for one (see newGame).
// On an engine that has not searched since its last usinewgame it sends
// nothing. The lease's game ends when it is released.
func (l *Lease) NewGame() error {
	l.mu.Lock()
	l.game = true
	l.mu.Unlock()
	return l.k.newGame(l.k.p.ctx, l.in)
}

// GameOver sends gameover; the next search starts a new game.
func (l *Lease) GameOver(r usi.GameResult) error {
	l.mu.Lock()
	l.game = true
	l.mu.Unlock()
	if err := l.in.eng.GameOver(r); err != nil {
		return err
	}
	l.in.fresh, l.in.inGame, l.in.played = false, false, false
	return nil
}

// Frozen reports whether the leased engine's process is stopped (SIGSTOP,
// a debugger) or a zombie: it will not answer, however long one waits.
func (l *Lease) Frozen() bool {
	st := procState(l.in.eng.PID())
	return st == 'T' || st == 't' || st == 'Z'
}

// Done is closed if the leased engine's process exits; the lease is then
// useless and should be released (the pool starts a replacement).
func (l *Lease) Done() <-chan struct{} { return l.in.eng.Done() }

// SetOption sets an engine option on behalf of a client: the option must be
// on the engine's client_options allow-list, or one of its levels' (see
// Levels), and the value within the rule's bounds (and the engine's). The pool restores it on Release. Errors wrap
// ErrOptionNotAllowed, or usi's ErrBadCommand, ErrUnknownOption or ErrBusy.
func (l *Lease) SetOption(name, value string) error {
	if err := l.k.checkClientOption(name, value); err != nil {
		return err
	}
	if err := l.track(name); err != nil {
		return err
	}
	cost := l.ReplacementCost(name)
	l.mu.Lock()
	l.clientSet = true
	l.taints = max(l.taints, cost)
	l.mu.Unlock()
	return l.in.eng.SetOption(name, value)
}

// ReplacementCost is what setting option name costs when no setoption can
// undo it (a string, filename or button option: the engine is replaced
// after the lease, see reset): the time the kind's latest engine took to
// start, during which the replaced process serves nobody. It is 0 for an
// option that is restored by setting it back. The pool charges it to the
// lease's client in the fair queue as engine time held; a caller with
// budgets charges it there too.
func (l *Lease) ReplacementCost(name string) time.Duration {
	if restorable(l.in.eng, name) {
		return 0
	}
	k := l.k
	k.mu.Lock()
	defer k.mu.Unlock()
	return max(k.startTook, time.Millisecond)
}

// track records that the lease changes option name, so that Release
// restores it; it is recorded before sending, in case the engine applies
// it only in part.
func (l *Lease) track(name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return fmt.Errorf("pool: lease already released")
	}
	if l.changed == nil {
		l.changed = make(map[string]bool)
	}
	l.changed[name] = true
	return nil
}

// SetManagedOption sets an option that the server itself manages for a
// request (MultiPV for a multipv analysis), bypassing the client allow-list.
// The name may be a reserved USI name or its alias (USI_MultiPV or MultiPV).
// Like any option set through the lease, it is restored on Release.
func (l *Lease) SetManagedOption(name, value string) error {
	name = advertisedName(l.in.eng.Options(), name)
	if err := l.track(name); err != nil {
		return err
	}
	return l.in.eng.SetOption(name, value)
}

// The options the USI draft reserves for how an engine searches, and their
// values for analysis: evaluations, not book moves.
var analysisOptions = []struct{ name, value string }{{"USI_AnalyseMode", "true"}, {"USI_OwnBook", "false"}}

// SearchMode sets, on an engine that advertises them, USI_AnalyseMode and
// USI_OwnBook for an analysis (true, false: the engine searches every
// position and reports its evaluation rather than play from its book) or
// back to their configured or advertised values for play. It sends only
// what differs from the engine's current values, and the values stay
// across leases (every search sets the mode it needs), so that analyses
// one after another cost nothing.
func (l *Lease) SearchMode(analysis bool) error {
	for _, o := range analysisOptions {
		name, ok := l.HasOption(o.name)
		if !ok {
			continue
		}
		want := o.value
		if !analysis {
			want = l.k.restoreValue(name)
		}
		if cur, _ := l.in.eng.OptionValue(name); cur == want {
			continue
		}
		if err := l.in.eng.SetOption(name, want); err != nil {
			return err
		}
	}
	return nil
}

// Chess960 sets UCI_Chess960 on an engine that advertises it: true for a
// Chess960 position (castling written king-takes-rook, X-FEN or
// Shredder-FEN castling rights), false for a standard one. Like
// SearchMode, it sends only a change, and the value stays across leases:
// every chess search sets the one it needs.
func (l *Lease) Chess960(on bool) error {
	name, ok := l.HasOption("UCI_Chess960")
	if !ok {
		return nil
	}
	want := strconv.FormatBool(on)
	if cur, _ := l.in.eng.OptionValue(name); cur == want {
		return nil
	}
	return l.in.eng.SetOption(name, want)
}

// HasOption reports whether the leased engine advertises an option under
// name or its alias, and under which name.
func (l *Lease) HasOption(name string) (string, bool) {
	opts := l.in.eng.Options()
	name = advertisedName(opts, name)
	return name, slices.ContainsFunc(opts, func(o usi.Option) bool { return o.Name == name })
}

// checkClientOption applies the allow-list to a client's option change.
func (k *kind) checkClientOption(name, value string) error {
	rule, ok := k.cfg.ClientOptions[name]
	k.mu.Lock()
	// A level's options need no entry (issue 42): the engine's range
	// bounds them, narrowed by the operator's rule where there is one.
	level := !ok && levelOption(k.levelsLocked(), name)
	i := slices.IndexFunc(k.options, func(o usi.Option) bool { return o.Name == name })
	var o usi.Option
	if i >= 0 {
		o = k.options[i]
	}
	k.mu.Unlock()
	if !ok && !level {
		return fmt.Errorf("%w: %q is not on engine %q's allow-list", ErrOptionNotAllowed, name, k.cfg.Name)
	}
	if i < 0 {
		return fmt.Errorf("%w: engine %q does not advertise %q", ErrOptionNotAllowed, k.cfg.Name, name)
	}
	switch o.Type {
	case usi.TypeString, usi.TypeFilename:
		if !rule.AllowText {
			return fmt.Errorf("%w: %q is a %s option; those need allow_text", ErrOptionNotAllowed, name, o.Type)
		}
	case usi.TypeSpin:
		n, err := strconv.Atoi(value)
		if err != nil {
			return fmt.Errorf("%w: %q wants an integer, got %q", ErrOptionNotAllowed, name, value)
		}
		if (rule.Min != nil && n < *rule.Min) || (rule.Max != nil && n > *rule.Max) {
			return fmt.Errorf("%w: %q must be within %s", ErrOptionNotAllowed, name, rule.bounds())
		}
	case usi.TypeCombo:
		if len(rule.Values) > 0 && !slices.Contains(rule.Values, value) {
			return fmt.Errorf("%w: %q must be one of %v", ErrOptionNotAllowed, name, rule.Values)
		}
	}
	return nil
}

func (r OptionRule) bounds() string {
	lo, hi := "-inf", "+inf"
	if r.Min != nil {
		lo = strconv.Itoa(*r.Min)
	}
	if r.Max != nil {
		hi = strconv.Itoa(*r.Max)
	}
	return lo + ".." + hi
}

// Release gives the engine back. It returns at once; the pool stops any
// search still running, restores changed options and checks the engine with
// isready before anyone else gets it. Calls after the first do nothing.
func (l *Lease) Release() { l.release("") }

// Discard gives the engine back to be killed and replaced, for a caller who
// no longer trusts it (it ignored a limit, sent nonsense).
func (l *Lease) Discard() { l.release(reasonKilled) }

func (l *Lease) release(retire string) {
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return
	}
	l.released = true
	now := time.Now()
	l.held = now.Sub(l.acquired)
	changed := sortedKeys(l.changed)
	mated, newGame := l.mated, l.game || l.clientSet || l.endGame
	taints := l.taints
	l.mu.Unlock()

	k, in := l.k, l.in
	k.mu.Lock()
	k.setState(in, stateResetting)
	// An engine replaced because of the lease's options is out of service
	// while its successor starts: that time is the client's, as if it had
	// held the engine (one client's button presses do not come first).
	k.q.charge(l.client, l.held+taints, now)
	if k.q.n > 0 {
		k.renumberLocked() // the client's engine time moved it
	}
	k.mu.Unlock()
	k.p.wg.Go(func() {
		if retire == "" {
			retire = k.reset(in, changed, mated, newGame)
		}
		k.mu.Lock()
		k.leasesOut--
		if k.leasesOut == 0 && k.leasesGo != nil {
			close(k.leasesGo)
			k.leasesGo = nil
		}
		if retire == "" {
			k.offerLocked(in)
		}
		k.mu.Unlock()
		if retire != "" {
			in.retireFor(retire)
		}
	})
}

// handBack returns the engine of a lease granted to a waiter that had
// already given up: nobody used it, so it goes to the next waiter as it is,
// and the client is not charged.
func (l *Lease) handBack() {
	l.mu.Lock()
	l.released = true
	l.mu.Unlock()
	k := l.k
	k.mu.Lock()
	defer k.mu.Unlock()
	if u := k.q.usage[l.client]; u != nil && u.held > 0 {
		u.held--
	}
	k.leasesOut--
	if k.leasesOut == 0 && k.leasesGo != nil {
		close(k.leasesGo)
		k.leasesGo = nil
	}
	k.offerLocked(l.in)
}

// reset brings a released engine back to a known state; it returns a reason
// to replace the engine instead, or "". The game goes on into the next
// lease (and the engine keeps its hash) unless newGame: the lease played
// with clocks, began or ended a game, or a client changed options.
func (k *kind) reset(in *instance, changed []string, mated, newGame bool) string {
	eng := in.eng
	if eng.Err() != nil {
		return reasonCrash
	}
	if s := eng.ActiveSearch(); s != nil {
		s.Stop() // bestmove within the stop timeout, or the engine is killed
		<-s.Done()
	}
	prof := k.Profile()
	if mated && prof.AfterMate == probe.AfterMateRecycle {
		return reasonRecycle // it would not search again
	}
	if newGame && in.played {
		// The lease's game is over; the next lease starts its own.
		if err := eng.GameOver(usi.Draw); err != nil {
			return reasonResetFailed
		}
		in.fresh, in.inGame, in.played = false, false, false
	}
	for _, name := range changed {
		if !restorable(eng, name) {
			k.log.Info("replacing an engine after a lease set an option that cannot be restored", "option", name, "pid", eng.PID())
			return reasonTainted
		}
	}
	for _, name := range changed {
		if err := eng.SetOption(name, k.restoreValue(name)); err != nil {
			k.log.Warn("could not restore option after a lease", "option", name, "err", err)
			return reasonResetFailed
		}
	}
	in.leases++
	if (k.cfg.MaxLeases > 0 && in.leases >= k.cfg.MaxLeases) || (k.cfg.MaxAge > 0 && time.Since(in.born) >= k.cfg.MaxAge) {
		return reasonRecycle
	}
	if !newGame {
		return ""
	}
	if err := k.newGame(k.p.ctx, in); err != nil {
		if k.p.ctx.Err() != nil {
			return reasonKilled // closing: the slot closes it anyway
		}
		k.log.Warn("engine not ready for a new game after a lease", "pid", eng.PID(), "err", err)
		return reasonResetFailed
	}
	return ""
}

// restorable reports whether setting name back undoes a lease's change.
// A check, spin or combo holds a value and nothing else; a string or
// filename may have had effects that outlive it (a log file opened and
// appended to; engines often ignore an empty value), and a button is an
// action: after those, the engine is replaced rather than trusted.
func restorable(eng *usi.Engine, name string) bool {
	for _, o := range eng.Options() {
		if o.Name == name {
			return o.Type == usi.TypeCheck || o.Type == usi.TypeSpin || o.Type == usi.TypeCombo
		}
	}
	return true // not advertised: USI_Hash or USI_Ponder, which usid sends anyway; values
}

// newGame starts a new game on in the GUIs' way: gameover for a game in
// which the engine searched, isready where the profile says it is cheap
// and safe (a GUI sends isready only there, at a game's start, never twice
// in a row), then usinewgame. An engine that has not searched since its
// last usinewgame is left as it is. Called by in's holder only.
func (k *kind) newGame(ctx context.Context, in *instance) error {
	if in.fresh {
		return nil
	}
	eng := in.eng
	if in.inGame && in.played {
		if err := eng.GameOver(usi.Draw); err != nil {
			return err
		}
		in.inGame, in.played = false, false
	}
	if !in.inGame && k.Profile().ReadyBetweenLeases {
		rctx, cancel := context.WithTimeout(ctx, k.cfg.Timeouts.Ready)
		err := eng.IsReady(rctx)
		cancel()
		if err != nil {
			return err
		}
	}
	if err := eng.NewGame(); err != nil {
		return err
	}
	in.fresh, in.inGame, in.played = true, true, false
	return nil
}

// restoreValue is what an option goes back to: the configured value, or the
// engine's advertised default.
func (k *kind) restoreValue(name string) string {
	if v, ok := k.cfg.Options[name]; ok {
		return v
	}
	if v, ok := k.cfg.Options[optionAliases[name]]; ok {
		return v
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, o := range k.options {
		if o.Name == name {
			return o.Default
		}
	}
	return ""
}
