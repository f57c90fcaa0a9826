package session

// CheckAnalysis checks an analysis request as a session would take it
// (engine name, notation, the position and its moves, multipv and limits
// against the caps) without running it, and returns the checked position
// and the engine it would run on (the position's game's first engine when r
// names none). Package broadcast checks a broadcast's every new position
// with it before the search is asked for.
func (c *Service) CheckAnalysis(r *Request) (*Checked, string, *Error) {
	a := *r
	a.Type = TypeAnalyze
	j, err := c.newJob(&a)
	if err != nil {
		return nil, "", err
	}
	return j.pos, j.engine, nil
}
