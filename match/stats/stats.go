// Package stats computes what an engine match's results say: the Elo
// difference with its 95% interval and the likelihood of superiority
// (LOS), from game counts (trinomial: wins, draws, losses) or from pair
// counts (pentanomial: the score of each pair of games played from one
// opening with colours swapped), and the sequential probability ratio
// test (SPRT) that stops a match once it has decided.
//
// The formulas are the ones cutechess-cli, fastchess and fishtest publish:
//
//   - Elo is the logistic Elo of the mean score μ: −400·log10(1/μ − 1).
//     Its 95% interval maps μ ± 1.959964·σ/√n through the same curve, σ²
//     being the variance of one game's score (trinomial) or of one pair's
//     mean score (pentanomial), n the games or pairs; the interval's
//     half-width is what the tools print after "±".
//   - LOS: from games, ½(1 + erf((W − L)/√(2(W + L)))) (cutechess-cli);
//     from pairs, Φ((μ − ½)/(σ/√n)) (fastchess).
//   - Normalized Elo (nElo) is (μ − ½)/σ_game · 800/ln 10, σ_game being the
//     standard deviation of one game's score: for pairs √2 times that of a
//     pair's mean score.
//   - The SPRT tests H0: nElo = elo0 against H1: nElo = elo1 in normalized
//     Elo, as fishtest and fastchess do by default: the generalized SPRT's
//     log-likelihood ratio on the pentanomial counts, each hypothesis's
//     distribution the one of greatest likelihood for the counts among
//     those whose normalized Elo is the hypothesis's (found by
//     Lagrange multipliers and a fixed point, after Michel Van den Bergh's
//     notes on normalized Elo); the bounds ln(β/(1−α)) and ln((1−β)/α).
//     Normalized Elo was chosen over logistic Elo because its bounds mean
//     the same whatever the draw rate and time control (a strong pair of
//     shogi engines at 100 ms draws rarely; chess engines at 60 s often).
//
// Empty bins are counted as 0.001 of a pair in the SPRT, as fishtest
// does, so that a distribution with an empty bin still has a likelihood.
// Everything here is pure: values in, values out, safe for concurrent use.
package stats

import "math"

// z95 is the two-sided 95% quantile of the normal distribution.
const z95 = 1.959963984540054

// nEloScale is 800/ln 10: a normalized Elo per unit of (μ − ½)/σ.
var nEloScale = 800 / math.Ln10

// Trinomial is a match's game counts from one player's side.
type Trinomial struct {
	Wins, Draws, Losses int
}

// Pentanomial is a match's pair counts from one player's side, by the
// pair's score out of 2: [0] both lost, [1] a loss and a draw, [2] two
// draws or a win and a loss, [3] a win and a draw, [4] both won.
type Pentanomial [5]int

// Pairs is how many pairs p counts.
func (p Pentanomial) Pairs() int { return p[0] + p[1] + p[2] + p[3] + p[4] }

// Estimate is the Elo difference a match's counts give.
type Estimate struct {
	// Elo is the logistic Elo difference; Lo and Hi its 95% interval (Hi
	// − Elo is not Elo − Lo: the curve is not straight). ±Inf when the
	// score is all wins or all losses.
	Elo, Lo, Hi float64
	// Margin is the interval's half-width, (Hi − Lo)/2: what the tools
	// print after "±".
	Margin float64
	// LOS is the likelihood of superiority, 0..1.
	LOS float64
	// NElo and NEloMargin are the normalized Elo and its 95% half-width.
	NElo, NEloMargin float64
	// Score is the mean score, 0..1.
	Score float64
}

// Elo is logistic Elo of a mean score.
func Elo(score float64) float64 {
	return -400 * math.Log10(1/score-1)
}

// FromGames is the estimate from game counts (the trinomial model); ok is
// false when t counts no game.
func FromGames(t Trinomial) (e Estimate, ok bool) {
	n := float64(t.Wins + t.Draws + t.Losses)
	if n == 0 {
		return Estimate{}, false
	}
	w, d, l := float64(t.Wins)/n, float64(t.Draws)/n, float64(t.Losses)/n
	mu := w + d/2
	v := w*sq(1-mu) + d*sq(0.5-mu) + l*sq(mu)
	e = estimate(mu, v, n, v)
	if t.Wins+t.Losses > 0 {
		e.LOS = 0.5 * (1 + math.Erf(float64(t.Wins-t.Losses)/math.Sqrt(2*float64(t.Wins+t.Losses))))
	} else {
		e.LOS = 0.5
	}
	return e, true
}

// FromPairs is the estimate from pair counts (the pentanomial model); ok
// is false when p counts no pair.
func FromPairs(p Pentanomial) (e Estimate, ok bool) {
	n := float64(p.Pairs())
	if n == 0 {
		return Estimate{}, false
	}
	mu, v := meanVar(pdf(p, 0))
	e = estimate(mu, v, n, 2*v)
	switch se := math.Sqrt(v / n); {
	case se > 0:
		e.LOS = normCDF((mu - 0.5) / se)
	case mu > 0.5:
		e.LOS = 1
	case mu < 0.5:
		e.LOS = 0
	default:
		e.LOS = 0.5
	}
	return e, true
}

// estimate is the Elo of mean score mu whose unit (a game or a pair) has
// variance v over n units, and whose one game has variance vGame.
func estimate(mu, v, n, vGame float64) Estimate {
	se := math.Sqrt(v / n)
	e := Estimate{Score: mu, Elo: Elo(mu), Lo: Elo(mu - z95*se), Hi: Elo(mu + z95*se)}
	if mu-z95*se <= 0 {
		e.Lo = math.Inf(-1)
	}
	if mu+z95*se >= 1 {
		e.Hi = math.Inf(1)
	}
	// Every unit won (or every one lost): the variance is 0 and the normal
	// interval is the one point ±Inf, which says nothing of how far the
	// score can be from 1. The exact (Clopper–Pearson) bound of n units out
	// of n at its 2.5% tail, (0.025)^(1/n), bounds the rate of won units,
	// and so the mean score, from below: 17 pairs all won give at least
	// 0.805, +246 Elo. cutechess-cli and fastchess print no interval here.
	if v == 0 && (mu == 1 || mu == 0) {
		edge := math.Pow((1-0.95)/2, 1/n)
		if mu == 1 {
			e.Lo = Elo(edge)
		} else {
			e.Hi = Elo(1 - edge)
		}
	}
	e.Margin = (e.Hi - e.Lo) / 2
	if sg := math.Sqrt(vGame); sg > 0 {
		e.NElo = (mu - 0.5) / sg * nEloScale
		e.NEloMargin = z95 * se / sg * nEloScale
	}
	return e
}

func sq(x float64) float64 { return x * x }

// normCDF is the standard normal distribution function.
func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// pairScores are a pair's mean scores by bin.
var pairScores = [5]float64{0, 0.25, 0.5, 0.75, 1}

// pdf is p as frequencies, each empty bin counted as eps pairs; with the
// total count.
func pdf(p Pentanomial, eps float64) (f [5]float64) {
	var n float64
	for i, c := range p {
		f[i] = float64(c)
		if c == 0 {
			f[i] = eps
		}
		n += f[i]
	}
	for i := range f {
		f[i] /= n
	}
	return f
}

func meanVar(f [5]float64) (mu, v float64) {
	for i, q := range f {
		mu += q * pairScores[i]
	}
	for i, q := range f {
		v += q * sq(pairScores[i]-mu)
	}
	return mu, v
}
