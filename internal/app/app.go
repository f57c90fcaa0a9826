// Package app wires usid together: the configuration file, the engine pool,
// the session service and the HTTP server, with a graceful drain. The usid
// command runs it; so does usid-bench, to measure the same server.
//
// A Main is used by one goroutine: Run, then Close.
package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.yaml.in/yaml/v3"

	"github.com/usid/usid"
	"github.com/usid/usid/broadcast"
	"github.com/usid/usid/evalcache"
	_ "github.com/usid/usid/game/builtin" // the games usid serves
	"github.com/usid/usid/match"
	"github.com/usid/usid/play"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/quota"
	"github.com/usid/usid/review"
	"github.com/usid/usid/server"
	"github.com/usid/usid/session"
	"github.com/usid/usid/web"
)

// DefaultListen is the address served when neither --addr nor listen says.
const DefaultListen = ":8080"

// DefaultShutdownGrace is server.shutdown_grace when the configuration sets none.
const DefaultShutdownGrace = 30 * time.Second

// Config is the configuration file (see usid.yaml at the repository's top).
type Config struct {
	Listen  string              `yaml:"listen"`
	Engines []pool.EngineConfig `yaml:"engines"`
	// ProfileDir caches what usid learned of each engine (package probe);
	// default: $XDG_CACHE_HOME/usid/profiles (~/.cache/usid/profiles).
	ProfileDir string `yaml:"profile_dir"`
	Session    struct {
		IdleRelease    time.Duration `yaml:"idle_release"`
		QueueTimeout   time.Duration `yaml:"queue_timeout"`
		AcquireTimeout time.Duration `yaml:"acquire_timeout"`
		MaxLease       time.Duration `yaml:"max_lease"`
		Caps           struct {
			MaxMoveTime time.Duration `yaml:"max_movetime"`
			MaxAnalysis time.Duration `yaml:"max_analysis"`
			MaxMateTime time.Duration `yaml:"max_mate_time"`
			MaxDepth    int           `yaml:"max_depth"`
			MaxNodes    int64         `yaml:"max_nodes"`
			MaxMultiPV  int           `yaml:"max_multipv"`
			MaxMoves    int           `yaml:"max_moves"`
		} `yaml:"caps"`
	} `yaml:"session"`
	// Games configures whole-game analysis (package review).
	Games struct {
		MaxPerClient int           `yaml:"max_per_client"`
		MaxJobs      int           `yaml:"max_jobs"`
		MaxRunning   int           `yaml:"max_running"`
		MaxParallel  int           `yaml:"max_parallel"`
		Keep         time.Duration `yaml:"keep"`
		MaxKept      int           `yaml:"max_kept"`
		// DefaultMoveTime is the time per position of a request without
		// limits (the board's default).
		DefaultMoveTime time.Duration `yaml:"default_movetime"`
		MaxKBClient     int64         `yaml:"max_kb_per_client"`
		MaxMB           int64         `yaml:"max_mb"`
		// FollowGrace is how long a followed job (the board's) runs on
		// with nobody reading it before it is cancelled.
		FollowGrace time.Duration `yaml:"follow_grace"`
		// Redis keeps the jobs there, shared by every usid using it (default:
		// access.redis); RedisPrefix starts their keys; Lease is how long
		// a job stays with an instance that stopped renewing it.
		Redis       string        `yaml:"redis"`
		RedisPrefix string        `yaml:"redis_prefix"`
		Lease       time.Duration `yaml:"lease"`
	} `yaml:"games"`
	// Play configures games against the engine (package play).
	Play struct {
		Grace         time.Duration `yaml:"grace"`
		Idle          time.Duration `yaml:"idle"`
		Keep          time.Duration `yaml:"keep"`
		MaxPerClient  int           `yaml:"max_per_client"`
		MaxPerNetwork int           `yaml:"max_per_network"`
		MaxGames      int           `yaml:"max_games"`
		MaxKept       int           `yaml:"max_kept"`
		MaxPlies      int           `yaml:"max_plies"`
		Lag           time.Duration `yaml:"lag"`
		EngineMargin  time.Duration `yaml:"engine_margin"`
		// Redis keeps the games there, shared by every usid using it
		// (default: access.redis): a play_resume on any instance takes the
		// game over; Lease is how long a game stays with an instance that
		// stopped renewing it.
		Redis       string        `yaml:"redis"`
		RedisPrefix string        `yaml:"redis_prefix"`
		Lease       time.Duration `yaml:"lease"`
	} `yaml:"play"`
	// Broadcast configures broadcasts: one live analysis, many viewers
	// (package broadcast).
	Broadcast struct {
		MaxPerClient         int           `yaml:"max_per_client"`
		MaxPerNetwork        int           `yaml:"max_per_network"`
		MaxBroadcasts        int           `yaml:"max_broadcasts"`
		MaxViewersPerClient  int           `yaml:"max_viewers_per_client"`
		MaxViewersPerNetwork int           `yaml:"max_viewers_per_network"`
		MaxViewers           int           `yaml:"max_viewers"`
		Keep                 time.Duration `yaml:"keep"`
		Idle                 time.Duration `yaml:"idle"`
		Redis                string        `yaml:"redis"`
		RedisPrefix          string        `yaml:"redis_prefix"`
		Lease                time.Duration `yaml:"lease"`
		Check                time.Duration `yaml:"check"`
	} `yaml:"broadcast"`
	// Matches configures engine matches (package match).
	Matches struct {
		MaxPerClient   int           `yaml:"max_per_client"`
		MaxMatches     int           `yaml:"max_matches"`
		MaxRunning     int           `yaml:"max_running"`
		MaxGames       int           `yaml:"max_games"`
		MaxConcurrency int           `yaml:"max_concurrency"`
		MaxOpenings    int           `yaml:"max_openings"`
		MaxPlies       int           `yaml:"max_plies"`
		MaxClock       time.Duration `yaml:"max_clock"`
		Keep           time.Duration `yaml:"keep"`
		MaxKept        int           `yaml:"max_kept"`
		Lag            time.Duration `yaml:"lag"`
		EngineMargin   time.Duration `yaml:"engine_margin"`
		// Redis keeps matches there, their games played by every usid
		// using it (default: access.redis); RedisPrefix starts their keys;
		// Lease is how long a game stays with an instance that stopped
		// renewing it before another plays it again.
		Redis       string        `yaml:"redis"`
		RedisPrefix string        `yaml:"redis_prefix"`
		Lease       time.Duration `yaml:"lease"`
	} `yaml:"matches"`
	Server struct {
		Origins       []string      `yaml:"origins"`
		Hosts         []string      `yaml:"hosts"`
		ShutdownGrace time.Duration `yaml:"shutdown_grace"`
		MaxBody       int64         `yaml:"max_body"`
		MaxMessage    int64         `yaml:"max_message"`
	} `yaml:"server"`
	Access struct {
		// KeysFile holds "name: key" lines; USID_API_KEYS ("name:key,...")
		// adds more. With anonymous false at least one key is required:
		// Run refuses to start a closed service without keys.
		KeysFile       string       `yaml:"keys_file"`
		Anonymous      *bool        `yaml:"anonymous"` // allow clients without a key (default true)
		TicketSecret   string       `yaml:"ticket_secret_file"`
		TrustedProxies []string     `yaml:"trusted_proxies"`
		MaxSessions    int          `yaml:"max_sessions"`
		MaxPerAddress  int          `yaml:"max_sessions_per_address"`
		MaxPerNetwork  int          `yaml:"max_sessions_per_network"`
		MaxClients     int          `yaml:"max_clients"`
		Keyed          server.Quota `yaml:"keyed"`
		AnonymousQuota server.Quota `yaml:"anonymous_quota"`
		// Redis, when set, keeps the engine-time balances there, so that
		// every usid sharing it enforces one budget per client; RedisPrefix
		// starts their keys.
		Redis       string `yaml:"redis"`
		RedisFile   string `yaml:"redis_url_file"` // the URL from a file (a Secret), when redis is ""
		RedisPrefix string `yaml:"redis_prefix"`
	} `yaml:"access"`
	Cache CacheConfig `yaml:"cache"`
}

