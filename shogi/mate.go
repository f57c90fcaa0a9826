package shogi

// Tsume lines as proofs.
//
// An engine's mate line is one variation of a mate. It proves the position
// a forced mate only if the defender could not do better than the moves
// the line gives it: at every defender move, every legal alternative must
// be mated too. ProveMateLine checks the line itself exactly, then refutes
// the alternatives with a small AND/OR search (attacker: checks only, as
// tsume rules require; defender: every legal reply) bounded by the length
// the line has left and by a node budget, because the search is
// exponential in that length.

// MateProof says how far a mate line was proved.
type MateProof string

const (
	// MateForced: the line is a correct tsume line and every legal
	// alternative of the defender along it is mated within the moves the
	// line had left: the position is a forced mate, and the line a proof.
	MateForced MateProof = "forced"
	// MateLineOnly: the line is a correct tsume line and no alternative
	// examined escaped, but the node budget ran out before every
	// alternative was refuted: the line is checked, the mate not proved.
	MateLineOnly MateProof = "line"
)

// DefaultMateBudget is the node budget of VerifyMateLine (attacker nodes:
// each generates its checks and every defender reply): about a
// quarter of a second of search on one core, at most, per mate answer.
const DefaultMateBudget = 10000

// VerifyMateLine is ProveMateLine with DefaultMateBudget.
func (p *Position) VerifyMateLine(moves []string) (MateProof, error) {
	return p.ProveMateLine(moves, DefaultMateBudget)
}

// ProveMateLine checks a tsume solution from p, whose side to move is the
// attacker. The line must be legal move by move; attacker and defender
// alternate, the attacker moving at even indexes; every attacker move gives
// check; the line ends with the attacker's move (an odd number of moves)
// and the defender checkmated; nothing follows the mate. Then, from the
// last defender move back to the first, every legal alternative to the
// defender's move must be mated within the attacker moves the line has
// left after it; budget bounds the nodes searched for that.
//
// A line that breaks a rule, or whose defender had an alternative that
// escapes mate within the remaining length, is an *Error (code not_a_mate,
// or the move's own code when a move is illegal) whose MoveIndex names the
// move at fault. Otherwise the result says whether every alternative was
// refuted (MateForced) or the budget ran out first (MateLineOnly).
func (p *Position) ProveMateLine(moves []string, budget int) (MateProof, error) {
	if len(moves) == 0 {
		return "", newError(CodeMateLine, "the mate line is empty")
	}
	q := *p
	attacker := q.turn
	before := make([]Position, len(moves)) // the position before each move
	played := make([]Move, len(moves))
	for i, s := range moves {
		m, err := q.CheckMove(s)
		if err != nil {
			e := *err.(*Error)
			e.MoveIndex = i
			return "", &e
		}
		before[i], played[i] = q, m
		q.do(m)
		if q.turn != attacker && !q.InCheck() {
			return "", mateLineError(i, "%s does not give check", m)
		}
	}
	if len(moves)%2 == 0 {
		return "", mateLineError(len(moves)-1, "the line ends with the defender's move %s; a tsume line ends with the attacker's", played[len(moves)-1])
	}
	if !q.IsCheckmate() {
		return "", mateLineError(len(moves)-1, "the line ends without checkmate")
	}

	pr := &prover{budget: budget, tt: map[posKey]ttEntry{}}
	proof := MateForced
	for i := len(moves) - 2; i >= 1; i -= 2 {
		// Attacker moves left after the defender's move i.
		left := (len(moves) - i) / 2
		d := before[i]
		var buf [MaxMoves]Move
		for _, alt := range d.appendLegal(buf[:0]) {
			if alt == played[i] {
				continue
			}
			u := d.do(alt)
			r := pr.attack(&d, left)
			d.undo(alt, u)
			switch r {
			case disproved:
				return "", mateLineError(i, "the defender's alternative %s to %s escapes mate within %d moves", alt, played[i], 2*left-1)
			case unknown:
				proof = MateLineOnly
			}
		}
	}
	return proof, nil
}

func mateLineError(i int, format string, args ...any) *Error {
	e := newError(CodeMateLine, format, args...)
	e.MoveIndex = i
	return e
}

type outcome uint8

const (
	disproved outcome = iota // no mate within the bound
	proved                   // mate within the bound
	unknown                  // the budget ran out
)

