package review

import (
	"strings"
	"testing"
	"time"

	"github.com/usid/usid/chess"
	"github.com/usid/usid/game"
	"github.com/usid/usid/internal/testwait"
	"github.com/usid/usid/session"
)

// chessLimits: a node count, which stockfish honours natively, so that a
// busy machine changes the time a search takes and not its answer.
var chessLimits = &session.Limits{Nodes: 300_000}

// analyseChess analyses a chess game on stockfish and checks its shape: one
// entry per position with its FEN and side, evaluations from White's side
// (the side to move's score turned where Black is to move), every best move
// legal, every move played judged on the chess curve.
func analyseChess(t *testing.T, m *Manager, fen string, moves []string) *View {
	t.Helper()
	v, err := m.Start(session.Caller{Client: "c1"}, &Request{Position: &session.Position{Game: "chess", Start: fen, Moves: moves},
		Limits: chessLimits, Notation: "san"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Engine != "stockfish" {
		t.Errorf("engine %q: a chess game naming no engine goes to the first chess engine", v.Engine)
	}
	v = wait(t, m, "c1", v.ID, 3*time.Minute)
	if v.Status != StatusDone || len(v.Positions) != len(moves)+1 {
		t.Fatalf("status %s (%+v), %d positions for %d moves", v.Status, v.Error, len(v.Positions), len(moves))
	}
	if fen == "startpos" {
		fen = chess.StartFEN
	}
	start, errs := chess.Load(fen, nil, chess.Standard)
	if errs != nil {
		t.Fatal(errs)
	}
	pos := *start
	for i, p := range v.Positions {
		side := "w"
		if pos.Turn() == chess.Black {
			side = "b"
		}
		if p == nil || p.Position != pos.FEN() || p.field != "fen" || p.SideToMove != side || p.Eval == nil || p.WinRate == nil {
			t.Fatalf("ply %d: %+v, want fen %q side %s with an evaluation", i, p, pos.FEN(), side)
		}
		if p.Checkmate == false && p.Draw == "" {
			m, err := pos.CheckMove(p.BestMove)
			if err != nil || p.BestMoveSAN != pos.SAN(m) || len(p.PVSAN) == 0 || p.PV[0] != p.BestMove {
				t.Errorf("ply %d: bestmove %q (%s) pv %v: %v", i, p.BestMove, p.BestMoveSAN, p.PVSAN, err)
			}
		}
		if i == len(moves) {
			break
		}
		mv, err := pos.CheckMove(moves[i])
		if err != nil {
			t.Fatal(err)
		}
		if p.Move != moves[i] || p.MoveSAN != pos.SAN(mv) || p.Judgement == "" || p.WinRateLoss == nil {
			t.Errorf("ply %d: move %s (%s) judgement %q loss %v", i, p.Move, p.MoveSAN, p.Judgement, p.WinRateLoss)
		}
		// The judgement, from the evaluations shown: White's side turned
		// to the mover's, on lichess's curve.
		if p.WinRateLoss != nil {
			best, played := p.BestEval, v.Positions[i+1].Eval
			if p.BestMove == p.Move {
				best = played
			}
			if side == "b" {
				best, played = negate(best), negate(played)
			}
			drop, j := judgeOn(best, played, DefaultThresholds(), game.Named("chess").WinRateScale())
			if j != p.Judgement || round(drop, 4) != *p.WinRateLoss {
				t.Errorf("ply %d: %s %v, want %s %v from best %+v played %+v", i, p.Judgement, *p.WinRateLoss, j, drop, best, played)
			}
		}
		pos.Play(mv)
	}
	testwait.For(t, "stockfish idle", 2*time.Minute, func() bool { return idle("stockfish") })
	return v
}

// TestAnalyseChessGame: a game with a planted blunder (5.Qg4??, the queen
// left to the knight on f6) on stockfish: that move is a blunder, the
// others are not; White's evaluation falls from about even to lost.
func TestAnalyseChessGame(t *testing.T) {
	m := newManager(t, nil)
	moves := strings.Fields("e2e4 e7e5 b1c3 g8f6 f1c4 b8c6 d2d3 f8c5 d1g4 f6g4 g1f3 d7d6 h2h3 g4f6")
	v := analyseChess(t, m, "startpos", moves)
	for i, p := range v.Positions[:len(moves)] {
		if i == 8 {
			if p.Judgement != JudgementBlunder || p.MoveSAN != "Qg4" {
				t.Errorf("5.Qg4: %s (%s), want a blunder", p.Judgement, p.MoveSAN)
			}
			continue
		}
		if p.Judgement == JudgementBlunder || p.Judgement == JudgementMistake {
			t.Errorf("ply %d %s: %s (loss %v), want no worse than an inaccuracy", i, p.MoveSAN, p.Judgement, *p.WinRateLoss)
		}
	}
	if before, after := *v.Positions[8].WinRate, *v.Positions[9].WinRate; before < 0.35 || after > 0.1 {
		t.Errorf("White's win rate %v before 5.Qg4, %v after: want about even, then lost", before, after)
	}
	if s := v.Summary; s.White.Blunders != 1 || s.Black.Blunders != 0 || s.White.Moves != 7 || s.Black.Moves != 7 {
		t.Errorf("summary %+v", s)
	}
}

// TestAnalyseChessEndings: games that end by the rules. The last position
// is evaluated by them, no engine asked: checkmate (mate 0, from White's
// side), stalemate, insufficient material and repetition (0, a draw,
// named); a move that stalemates when it could mate is a blunder.
func TestAnalyseChessEndings(t *testing.T) {
	m := newManager(t, nil)
	for _, tc := range []struct {
		name, fen string
		moves     []string
		draw      string
		winrate   float64
	}{
		{"fool's mate", "startpos", strings.Fields("f2f3 e7e5 g2g4 d8h4"), "", 0},
		{"stalemate", "7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", []string{"f1f7"}, "stalemate", 0.5},
		{"insufficient material", "8/8/4k3/8/4n3/3K4/8/8 w - - 0 1", []string{"d3e4"}, "insufficient_material", 0.5},
		// The position after 1.e4 a third time: its e3 is no en-passant
		// right, no pawn can take there (FIDE 9.2.3).
		{"repetition", "startpos", strings.Fields("e2e4 g8f6 g1f3 f6g8 f3g1 g8f6 g1f3 f6g8 f3g1"), "repetition", 0.5},
	} {
		v := analyseChess(t, m, tc.fen, tc.moves)
		last := v.Positions[len(tc.moves)]
		if last.BestMove != "" || last.Draw != tc.draw || last.Checkmate != (tc.draw == "") || *last.WinRate != tc.winrate {
			t.Errorf("%s: last position %+v, want draw %q win rate %v by the rules", tc.name, last, tc.draw, tc.winrate)
		}
		switch tc.name {
		case "fool's mate":
			if e := last.Eval; e.Mate == nil || *e.Mate != 0 || e.MateSign != "-" {
				t.Errorf("%s: eval %+v, want mate 0, White mated", tc.name, e)
			}
			if p := v.Positions[2]; p.Judgement != JudgementBlunder {
				t.Errorf("%s: 2.g4 %s, want a blunder (it allows mate in one)", tc.name, p.Judgement)
			}
		case "stalemate":
			if p := v.Positions[0]; p.Judgement != JudgementBlunder || p.BestEval == nil || p.BestEval.Mate == nil {
				t.Errorf("%s: Qf7 %+v, want a blunder against a mate", tc.name, p)
			}
		}
	}
}

// TestChessRecord: a PGN record is read as /v1/records/parse reads it.
func TestChessRecord(t *testing.T) {
	m := newManager(t, nil)
	bad := "[Event \"x\"]\n\n1. e4 e5 2. Ke3 *\n"
	if _, err := m.Start(session.Caller{Client: "c1"}, &Request{Record: &bad, Limits: chessLimits}); err == nil || err.Code != "san_illegal" || err.MoveIndex != 2 {
		t.Errorf("bad record: %v, want san_illegal at move 2", err)
	}
	rec := "[White \"a\"]\n[Black \"b\"]\n\n1. e4 e5 2. Nf3 *\n"
	v, err := m.Start(session.Caller{Client: "c1"}, &Request{Record: &rec, Limits: &session.Limits{Nodes: 20_000}})
	if err != nil {
		t.Fatal(err)
	}
	v = wait(t, m, "c1", v.ID, time.Minute)
	if v.Status != StatusDone || len(v.Positions) != 4 || v.Positions[2].Move != "g1f3" || v.Positions[0].Position != chess.StartFEN {
		t.Errorf("record: %s %+v", v.Status, v.Positions)
	}
	testwait.For(t, "stockfish idle", 2*time.Minute, func() bool { return idle("stockfish") })
}
