package pool

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
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

	// Options are set with setoption after every start (values as the
	// engine expects them: "64", "true", a combo value).
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
	// HealthInterval is how often an idle engine is pinged with isready; default 30s.
	HealthInterval time.Duration `yaml:"health_interval"`
	// Failures within FailureWindow mark the engine kind unavailable for
	// Cooldown; defaults 5, 1m and 30s.
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

// Capabilities says what an engine supports natively, so the session layer
// can emulate the rest. The defaults are safe for any USI engine.
type Capabilities struct {
	// Go lists the go parameters the engine handles: any of btime, wtime,
	// byoyomi, binc, winc, movestogo, depth, nodes, movetime, infinite,
	// ponder, mate, searchmoves. Default: the ones every Shogidokoro engine
	// knows: btime, wtime, byoyomi, infinite, ponder.
	Go []string `yaml:"go"`
	// CheckmateAnswer: the engine answers "go mate" with "checkmate".
	// Default false: mate requests answer notimplemented.
	CheckmateAnswer bool `yaml:"checkmate"`
}

// Supports reports whether the engine handles the go parameter natively.
func (c Capabilities) Supports(param string) bool { return slices.Contains(c.Go, param) }

// Timeouts bound each exchange with an engine.
type Timeouts struct {
	Start time.Duration `yaml:"start"` // start to usiok; default 10s
	Ready time.Duration `yaml:"ready"` // isready to readyok; default 10s (covers loading evaluation files)
	Stop  time.Duration `yaml:"stop"`  // stop to bestmove; default 3s
	Quit  time.Duration `yaml:"quit"`  // quit to exit, then kill; default 2s
}

var goParams = []string{"btime", "wtime", "byoyomi", "binc", "winc", "movestogo", "depth", "nodes", "movetime", "infinite", "ponder", "mate", "searchmoves"}

// resourceOptions are never client-settable: they size CPU and memory.
var resourceOptions = []string{"USI_Hash", "Hash", "Threads", "Thread"}

// withDefaults returns c with defaults filled in, or an error naming what is wrong.
func (c EngineConfig) withDefaults() (EngineConfig, error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Name == "" || strings.Trim(c.Name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != "" {
		bad("name %q: want letters, digits, '_', '.', '-'", c.Name)
	}
	if c.Path == "" {
		bad("engine %q: path is required", c.Name)
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
	def(&c.Timeouts.Start, 10*time.Second)
	def(&c.Timeouts.Ready, 10*time.Second)
	def(&c.Timeouts.Stop, 3*time.Second)
	def(&c.Timeouts.Quit, 2*time.Second)
	def(&c.HealthInterval, 30*time.Second)
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
	if c.Capabilities.Go == nil {
		c.Capabilities.Go = []string{"btime", "wtime", "byoyomi", "infinite", "ponder"}
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
