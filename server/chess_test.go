package server

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/usid/usid/evalcache"
	"github.com/usid/usid/internal/fakeengine"
	"github.com/usid/usid/pool"
	"github.com/usid/usid/session"
)

const stockfishPath = "/usr/games/stockfish"

// The chess stack: Debian's stockfish with a minimal entry (name and
// path: the dialect is learned), fairy-stockfish told to speak UCI, and
// the fake UCI engine, which logs every line it reads.
var (
	chessOnce   sync.Once
	chessShared *env
	chessErr    error
	chessLog    string // the fake UCI engine's input
	eloLog      string // the input of the fake UCI engine with UCI_Elo
	chessCache  *evalcache.Cache
)

func chessEnv(t *testing.T) *env {
	t.Helper()
	for _, p := range []string{stockfishPath, fairyPath} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s is missing (%v): apt-get install stockfish fairy-stockfish", p, err)
		}
	}
	chessOnce.Do(func() {
		dir, err := os.MkdirTemp("", "usid-chess")
		if err != nil {
			chessErr = err
			return
		}
		chessLog = filepath.Join(dir, "fakechess.log")
		eloLog = filepath.Join(dir, "elochess.log")
		// fairy-stockfish under another name: other tests pick the shared
		// pool's engines by their process name (fairy-stockfish).
		fairyChess := filepath.Join(dir, "fairy-chess")
		if chessErr = os.Symlink(fairyPath, fairyChess); chessErr != nil {
			return
		}
		chessShared, chessErr = newEnvWith([]pool.EngineConfig{
			{Name: "stockfish", Path: stockfishPath},
			{Name: "fairychess", Path: fairyChess, Protocol: "uci", Options: map[string]string{"Hash": "16", "Threads": "1"}},
			{Name: "fakechess", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.UCI, fakeengine.EnvLog + "=" + chessLog}},
			{Name: "falsemate", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.UCIFalseMate},
				Capabilities: pool.Capabilities{CheckmateAnswer: ptr(true)}},
			{Name: "illegalchess", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.UCIIllegal}},
			{Name: "elochess", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.UCIElo, fakeengine.EnvLog + "=" + eloLog}},
			{Name: "no960", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.UCINo960}},
			{Name: "shogifake", Path: fakeengine.Path(), Env: []string{fakeengine.EnvMode + "=" + fakeengine.Normal}},
		}, func(c *session.Config) {
			chessCache, chessErr = evalcache.New(evalcache.Config{}, prometheus.NewRegistry())
			c.Cache = chessCache
		})
	})
	if chessErr != nil {
		t.Fatal(chessErr)
	}
	return chessShared
}

func closeChessEnv() {
	if chessShared != nil {
		chessShared.close()
		chessCache.Close()
		os.RemoveAll(filepath.Dir(chessLog))
	}
}

// TestChessProfiles: stockfish's entry has only name and path; the probe
// found it speaks UCI. fairy-stockfish is a chess engine when told so (a
// shogi engine when not: probe's TestDetect).
func TestChessProfiles(t *testing.T) {
	e := chessEnv(t)
	for name, want := range map[string]string{"stockfish": "chess", "fairychess": "chess", "fakechess": "chess", "shogifake": "shogi"} {
		p := e.pool.Profile(name)
		if p == nil || p.Game() != want {
			t.Errorf("%s: profile %+v, want a %s engine", name, p, want)
		}
	}
	code, _, m := call(t, e, "GET", "/v1/engines", nil)
	if code != 200 || !strings.Contains(fmt.Sprint(m), "protocol:uci") {
		t.Errorf("engines: %d %v", code, m)
	}
}

var chessMiddle = map[string]any{"fen": "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP1B1PPP/R2QKB1R w KQ - 0 8", "moves": []string{"c4d5", "e6d5"}}

