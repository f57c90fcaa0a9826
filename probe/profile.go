// Package probe finds out how a USI engine behaves, the way a careful GUI
// learns an engine it has never seen: which go parameters it honours and
// how, whether it answers go mate with checkmate and still searches normally
// afterwards, whether it only solves mates, what it calls its MultiPV, hash
// and ponder options, whether its info lines carry depth and nodes, what
// an isready costs it, and the side its scores are from. The findings are a Profile, kept on disk by the
// engine's identity so that a restart does not probe again.
//
// Run drives a spare engine process that its caller starts (and restarts,
// when a probe makes the engine exit); it never touches an engine that serves
// clients (though its last engine may go on to serve: Config.Keep).
// Nothing here knows any engine by name.
//
// # Concurrency and ownership
//
// Run owns the engines its Start function returns and closes each of them
// before it returns, but the one it gives to Config.Keep. A Profile is a value: once returned it is not changed,
// and it is safe to read from many goroutines. Load and Save may be called
// concurrently for different identities.
package probe

import (
	"slices"
	"time"

	"github.com/usid/usid/game"
)

// How an engine takes a go parameter.
const (
	Native      = "native"      // sent to the engine, which honours it
	Emulated    = "emulated"    // usid enforces it itself (go infinite, then stop)
	Unsupported = "unsupported" // neither: requests that need it are refused
)

// Where a fact came from.
const (
	SourceProbed     = "probed"     // measured on the engine by Run
	SourceConfigured = "configured" // the operator's capabilities override
	SourceDefault    = "default"    // what every USI engine is known to do
	SourceObserved   = "observed"   // seen while the engine served (a native limit it overshot)
)

// What to do with an engine after a mate search.
const (
	AfterMateOK      = "ok"      // it searches normally afterwards
	AfterMateRecycle = "recycle" // it does not: replace it after each mate search
)

// Conversation steps that the probe found to make an engine exit or hang
// (Profile.Avoid); usid never takes them with that engine.
const (
	// isready at the start of a new game, after gameover: usid then sends
	// no isready after the first.
	AvoidReadyAfterGameOver = "isready after gameover"
	// "position startpos moves ..." after a "position sfen ...": usid then
	// writes the start position as its SFEN.
	AvoidStartposAfterSFEN = "position startpos after position sfen"
)

// Version is the probe's format; a profile of another version is probed
// again. 2: the GUIs' order (one isready per game), Avoid, Observed. 3:
// ScoreSide. 4: a USI-X engine's depth and movetime tried (before, taken
// as emulated untried). 5: othello's decided positions decided for an
// engine that searches (before, usid's own engine's score side was unknown).
const Version = 5

// The side an engine's scores are from (Profile.ScoreSide). USI, UCI and
// USI-X score from the side to move; engines seen do otherwise.
const (
	ScoreSideToMove = "side_to_move" // the protocols' norm
	ScoreSideOther  = "other_side"   // the side that just moved
	ScoreSideBlack  = "black"        // always Black's (game.Black: sente, chess's and othello's Black)
	ScoreSideWhite  = "white"        // always White's
	// ScoreSideUnknown: the probe could not tell (no scores, or none clear
	// enough); usid takes the protocol's norm.
	ScoreSideUnknown = "unknown"
)

// Limit parameters the probe measures; the clock parameters (btime, wtime,
// byoyomi) plus infinite and ponder are Shogidokoro's core, which every USI
// engine takes.
var (
	measured = []string{"depth", "nodes", "movetime", "binc"}
	core     = []string{"btime", "wtime", "byoyomi", "infinite", "ponder"}
)

// Profile is what usid knows about one engine. Sources says, for each fact
// (a go parameter's name, or "checkmate", "after_mate", "mate_only",
// "multipv_option", "hash_option", "ponder_option", "score_side",
// "reports_depth", "reports_nodes", "isready", and each Avoid... step), where it came from; Notes says why, for the
// facts a probe decided.
type Profile struct {
	Version  int      `json:"version"`
	Identity Identity `json:"identity"`
	// Protocol is the dialect the engine speaks ("usi", "uci"; "" in
	// profiles from before UCI: usi); it decides the engine's game (UCI:
	// chess).
	Protocol string `json:"protocol,omitempty"`
	// Variants are the variants it advertises (UCI_Variant's values, as
	// fairy-stockfish has them); Chess960: it advertises UCI_Chess960.
	Variants []string `json:"variants,omitempty"`
	Chess960 bool     `json:"chess960,omitempty"`

	// Go maps each go parameter to Native, Emulated or Unsupported. winc
	// follows binc.
	Go map[string]string `json:"go"`
	// Checkmate: the engine answers "go mate" with a checkmate line.
	Checkmate bool `json:"checkmate"`
	// AfterMate is AfterMateOK or AfterMateRecycle.
	AfterMate string `json:"after_mate"`
	// MateOnly: the engine solves mates but does not analyse (a plain go
	// gets a checkmate, a resignation or nothing useful).
	MateOnly bool `json:"mate_only"`

	MultiPVOption string `json:"multipv_option,omitempty"` // "" when it has none
	HashOption    string `json:"hash_option"`
	PonderOption  string `json:"ponder_option"`

	// ScoreSide is the side the engine's scores are from (ScoreSide...
	// constants), learned from two positions one side has clearly won, one
	// with each side to move. usid turns every score to the side to move
	// (ScoresFlipped) before anything reads it.
	ScoreSide string `json:"score_side"`

	ReportsDepth bool  `json:"reports_depth"`
	ReportsNodes bool  `json:"reports_nodes"`
	NPS          int64 `json:"nps,omitempty"` // seen in the baseline search

	// ReadyFirstMS is the first isready after the options (loading files),
	// ReadyAgainMS the one at the start of the next game, after gameover
	// (the only place GUIs send another). ReadyBetweenLeases says whether
	// isready is cheap enough to send when a lease ends a game, and safe:
	// false when the engine exits or hangs on it.
	ReadyFirstMS       int64 `json:"isready_first_ms"`
	ReadyAgainMS       int64 `json:"isready_again_ms"`
	ReadyBetweenLeases bool  `json:"isready_between_leases"`

	// Avoid lists the conversation steps (the Avoid... constants) that made
	// the engine exit or hang while probing; Notes says how, in the engine's
	// own words where it left any.
	Avoid []string `json:"avoid,omitempty"`

	Sources map[string]string `json:"sources"`
	Notes   map[string]string `json:"notes,omitempty"`

	ProbedAt  time.Time `json:"probed_at,omitzero"`
	ProbeTook Millis    `json:"probe_ms,omitempty"`
}

