package play

import (
	"context"
	"strings"
	"testing"

	"github.com/usid/usid/chess"
	"github.com/usid/usid/session"
)

// TestChessGameEndsByMate: the human (White) walks into the fool's mate
// against stockfish at a fast increment: the engine mates at once, the
// game ends by checkmate, Black the winner, 0-1 for the record; the
// moves in SAN, the engine told the clocks in UCI's words.
func TestChessGameEndsByMate(t *testing.T) {
	m := New(Config{Service: svc})
	defer m.Close(context.Background())
	c := newConn(t, m, "alice")
	c.send(startReq("g", "", `{"side":"w","clock":{"b":{"main_ms":2000,"inc_ms":100},"w":{"main_ms":60000,"inc_ms":100}}}`, &session.Position{Game: "chess", Start: "startpos"}))
	v := c.state()
	if v.Status != statusPlaying || v.Engine != "stockfish" || v.Clock.Running != "w" || v.FEN != chess.StartFEN || v.SFEN != "" {
		t.Fatalf("start: %+v clock %+v", v.Public, v.Clock)
	}
	for _, mv := range []string{"f2f3", "g2g4"} {
		c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: mv})
		v = c.state() // the human's move
		if v.Status != statusPlaying || v.Clock.Running != "b" {
			t.Fatalf("after %s: %+v %+v", mv, v.Result, v.Clock)
		}
		v = c.state() // the engine's move, or the end
	}
	checkResult(t, v, "b", "checkmate", "0-1")
	if got := strings.Join(v.MovesSAN, " "); got != "f3 e5 g4 Qh4#" && got != "f3 e6 g4 Qh4#" {
		t.Errorf("moves %v (SAN %q)", v.Moves, got)
	}
	if len(v.MovesKIF) != 0 || len(v.TimesMS) != 4 {
		t.Errorf("kif %v times %v", v.MovesKIF, v.TimesMS)
	}
	// Chess has no declaration; a move after the end is refused.
	c.send(&session.Request{Type: session.TypePlayMove, ID: "late", Game: v.ID, Move: "a2a3"})
	if code := c.errorCode(); code != session.CodeInvalidField {
		t.Errorf("a move after the end: %s", code)
	}
	waitIdle(t)
}

// TestChessEngineMates: stockfish (White, queen and king against king) at
// 1 s + 50 ms a move mates the human, who plays its first legal move each
// turn: the game ends checkmate, 1-0, every engine move within its time.
func TestChessEngineMates(t *testing.T) {
	m := New(Config{Service: svc})
	defer m.Close(context.Background())
	c := newConn(t, m, "carol")
	fen := "8/8/8/4k3/8/8/8/4K2Q w - - 0 1"
	c.send(startReq("g", "stockfish", `{"side":"b","clock":{"b":{"main_ms":60000},"w":{"main_ms":1000,"inc_ms":50}}}`, &session.Position{Game: "chess", Start: fen}))
	v := c.state()
	for v.Status == statusPlaying {
		if v.Clock.Running == "w" {
			v = c.state()
			continue
		}
		pos, errs := chess.Load(fen, v.Moves, chess.Standard)
		if errs != nil {
			t.Fatal(errs)
		}
		if len(v.Moves) > 40 {
			t.Fatalf("no mate after %d plies: %v", len(v.Moves), v.MovesSAN)
		}
		c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: pos.LegalMoves()[0].String()})
		v = c.state()
	}
	t.Logf("%s (ms: %v)", strings.Join(v.MovesSAN, " "), v.TimesMS)
	checkResult(t, v, "w", "checkmate", "1-0")
	if !strings.HasSuffix(v.MovesSAN[len(v.MovesSAN)-1], "#") {
		t.Errorf("the last move %v is no mate", v.MovesSAN)
	}
	waitIdle(t)
}