// posKey is a position without its move number, for the table.
type posKey struct {
	board [81]Piece
	hand  [2][King + 1]uint8
	turn  Color
}

// ttEntry records, for an attacker-to-move position, the fewest attacker
// moves a mate was found in and the most it was shown impossible in.
type ttEntry struct {
	proved    int // 0: none found
	disproved int // 0: nothing shown
}

// prover is the bounded AND/OR search.
type prover struct {
	budget, nodes int
	tt            map[posKey]ttEntry
}

func keyOf(p *Position) posKey { return posKey{p.board, p.hand, p.turn} }

// attack: can the side to move mate within n moves of its own, every one a
// check?
func (pr *prover) attack(p *Position, n int) outcome {
	if n <= 0 {
		return disproved
	}
	k := keyOf(p)
	e := pr.tt[k]
	if e.proved > 0 && e.proved <= n {
		return proved
	}
	if e.disproved >= n {
		return disproved
	}
	if pr.nodes >= pr.budget {
		return unknown
	}
	pr.nodes++
	res := disproved
	var buf [MaxMoves]Move
	ksq := p.king[p.turn^1]
	for _, m := range p.appendCheckCandidates(buf[:0], ksq) {
		u := p.do(m)
		if p.givesCheck(m, ksq) {
			switch pr.defend(p, n) {
			case proved:
				p.undo(m, u)
				e := pr.tt[k]
				if e.proved == 0 || n < e.proved {
					e.proved = n
				}
				pr.tt[k] = e
				return proved
			case unknown:
				res = unknown
			}
		}
		p.undo(m, u)
	}
	if res == disproved {
		e := pr.tt[k]
		e.disproved = max(e.disproved, n)
		pr.tt[k] = e
	}
	return res
}

// defend: the defender, in check, with the attacker having n moves left
// counting the one just played: is every reply mated in time?
func (pr *prover) defend(p *Position, n int) outcome {
	var buf [MaxMoves]Move
	replies := p.appendLegal(buf[:0])
	if len(replies) == 0 {
		return proved
	}
	if n <= 1 {
		return disproved
	}
	res := proved
	for _, d := range replies {
		u := p.do(d)
		r := pr.attack(p, n-1)
		p.undo(d, u)
		switch r {
		case disproved:
			return disproved
		case unknown:
			res = unknown
		}
	}
	return res
}

// givesCheck reports whether m, just played, checks the king on ksq: the
// moved piece attacks it, or m opened a line to it. Cheaper than InCheck
// for the many moves that do neither.
func (p *Position) givesCheck(m Move, ksq Square) bool {
	if ksq == NoSquare {
		return false
	}
	if p.reaches(m.To, ksq, p.board[m.To]) {
		return true
	}
	if m.Drop != NoKind {
		return false
	}
	// A discovered check needs m.From on a line with the king (adjacent
	// squares included: the opened slider may stand behind).
	dr, dc := int(m.From)/9-int(ksq)/9, int(m.From)%9-int(ksq)%9
	if dr != 0 && dc != 0 && dr != dc && dr != -dc {
		return false
	}
	return p.InCheck()
}

// appendCheckCandidates appends the attacker's legal board moves and only
// those legal drops that attack the king on ksq: most drops cannot check,
// and generating them all dominates the search's cost.
func (p *Position) appendCheckCandidates(ms []Move, ksq Square) []Move {
	us := p.turn
	hand := p.hand[us]
	p.hand[us] = [King + 1]uint8{}
	ms = p.appendLegal(ms)
	p.hand[us] = hand
	if ksq == NoSquare {
		return ms
	}
	// Squares from which a dropped piece may attack ksq: along the eight
	// lines from the king up to the first piece, and the knight squares.
	for d := 0; d < numDirs; d++ {
		for s := neighbor[ksq][d]; s != NoSquare && p.board[s] == NoPiece; s = neighbor[s][d] {
			for k := Pawn; k <= Gold; k++ {
				if hand[k] == 0 {
					continue
				}
				m := Move{From: NoSquare, To: s, Drop: k}
				if p.reaches(s, ksq, NewPiece(us, k)) && p.IsLegal(m) {
					ms = append(ms, m)
				}
			}
			if d >= 8 {
				break // a knight square is one jump, not a line
			}
		}
	}
	return ms
}
