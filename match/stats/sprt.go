package stats

import (
	"errors"
	"math"
)

// SPRT is a sequential test of H0: the Elo difference is Elo0, against
// H1: it is Elo1 (Elo0 < Elo1), with false positive rate Alpha and false
// negative rate Beta. The Elo is normalized unless Model says logistic.
type SPRT struct {
	Elo0, Elo1, Alpha, Beta float64
	Model                   string // Normalized ("") or Logistic
}

// Models of the SPRT's Elo.
const (
	Normalized = "normalized"
	Logistic   = "logistic"
)

// Decisions of an SPRT.
const (
	H0 = "H0" // the difference is Elo0 or less: stop, the change failed
	H1 = "H1" // the difference is Elo1 or more: stop, the change passed
)

// Check refuses a test that cannot decide.
func (s SPRT) Check() error {
	switch {
	case !(s.Alpha > 0 && s.Alpha < 0.5) || !(s.Beta > 0 && s.Beta < 0.5):
		return errors.New("alpha and beta: want 0 < x < 0.5")
	case !(s.Elo0 < s.Elo1):
		return errors.New("elo0 must be below elo1")
	case math.Abs(s.Elo0) > 1000 || math.Abs(s.Elo1) > 1000:
		return errors.New("elo0 and elo1: want -1000..1000")
	case s.Model != "" && s.Model != Normalized && s.Model != Logistic:
		return errors.New("model: want normalized or logistic")
	}
	return nil
}

// Bounds are the LLR's bounds: below lower, H0 is accepted; above upper,
// H1.
func (s SPRT) Bounds() (lower, upper float64) {
	return math.Log(s.Beta / (1 - s.Alpha)), math.Log((1 - s.Beta) / s.Alpha)
}

// Decide is the test's decision at llr: H0, H1, or "" to go on.
func (s SPRT) Decide(llr float64) string {
	lo, hi := s.Bounds()
	switch {
	case llr <= lo:
		return H0
	case llr >= hi:
		return H1
	}
	return ""
}

// emptyBin is the weight of an empty bin in the likelihoods (fishtest's).
const emptyBin = 1e-3

// LLR is the generalized log-likelihood ratio of H1 against H0 for the
// pair counts p: n·Σ f_i·ln(q1_i/q0_i), f being p's frequencies and q0,
// q1 the distributions of greatest likelihood for p whose Elo is Elo0
// and Elo1 (normalized: a t-value; logistic: a mean score). 0 for no
// pairs.
func (s SPRT) LLR(p Pentanomial) float64 {
	if p.Pairs() == 0 {
		return 0
	}
	f := pdf(p, emptyBin)
	var n float64
	for _, c := range p {
		n += max(float64(c), emptyBin)
	}
	var q0, q1 [5]float64
	if s.Model == Logistic {
		q0, q1 = mleMean(f, expected(s.Elo0)), mleMean(f, expected(s.Elo1))
	} else {
		// A pair's score has √2 times less spread than a game's: the
		// t-value of a pair's mean score is √2 times the per-game one.
		q0, q1 = mleT(f, s.Elo0/nEloScale*math.Sqrt2), mleT(f, s.Elo1/nEloScale*math.Sqrt2)
	}
	var llr float64
	for i := range f {
		llr += f[i] * math.Log(q1[i]/q0[i])
	}
	return n * llr
}

// mleT is the distribution q over the pair scores of greatest likelihood
// for frequencies f under the constraint (μ_q − ½)/σ_q = t. At the
// optimum q_i = f_i/(1 + ν·h_i), h_i = (a_i − ½) − t/2·((a_i − μ)²/σ + σ)
// (μ, σ of q itself, so that Σ q_i·h_i is the constraint), ν the root of
// Σ f_i·h_i/(1 + ν·h_i) = 0; μ and σ are brought to a fixed point.
func mleT(f [5]float64, t float64) [5]float64 {
	q := f
	for range 200 {
		mu, v := meanVar(q)
		sd := math.Sqrt(v)
		var h [5]float64
		for i, a := range pairScores {
			h[i] = (a - 0.5) - t/2*(sq(a-mu)/sd+sd)
		}
		nu := rootNu(f, h)
		var next [5]float64
		var change float64
		for i := range f {
			next[i] = f[i] / (1 + nu*h[i])
			change = max(change, math.Abs(next[i]-q[i]))
		}
		q = next
		if change < 1e-14 {
			break
		}
	}
	return q
}

// expected is the mean score of logistic Elo elo.
func expected(elo float64) float64 { return 1 / (1 + math.Pow(10, -elo/400)) }

// mleMean is the distribution q over the pair scores of greatest
// likelihood for frequencies f whose mean is mu: q_i = f_i/(1 + ν·(a_i −
// mu)), ν the root of Σ f_i·(a_i − mu)/(1 + ν·(a_i − mu)) = 0.
func mleMean(f [5]float64, mu float64) [5]float64 {
	var h [5]float64
	for i, a := range pairScores {
		h[i] = a - mu
	}
	nu := rootNu(f, h)
	var q [5]float64
	for i := range f {
		q[i] = f[i] / (1 + nu*h[i])
	}
	return q
}

// rootNu solves Σ f_i·h_i/(1 + ν·h_i) = 0 for ν with every 1 + ν·h_i
// positive, by bisection: the sum falls as ν grows.
func rootNu(f, h [5]float64) float64 {
	lo, hi := math.Inf(-1), math.Inf(1)
	for _, x := range h {
		switch {
		case x > 0:
			lo = max(lo, -1/x)
		case x < 0:
			hi = min(hi, -1/x)
		}
	}
	if math.IsInf(lo, -1) || math.IsInf(hi, 1) {
		return 0 // every h of one sign: no interior root; leave q as it is
	}
	g := func(nu float64) float64 {
		var s float64
		for i := range f {
			s += f[i] * h[i] / (1 + nu*h[i])
		}
		return s
	}
	a, b := lo, hi
	for range 200 {
		m := (a + b) / 2
		if m == a || m == b {
			break
		}
		if g(m) > 0 {
			a = m
		} else {
			b = m
		}
	}
	return (a + b) / 2
}
