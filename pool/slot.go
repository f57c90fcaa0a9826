// Slots. Each keeps one engine process running - starting it with the
// configured options, replacing it when it dies, misbehaves or ages, backing
// off when starts fail.

package pool

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/usid/usid/probe"
	"github.com/usid/usid/usi"
)

// runSlot keeps one engine of k running until ctx ends.
func (k *kind) runSlot(ctx context.Context) {
	bo := backoff{min: 100 * time.Millisecond, max: 30 * time.Second}
	for ctx.Err() == nil {
		k.mu.Lock()
		wait := time.Until(k.downUntil)
		k.mu.Unlock()
		if wait > 0 && !sleep(ctx, wait) {
			return
		}
		in, err := k.start(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			k.log.Warn("engine failed to start", "err", err)
			k.p.m.restarts.WithLabelValues(k.cfg.Name, reasonStartFailed).Inc()
			k.mu.Lock()
			k.lastErr = err.Error()
			k.mu.Unlock()
			k.fail(time.Now())
			if !sleep(ctx, bo.next()) {
				return
			}
			continue
		}
		k.offer(in)
		reason := k.watch(ctx, in)
		k.mu.Lock()
		k.takeIdleLocked(in)
		k.setState(in, "")
		in.gone = true
		k.mu.Unlock()
		if err := in.eng.Close(); err != nil && ctx.Err() == nil {
			k.log.Debug("engine closed", "err", err)
		}
		if ctx.Err() != nil {
			return
		}
		k.p.m.restarts.WithLabelValues(k.cfg.Name, reason).Inc()
		switch reason {
		case reasonRecycle, reasonKilled, reasonTainted:
			// Replaced on purpose (aged, distrusted, or after a lease set an
			// option no setoption undoes): never a failure of the kind, and
			// at once, with no backoff.
			bo.reset()
			k.replaced()
		default:
			k.log.Warn("replacing engine", "reason", reason, "pid", in.eng.PID(), "err", in.eng.Err())
			k.fail(in.born)
			// An engine that ran a good while before failing starts over
			// from the shortest backoff.
			if time.Since(in.born) > k.cfg.FailureWindow {
				bo.reset()
			}
			if !sleep(ctx, bo.next()) {
				return
			}
		}
	}
}

// run finds the engine's profile (from the cache, or by probing a spare
// process), then keeps Instances engines running until ctx ends.
func (k *kind) run(ctx context.Context) {
	if !k.discover(ctx) {
		return
	}
	for range k.cfg.Instances {
		k.p.wg.Go(func() { k.runSlot(ctx) })
	}
}

func (k *kind) usiConfig(log *slog.Logger) usi.Config {
	c := k.cfg
	env := []string(nil)
	if len(c.Env) > 0 {
		env = append(os.Environ(), c.Env...)
	}
	k.mu.Lock()
	d := k.dialect
	k.mu.Unlock()
	return usi.Config{
		Path: c.Path, Args: c.Args, Dir: c.Dir, Env: env, Dialect: d,
		USIOKTimeout: c.Timeouts.Start, ReadyOKTimeout: c.Timeouts.Ready,
		StopTimeout: c.Timeouts.Stop, QuitTimeout: c.Timeouts.Quit,
		Logger: log,
	}
}

// startEngine starts an engine process and sets the start options, without
// isready.
func (k *kind) startEngine(ctx context.Context, log *slog.Logger) (*usi.Engine, error) {
	return k.startEngineWith(ctx, k.usiConfig(log))
}

// startEngineWith is startEngine with the engine's configuration given.
func (k *kind) startEngineWith(ctx context.Context, cfg usi.Config) (*usi.Engine, error) {
	eng, err := usi.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := k.applyOptions(eng); err != nil {
		eng.Close()
		return nil, err
	}
	return eng, nil
}

