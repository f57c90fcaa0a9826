package play

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// Public is what the player sees of a game: the play event's "play".
type Public struct {
	ID     string `json:"game"`
	Engine string `json:"engine"`
	Human  string `json:"human"` // "b" or "w"
	// Rules is the game's name (package game: "shogi", "chess"; "" in a
	// state stored before the games had one seam: shogi, or chess where
	// FEN is set).
	Rules   string `json:"rules,omitempty"`
	SFEN    string `json:"sfen,omitempty"`    // the start (shogi, and every game whose positions are not FENs)
	FEN     string `json:"fen,omitempty"`     // the start (chess)
	Variant string `json:"variant,omitempty"` // chess960
	// First is the side to move at the start ("b" or "w"; "" in a state
	// stored before it was kept).
	First    string `json:"first,omitempty"`
	Handicap string `json:"handicap,omitempty"`
	// Moves from the start; the first Pre came with the position and were
	// not played in this game (no time).
	Moves    []string `json:"moves"`
	MovesKIF []string `json:"moves_kif,omitempty"` // shogi
	MovesSAN []string `json:"moves_san,omitempty"` // chess
	// TimesMS is each move's charge to its side's clock: from its turn's
	// start (the other side's move, or the engine's search getting a
	// process) to the move's arrival at the server. ClocksMS is the main
	// time its side had left after it (the increment and a new period of
	// moves added); both 0 for the first Pre. A record's times are these.
	TimesMS  []int64 `json:"times_ms"`
	ClocksMS []int64 `json:"clocks_ms,omitempty"`
	Pre      int     `json:"pre"`
	TC       Sides   `json:"time_control"`
	Level    *Level  `json:"level,omitempty"`
	Ponder   bool    `json:"ponder"`
	Status   string  `json:"status"` // playing or ended
	Result   *Result `json:"result,omitempty"`
}

// Sides is a time control per side.
type Sides struct {
	B TimeControl `json:"b"`
	W TimeControl `json:"w"`
}

func (s *Sides) of(c int) TimeControl {
	if c == 0 {
		return s.B
	}
	return s.W
}

// Result is how a game ended.
type Result struct {
	Winner string `json:"winner"` // "b", "w", or "" (draw, aborted)
	// Reason: resign, checkmate, time, repetition, perpetual_check,
	// declaration, illegal_declaration, max_moves, abandoned, aborted; in
	// chess also stalemate, insufficient_material, fifty_moves
	// (repetition: the same position a third time).
	Reason string `json:"reason"`
	// End is the record's ending as POST /v1/records/export takes it: KIF's
	// word (shogi) or the PGN result (chess: 1-0, 0-1, 1/2-1/2, *).
	End    string `json:"end"`
	Detail string `json:"detail,omitempty"`
	// Comment is the record's comment about the ending where End alone
	// cannot say it (a resignation on the other side's turn).
	Comment string `json:"comment,omitempty"`
}

// Level is the engine's strength: one of the engine's levels by ID (GET
// /v1/engines: its Options set, at most its MoveTimeMS per move and Depth;
// the game keeps them), a client-settable option (a Skill Level) set to
// Value, or at most MoveTimeMS per move (the engine is told a byoyomi that
// short, while its real clock runs as usual) and Depth (the move's search
// stops there: session.Request.Depth), Random percent of its moves drawn
// at random.
type Level struct {
	ID string `json:"id,omitempty"`
	// Options are the level ID's, as the server set them (a client names
	// the level only).
	Options    map[string]string `json:"options,omitempty"`
	Option     string            `json:"option,omitempty"`
	Value      string            `json:"value,omitempty"`
	MoveTimeMS int64             `json:"movetime_ms,omitempty"`
	Depth      int               `json:"depth,omitempty"`
	Random     int               `json:"random,omitempty"` // percent of moves drawn at random (session.Request.Random)
}

// State is a game as a Store keeps it: enough for any process to carry it
// on (the clocks as they stood when the turn began, and when that was).
type State struct {
	Public
	Owner string `json:"owner"`
	// Networks are the owner's networks (session.Caller.Networks),
	// counted by the bounds on games per network.
	Networks  []string  `json:"networks,omitempty"`
	Main      [2]int64  `json:"main_ms"` // main time left at TurnStart, Black's and White's
	Played    [2]int    `json:"played"`  // moves each side played in this game (TimeControl.Moves)
	TurnStart time.Time `json:"turn_start"`
	// EngineWaits is when the engine's search began to wait for a free
	// process, on its turn; zero otherwise. Its clock stands meanwhile.
	EngineWaits time.Time `json:"engine_waits,omitzero"`
	Ended       time.Time `json:"ended,omitzero"`
}

// clone is a deep copy of st (through its JSON, as a store keeps it).
func (st *State) clone() *State {
	b, _ := json.Marshal(st)
	var c State
	json.Unmarshal(b, &c)
	return &c
}

// ClockView is the clocks at the moment an event was made: the side
// Running's clock runs on from there (the page counts it down until the
// next event).
type ClockView struct {
	B SideClock `json:"b"`
	W SideClock `json:"w"`
	// Running: "b", "w", or "" once ended or while the engine waits for a
	// free process (its clock stands then).
	Running string `json:"running,omitempty"`
}

// stateView is the play event's payload.
type stateView struct {
	Public
	Clock ClockView `json:"clock"`
}

// Store keeps game states. The memory store serves one process; a Shared
// one (RedisStore) lets another process take a game over (see docs/operations.md).
// Implementations are safe for concurrent use.
type Store interface {
	Save(ctx context.Context, st *State) error
	Load(ctx context.Context, id string) (*State, bool, error)
	Delete(ctx context.Context, id string) error
}

// MemoryStore is the in-process Store; the Manager bounds what it holds.
type MemoryStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{m: map[string][]byte{}} }

// Save keeps st as JSON, as a shared store would.
func (s *MemoryStore) Save(_ context.Context, st *State) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.m[st.ID] = b
	s.mu.Unlock()
	return nil
}

// Load returns the state saved under id.
func (s *MemoryStore) Load(_ context.Context, id string) (*State, bool, error) {
	s.mu.Lock()
	b, ok := s.m[id]
	s.mu.Unlock()
	if !ok {
		return nil, false, nil
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, false, err
	}
	return &st, true, nil
}

// Delete forgets id.
func (s *MemoryStore) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	delete(s.m, id)
	s.mu.Unlock()
	return nil
}

// Len is how many states the store holds (for tests of the bounds).
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// Caps are the level's depth cap and random share as a go request takes
// them (session.Request.Depth and Random), nil where it has none.
func (l *Level) Caps() (depth, random *int) {
	if l.Depth > 0 {
		d := l.Depth
		depth = &d
	}
	if l.Random > 0 {
		r := l.Random
		random = &r
	}
	return depth, random
}