// access builds the server's access rules: keys from the file and the
// environment, proxies, quotas.
func (c *Config) ServerAccess(env func(string) string) (*server.Access, error) {
	a := &server.Access{Keys: map[string]string{}, Anonymous: true, MaxSessions: c.Access.MaxSessions,
		MaxSessionsPerAddress: c.Access.MaxPerAddress, MaxSessionsPerNetwork: c.Access.MaxPerNetwork, MaxClients: c.Access.MaxClients,
		Keyed: c.Access.Keyed, AnonymousQuota: c.Access.AnonymousQuota}
	if c.Access.Anonymous != nil {
		a.Anonymous = *c.Access.Anonymous
	}
	add := func(src, name, key string) error {
		name, key = strings.TrimSpace(name), strings.TrimSpace(key)
		if name == "" || len(key) < 16 {
			return fmt.Errorf("%s: key %q: want a name and a key of at least 16 characters", src, name)
		}
		a.Keys[name] = key
		return nil
	}
	if f := c.Access.KeysFile; f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for i, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			name, key, ok := strings.Cut(line, ":")
			if !ok {
				return nil, fmt.Errorf("%s:%d: want \"name: key\"", f, i+1)
			}
			if err := add(f, name, key); err != nil {
				return nil, err
			}
		}
	}
	if v := strings.TrimSpace(env("USID_API_KEYS")); v != "" {
		for _, kv := range strings.Split(v, ",") {
			name, key, _ := strings.Cut(kv, ":")
			if err := add("USID_API_KEYS", name, key); err != nil {
				return nil, err
			}
		}
	}
	if f := c.Access.TicketSecret; f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		a.TicketSecret = bytes.TrimSpace(b)
	}
	for _, p := range c.Access.TrustedProxies {
		pfx, err := netip.ParsePrefix(p)
		if err != nil {
			return nil, fmt.Errorf("access.trusted_proxies: %w", err)
		}
		a.TrustedProxies = append(a.TrustedProxies, pfx)
	}
	if err := a.Check(); err != nil {
		return nil, err
	}
	return a, nil
}

