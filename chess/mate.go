package chess

// FindMate looks for a forced mate by the side to move in at most plies
// plies (odd: the mating side moves first and last). It returns the moves
// of one mating line (the defender's replies the first it found) and true,
// or false when there is none within plies or the search spent budget
// nodes (budget bounds the work: a node is one position whose legal moves
// are generated). Every defender reply along the returned line was shown
// mated too: the line is a proof. Engines' principal variations are often
// cut short of the mate they announce; this finishes them.
func (p *Position) FindMate(plies, budget int) ([]Move, bool) {
	line, ok := p.findMate(plies, &budget)
	return line, ok
}

func (p *Position) findMate(plies int, budget *int) ([]Move, bool) {
	if plies < 1 || *budget <= 0 {
		return nil, false
	}
	*budget--
	var buf [MaxMoves]Move
	moves := p.appendLegal(buf[:0])
	// Mates in one first: they are the cheap answers.
	for _, m := range moves {
		q := *p
		q.Play(m)
		*budget--
		if q.IsCheckmate() {
			return []Move{m}, true
		}
	}
	if plies < 3 {
		return nil, false
	}
	for _, m := range moves {
		q := *p
		q.Play(m)
		var rbuf [MaxMoves]Move
		replies := q.appendLegal(rbuf[:0])
		if len(replies) == 0 {
			continue // stalemate (a mate was found above)
		}
		var line []Move
		forced := true
		for _, d := range replies {
			r := q
			r.Play(d)
			sub, ok := r.findMate(plies-2, budget)
			if !ok {
				forced = false
				break
			}
			if line == nil {
				line = append([]Move{m, d}, sub...)
			}
		}
		if forced {
			return line, true
		}
		if *budget <= 0 {
			return nil, false
		}
	}
	return nil, false
}
