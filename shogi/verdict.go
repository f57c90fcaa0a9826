package shogi

import "github.com/usid/usid/internal/rules"

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
	var f rules.Facts
	v := Verdict{}
	if p == nil {
		f = rules.Judge(nil, errs)
	} else {
		f = rules.Judge(loaded{p}, errs)
		v.SFEN = p.SFEN()
	}
	v.Valid, v.SideToMove, v.InCheck, v.Checkmate = f.Valid, f.SideToMove, f.InCheck, f.Checkmate
	v.LegalMoves, v.Errors = f.LegalMoves, f.Errors
	return v
}

// loaded is a Position as rules.Judge asks for it.
type loaded struct{ p *Position }

func (l loaded) SideLetter() string { return l.p.turn.String() }
func (l loaded) InCheck() bool      { return l.p.InCheck() }
func (l loaded) LegalMoves() []string {
	var buf [MaxMoves]Move
	return rules.Strings(l.p.appendLegal(buf[:0]))
}