// TestChessDrawsByRules: the human's move ends the game by the rules:
// stalemate, insufficient material; the record's end is 1/2-1/2.
func TestChessDrawsByRules(t *testing.T) {
	m := New(Config{Service: svc})
	defer m.Close(context.Background())
	c := newConn(t, m, "dave")
	for _, tc := range []struct{ fen, move, reason string }{
		{"7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", "f1f7", "stalemate"},
		{"8/8/4k3/8/4r3/3K4/8/8 w - - 0 1", "d3e4", "insufficient_material"},
	} {
		c.send(startReq("g", "stockfish", `{"side":"w","clock":{"b":{"main_ms":60000},"w":{"main_ms":60000}}}`, &session.Position{Game: "chess", Start: tc.fen}))
		v := c.state()
		c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: tc.move})
		checkResult(t, c.state(), "", tc.reason, "1/2-1/2")
		waitIdle(t)
	}
	// A position where the game is over already is refused.
	c.send(startReq("g", "stockfish", `{"side":"w","clock":{"b":{"main_ms":60000},"w":{"main_ms":60000}}}`, &session.Position{Game: "chess", Start: "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"}))
	if code := c.errorCode(); code != session.CodeInvalidField {
		t.Errorf("a stalemated start: %s", code)
	}
}

// TestChessThreefoldAfterDoublePush: the position after 1.e4 comes a third
// time with the human's 5.Ng1, and the game is drawn by repetition: its
// first occurrence carries an en-passant square no pawn can use, which
// FIDE 9.2.3 does not count (before: the game went on).
func TestChessThreefoldAfterDoublePush(t *testing.T) {
	m := New(Config{Service: svc})
	defer m.Close(context.Background())
	c := newConn(t, m, "gina")
	history := strings.Fields("e2e4 g8f6 g1f3 f6g8 f3g1 g8f6 g1f3 f6g8")
	c.send(startReq("g", "stockfish", `{"side":"w","clock":{"b":{"main_ms":60000},"w":{"main_ms":60000}}}`, &session.Position{Game: "chess", Start: "startpos", Moves: history}))
	v := c.state()
	if v.Status != statusPlaying {
		t.Fatalf("the game starts %s", v.Status)
	}
	c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: "f3g1"})
	checkResult(t, c.state(), "", "repetition", "1/2-1/2")
	waitIdle(t)
}

// TestChessLossOnTime: the human does not move: lost on time (0-1); but
// against an engine left with its king alone the flag is a draw.
func TestChessLossOnTime(t *testing.T) {
	m := New(Config{Service: svc})
	defer m.Close(context.Background())
	c := newConn(t, m, "erin")
	c.send(startReq("g", "stockfish", `{"side":"w","clock":{"b":{"main_ms":60000},"w":{"main_ms":200,"inc_ms":100}}}`, &session.Position{Game: "chess", Start: "startpos"}))
	v := c.until(ended)
	checkResult(t, v, "b", "time", "0-1")
	c.send(startReq("g", "stockfish", `{"side":"w","clock":{"b":{"main_ms":60000},"w":{"main_ms":200}}}`, &session.Position{Game: "chess", Start: "4k3/8/8/8/8/8/8/3QK3 w - - 0 1"}))
	v = c.until(ended)
	checkResult(t, v, "", "time", "1/2-1/2")
	waitIdle(t)
}

