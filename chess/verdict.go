package chess

import "github.com/usid/usid/internal/rules"

// IsCheckmate reports whether the side to move is in check with no legal move.
func (p *Position) IsCheckmate() bool {
	var buf [MaxMoves]Move
	return p.InCheck() && len(p.appendLegal(buf[:0])) == 0
}

// IsStalemate reports whether the side to move is not in check and has no
// legal move.
func (p *Position) IsStalemate() bool {
	var buf [MaxMoves]Move
	return !p.InCheck() && len(p.appendLegal(buf[:0])) == 0
}

// Verdict is the full answer about a position and move list, shaped as
// usid's /v1/validate and `usid validate` print it for chess.
type Verdict struct {
	Valid bool `json:"valid"`
	// FEN is the FEN of the final position when valid; otherwise of the last
	// position reached (the start position if it breaks a rule, the position
	// before the refused move), or empty if the FEN did not parse.
	FEN        string   `json:"fen"`
	SideToMove string   `json:"side_to_move,omitempty"` // "w" or "b"
	InCheck    bool     `json:"in_check"`
	Checkmate  bool     `json:"checkmate"`
	Stalemate  bool     `json:"stalemate"`
	LegalMoves []string `json:"legal_moves"` // UCI; empty unless valid
	Errors     []*Error `json:"errors"`      // empty when valid
}

// Inspect loads fen and moves like Load and reports the result as a Verdict.
func Inspect(fen string, moves []string, v Variant) Verdict {
	p, errs := Load(fen, moves, v)
	var f rules.Facts
	out := Verdict{}
	if p == nil {
		f = rules.Judge(nil, errs)
	} else {
		f = rules.Judge(loaded{p}, errs)
		out.FEN = p.FEN()
	}
	out.Valid, out.SideToMove, out.InCheck = f.Valid, f.SideToMove, f.InCheck
	out.Checkmate, out.Stalemate = f.Checkmate, f.Stalemate
	out.LegalMoves, out.Errors = f.LegalMoves, f.Errors
	return out
}

// loaded is a Position as rules.Judge asks for it.
type loaded struct{ p *Position }

func (l loaded) SideLetter() string { return l.p.turn.String() }
func (l loaded) InCheck() bool      { return l.p.InCheck() }
func (l loaded) LegalMoves() []string {
	var buf [MaxMoves]Move
	return rules.Strings(l.p.appendLegal(buf[:0]))
}
