package pool

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/usid/usid/probe"
	"github.com/usid/usid/usi"
)

// EngineConfig describes one kind of engine and how many of it to keep warm.
// Zero fields take the defaults documented on each field.
type EngineConfig struct {
	Name      string   `yaml:"name"`      // how clients name it; [A-Za-z0-9_.-]+
	Path      string   `yaml:"path"`      // executable
	Args      []string `yaml:"args"`      // command-line arguments
	Dir       string   `yaml:"dir"`       // working directory; default: the process's
	Env       []string `yaml:"env"`       // extra KEY=value environment entries
	Instances int      `yaml:"instances"` // processes kept warm; default 1
	// Protocol is the dialect: "usi" (shogi) or "uci" (chess). Empty: the
	// probe learns it (an engine that speaks both, as fairy-stockfish,
	// is taken for USI; set "uci" to serve it as a chess engine).
	Protocol string `yaml:"protocol"`
	// Disabled removes an engine an earlier configuration layer has (a
	// --config file's entry {name: gps, disabled: true} the built-in gps):
	// usid's configuration (internal/app) drops it; the pool never sees it.
	Disabled bool `yaml:"disabled"`

	// Options are set with setoption after every start (values as the
	// engine expects them: "64", "true", a combo value). USI_Hash and
	// USI_Ponder are always sent, as GUIs send them, under the name the
	// engine advertises (Hash, Ponder): DefaultHashMB and false unless set here.
	Options map[string]string `yaml:"options"`
	// ClientOptions is the allow-list of options a client may change during
	// a lease, with bounds. Options of type string and filename are refused
	// unless their rule sets AllowText. The engine's resource options
	// (USI_Hash, Hash, Threads, Thread) can never be allowed.
	ClientOptions map[string]OptionRule `yaml:"client_options"`

	Capabilities Capabilities `yaml:"capabilities"`
	Timeouts     Timeouts     `yaml:"timeouts"`

	// Queue is how many callers may wait for a free instance; default 64.
	// When it is full, Acquire fails at once with ErrQueueFull.
	Queue int `yaml:"queue"`
	// MaxLeases recycles an engine (quit and restart) after that many leases; 0: never.
	MaxLeases int `yaml:"max_leases"`
	// MaxAge recycles an engine once it is that old and idle; 0: never.
	MaxAge time.Duration `yaml:"max_age"`
	// HealthInterval is how often an idle engine's process is checked (alive,
	// not stopped); it costs the engine nothing. Default 5s.
	HealthInterval time.Duration `yaml:"health_interval"`
	// MaxFailures failures within FailureWindow, or in a row each of an
	// engine younger than FailureWindow (the slot's growing restart delay
	// spaces those out past any window), mark the engine kind unavailable
	// for Cooldown; defaults 5, 1m and 30s.
	MaxFailures   int           `yaml:"max_failures"`
	FailureWindow time.Duration `yaml:"failure_window"`
	Cooldown      time.Duration `yaml:"cooldown"`
}

// OptionRule bounds what a client may set an option to.
type OptionRule struct {
	Min       *int     `yaml:"min" json:"min,omitempty"`               // spin: lowest value allowed (default: the engine's min)
	Max       *int     `yaml:"max" json:"max,omitempty"`               // spin: highest value allowed (default: the engine's max)
	Values    []string `yaml:"values" json:"values,omitempty"`         // combo: allowed values (default: all the engine's)
	AllowText bool     `yaml:"allow_text" json:"allow_text,omitempty"` // string/filename: allow it at all
}

// Capabilities is the operator's optional word on what an engine can do.
// usid probes every engine itself (package probe); what is set here wins
// over the probe's findings, and /v1/engines shows it as "configured".
type Capabilities struct {
	// Go lists the go parameters the engine takes natively; of those usid
	// measures (depth, nodes, movetime, binc/winc), the ones not listed
	// are emulated (binc/winc: refused). Nil: as probed.
	Go []string `yaml:"go"`
	// CheckmateAnswer: the engine answers "go mate" with "checkmate". Nil:
	// as probed.
	CheckmateAnswer *bool `yaml:"checkmate"`
}

// override is c as the probe package takes it.
func (c Capabilities) override() probe.Override {
	return probe.Override{Go: c.Go, Checkmate: c.CheckmateAnswer}
}

// Timeouts bound each exchange with an engine.
type Timeouts struct {
	Start time.Duration `yaml:"start"` // start to usiok; default 30s
	Ready time.Duration `yaml:"ready"` // isready to readyok; default 60s (engines load evaluation files and allocate their hash here)
	Stop  time.Duration `yaml:"stop"`  // stop to bestmove; default 3s
	Quit  time.Duration `yaml:"quit"`  // quit to exit, then kill; default 2s
}

// DefaultHashMB is the USI_Hash sent to an engine whose configuration sets
// none: modest, because engines' own defaults run to gigabytes.
const DefaultHashMB = 256

var goParams = []string{"btime", "wtime", "byoyomi", "binc", "winc", "movestogo", "depth", "nodes", "movetime", "infinite", "ponder", "mate", "searchmoves"}

// resourceOptions are never client-settable: they size CPU and memory.
var resourceOptions = []string{"USI_Hash", "Hash", "Threads", "Thread"}

// WithDefaults returns c with defaults filled in (timeouts, failures, queue,
// ...), or an error naming what is wrong. New applies it to every entry.
func (c EngineConfig) WithDefaults() (EngineConfig, error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Name == "" || strings.Trim(c.Name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != "" {
		bad("name %q: want letters, digits, '_', '.', '-'", c.Name)
	}
	if c.Path == "" {
		bad("engine %q: path is required", c.Name)
	}
	if c.Protocol != "" && usi.DialectNamed(c.Protocol) == nil {
		bad("engine %q: protocol %q: want usi, uci, usix or uoi (or none: learned)", c.Name, c.Protocol)
	}
	if c.Instances == 0 {
		c.Instances = 1
	}
	if c.Instances < 0 || c.Instances > 256 {
		bad("engine %q: instances %d: want 1..256", c.Name, c.Instances)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.Timeouts.Start, 30*time.Second)
	def(&c.Timeouts.Ready, time.Minute)
	def(&c.Timeouts.Stop, 3*time.Second)
	def(&c.Timeouts.Quit, 2*time.Second)
	def(&c.HealthInterval, 5*time.Second)
	def(&c.FailureWindow, time.Minute)
	def(&c.Cooldown, 30*time.Second)
	if c.MaxFailures <= 0 {
		c.MaxFailures = 5
	}
	if c.Queue == 0 {
		c.Queue = 64
	}
	if c.Queue < 0 {
		bad("engine %q: queue %d: want 0 or more", c.Name, c.Queue)
	}
	for _, p := range c.Capabilities.Go {
		if !slices.Contains(goParams, p) {
			bad("engine %q: capabilities.go: unknown parameter %q (known: %s)", c.Name, p, strings.Join(goParams, ", "))
		}
	}
	for name, r := range c.ClientOptions {
		if slices.Contains(resourceOptions, name) {
			bad("engine %q: client_options: %s sizes the engine's resources and is never client-settable", c.Name, name)
		}
		if r.Min != nil && r.Max != nil && *r.Min > *r.Max {
			bad("engine %q: client_options.%s: min %d > max %d", c.Name, name, *r.Min, *r.Max)
		}
	}
	return c, errors.Join(errs...)
}