// TestChessRefusals: what chess games refuse at the start.
func TestChessRefusals(t *testing.T) {
	m := New(Config{Service: svc})
	defer m.Close(context.Background())
	c := newConn(t, m, "frank")
	for _, tc := range []struct {
		engine, opts string
		pos          *session.Position
		code         string
	}{
		{"stockfish", `{"side":"w","clock":{"b":{"byoyomi_ms":1000},"w":{"byoyomi_ms":1000}}}`, &session.Position{Game: "chess", Start: "startpos"}, session.CodeInvalidField},
		{"fairy", `{"side":"w","clock":{"b":{"main_ms":1000},"w":{"main_ms":1000}}}`, &session.Position{Game: "chess", Start: "startpos"}, session.CodeGameMismatch},
		{"stockfish", `{"side":"w","clock":{"b":{"main_ms":1000},"w":{"main_ms":1000}}}`, nil, session.CodeGameMismatch},
		{"fairy", `{"side":"b","clock":{"b":{"main_ms":1000,"moves":40},"w":{"main_ms":1000}}}`, nil, session.CodeInvalidField},
	} {
		c.send(startReq("g", tc.engine, tc.opts, tc.pos))
		if code := c.errorCode(); code != tc.code {
			t.Errorf("%s %s %+v: %s, want %s", tc.engine, tc.opts, tc.pos, code, tc.code)
		}
	}
	// play_declare: chess has none.
	c.send(startReq("g", "stockfish", `{"side":"w","clock":{"b":{"main_ms":60000},"w":{"main_ms":60000}}}`, &session.Position{Game: "chess", Start: "startpos"}))
	v := c.state()
	c.send(&session.Request{Type: session.TypePlayDeclare, ID: "d", Game: v.ID})
	if code := c.errorCode(); code != session.CodeUnsupported {
		t.Errorf("play_declare in chess: %s", code)
	}
	c.send(&session.Request{Type: session.TypePlayResign, ID: "r", Game: v.ID})
	checkResult(t, c.until(ended), "b", "resign", "0-1")
	waitIdle(t)
}

// TestChessBoardEndings: the board's rules of the end that an engine will
// not walk into on demand: the same position a third time, the fifty-move
// rule, a period of moves that gives the main time again.
func TestChessBoardEndings(t *testing.T) {
	b := boardFrom(t, "chess", "startpos")
	moves := strings.Fields("g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8")
	for i, mv := range moves {
		r := b.play(mv)
		if (r != nil) != (i == len(moves)-1) {
			t.Fatalf("after %s (%d): %+v", mv, i, r)
		}
		if r != nil && (r.Reason != "repetition" || r.Winner != "" || b.record(r) != "1/2-1/2") {
			t.Errorf("threefold: %+v %s", r, b.record(r))
		}
	}
	b = boardFrom(t, "chess", "4k3/8/8/8/8/8/4P3/R3K3 w - - 99 80")
	if r := b.play("a1a2"); r == nil || r.Reason != "fifty_moves" {
		t.Errorf("fifty moves: %+v", r)
	}
	g := &game{m: New(Config{}), b: b}
	g.st.TC = Sides{W: TimeControl{MainMS: 1000, Moves: 2}}
	g.st.Main[1] = 10
	for i := range 2 {
		g.periodEnd(1)
		if want := []int64{10, 1010}[i]; g.st.Main[1] != want || g.toGo(1) != 2-(i+1)%2 {
			t.Errorf("after move %d: main %d to go %d, want %d", i+1, g.st.Main[1], g.toGo(1), want)
		}
	}
}

// TestChess960Play: a Chess960 game against stockfish: the human castles
// king-takes-rook, and the game goes on with the engine told UCI_Chess960.
func TestChess960Play(t *testing.T) {
	m := New(Config{Service: svc})
	defer m.Close(context.Background())
	c := newConn(t, m, "gina")
	fen := "1r2k2r/pppq1ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPPQ1PPP/1R2K2R w HBhb - 0 8"
	c.send(startReq("g", "stockfish", `{"side":"w","clock":{"b":{"main_ms":2000,"inc_ms":100},"w":{"main_ms":60000}}}`, &session.Position{Game: "chess", Start: fen, Variant: "chess960"}))
	v := c.state()
	if v.Variant != "chess960" {
		t.Fatalf("start: %+v", v.Public)
	}
	c.send(&session.Request{Type: session.TypePlayMove, ID: "m", Game: v.ID, Move: "e1h1"})
	v = c.state()
	v = c.state() // the engine's answer
	pos, errs := chess.Load(fen, v.Moves, chess.Chess960)
	if v.Status != statusPlaying || len(v.Moves) != 2 || v.MovesSAN[0] != "O-O" || errs != nil || pos == nil {
		t.Errorf("after O-O: %+v %v", v.Public, errs)
	}
	c.send(&session.Request{Type: session.TypePlayResign, ID: "r", Game: v.ID})
	checkResult(t, c.until(ended), "b", "resign", "0-1")
	waitIdle(t)
}