// ParseConfig reads a configuration from layers, each laid over the ones
// before it: a key a layer sets replaces the earlier value (a list as a
// whole), a key it leaves out keeps it; but engines add up (see
// layEngines): an entry adds an engine, or lays its keys over the earlier
// layer's engine of its name, and disabled: true removes that engine.
// cmd/usid passes the built-in usid.yaml, then the --config file, so a
// file holding only access: or only its own engine works. Every layer is
// read strictly: an unknown key is an error naming its line, its path and
// the keys valid there (see checkKeys), so a typo does not silently fall
// back to a default. An engine path "@self" is this binary (SelfPath).
func ParseConfig(layers ...[]byte) (*Config, error) {
	var c Config
	for i, b := range layers {
		what := "config"
		if len(layers) > 1 && i == 0 {
			what = "built-in config"
		}
		if err := decodeLayer(b, &c); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	c.Engines = slices.DeleteFunc(c.Engines, func(e pool.EngineConfig) bool { return e.Disabled })
	if err := resolveSelf(c.Engines); err != nil {
		return nil, err
	}
	if c.Server.ShutdownGrace <= 0 {
		c.Server.ShutdownGrace = DefaultShutdownGrace
	}
	return &c, nil
}

// decodeLayer lays one YAML document over c: its keys are checked first,
// then it is decoded (still strictly, so that nothing checkKeys might miss
// is taken silently).
func decodeLayer(b []byte, c *Config) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return err
	}
	if len(doc.Content) == 0 {
		return nil // empty, or only comments
	}
	if err := checkKeys(&doc, reflect.TypeFor[Config]()); err != nil {
		return err
	}
	before := c.Engines
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if list := mappingValue(doc.Content[0], "engines"); list != nil {
		engines, err := layEngines(before, list)
		if err != nil {
			return err
		}
		c.Engines = engines
	}
	return nil
}

