package pool

import (
	"fmt"
	"strings"
	"testing"

	"github.com/usid/usid/usi"
)

func spin(name string, lo, hi int64) usi.Option {
	return usi.Option{Name: name, Type: usi.TypeSpin, Min: lo, HasMin: true, Max: hi, HasMax: true}
}

// levelsText writes levels as "id:options:movetime" for comparison.
func levelsText(ls []Level) string {
	var b []string
	for _, l := range ls {
		s := l.ID + ":"
		if l.Elo != 0 {
			s += fmt.Sprint(l.Options[limitStrength], "/", l.Elo, "/")
		}
		for k, v := range l.Options {
			if k != limitStrength && k != eloOption {
				s += k + "=" + v + "/"
			}
		}
		s += fmt.Sprint(l.MoveTimeMS)
		if l.Depth != 0 || l.Random != 0 {
			s += fmt.Sprintf("/d%d/r%d", l.Depth, l.Random)
		}
		b = append(b, s)
	}
	return strings.Join(b, " ")
}

// TestLevels: levels come from the options an engine advertises, as
// Debian's engines and usid's othello engine advertise them: beginner
// levels (Skill Level 0, depth 1, a share of random moves) below Elo steps
// from stockfish's lowest UCI_Elo, fairy-stockfish's Skill Level when it
// plays shogi (its UCI_Elo is chess Elo), the othello engine's level; an
// operator's client_options narrow a range; an engine with no strength
// option has none.
func TestLevels(t *testing.T) {
	sf := []usi.Option{spin("Skill Level", 0, 20), {Name: "UCI_LimitStrength", Type: usi.TypeCheck, Default: "false"}, spin("UCI_Elo", 1350, 2850)}
	fairy := []usi.Option{spin("Skill Level", -20, 20), {Name: "UCI_LimitStrength", Type: usi.TypeCheck}, spin("UCI_Elo", 1350, 2850)}
	min, max := -10, 10
	for _, c := range []struct {
		name  string
		opts  []usi.Option
		rules map[string]OptionRule
		proto string
		want  string
	}{
		{"stockfish", sf, nil, "uci", "beginner1:Skill Level=0/300/d1/r60 beginner2:Skill Level=0/300/d1/r30 beginner3:Skill Level=0/300/d1/r15 elo1350:true/1350/300 elo1500:true/1500/300 elo1700:true/1700/600 elo1900:true/1900/600 elo2100:true/2100/1200 elo2400:true/2400/2400 elo2700:true/2700/4800 full:0"},
		{"stockfish, UCI_Elo from 1320", []usi.Option{sf[1], spin("UCI_Elo", 1320, 3190)}, nil, "uci", "elo1320:true/1320/300 elo1500:true/1500/300 elo1700:true/1700/600 elo1900:true/1900/600 elo2100:true/2100/1200 elo2400:true/2400/1200 elo2700:true/2700/2400 elo3000:true/3000/4800 full:0"},
		{"stockfish, Elo narrowed", sf, map[string]OptionRule{"UCI_Elo": {Min: new(1800)}}, "uci", "beginner1:Skill Level=0/300/d1/r60 beginner2:Skill Level=0/300/d1/r30 beginner3:Skill Level=0/300/d1/r15 elo1800:true/1800/300 elo1900:true/1900/300 elo2100:true/2100/600 elo2400:true/2400/1200 elo2700:true/2700/4800 full:0"},
		{"stockfish, Skill Level narrowed above 0", sf, map[string]OptionRule{"Skill Level": {Min: new(5)}}, "uci", "elo1350:true/1350/300 elo1500:true/1500/300 elo1700:true/1700/600 elo1900:true/1900/600 elo2100:true/2100/1200 elo2400:true/2400/2400 elo2700:true/2700/4800 full:0"},
		{"fairy, shogi", fairy, nil, "usi", "skill-20:Skill Level=-20/300 skill-15:Skill Level=-15/300 skill-9:Skill Level=-9/600 skill-3:Skill Level=-3/1200 skill2:Skill Level=2/1200 skill8:Skill Level=8/2400 skill14:Skill Level=14/4800 full:0"},
		{"fairy narrowed", fairy, map[string]OptionRule{"Skill Level": {Min: &min, Max: &max}}, "usi", "skill-10:Skill Level=-10/300 skill-8:Skill Level=-8/300 skill-5:Skill Level=-5/600 skill-2:Skill Level=-2/1200 skill1:Skill Level=1/1200 skill4:Skill Level=4/2400 skill7:Skill Level=7/4800 full:0"},
		{"othello", []usi.Option{spin("level", 0, 20)}, nil, "usix", "skill0:level=0/300 skill2:level=2/300 skill5:level=5/600 skill8:level=8/1200 skill11:level=11/1200 skill14:level=14/2400 skill17:level=17/4800 full:0"},
		{"small range", []usi.Option{spin("Strength", 1, 3)}, nil, "usi", "skill1:Strength=1/300 skill2:Strength=2/1200 full:0"},
		{"no strength option", []usi.Option{spin("Hash", 1, 1024), spin("Skill Level Max Error", 0, 9)}, nil, "usi", ""},
		{"narrowed to nothing", []usi.Option{spin("level", 0, 20)}, map[string]OptionRule{"level": {Min: new(20)}}, "usix", ""},
	} {
		if got := levelsText(Levels(c.opts, c.rules, c.proto)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	ls := Levels(sf, nil, "uci")
	if !levelOption(ls, "UCI_Elo") || !levelOption(ls, "UCI_LimitStrength") || !levelOption(ls, "Skill Level") || levelOption(ls, "Hash") {
		t.Error("the options stockfish's levels set: want UCI_Elo and UCI_LimitStrength, and Skill Level (the beginner levels') only")
	}
	for i, l := range ls[:3] {
		if l.Beginner != i+1 || l.Elo != 0 || l.Name != fmt.Sprint("Beginner ", i+1) {
			t.Errorf("level %d %+v: want beginner %d, no Elo", i, l, i+1)
		}
	}
}