// Millis is a duration shown in whole milliseconds.
type Millis int64

// Identity is what makes two engines the same for the profile cache.
type Identity struct {
	Path    string    `json:"path"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
	Name    string    `json:"id_name"` // its "id name"
	Author  string    `json:"id_author,omitempty"`
}

// Game is the name of the game the engine plays: the registered game
// (package game) of its dialect, the default game when none says.
func (p *Profile) Game() string {
	if p != nil {
		if g := game.ForDialect(p.Protocol); g != nil {
			return g.Name()
		}
	}
	if g := game.Default(); g != nil {
		return g.Name()
	}
	return ""
}

// Goes reports how the engine takes go parameter param.
func (p *Profile) Goes(param string) string {
	if p == nil {
		return Unsupported
	}
	if param == "winc" {
		param = "binc"
	}
	if param == "byoyomi" && p.Protocol == "uci" {
		return Unsupported // UCI clocks have increments only
	}
	if v, ok := p.Go[param]; ok {
		return v
	}
	if slices.Contains(core, param) {
		return Native
	}
	return Unsupported
}

// ScoresFlipped reports whether the engine's scores of a position with side
// ("b" or "w") to move are from the other side's point of view, and must be
// negated to be the side to move's.
func (p *Profile) ScoresFlipped(side string) bool {
	if p == nil {
		return false
	}
	switch p.ScoreSide {
	case ScoreSideOther:
		return true
	case ScoreSideBlack:
		return side != game.Black
	case ScoreSideWhite:
		return side != game.White
	}
	return false
}

// Avoids reports whether the probe found that step makes the engine exit
// or hang.
func (p *Profile) Avoids(step string) bool { return p != nil && slices.Contains(p.Avoid, step) }

// NativeParams lists the go parameters sent to the engine as they are.
func (p *Profile) NativeParams() []string {
	var out []string
	for _, g := range append(slices.Clone(core), measured...) {
		if p.Goes(g) == Native {
			out = append(out, g)
		}
	}
	if p.Goes("binc") == Native {
		out = append(out, "winc")
	}
	if p.Checkmate {
		out = append(out, "mate")
	}
	return out
}

func (p *Profile) set(fact, source, note string) {
	if p.Sources == nil {
		p.Sources = map[string]string{}
	}
	p.Sources[fact] = source
	if note != "" {
		if p.Notes == nil {
			p.Notes = map[string]string{}
		}
		p.Notes[fact] = note
	}
}

// Observed returns p with go parameter param taken as how (Emulated,
// Unsupported), as seen while serving: an engine that overshot a native
// limit. The fact's source is SourceObserved.
func (p Profile) Observed(param, how, note string) Profile {
	p.Go = cloneMap(p.Go)
	p.Sources = cloneMap(p.Sources)
	p.Notes = cloneMap(p.Notes)
	p.Go[param] = how
	p.set(param, SourceObserved, note)
	return p
}

// Override is the operator's word on what an engine can do; it wins over
// what a probe found. Nil fields leave the probe's findings alone.
type Override struct {
	// Go lists the go parameters the engine takes natively; the measured
	// ones (depth, nodes, movetime, binc/winc) not listed are emulated
	// (binc/winc: unsupported).
	Go        []string
	Checkmate *bool
}

// Apply returns p with o laid over it, marking the facts it sets as configured.
func (p Profile) Apply(o Override) Profile {
	p.Go = cloneMap(p.Go)
	p.Sources = cloneMap(p.Sources)
	p.Notes = cloneMap(p.Notes)
	if o.Go != nil {
		for _, g := range measured {
			v := Emulated
			if g == "binc" {
				v = Unsupported
			}
			if slices.Contains(o.Go, g) || (g == "binc" && slices.Contains(o.Go, "winc")) {
				v = Native
			}
			p.Go[g] = v
			p.set(g, SourceConfigured, "")
			delete(p.Notes, g)
		}
	}
	if o.Checkmate != nil {
		p.Checkmate = *o.Checkmate
		p.set("checkmate", SourceConfigured, "")
		delete(p.Notes, "checkmate")
	}
	return p
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
