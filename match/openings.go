package match

import (
	"strings"
	"sync"

	gameseam "github.com/usid/usid/game"
	"github.com/usid/usid/session"
)

// The default openings, played in turn (each twice, colours swapped) when
// a request brings none: a few moves from the start, so that games of a
// match differ while no side starts worse off than the game itself makes it.
var defaultLines = map[string][]string{
	// Shogi's common openings: the first moves of 居飛車 and 振り飛車 games,
	// 相掛かり and 角換わり.
	"shogi": {
		"7g7f 3c3d",
		"2g2f 8c8d",
		"7g7f 8c8d",
		"2g2f 3c3d",
		"7g7f 3c3d 2g2f",
		"7g7f 3c3d 6g6f",
		"5g5f 3c3d",
		"7g7f 3c3d 8h2b+ 3a2b",
		"2g2f 8c8d 2f2e 8d8e",
		"7g7f 4c4d",
	},
	// Chess's usual first moves.
	"chess": {
		"e2e4 e7e5",
		"d2d4 d7d5",
		"c2c4",
		"g1f3",
		"e2e4 c7c5",
		"d2d4 g8f6",
		"e2e4 e7e6",
		"e2e4 c7c6",
		"d2d4 d7d5 c2c4",
		"e2e4 e7e5 g1f3 b8c6",
	},
}

// othelloOpenings is how many of the positions four plies from othello's
// start (244 move sequences) the default set takes, spread over them.
const othelloOpenings = 12

var (
	fourPlyOnce sync.Once
	fourPly     [][]string
)

// defaultOpenings is g's default set: its lines above, or for othello a
// spread of the 244 sequences of four moves from the start (found by
// trying every square), or the start alone for a game with neither.
func defaultOpenings(g gameseam.Game) []*session.Position {
	var lines [][]string
	if ls, ok := defaultLines[g.Name()]; ok {
		for _, l := range ls {
			lines = append(lines, strings.Fields(l))
		}
	} else if g.Name() == "othello" {
		fourPlyOnce.Do(func() { fourPly = sequences(g, 4) })
		n := len(fourPly)
		for i := range min(othelloOpenings, n) {
			lines = append(lines, fourPly[i*n/min(othelloOpenings, n)])
		}
	}
	if len(lines) == 0 {
		lines = [][]string{nil}
	}
	ops := make([]*session.Position, len(lines))
	for i, l := range lines {
		ops[i] = &session.Position{Game: g.Name(), Start: "startpos", Moves: l}
	}
	return ops
}

// sequences lists every sequence of depth legal moves from g's start
// whose squares are named a1..h8 or "pass" (othello's), in order.
func sequences(g gameseam.Game, depth int) [][]string {
	start, err := g.Check("startpos", "", nil)
	if err != nil {
		return nil
	}
	var out [][]string
	var walk func(p gameseam.Position, line []string)
	walk = func(p gameseam.Position, line []string) {
		if len(line) == depth {
			out = append(out, append([]string(nil), line...))
			return
		}
		for _, mv := range squares() {
			if q, err := p.Play(mv); err == nil {
				walk(q, append(line, mv))
			}
		}
	}
	walk(start, nil)
	return out
}

func squares() []string {
	sq := make([]string, 0, 65)
	for f := 'a'; f <= 'h'; f++ {
		for r := '1'; r <= '8'; r++ {
			sq = append(sq, string([]rune{f, r}))
		}
	}
	return append(sq, "pass")
}
