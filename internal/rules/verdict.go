package rules

// Loaded is what a verdict asks of a loaded position.
type Loaded interface {
	// SideLetter is the side to move as the game's position notation writes it.
	SideLetter() string
	InCheck() bool
	// LegalMoves lists the legal moves in the game's move notation.
	LegalMoves() []string
}

// Facts is the part of a verdict both games share: whether the position and
// moves are legal, who is to move and what they can do.
type Facts struct {
	Valid      bool
	SideToMove string
	InCheck    bool
	Checkmate  bool
	Stalemate  bool
	LegalMoves []string // empty, never nil, unless valid
	Errors     []*Error // empty, never nil, when valid
}

// Judge reports the facts of a load's result: p is the position reached (nil
// if it did not parse), errs what the load refused.
func Judge(p Loaded, errs []*Error) Facts {
	f := Facts{Valid: errs == nil, LegalMoves: []string{}, Errors: errs}
	if errs == nil {
		f.Errors = []*Error{}
	}
	if p == nil {
		return f
	}
	f.SideToMove = p.SideLetter()
	if !f.Valid && errs[0].MoveIndex < 0 {
		return f // the position breaks a rule: check and moves mean nothing
	}
	f.InCheck = p.InCheck()
	if f.Valid {
		f.LegalMoves = append(f.LegalMoves, p.LegalMoves()...)
		f.Checkmate = f.InCheck && len(f.LegalMoves) == 0
		f.Stalemate = !f.InCheck && len(f.LegalMoves) == 0
	}
	return f
}