// mappingValue is the value of key in mapping n, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// layEngines lays a layer's engines list over the engines of the layers
// before it (issue 37: a file that added stockfish lost the built-in
// shogi engines, and one that listed fairy again lost its client_options,
// and so the play panel's levels). An entry whose name is an earlier
// engine's sets only the keys it has: a key set replaces that engine's
// value (a list or a map, such as options and client_options, as a whole),
// a mapping of keys (timeouts, capabilities) is laid key by key, and the
// rest stays; disabled: true removes it (ParseConfig drops it). Any other
// entry is a new engine, added after the earlier ones; an entry that
// disables an engine no earlier layer has is refused, so that a misspelt
// name does not leave the engine serving.
func layEngines(before []pool.EngineConfig, list *yaml.Node) ([]pool.EngineConfig, error) {
	out := slices.Clone(before)
	laid := make([]bool, len(before))
	for _, n := range list.Content {
		var e pool.EngineConfig
		if err := n.Decode(&e); err != nil {
			return nil, err
		}
		i := slices.IndexFunc(out[:len(before)], func(b pool.EngineConfig) bool { return b.Name == e.Name })
		if i < 0 || laid[i] || n.Kind != yaml.MappingNode {
			if e.Disabled && e.Path == "" {
				return nil, fmt.Errorf("line %d: engine %q is disabled, but no engine of that name is configured before", n.Line, e.Name)
			}
			out = append(out, e)
			continue
		}
		laid[i] = true
		over := out[i]
		v := reflect.ValueOf(&over).Elem()
		for k := 0; k+1 < len(n.Content); k += 2 {
			f := fieldByKey(v, n.Content[k].Value)
			if kind := f.Kind(); kind == reflect.Map || kind == reflect.Slice {
				f.Set(reflect.Zero(f.Type())) // replaced, not merged
			}
		}
		if err := n.Decode(&over); err != nil {
			return nil, err
		}
		out[i] = over
	}
	return out, nil
}

// fieldByKey is struct v's field whose yaml key is key (v holds no inline
// structs: pool.EngineConfig).
func fieldByKey(v reflect.Value, key string) reflect.Value {
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		if name == key {
			return v.Field(i)
		}
	}
	return reflect.Value{}
}

// Main is the usid service: configuration, pool, server, listener. Tests
// run it on 127.0.0.1:0.
type Main struct {
	Config *Config
	Addr   string // --addr, overriding Config.Listen
	Logger *slog.Logger

	pool       *pool.Pool
	cache      *evalcache.Cache // nil when cache.enabled is false
	quotas     io.Closer        // the Redis budget store, if any
	playRedis  *play.RedisStore // the games' Redis store, if any
	review     *review.Manager
	play       *play.Manager
	broadcasts *broadcast.Manager
	matches    *match.Manager
	srv        atomic.Pointer[server.Server] // for the broadcasts' callers
	server     *server.Server
	http       *http.Server
	served     chan error // Serve's result, taken by Close
	failed     chan error // Serve's error when it failed on its own
}