// TestChessAnalyze: analysis on stockfish and fairy-stockfish over REST:
// MultiPV, SAN beside the UCI moves, scores; a second ask of the same
// position is answered from the cache.
func TestChessAnalyze(t *testing.T) {
	e := chessEnv(t)
	for _, engine := range []string{"stockfish", "fairychess"} {
		code, _, m := call(t, e, "POST", "/v1/analyze", map[string]any{"engine": engine, "position": chessMiddle,
			"limits": map[string]any{"nodes": 20000}, "multipv": 2, "notation": "san"})
		lines, _ := m["lines"].([]any)
		if code != 200 || len(lines) != 2 || m["bestmove_san"] == nil {
			t.Fatalf("%s: %d %v", engine, code, m)
		}
		l := lines[0].(map[string]any)
		pv, san := l["pv"].([]any), l["pv_san"].([]any)
		if len(pv) == 0 || len(san) != len(pv) || l["score"] == nil || pv[0] != m["bestmove"] {
			t.Errorf("%s: line %v", engine, l)
		}
		_, _, again := call(t, e, "POST", "/v1/analyze", map[string]any{"engine": engine, "position": chessMiddle,
			"limits": map[string]any{"nodes": 20000}, "multipv": 2})
		if again["cached"] != true || again["bestmove"] != m["bestmove"] {
			t.Errorf("%s: second ask %v, want it from the cache", engine, again)
		}
	}
	// A repeated position in the history: neither read nor written.
	repeated := map[string]any{"fen": "startpos", "moves": []string{"g1f3", "g8f6", "f3g1", "f6g8", "e2e4"}}
	for i := range 2 {
		code, _, m := call(t, e, "POST", "/v1/analyze", map[string]any{"engine": "stockfish", "position": repeated, "limits": map[string]any{"nodes": 5000}})
		if code != 200 || m["cached"] != nil {
			t.Errorf("repeated history, ask %d: %d %v, want a search", i, code, m)
		}
	}
	// No engine named: the first chess engine.
	code, _, m := call(t, e, "POST", "/v1/analyze", map[string]any{"position": map[string]any{"fen": "startpos", "moves": []string{"e2e4"}}, "limits": map[string]any{"depth": 6}})
	if code != 200 || m["engine"] != "stockfish" {
		t.Errorf("no engine named: %d %v", code, m)
	}
}

// TestChessMate: "go mate N" answered by bestmove, the line checked by the
// rules; an engine whose line does not mate is an engine error.
func TestChessMate(t *testing.T) {
	e := chessEnv(t)
	// A back-rank mate in two: 1. Re8+ Rxe8 2. Rxe8#.
	mateIn2 := map[string]any{"fen": "3r2k1/5ppp/8/8/8/8/4RPPP/4R1K1 w - - 0 1"}
	for _, engine := range []string{"stockfish", "fairychess"} {
		code, _, m := call(t, e, "POST", "/v1/mate", map[string]any{"engine": engine, "position": mateIn2, "mate_in": 3, "timeout_ms": 10000, "notation": "san"})
		moves, _ := m["moves"].([]any)
		if code != 200 || m["result"] != "mate" || len(moves) != 3 || m["verified"] != "line" {
			t.Errorf("%s: %d %v", engine, code, m)
		}
		if san, _ := m["moves_san"].([]any); len(san) != 3 || !strings.HasSuffix(fmt.Sprint(san[2]), "#") {
			t.Errorf("%s: moves_san %v", engine, m["moves_san"])
		}
	}
	code, _, m := call(t, e, "POST", "/v1/mate", map[string]any{"engine": "falsemate", "position": map[string]any{"fen": "startpos"}, "timeout_ms": 5000})
	if code != 502 || m["code"] != "engine_error" {
		t.Errorf("false mate: %d %v, want 502 engine_error", code, m)
	}
}

// TestGameMismatch: a FEN for a shogi engine and an SFEN for a chess engine
// are refused with game_mismatch before any engine is asked.
func TestGameMismatch(t *testing.T) {
	e := chessEnv(t)
	for _, tt := range []struct {
		engine string
		pos    map[string]any
	}{
		{"shogifake", map[string]any{"fen": "startpos"}},
		{"stockfish", map[string]any{"sfen": "startpos", "moves": []string{"7g7f"}}},
		{"stockfish", map[string]any{"moves": []string{"7g7f"}}},
	} {
		for _, path := range []string{"/v1/analyze", "/v1/mate"} {
			code, _, m := call(t, e, "POST", path, map[string]any{"engine": tt.engine, "position": tt.pos, "limits": map[string]any{"depth": 1}})
			if path == "/v1/mate" {
				code, _, m = call(t, e, "POST", path, map[string]any{"engine": tt.engine, "position": tt.pos})
			}
			if code != 422 || m["code"] != session.CodeGameMismatch {
				t.Errorf("%s %s %v: %d %v, want 422 game_mismatch", path, tt.engine, tt.pos, code, m)
			}
		}
	}
	code, _, m := call(t, e, "POST", "/v1/analyze", map[string]any{"engine": "stockfish", "position": map[string]any{"sfen": "startpos", "fen": "startpos"}, "limits": map[string]any{"depth": 1}})
	if code != 422 || m["code"] != "invalid_field" {
		t.Errorf("sfen and fen: %d %v", code, m)
	}
}

