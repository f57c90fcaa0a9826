package play

import (
	"context"
	"slices"
	"strings"

	"github.com/usid/usid/session"
)

// Summary is one game in progress as its player's list shows it (GET
// /v1/play/games): enough to tell the games apart and to resume or resign
// one (play_resume, play_resign name it by ID).
type Summary struct {
	ID     string `json:"game"`
	Rules  string `json:"rules"`  // the game's name: shogi, chess, othello
	Engine string `json:"engine"` // the engine's configured name
	Human  string `json:"human"`  // the player's side: "b" or "w"
	Plies  int    `json:"plies"`  // moves from the start, those given with it included
	Turn   string `json:"turn"`   // the side to move: "b" or "w"
}

// Owned is the optional facet of a Shared store listing a client's games
// in progress on every instance (RedisStore).
type Owned interface {
	Owned(ctx context.Context, client string) ([]string, error)
}

// Playing lists client's games in progress: those this instance drives
// and, with a shared store that lists them, those of every other instance
// (their player left them on a tab that was closed, or on another pod).
// They hold the client's slots (Config.MaxPerClient) until they end.
func (m *Manager) Playing(ctx context.Context, client string) ([]Summary, *session.Error) {
	m.mu.Lock()
	var mine []*game
	for _, g := range m.games {
		if g.owner == client {
			mine = append(mine, g)
		}
	}
	m.mu.Unlock()
	out := []Summary{}
	seen := map[string]bool{}
	for _, g := range mine {
		// This instance's own state of a game it drives is the latest (an
		// ended game's end reaches the shared store a moment later).
		g.mu.Lock()
		if g.st.Status == statusPlaying {
			out = append(out, summaryOf(&g.st))
		}
		seen[g.st.ID] = true
		g.mu.Unlock()
	}
	if o, ok := m.cfg.Store.(Owned); ok && m.shared != nil {
		ids, err := o.Owned(ctx, client)
		if err != nil {
			m.cfg.Logger.Warn("games in progress not listed", "err", err)
			return nil, errStore()
		}
		for _, id := range ids {
			if seen[id] {
				continue
			}
			st, ok, err := m.cfg.Store.Load(ctx, id)
			if err != nil {
				m.cfg.Logger.Warn("game in progress not read", "game", id, "err", err)
				return nil, errStore()
			}
			if ok && st.Owner == client && st.Status == statusPlaying {
				out = append(out, summaryOf(st))
			}
		}
	}
	// A stable order for a page's list: by id (random, but the same on
	// every call).
	slices.SortFunc(out, func(a, b Summary) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func summaryOf(st *State) Summary {
	rules := st.Rules
	if rules == "" { // stored before the games had one seam
		rules = "shogi"
		if st.FEN != "" {
			rules = "chess"
		}
	}
	return Summary{ID: st.ID, Rules: rules, Engine: st.Engine, Human: st.Human, Plies: len(st.Moves), Turn: colorName(sideToMove(st))}
}

func errStore() *session.Error {
	return newError(session.CodeUnavailable, "the games' store failed; retry")
}