// Run starts the engines and the HTTP server and returns once it listens.
func (m *Main) Run() error {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	c := m.Config
	// The access rules first: a configuration that cannot be served as
	// written (a closed service without keys) fails before any engine starts.
	access, err := c.ServerAccess(os.Getenv)
	if err != nil {
		return err
	}
	if err := m.openBudgets(access, reg); err != nil {
		return err
	}
	popts := pool.Options{Logger: m.Logger.With("component", "pool"), Registerer: reg, ProfileDir: m.Config.ProfileDir}
	if r, ok := access.Budgets.(*quota.Redis); ok {
		// The budgets' Redis also carries the fair queue's record, so that
		// a client spread over instances is ordered by all it used.
		popts.Usage = r.UsageRecord("")
	}
	p, err := pool.New(m.Config.Engines, popts)
	if err != nil {
		m.closeBudgets()
		return err
	}
	m.pool = p
	if m.cache, err = openCache(&c.Cache, reg, m.Logger.With("component", "evalcache")); err != nil {
		p.Close(context.Background())
		return err
	}
	svc := session.NewService(session.Config{
		Cache: m.cache,
		Pool:  p, IdleRelease: c.Session.IdleRelease,
		QueueTimeout: c.Session.QueueTimeout, AcquireTimeout: c.Session.AcquireTimeout, MaxLease: c.Session.MaxLease,
		Caps: session.Caps{
			MaxMoveTime: c.Session.Caps.MaxMoveTime, MaxAnalysis: c.Session.Caps.MaxAnalysis, MaxMateTime: c.Session.Caps.MaxMateTime,
			MaxDepth: c.Session.Caps.MaxDepth, MaxNodes: c.Session.Caps.MaxNodes, MaxMultiPV: c.Session.Caps.MaxMultiPV, MaxMoves: c.Session.Caps.MaxMoves,
		},
		Logger: m.Logger.With("component", "session"),
	})
	gamesRedis, err := m.gamesRedis()
	if err != nil {
		p.Close(context.Background())
		m.closeCache()
		m.closeBudgets()
		return err
	}
	m.review, err = review.Open(review.Config{
		Service: svc, MaxPerClient: c.Games.MaxPerClient, MaxJobs: c.Games.MaxJobs, MaxRunning: c.Games.MaxRunning,
		MaxParallel: c.Games.MaxParallel, Keep: c.Games.Keep, MaxKept: c.Games.MaxKept,
		DefaultMoveTime: c.Games.DefaultMoveTime, FollowGrace: c.Games.FollowGrace,
		MaxBytesPerClient: c.Games.MaxKBClient << 10, MaxBytes: c.Games.MaxMB << 20,
		Redis:      gamesRedis,
		Registerer: reg, Logger: m.Logger.With("component", "games"),
	})
	if err != nil {
		p.Close(context.Background())
		m.closeCache()
		m.closeBudgets()
		return fmt.Errorf("games.redis: %w", err)
	}
	playStore, err := m.playStore()
	if err != nil {
		m.review.Close(context.Background())
		p.Close(context.Background())
		m.closeCache()
		m.closeBudgets()
		return fmt.Errorf("play.redis: %w", err)
	}
	m.play = play.New(play.Config{Service: svc, Store: playStore, Grace: c.Play.Grace, Idle: c.Play.Idle, Keep: c.Play.Keep,
		MaxPerClient: c.Play.MaxPerClient, MaxPerNetwork: c.Play.MaxPerNetwork, MaxGames: c.Play.MaxGames, MaxKept: c.Play.MaxKept, MaxPlies: c.Play.MaxPlies,
		Lag: c.Play.Lag, EngineMargin: c.Play.EngineMargin, Logger: m.Logger.With("component", "play")})
	bcRedis, err := m.orAccessRedis(c.Broadcast.Redis)
	if err == nil {
		bcc := broadcast.Config{Service: svc, MaxPerClient: c.Broadcast.MaxPerClient, MaxPerNetwork: c.Broadcast.MaxPerNetwork, MaxBroadcasts: c.Broadcast.MaxBroadcasts,
			MaxViewersPerClient: c.Broadcast.MaxViewersPerClient, MaxViewersPerNetwork: c.Broadcast.MaxViewersPerNetwork, MaxViewers: c.Broadcast.MaxViewers, Keep: c.Broadcast.Keep, Idle: c.Broadcast.Idle,
			Lease: c.Broadcast.Lease, Check: c.Broadcast.Check, Logger: m.Logger.With("component", "broadcast")}
		if bcRedis != "" {
			bcc.Redis = &broadcast.RedisConfig{URL: bcRedis, Prefix: c.Broadcast.RedisPrefix}
		}
		// Searches are charged to their owners, on whichever instance
		// runs them: the server's callers, once it exists.
		bcc.Callers = func(id string) session.Caller {
			if s := m.srv.Load(); s != nil {
				return s.CallerFor(id)
			}
			return session.Caller{Client: id}
		}
		m.broadcasts, err = broadcast.New(bcc)
	}
	if err != nil {
		m.review.Close(context.Background())
		m.play.Close(context.Background())
		p.Close(context.Background())
		m.closeCache()
		m.closeBudgets()
		return fmt.Errorf("broadcast.redis: %w", err)
	}
	mc := c.Matches
	mcfg := match.Config{Service: svc, MaxPerClient: mc.MaxPerClient, MaxMatches: mc.MaxMatches, MaxRunning: mc.MaxRunning,
		MaxGames: mc.MaxGames, MaxConcurrency: mc.MaxConcurrency, MaxOpenings: mc.MaxOpenings, MaxPlies: mc.MaxPlies, MaxClock: mc.MaxClock,
		Keep: mc.Keep, MaxKept: mc.MaxKept, Lag: mc.Lag, EngineMargin: mc.EngineMargin, Logger: m.Logger.With("component", "match")}
	mcfg.Redis, err = m.matchesRedis()
	if err == nil {
		m.matches, err = match.Open(mcfg)
	}
	if err != nil {
		m.broadcasts.Close(context.Background())
		m.review.Close(context.Background())
		m.play.Close(context.Background())
		p.Close(context.Background())
		m.closeCache()
		m.closeBudgets()
		return fmt.Errorf("matches.redis: %w", err)
	}
	m.server = server.New(server.Config{
		Broadcasts: m.broadcasts, Matches: m.matches,
		Service: svc, Pool: p, Review: m.review, Play: m.play, Gatherer: reg, Registerer: reg, OriginPatterns: c.Server.Origins, Hosts: c.Server.Hosts,
		Web: web.Handler(), OpenAPI: usid.OpenAPI, Logger: m.Logger.With("component", "server"),
		Access: access, MaxBody: c.Server.MaxBody, MaxMessage: c.Server.MaxMessage,
	})
	m.review.SetCallers(m.server.CallerFor)  // jobs taken over are charged to their owners
	m.matches.SetCallers(m.server.CallerFor) // so are match games played on this pod
	m.srv.Store(m.server)
	addr := m.Addr
	if addr == "" {
		addr = c.Listen
	}
	if addr == "" {
		addr = DefaultListen
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		m.review.Close(context.Background())
		m.play.Close(context.Background())
		p.Close(context.Background())
		m.closeCache()
		m.closeBudgets()
		return err
	}
	m.http = m.server.HTTPServer()
	m.http.ErrorLog = slog.NewLogLogger(m.Logger.Handler(), slog.LevelWarn)
	m.served, m.failed = make(chan error, 1), make(chan error, 1)
	go func() {
		err := m.http.Serve(ln)
		if !errors.Is(err, http.ErrServerClosed) {
			m.failed <- err
		}
		m.served <- err
	}()
	m.Logger.Info("usid listening", "addr", ln.Addr().String(), "engines", p.Engines())
	return nil
}