// TestChessCorpus: every illegal position of chess/testdata/fens.tsv that
// a JSON position can carry is refused with its code by /v1/validate and
// by /v1/analyze, and the engine never saw one of them; the legal ones
// validate.
func TestChessCorpus(t *testing.T) {
	e := chessEnv(t)
	f, err := os.Open("../chess/testdata/fens.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var refused []string
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		row := strings.Split(sc.Text(), "\t")
		if strings.HasPrefix(row[0], "#") || len(row) < 3 || row[1] != "standard" {
			continue
		}
		text, ok := strings.CutPrefix(row[2], "fen ")
		if !ok {
			continue // startpos rows, position_syntax rows: no JSON shape
		}
		fen, moves, _ := strings.Cut(text, " moves ")
		if fen == "startpos" || strings.TrimSpace(fen) == "" {
			continue // "startpos" is a start in JSON
		}
		pos := map[string]any{"fen": fen}
		if moves != "" {
			pos["moves"] = strings.Fields(moves)
		}
		codes := strings.Split(row[0], ",")
		code, _, v := call(t, e, "POST", "/v1/validate", map[string]any{"position": pos})
		if code != 200 || (row[0] == "legal") != (v["valid"] == true) {
			t.Errorf("validate %q (%s): %d %v", row[2], row[0], code, v)
			continue
		}
		n++
		if row[0] == "legal" {
			continue
		}
		errs, _ := v["errors"].([]any)
		if len(errs) == 0 || !slices.Contains(codes, errs[0].(map[string]any)["code"].(string)) {
			t.Errorf("validate %q: errors %v, want %v", row[2], errs, codes)
		}
		code, _, a := call(t, e, "POST", "/v1/analyze", map[string]any{"engine": "fakechess", "position": pos, "limits": map[string]any{"depth": 1}})
		if code != 422 || !slices.Contains(codes, fmt.Sprint(a["code"])) {
			t.Errorf("analyze %q: %d %v, want 422 with one of %v", row[2], code, a, codes)
		}
		refused = append(refused, fen)
	}
	if n < 50 || len(refused) < 40 {
		t.Fatalf("%d rows checked, %d refused: the corpus was not read", n, len(refused))
	}
	// The fake engine logs every line it reads: none of them.
	code, _, _ := call(t, e, "POST", "/v1/analyze", map[string]any{"engine": "fakechess", "position": chessMiddle, "limits": map[string]any{"depth": 1}})
	if code != 200 {
		t.Fatalf("a legal position: %d", code)
	}
	b, err := os.ReadFile(chessLog)
	if err != nil || !strings.Contains(string(b), "position fen r1bq1rk1") {
		t.Fatalf("the fake engine's log: %v, %d bytes, without the legal position", err, len(b))
	}
	for _, fen := range refused {
		if strings.Contains(string(b), fen) {
			t.Errorf("the engine saw %q", fen)
		}
	}
}

