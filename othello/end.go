package othello

import "github.com/usid/usid/internal/rules"

// Winner is who won an ended game.
type Winner string

const (
	BlackWins Winner = "black"
	WhiteWins Winner = "white"
	Draw      Winner = "draw"
)

// Result is the outcome of an ended game, by disc count.
type Result struct {
	Winner Winner `json:"winner"`
	// BlackDiscs and WhiteDiscs are the discs on the board.
	BlackDiscs int `json:"black_discs"`
	WhiteDiscs int `json:"white_discs"`
	// Black and White are the final score: the discs with the empty squares
	// given as FinalScore says (the World Othello Federation's rule).
	Black int `json:"black"`
	White int `json:"white"`
}

// FinalScore returns the score of a game that ended with black and white
// discs on the board, by the World Othello Federation's rule: the empty
// squares go to the winner; in a draw they are shared equally. The two
// scores add up to 64: 33 black, 28 white and 3 empty score 36-28.
func FinalScore(black, white int) (b, w int) {
	empty := 64 - black - white
	switch {
	case black > white:
		return black + empty, white
	case white > black:
		return black, white + empty
	}
	return black + empty/2, white + empty - empty/2
}

// Outcome returns the result of p if the game is over (neither side can
// move), and false otherwise.
func (p *Position) Outcome() (Result, bool) {
	if !p.IsOver() {
		return Result{}, false
	}
	r := Result{BlackDiscs: p.Discs(Black), WhiteDiscs: p.Discs(White)}
	r.Black, r.White = FinalScore(r.BlackDiscs, r.WhiteDiscs)
	switch {
	case r.BlackDiscs > r.WhiteDiscs:
		r.Winner = BlackWins
	case r.WhiteDiscs > r.BlackDiscs:
		r.Winner = WhiteWins
	default:
		r.Winner = Draw
	}
	return r, true
}

// Verdict is the full answer about a position and move list, shaped as
// usid's /v1/validate and `usid validate` print it for othello.
type Verdict struct {
	Valid bool `json:"valid"`
	// Othello is the USI-X token of the final position when valid; otherwise
	// of the last position reached (the start position if it breaks a rule,
	// the position before the refused move), or empty if it did not parse.
	Othello    string `json:"othello"`
	SideToMove string `json:"side_to_move,omitempty"` // "b" or "w"
	InCheck    bool   `json:"in_check"`               // always false: othello has no check
	// LegalMoves is ["pass"] when the side to move must pass, [] when the
	// game is over or the input is not valid.
	LegalMoves []string `json:"legal_moves"`
	GameOver   bool     `json:"game_over"`
	Result     *Result  `json:"result,omitempty"` // when valid and over
	Errors     []*Error `json:"errors"`           // empty when valid
}

// Inspect loads position and moves like Load and reports the result as a
// Verdict.
func Inspect(position string, moves []string) Verdict {
	p, errs := Load(position, moves)
	var f rules.Facts
	v := Verdict{}
	if p == nil {
		f = rules.Judge(nil, errs)
	} else {
		f = rules.Judge(loaded{p}, errs)
		v.Othello = p.Token()
		if f.Valid {
			if r, over := p.Outcome(); over {
				v.GameOver, v.Result = true, &r
			}
		}
	}
	v.Valid, v.SideToMove, v.InCheck = f.Valid, f.SideToMove, false
	v.LegalMoves, v.Errors = f.LegalMoves, f.Errors
	return v
}

// loaded is a Position as rules.Judge asks for it.
type loaded struct{ p *Position }

func (l loaded) SideLetter() string   { return l.p.SideLetter() }
func (l loaded) InCheck() bool        { return false }
func (l loaded) LegalMoves() []string { return l.p.LegalMoveStrings() }
