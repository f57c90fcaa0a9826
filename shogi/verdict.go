package shogi

import "encoding/json"

// Verdict is the full answer about a position and move list, shaped as
// usid's /v1/validate and `usid validate` print it.
type Verdict struct {
	Valid bool `json:"valid"`
	// SFEN is the canonical SFEN of the final position when valid; otherwise of
	// the last position reached (the start position if it breaks a rule, the
	// position before the refused move), or empty if the SFEN did not parse.
	SFEN       string   `json:"sfen"`
	SideToMove string   `json:"side_to_move,omitempty"` // "b" or "w"
	InCheck    bool     `json:"in_check"`
	Checkmate  bool     `json:"checkmate"`
	LegalMoves []string `json:"legal_moves"` // empty unless valid
	Errors     []*Error `json:"errors"`      // empty when valid
}

// Inspect loads sfen and moves like Load and reports the result as a Verdict.
func Inspect(sfen string, moves []string) Verdict {
	p, errs := Load(sfen, moves)
	v := Verdict{Valid: errs == nil, LegalMoves: []string{}, Errors: errs}
	if errs == nil {
		v.Errors = []*Error{}
	}
	if p == nil {
		return v
	}
	v.SFEN = p.SFEN()
	v.SideToMove = p.turn.String()
	if !v.Valid && errs[0].MoveIndex < 0 {
		return v // the position breaks a rule: check and moves mean nothing
	}
	v.InCheck = p.InCheck()
	if v.Valid {
		var buf [MaxMoves]Move
		for _, m := range p.appendLegal(buf[:0]) {
			v.LegalMoves = append(v.LegalMoves, m.String())
		}
		v.Checkmate = v.InCheck && len(v.LegalMoves) == 0
	}
	return v
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
