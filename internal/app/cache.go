package app

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/usid/usid/evalcache"
	"github.com/usid/usid/match"
	"github.com/usid/usid/play"
	"github.com/usid/usid/quota"
	"github.com/usid/usid/review"
	"github.com/usid/usid/server"
)

// CacheConfig is the cache: section of usid.yaml (documented there).
type CacheConfig struct {
	Enabled     *bool         `yaml:"enabled"`
	MaxEntries  int           `yaml:"max_entries"`
	MaxMB       int64         `yaml:"max_mb"`
	File        string        `yaml:"file"`
	Redis       string        `yaml:"redis"`
	RedisFile   string        `yaml:"redis_url_file"` // the URL from a file (a Secret), when redis is ""
	RedisPrefix string        `yaml:"redis_prefix"`
	RedisTTL    time.Duration `yaml:"redis_ttl"`
	Timeout     time.Duration `yaml:"timeout"`
}

// openCache opens the evaluation cache, or returns nil when it is off. A
// Redis that is down does not stop usid: the cache retries it and searches
// meanwhile. A damaged file does not either (the cache moves it aside and
// starts a new one); a file that cannot be made or is locked by another
// process does (a configuration error, like a missing engine binary).
func openCache(c *CacheConfig, reg prometheus.Registerer, log *slog.Logger) (*evalcache.Cache, error) {
	if c.Enabled != nil && !*c.Enabled {
		return nil, nil
	}
	url, err := redisURL(c.Redis, c.RedisFile)
	if err != nil {
		return nil, fmt.Errorf("cache.redis_url_file: %w", err)
	}
	ec, err := evalcache.New(evalcache.Config{
		MaxEntries: c.MaxEntries, MaxBytes: c.MaxMB << 20, File: c.File,
		RedisURL: url, RedisPrefix: c.RedisPrefix, TTL: c.RedisTTL, Timeout: c.Timeout, Logger: log,
	}, reg)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	log.Info("evaluation cache", "tiers", ec.Describe())
	return ec, nil
}

func (m *Main) closeCache() {
	if m.cache != nil {
		if err := m.cache.Close(); err != nil {
			m.Logger.Warn("closing the evaluation cache", "err", err)
		}
		m.cache = nil
	}
}

// openBudgets sets where engine-time balances live: Redis when
// access.redis is set (one budget over every usid sharing it), else the
// server's own memory.
func (m *Main) openBudgets(a *server.Access, reg prometheus.Registerer) error {
	c := m.Config.Access
	url, err := redisURL(c.Redis, c.RedisFile)
	if err != nil {
		return fmt.Errorf("access.redis_url_file: %w", err)
	}
	if url == "" {
		return nil
	}
	r, err := quota.NewRedis(quota.RedisConfig{URL: url, Prefix: c.RedisPrefix, MaxClients: c.MaxClients,
		Logger: m.Logger.With("component", "quota"), Registerer: reg})
	if err != nil {
		return fmt.Errorf("access.redis: %w", err)
	}
	a.Budgets, m.quotas = r, r
	return nil
}

// orAccessRedis is own, a section's Redis URL, or where it is unset the
// budgets' (access.redis, or the file access.redis_url_file names); ""
// keeps the section's state in this process.
func (m *Main) orAccessRedis(own string) (string, error) {
	if own != "" {
		return own, nil
	}
	url, err := redisURL(m.Config.Access.Redis, m.Config.Access.RedisFile)
	if err != nil {
		return "", fmt.Errorf("access.redis_url_file: %w", err)
	}
	return url, nil
}

// gamesRedis is where game jobs live: games.redis, else access.redis
// (the budgets' Redis); nil keeps them in this process.
func (m *Main) gamesRedis() (*review.RedisConfig, error) {
	c := m.Config
	url, err := m.orAccessRedis(c.Games.Redis)
	if url == "" || err != nil {
		return nil, err
	}
	return &review.RedisConfig{URL: url, Prefix: c.Games.RedisPrefix, Lease: c.Games.Lease}, nil
}

// matchesRedis is where matches live: matches.redis, else access.redis;
// nil keeps them in this process.
func (m *Main) matchesRedis() (*match.RedisConfig, error) {
	c := m.Config
	url, err := m.orAccessRedis(c.Matches.Redis)
	if url == "" || err != nil {
		return nil, err
	}
	return &match.RedisConfig{URL: url, Prefix: c.Matches.RedisPrefix, Lease: c.Matches.Lease}, nil
}

// playStore is where games against the engine live: play.redis, else
// access.redis; nil keeps them in this process.
func (m *Main) playStore() (play.Store, error) {
	c := m.Config
	url, err := m.orAccessRedis(c.Play.Redis)
	if url == "" || err != nil {
		return nil, err
	}
	s, err := play.NewRedisStore(play.RedisConfig{URL: url, Prefix: c.Play.RedisPrefix, Lease: c.Play.Lease})
	if err != nil {
		return nil, err
	}
	m.playRedis = s
	return s, nil
}

func (m *Main) closeBudgets() {
	if m.quotas != nil {
		if err := m.quotas.Close(); err != nil {
			m.Logger.Warn("closing the engine-time budgets' Redis", "err", err)
		}
		m.quotas = nil
	}
}

// redisURL is a Redis URL given in the configuration, or else read from
// file (one line: a mounted Secret, so that a password stays out of the
// ConfigMap); "" when neither is set.
func redisURL(url, file string) (string, error) {
	if url != "" || file == "" {
		return url, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	url = strings.TrimSpace(string(b))
	if url == "" {
		return "", fmt.Errorf("%s is empty", file)
	}
	return url, nil
}
