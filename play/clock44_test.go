package play

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/usid/usid/chess"
	gameseam "github.com/usid/usid/game"
	"github.com/usid/usid/session"
	"github.com/usid/usid/shogi"
)

// TestOneClockAccount plays a few moves against real fairy (shogi) and
// real stockfish (chess), in sudden death and pondering, and checks on
// every play event that the clocks, the times of the moves and the
// record exported from them (as POST /v1/records/export writes it, read
// back) are one account: each side's clock is its main time less its
// moves' times; each move's clocks_ms is its side's clock after it; the
// KIF's times are those in whole seconds (its running total too), the
// PGN's %emt and %clk the same to the millisecond.
func TestOneClockAccount(t *testing.T) {
	for _, tc := range []struct{ name, engine, opts string }{
		{"fairy", "fairy", `{"side":"b","clock":{"b":{"main_ms":600000},"w":{"main_ms":600000}},"level":{"movetime_ms":700},"ponder":true}`},
		{"stockfish", "stockfish", `{"side":"w","clock":{"b":{"main_ms":600000},"w":{"main_ms":600000}},"level":{"movetime_ms":700},"ponder":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Config{Service: svc, Lag: 5 * time.Second})
			defer m.Close(context.Background())
			client := "clock-" + tc.name
			c := newConn(t, m, client)
			var pos *session.Position
			if tc.engine == "stockfish" {
				pos = &session.Position{Game: "chess", Start: chess.StartFEN}
			}
			c.send(startReq("g", tc.engine, tc.opts, pos))
			v := c.state()
			g := m.find(client, v.ID)
			engineMoves := 0
			for len(v.Moves) < 12 && v.Status == statusPlaying {
				if v.Clock.Running != v.Human {
					v = c.state()
					engineMoves++
					checkAccount(t, v)
					continue
				}
				var legal []string
				if tc.engine == "stockfish" {
					p, _ := chess.Load(chess.StartFEN, v.Moves, chess.Standard)
					for _, mv := range p.LegalMoves() {
						legal = append(legal, mv.String())
					}
				} else {
					p, _ := shogi.Load(v.SFEN, v.Moves)
					for _, mv := range p.LegalMoves() {
						legal = append(legal, mv.String())
					}
				}
				move := legal[len(v.Moves)%len(legal)]
				g.mu.Lock()
				if g.ponderMove != "" && len(v.Moves)%4 < 2 { // a ponderhit now and then
					move = g.ponderMove
				}
				g.mu.Unlock()
				c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: move})
				v = c.state()
				checkAccount(t, v)
			}
			if v.Status != statusPlaying || engineMoves < 5 {
				t.Fatalf("ended early (%d engine moves): %+v", engineMoves, v.Result)
			}
			t.Logf("times %v clocks %v", v.TimesMS, v.ClocksMS)
		})
	}
}

// checkAccount checks one play event: the clock of each side not to move
// (it stands) is its main time less its moves' times and is the clock
// its last move left; the exported record says the same.
func checkAccount(t *testing.T, v *stateView) {
	t.Helper()
	if len(v.ClocksMS) != len(v.Moves) || len(v.TimesMS) != len(v.Moves) {
		t.Fatalf("moves %d, times_ms %d, clocks_ms %d", len(v.Moves), len(v.TimesMS), len(v.ClocksMS))
	}
	var used [2]int64
	first := colorOf(v.First)
	for i, ms := range v.TimesMS {
		c := (first + i) % 2
		used[c] += ms
		if want := v.TC.of(c).MainMS - used[c]; v.ClocksMS[i] != want {
			t.Errorf("ply %d: clocks_ms %d, the times say %d", i+1, v.ClocksMS[i], want)
		}
	}
	for c, sc := range [2]SideClock{v.Clock.B, v.Clock.W} {
		if v.Clock.Running == colorName(c) {
			continue
		}
		if left := v.TC.of(c).MainMS - used[c]; sc.MainMS != left {
			t.Errorf("ply %d: %s's clock %d ms, its moves' times %v say %d", len(v.Moves), colorName(c), sc.MainMS, v.TimesMS, left)
		}
	}
	checkRecord(t, v, used)
}

// checkRecord exports the game's plies with their times as the page
// does (POST /v1/records/export's game seam) and reads the record back.
func checkRecord(t *testing.T, v *stateView, used [2]int64) {
	t.Helper()
	format := "kif"
	if v.FEN != "" {
		format = "pgn"
	}
	rules, recs := gameseam.RecordsFor(format)
	rg := &gameseam.RecordGame{Start: v.SFEN + v.FEN}
	for i, mv := range v.Moves {
		rg.Plies = append(rg.Plies, gameseam.RecordPly{Move: mv, TimeMS: &v.TimesMS[i], ClockMS: &v.ClocksMS[i]})
	}
	if rules.Name() == "shogi" {
		for i := range rg.Plies {
			rg.Plies[i].ClockMS = nil // (KIF has no clock; its running total is the clock's)
		}
	}
	out, rerr := recs.Export(rg, 0)
	if rerr != nil {
		t.Fatalf("export: %v", rerr)
	}
	var text map[string]string
	b, _ := json.Marshal(out)
	json.Unmarshal(b, &text)
	parsed, rerr := recs.Parse([]byte(text[format]), format, 0)
	if rerr != nil {
		t.Fatalf("the exported record does not read back: %v\n%s", rerr, text[format])
	}
	var back struct {
		Plies []struct {
			TimeMS  *int64 `json:"time_ms"`
			ClockMS *int64 `json:"clock_ms"`
		} `json:"plies"`
	}
	b, _ = json.Marshal(parsed)
	json.Unmarshal(b, &back)
	if len(back.Plies) != len(v.Moves) {
		t.Fatalf("%d plies read back, %d played", len(back.Plies), len(v.Moves))
	}
	first := colorOf(v.First)
	for i, p := range back.Plies {
		want, wantClock := v.TimesMS[i], v.ClocksMS[i]
		if format == "kif" {
			want, wantClock = want/1000*1000, -1 // whole seconds
		}
		if p.TimeMS == nil || *p.TimeMS != want {
			t.Errorf("ply %d: the %s says %v ms, the server charged %d", i+1, format, p.TimeMS, v.TimesMS[i])
		}
		if wantClock >= 0 && (p.ClockMS == nil || *p.ClockMS != wantClock) {
			t.Errorf("ply %d: the %s's clock %v ms, the server's %d", i+1, format, p.ClockMS, wantClock)
		}
	}
	if format != "kif" {
		return
	}
	// KIF's running total of each side: its clock used, in whole seconds.
	total := regexp.MustCompile(`\(\s*\d+:\d\d/(\d\d):(\d\d):(\d\d)\)`).FindAllStringSubmatch(text[format], -1)
	if len(total) != len(v.Moves) {
		t.Fatalf("%d KIF times for %d moves", len(total), len(v.Moves))
	}
	var last [2]string
	for i, f := range total {
		h, _ := strconv.Atoi(f[1])
		mi, _ := strconv.Atoi(f[2])
		s, _ := strconv.Atoi(f[3])
		last[(first+i)%2] = fmt.Sprint(h*3600 + mi*60 + s)
	}
	for c := range 2 {
		if last[c] != "" && last[c] != fmt.Sprint(used[c]/1000) {
			t.Errorf("the KIF's total for %s is %s s, its clock used %d ms", colorName(c), last[c], used[c])
		}
	}
}