// Served reports the HTTP server's end if it fails before Close; Close
// still has to be called.
func (m *Main) Served() <-chan error { return m.failed }

// Close drains: /readyz fails at once, new work is refused, searches in
// flight finish and WebSocket clients get a going-away close, all within
// ctx; then the HTTP server stops and every engine gets quit (and is killed
// if it lingers).
func (m *Main) Close(ctx context.Context) error {
	// Game jobs drain alongside the server: the positions being analysed
	// finish within the grace, then each job ends cancelled, and a
	// WebSocket client following one gets its terminal event before the
	// going-away close.
	gamesDrained := make(chan struct{})
	go func() {
		m.review.Close(ctx)
		m.play.Close(ctx) // games against the engine end aborted
		m.broadcasts.Close(ctx)
		m.matches.Close() // matches end cancelled (in Redis: their games go to other instances), their engines given back
		close(gamesDrained)
	}()
	m.server.Drain(ctx)
	<-gamesDrained
	err := m.http.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		m.http.Close()
	}
	perr := m.pool.Close(ctx)
	m.closeCache()
	m.closeBudgets()
	if m.playRedis != nil {
		m.playRedis.Close()
	}
	if e := <-m.served; !errors.Is(e, http.ErrServerClosed) {
		err = errors.Join(err, e)
	}
	return errors.Join(err, perr)
}