// TestChessWebSocket: analysis until stop, play with chess clocks
// (wtime, btime, winc, binc, movestogo), pondering and ponderhit, on
// stockfish over the WebSocket.
func TestChessWebSocket(t *testing.T) {
	e := chessEnv(t)
	cl := dial(t, e)
	cl.send(map[string]any{"type": "analyze", "id": "a", "engine": "stockfish", "position": chessMiddle, "multipv": 2, "notation": "san"})
	// A live line (the cache may show an earlier test's lines first): the
	// stop below must reach a search under way.
	evs := cl.until(30*time.Second, func(ev map[string]any) bool {
		return ev["type"] == "info" && ev["cached"] == nil && num(ev["depth"]) >= 8 && ev["pv_san"] != nil
	})
	cl.send(map[string]any{"type": "stop", "id": "a"})
	evs = append(evs, cl.terminal("a", 30*time.Second)...)
	if ev := last(evs); ev["type"] != "bestmove" || ev["move_san"] == nil {
		t.Fatalf("analyze: %v", tail(evs))
	}
	cl.send(map[string]any{"type": "go", "id": "g", "engine": "stockfish", "position": map[string]any{"fen": "startpos", "moves": []string{"e2e4", "e7e5"}},
		"wtime": 3000, "btime": 3000, "winc": 100, "binc": 100, "movestogo": 20})
	if ev := last(cl.terminal("g", 30*time.Second)); ev["type"] != "bestmove" {
		t.Fatalf("go with clocks: %v", ev)
	}
	if sent := strings.Join(e.sentTo("stockfish"), "\n"); !strings.Contains(sent, "go btime 3000 wtime 3000 binc 100 winc 100 movestogo 20") {
		t.Errorf("no chess clock sent; sent:\n%s", sent)
	}
	cl.send(map[string]any{"type": "go", "id": "p", "engine": "stockfish", "position": map[string]any{"fen": "startpos", "moves": []string{"e2e4", "e7e5", "g1f3"}},
		"wtime": 60000, "btime": 60000, "ponder": true})
	cl.until(30*time.Second, func(ev map[string]any) bool { return ev["id"] == "p" && ev["type"] == "info" })
	cl.send(map[string]any{"type": "ponderhit", "id": "p"})
	if ev := last(cl.terminal("p", 60*time.Second)); ev["type"] != "bestmove" {
		t.Fatalf("ponderhit: %v", ev)
	}
	cl.send(map[string]any{"type": "go", "id": "b", "engine": "stockfish", "position": map[string]any{"fen": "startpos"}, "wtime": 1000, "btime": 1000, "byoyomi": 1000})
	if ev := last(cl.terminal("b", 10*time.Second)); ev["type"] != "error" || ev["code"] != "invalid_field" {
		t.Errorf("byoyomi for chess: %v", ev)
	}
}

// TestPGNRecord: a PGN game read by /v1/records/parse is a chess position
// ready for /v1/analyze; an illegal move is refused with its line.
func TestPGNRecord(t *testing.T) {
	e := chessEnv(t)
	text := "[Event \"Casual\"]\n[White \"A\"]\n[Black \"B\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 {oops} 4. Qxf7# 1-0\n"
	code, _, m := call(t, e, "POST", "/v1/records/parse", map[string]any{"record": text})
	pos, _ := m["position"].(map[string]any)
	plies, _ := m["plies"].([]any)
	if code != 200 || m["format"] != "pgn" || pos["fen"] == nil || len(plies) != 7 || m["end"] != "1-0" {
		t.Fatalf("%d %v", code, m)
	}
	if p := plies[6].(map[string]any); p["move"] != "h5f7" || p["san"] != "Qxf7#" {
		t.Errorf("last ply %v", p)
	}
	code, _, v := call(t, e, "POST", "/v1/validate", map[string]any{"position": pos})
	if code != 200 || v["checkmate"] != true {
		t.Errorf("the game's end: %d %v", code, v)
	}
	code, _, bad := call(t, e, "POST", "/v1/records/parse", map[string]any{"record": "1. e4 e5 2. Ke3 *\n", "format": "pgn"})
	if code != 422 || bad["line"] == nil {
		t.Errorf("an illegal move: %d %v", code, bad)
	}
}

// TestChessEngineFaults: a chess engine's illegal best move is an engine
// error, never an answer; a position with no legal move is answered
// "(none)" without an error.
func TestChessEngineFaults(t *testing.T) {
	e := chessEnv(t)
	code, _, m := call(t, e, "POST", "/v1/analyze", map[string]any{"engine": "illegalchess", "position": map[string]any{"fen": "startpos"}, "limits": map[string]any{"depth": 1}})
	if code != 502 || m["code"] != "engine_error" {
		t.Errorf("illegal best move: %d %v, want 502 engine_error", code, m)
	}
	code, _, m = call(t, e, "POST", "/v1/analyze", map[string]any{"engine": "stockfish", "position": map[string]any{"fen": "7k/5QQ1/8/8/8/8/8/K7 b - - 0 1"}, "limits": map[string]any{"depth": 5}})
	if code != 200 || m["bestmove"] != "(none)" {
		t.Errorf("mated: %d %v, want bestmove (none)", code, m)
	}
}