// start starts a serving engine: options, then isready (which may take a
// while: engines load their evaluation files then).
func (k *kind) start(ctx context.Context) (*instance, error) {
	if in := k.takeSpare(ctx); in != nil {
		return in, nil
	}
	c := k.cfg
	sctx, cancel := context.WithTimeout(ctx, c.Timeouts.Start+c.Timeouts.Ready)
	defer cancel()
	in := &instance{born: time.Now(), retire: make(chan string, 1)}
	k.mu.Lock()
	k.setState(in, stateStarting)
	k.mu.Unlock()
	eng, err := k.startEngine(sctx, k.log)
	if err == nil {
		in.eng = eng
		if err = eng.IsReady(sctx); err == nil {
			err = eng.NewGame() // usinewgame, after isready (the GUIs' order)
			in.fresh, in.inGame = err == nil, err == nil
		}
		if err != nil {
			eng.Close()
		}
	}
	k.mu.Lock()
	prof, key := k.profile, k.profileKey
	if err != nil {
		k.setState(in, "")
	} else {
		k.id, k.options = eng.ID(), eng.Options()
		k.startTook = time.Since(in.born)
	}
	k.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if prof != nil && prof.Identity.Name != eng.ID().Name {
		k.log.Warn("engine's id name differs from its cached profile; it is probed again at the next start",
			"profile", prof.Identity.Name, "engine", eng.ID().Name)
		probe.Forget(k.p.profileDir, key)
	}
	k.log.Info("engine ready", "pid", eng.PID(), "id", eng.ID().Name, "took", time.Since(in.born).Round(time.Millisecond))
	return in, nil
}

// applyOptions sends the start options: the configured ones, plus USI_Hash
// and USI_Ponder, which GUIs send to every engine (an engine's own hash
// default may be gigabytes), under the names the engine advertises.
func (k *kind) applyOptions(eng *usi.Engine) error {
	values := k.startValues(eng.Options())
	for _, name := range sortedKeys(values) {
		if err := eng.SetOption(name, values[name]); err != nil {
			return fmt.Errorf("option %s: %w", name, err)
		}
	}
	return nil
}

// startValues are the options applyOptions sets on an engine advertising
// opts, by the names it advertises.
func (k *kind) startValues(opts []usi.Option) map[string]string {
	values := map[string]string{}
	for name, v := range k.cfg.Options {
		values[advertisedName(opts, name)] = v
	}
	reserved := map[string]string{"USI_Hash": strconv.Itoa(DefaultHashMB), "USI_Ponder": "false"}
	for _, name := range sortedKeys(reserved) {
		if _, set := k.cfg.Options[name]; set {
			continue
		}
		if _, set := k.cfg.Options[optionAliases[name]]; set {
			continue
		}
		values[advertisedName(opts, name)] = clampSpin(opts, advertisedName(opts, name), reserved[name])
	}
	return values
}

// clampSpin brings a default value within an advertised spin option's range.
func clampSpin(opts []usi.Option, name, v string) string {
	i := slices.IndexFunc(opts, func(o usi.Option) bool { return o.Name == name })
	n, err := strconv.ParseInt(v, 10, 64)
	if i < 0 || err != nil || opts[i].Type != usi.TypeSpin {
		return v
	}
	o := opts[i]
	if o.HasMin && n < o.Min {
		n = o.Min
	}
	if o.HasMax && n > o.Max {
		n = o.Max
	}
	return strconv.FormatInt(n, 10)
}

// optionAliases pairs the reserved USI option names with the names that
// engines derived from Stockfish advertise instead (fairy-stockfish has Hash,
// not USI_Hash), so that configurations can use either.
var optionAliases = map[string]string{
	"USI_Hash": "Hash", "Hash": "USI_Hash",
	"USI_Ponder": "Ponder", "Ponder": "USI_Ponder",
	"USI_MultiPV": "MultiPV", "MultiPV": "USI_MultiPV",
	// fairy-stockfish keeps the chess name in USI mode.
	"USI_AnalyseMode": "UCI_AnalyseMode", "UCI_AnalyseMode": "USI_AnalyseMode",
}

// advertisedName returns name, or its alias when only the alias is advertised.
func advertisedName(opts []usi.Option, name string) string {
	has := func(n string) bool {
		return slices.ContainsFunc(opts, func(o usi.Option) bool { return o.Name == n })
	}
	if alias, ok := optionAliases[name]; ok && !has(name) && has(alias) {
		return alias
	}
	return name
}

// retire asks in's slot to replace it. It never blocks: one reason is enough.
func (in *instance) retireFor(reason string) {
	select {
	case in.retire <- reason:
	default:
	}
}

// backoff yields randomized exponential delays: each twice the last (up to
// max), then scaled by a random factor in [0.5, 1.5) so that engines that
// failed together do not restart together.
type backoff struct {
	min, max, cur time.Duration
}

func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.min
	} else {
		b.cur = min(2*b.cur, b.max)
	}
	return time.Duration(float64(b.cur) * (0.5 + rand.Float64()))
}

func (b *backoff) reset() { b.cur = 0 }

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
