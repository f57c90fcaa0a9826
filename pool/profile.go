// Discovery. The kind's profile is loaded from the cache or probed on a spare
// process before any slot starts.

package pool

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/usid/usid/probe"
	"github.com/usid/usid/usi"
)

// discover sets k.profile: the cached one for this binary and
// configuration, or a new probe's. An engine that cannot start at all is
// retried with a growing delay (up to 10 minutes), the kind unavailable in
// between with the engine's own last words as the reason: no restart storm.
func (k *kind) discover(ctx context.Context) bool {
	bo := backoff{min: 5 * time.Second, max: 10 * time.Minute}
	for ctx.Err() == nil {
		ident, err := probe.IdentityOf(k.cfg.Path)
		if err == nil {
			key := probe.Key(ident, k.cacheExtra()...)
			if prof, ok := probe.Load(k.p.profileDir, key); ok {
				k.setDialect(usi.DialectNamed(prof.Protocol))
				k.log.Info("engine profile from cache", "id", prof.Identity.Name, "native", prof.NativeParams(), "checkmate", prof.Checkmate)
				k.setProfile(prof, key)
				k.discoveryEnded()
				return true
			}
			var prof *probe.Profile
			// The probe's spare engines log as "<name>/probe", apart from
			// the engines that serve; what they say on stderr as they fail
			// is expected (issue 37: on gpsusi's first start, four
			// "terminate called ..." warnings looked alarming).
			plog := k.p.log.With("engine", k.cfg.Name+"/probe")
			start := func(ctx context.Context) (*usi.Engine, error) {
				c := k.usiConfig(plog)
				c.Expected = ProbeExpected
				return k.startEngineWith(ctx, c)
			}
			d, guessed := k.dialectOf(ctx)
			k.setDialect(d)
			prof, err = probe.Run(ctx, probe.Config{Start: start, Identity: ident, Logger: plog, Dialect: d, Keep: k.keepSpare})
			if err != nil && guessed && ctx.Err() == nil {
				// It said nothing in the quick look and failed as USI:
				// ask again with the whole start timeout.
				if d2, derr := usi.Detect(ctx, k.usiConfig(k.log), k.cfg.Timeouts.Start); derr == nil && d2 != d {
					k.log.Info("engine dialect learned", "protocol", d2.Name)
					k.setDialect(d2)
					prof, err = probe.Run(ctx, probe.Config{Start: start, Identity: ident, Logger: plog, Dialect: d2, Keep: k.keepSpare})
				}
			}
			if err == nil {
				if serr := probe.Save(k.p.profileDir, key, prof); serr != nil {
					k.log.Warn("engine profile not cached", "dir", k.p.profileDir, "err", serr)
				}
				k.setProfile(prof, key)
				k.discoveryEnded()
				return true
			}
		}
		if ctx.Err() != nil {
			return false
		}
		k.cannotStart(ctx, err, bo.next())
		k.discoveryEnded() // not known, and not about to be
		k.mu.Lock()
		wait := time.Until(k.downUntil)
		k.mu.Unlock()
		if !sleep(ctx, wait) {
			return false
		}
	}
	return false
}

// ProbeExpected is what the log says of a probe's spare engine's stderr:
// the probe tries each go limit on it, and an engine that lacks one may
// abort on it (gpsusi: "unknown option in go depth", "terminate called
// after throwing an instance of 'std::runtime_error'"); usid then emulates
// that limit.
const ProbeExpected = "the probe tries each go limit; an engine may abort on one it lacks, and usid then emulates it"

// quickDetect bounds the first look at an engine's dialect: an engine that
// answers neither usi nor uci by then (gpsusi takes seconds to load) is
// taken for a USI engine, and asked again only if it fails as one, so that
// a slow USI engine's cold start costs no second full start.
const quickDetect = 3 * time.Second

// dialectOf is the configured protocol, or the one the engine answers to
// first (usi.Detect: USI for an engine that speaks both); guessed when the
// engine did not answer within quickDetect and USI is assumed.
func (k *kind) dialectOf(ctx context.Context) (d *usi.Dialect, guessed bool) {
	if d := usi.DialectNamed(k.cfg.Protocol); d != nil {
		return d, false
	}
	d, err := usi.Detect(ctx, k.usiConfig(k.log), min(quickDetect, k.cfg.Timeouts.Start))
	if errors.Is(err, usi.ErrUndecided) {
		k.log.Info("engine answered usiok but did not show its game (shogi or othello) in time; taken for USI", "within", quickDetect)
		return usi.DialectUSI, true
	}
	if err != nil {
		k.log.Info("engine answered neither usi, uci nor uoi at once; taken for USI", "within", quickDetect)
		return usi.DialectUSI, true
	}
	k.log.Info("engine dialect learned", "protocol", d.Name)
	return d, false
}

// setDialect sets what the kind's engines speak (nil: USI).
func (k *kind) setDialect(d *usi.Dialect) {
	if d == nil {
		d = usi.DialectUSI
	}
	k.mu.Lock()
	k.dialect = d
	k.mu.Unlock()
}

// cannotStart records why the engine does not start and makes the kind
// unavailable until the next attempt.
func (k *kind) cannotStart(ctx context.Context, err error, retry time.Duration) {
	msg := err.Error()
	k.log.Error("engine cannot start", "err", msg, "retry_in", retry.Round(time.Second))
	k.p.m.restarts.WithLabelValues(k.cfg.Name, reasonStartFailed).Inc()
	k.mu.Lock()
	k.lastErr = msg
	k.markDownLocked(retry)
	k.mu.Unlock()
}

// cacheExtra is what, besides the binary, makes a cached profile this
// configuration's: how the engine is run and the options set at start.
func (k *kind) cacheExtra() []string {
	c := k.cfg
	extra := []string{"dir=" + c.Dir}
	if c.Protocol != "" {
		extra = append(extra, "protocol="+c.Protocol)
	}
	for _, a := range c.Args {
		extra = append(extra, "arg="+a)
	}
	for _, e := range c.Env {
		extra = append(extra, "env="+e)
	}
	for _, name := range sortedKeys(c.Options) {
		extra = append(extra, "option="+name+"="+c.Options[name])
	}
	return extra
}

func (k *kind) setProfile(prof *probe.Profile, key string) {
	p := prof.Apply(k.cfg.Capabilities.override())
	k.mu.Lock()
	k.profile, k.probed, k.profileKey, k.lastErr = &p, prof, key, ""
	k.mu.Unlock()
}

// Overshot tells the pool that the leased engine searched reached for a
// native limit of param (a go parameter, "nodes" or "depth") set at limit,
// more than half again over it: from the next search on, usid enforces the
// limit itself on this kind. The profile on disk learns it too. An
// operator's capabilities.go still wins.
func (l *Lease) Overshot(param string, limit, reached int64) {
	k := l.k
	k.mu.Lock()
	raw, key := k.probed, k.profileKey
	k.mu.Unlock()
	if raw == nil || raw.Goes(param) != probe.Native {
		return
	}
	p := raw.Observed(param, probe.Emulated, fmt.Sprintf("go %s %d searched %d: more than 1.5 times the limit", param, limit, reached))
	if err := probe.Save(k.p.profileDir, key, &p); err != nil {
		k.log.Warn("engine profile not cached", "dir", k.p.profileDir, "err", err)
	}
	k.setProfile(&p, key)
}

// Profile returns the engine kind's profile with the configured overrides,
// or nil while it is not known yet.
func (k *kind) Profile() *probe.Profile {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.profile
}
