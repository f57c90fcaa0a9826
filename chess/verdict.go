package chess

import "encoding/json"

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
	out := Verdict{Valid: errs == nil, LegalMoves: []string{}, Errors: errs}
	if errs == nil {
		out.Errors = []*Error{}
	}
	if p == nil {
		return out
	}
	out.FEN = p.FEN()
	out.SideToMove = p.turn.String()
	if !out.Valid && errs[0].MoveIndex < 0 {
		return out // the position breaks a rule: check and moves mean nothing
	}
	out.InCheck = p.InCheck()
	if out.Valid {
		var buf [MaxMoves]Move
		for _, m := range p.appendLegal(buf[:0]) {
			out.LegalMoves = append(out.LegalMoves, m.String())
		}
		out.Checkmate = out.InCheck && len(out.LegalMoves) == 0
		out.Stalemate = !out.InCheck && len(out.LegalMoves) == 0
	}
	return out
}

// MarshalJSON writes {"code", "message", "move_index"?}; move_index only for moves.
func (e *Error) MarshalJSON() ([]byte, error) {
	type problem struct {
		Code      Code   `json:"code"`
		Message   string `json:"message"`
		MoveIndex *int   `json:"move_index,omitempty"`
	}
	p := problem{Code: e.Code, Message: e.Message}
	if e.MoveIndex >= 0 {
		p.MoveIndex = &e.MoveIndex
	}
	return json.Marshal(p)
}
