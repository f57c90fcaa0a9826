package pool

import (
	"regexp"
	"slices"
	"strconv"

	"github.com/usid/usid/usi"
)

// Level is one strength an engine plays at, derived from the options it
// advertises (issue 42): a client names it by ID (play_start's
// play.level.id) and usid sets its Options for the game, tells the
// engine at most MoveTimeMS per move and Depth, and draws Random percent
// of its moves at random. Levels are listed weakest first,
// "full" (no option set, no time cap) last.
type Level struct {
	ID   string `json:"id"`
	Name string `json:"name"` // in English; pages name it in their own words from Elo or the option's value
	// Elo is the level's rating, for an engine that limits its strength by
	// UCI_Elo (the UCI document's scale: chess Elo); 0 otherwise.
	Elo     int               `json:"elo,omitempty"`
	Options map[string]string `json:"options"`
	// MoveTimeMS caps the engine's time per move: a strength option set low
	// makes an engine choose worse moves, not think less (see LevelMoveTime).
	MoveTimeMS int64 `json:"movetime_ms,omitempty"`
	// Depth caps the engine's search per move (go depth, or usid stops
	// it there: session.Request.Depth); 0 for none. The beginner levels
	// have it: a strength option at its lowest still searches deep.
	Depth int `json:"depth,omitempty"`
	// Random is the percent of the engine's moves usid replaces with a
	// legal move drawn at random (session.Request.Random); 0 for none.
	Random int `json:"random,omitempty"`
	// Beginner numbers the beginner levels, 1 the weakest; 0 for others.
	Beginner int `json:"beginner,omitempty"`
}

// FullStrength is the ID of the level that sets nothing.
const FullStrength = "full"

// The options a level sets. UCI's are the UCI document's (UCI_LimitStrength
// turns UCI_Elo on); skillOption is the names engines give a strength
// scale (fairy-stockfish's and stockfish's Skill Level, usid's othello
// engine's level).
const (
	limitStrength = "UCI_LimitStrength"
	eloOption     = "UCI_Elo"
)

var skillOption = regexp.MustCompile(`(?i)^(skill[ _]?level|level|strength)$`)

// eloSteps are the ratings offered between an engine's lowest UCI_Elo and
// its full strength: steps a player understands, about a class apart
// (lichess's levels are spaced alike). A step within eloGap of the lowest
// is left out, so that the two weakest levels differ.
var eloSteps = []int{800, 1000, 1200, 1500, 1700, 1900, 2100, 2400, 2700, 3000}

const (
	eloGap     = 100
	skillSteps = 7 // limited levels from a skill option's range

	// LevelMinMS is the time per move at the bottom of a strength option's
	// range, doubling at each fifth of it (levelTimeSteps): the weakest
	// level moves at once, the strongest limited one has time to play as
	// its option says.
	LevelMinMS     = 300
	levelTimeSteps = 5
)

// LevelMoveTime is the time per move (ms) of a strength option set to v
// in lo..hi: LevelMinMS at the bottom, doubling at each fifth of the
// range; 0 (no cap) at the top, full strength, or for an unknown range.
// Measured (issue 37): at Skill Level -20 with 1 min + 5 s byoyomi,
// fairy-stockfish took 31 s for its first move when told the whole clock.
func LevelMoveTime(v, lo, hi int64) int64 {
	if hi <= lo || v >= hi {
		return 0
	}
	step := min(max(v-lo, 0)*levelTimeSteps/(hi-lo), levelTimeSteps-1)
	return LevelMinMS << step
}

// Levels derives an engine's levels from the options it advertises, the
// operator's client_options (a rule's bounds narrow an option's range) and
// its protocol: a UCI engine with UCI_LimitStrength and UCI_Elo gets
// levels named by their Elo, from its lowest up, and below them, where it
// has a skill option that goes down to 0, beginner levels
// (beginnerLevels); otherwise an engine with
// a skill option (Skill Level, level, strength) gets levels spread over its
// range. An engine with neither has none (a client can still cap its time
// per move). UCI_Elo is chess Elo, so an engine that speaks another
// protocol (fairy-stockfish playing shogi advertises it too) gets its
// skill levels.
func Levels(opts []usi.Option, rules map[string]OptionRule, protocol string) []Level {
	var out []Level
	if protocol == "uci" && hasOption(opts, limitStrength, usi.TypeCheck) {
		if lo, hi, ok := spinRange(opts, rules, eloOption); ok {
			out = beginnerLevels(opts, rules)
			for _, elo := range eloLadder(int(lo), int(hi)) {
				v := strconv.Itoa(elo)
				out = append(out, Level{ID: "elo" + v, Name: "Elo " + v, Elo: elo,
					Options:    map[string]string{limitStrength: "true", eloOption: v},
					MoveTimeMS: LevelMoveTime(int64(elo), lo, hi)})
			}
		}
	}
	if out == nil {
		for _, o := range opts {
			if o.Type != usi.TypeSpin || !skillOption.MatchString(o.Name) {
				continue
			}
			lo, hi, ok := spinRange(opts, rules, o.Name)
			if !ok {
				continue
			}
			var prev int64
			for i := range skillSteps {
				v := lo + (hi-lo)*int64(i)/skillSteps
				if i > 0 && v == prev {
					continue
				}
				prev = v
				s := strconv.FormatInt(v, 10)
				out = append(out, Level{ID: "skill" + s, Name: o.Name + " " + s,
					Options: map[string]string{o.Name: s}, MoveTimeMS: LevelMoveTime(v, lo, hi)})
			}
			break
		}
	}
	if out == nil {
		return nil
	}
	return append(out, Level{ID: FullStrength, Name: "Full strength", Options: map[string]string{}})
}

// beginnerRandom are the beginner levels' random shares, weakest first.
// Measured (BENCHMARKS.md, "Levels"): Stockfish 15.1 at Skill Level 0
// plays as at its lowest UCI_Elo (1350: both pick their move among the
// best four of a depth-1 search), so no option makes it weaker; each
// beginner level loses clearly to the next.
var beginnerRandom = []int{60, 30, 15}

// beginnerDepth caps the beginner levels' search: Skill Level 0 picks its
// move at depth 1 whatever it searches after, so the rest is time lost.
const beginnerDepth = 1

// beginnerLevels are the levels below a UCI engine's lowest Elo, for an
// engine with a skill option whose range (narrowed by the operator's rule)
// holds 0: that skill at 0, a depth-1 search, and a share of moves drawn
// at random, like a beginner who sometimes moves without looking.
func beginnerLevels(opts []usi.Option, rules map[string]OptionRule) []Level {
	var out []Level
	for _, o := range opts {
		if o.Type != usi.TypeSpin || !skillOption.MatchString(o.Name) {
			continue
		}
		if lo, hi, ok := spinRange(opts, rules, o.Name); !ok || lo > 0 || hi < 0 {
			return nil
		}
		for i, r := range beginnerRandom {
			n := strconv.Itoa(i + 1)
			out = append(out, Level{ID: "beginner" + n, Name: "Beginner " + n, Beginner: i + 1,
				Options: map[string]string{o.Name: "0"}, MoveTimeMS: LevelMinMS, Depth: beginnerDepth, Random: r})
		}
		return out
	}
	return nil
}

// eloLadder is the Elo of each limited level: lo, then the steps above it
// below hi.
func eloLadder(lo, hi int) []int {
	out := []int{lo}
	for _, s := range eloSteps {
		if s >= lo+eloGap && s < hi {
			out = append(out, s)
		}
	}
	return out
}

// spinRange is the range of spin option name, the engine's narrowed by
// the operator's rule; ok is false when there is no such option or no
// range left.
func spinRange(opts []usi.Option, rules map[string]OptionRule, name string) (lo, hi int64, ok bool) {
	i := slices.IndexFunc(opts, func(o usi.Option) bool { return o.Name == name && o.Type == usi.TypeSpin })
	if i < 0 || !opts[i].HasMin || !opts[i].HasMax {
		return 0, 0, false
	}
	lo, hi = opts[i].Min, opts[i].Max
	if r, ok := rules[name]; ok {
		if r.Min != nil {
			lo = max(lo, int64(*r.Min))
		}
		if r.Max != nil {
			hi = min(hi, int64(*r.Max))
		}
	}
	return lo, hi, hi > lo
}

func hasOption(opts []usi.Option, name string, t usi.OptionType) bool {
	return slices.ContainsFunc(opts, func(o usi.Option) bool { return o.Name == name && o.Type == t })
}

// levelOption reports whether name is an option one of levels sets: a
// client may set it without an entry in client_options (within the
// engine's range, narrowed by the operator's rule where there is one).
func levelOption(levels []Level, name string) bool {
	return slices.ContainsFunc(levels, func(l Level) bool { _, ok := l.Options[name]; return ok })
}
