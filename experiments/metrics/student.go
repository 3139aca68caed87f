package metrics

import "math"

// StudentT is the q-quantile (0 < q < 1) of Student's t distribution with
// df degrees of freedom (df >= 1): the t with P(T <= t) = q. It inverts
// the distribution function, computed from the regularized incomplete beta
// function, by bisection to the last bit, so the value is exact to about
// 1e-12 and the same on every machine.
func StudentT(q float64, df int) float64 {
	if df < 1 || !(q > 0 && q < 1) {
		return math.NaN()
	}
	if q == 0.5 {
		return 0
	}
	if q < 0.5 {
		return -StudentT(1-q, df)
	}
	lo, hi := 0.0, 1.0
	for StudentCDF(hi, df) < q {
		lo, hi = hi, 2*hi
		if hi > 1e300 {
			return math.Inf(1)
		}
	}
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if StudentCDF(mid, df) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + (hi-lo)/2
}

// StudentCDF is P(T <= t) for Student's t with df degrees of freedom:
// 1 - I_x(df/2, 1/2)/2 for t >= 0, x = df/(df + t²).
func StudentCDF(t float64, df int) float64 {
	v := float64(df)
	x := v / (v + t*t)
	tail := 0.5 * regIncBeta(x, v/2, 0.5)
	if t >= 0 {
		return 1 - tail
	}
	return tail
}

// T95 is the two-sided 95% critical value of Student's t with df degrees
// of freedom: StudentT(0.975, df).
func T95(df int) float64 { return StudentT(0.975, df) }

// regIncBeta is the regularized incomplete beta function I_x(a, b), by its
// continued fraction (Lentz's method), using the symmetry
// I_x(a, b) = 1 - I_{1-x}(b, a) where the fraction converges slowly.
func regIncBeta(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(x, a, b) / a
	}
	return 1 - front*betaFraction(1-x, b, a)/b
}

// betaFraction evaluates the continued fraction of the incomplete beta
// function (Numerical Recipes' betacf).
func betaFraction(x, a, b float64) float64 {
	const tiny = 1e-300
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	// step takes the fraction one term aa further (modified Lentz) and
	// returns the factor it multiplies h by.
	step := func(aa float64) float64 {
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		return d * c
	}
	for m := 1; m <= 10_000; m++ {
		fm := float64(m)
		m2 := 2 * fm
		h *= step(fm * (b - fm) * x / ((qam + m2) * (a + m2)))
		del := step(-(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2)))
		h *= del
		if math.Abs(del-1) < 1e-16 {
			break
		}
	}
	return h
}

// Interval is a sample's mean and the half-width of its two-sided 95%
// Student-t confidence interval: mean ± HalfWidth. N counts the values;
// with fewer than two the half-width is NaN (no interval).
type Interval struct {
	Mean, HalfWidth float64
	N               int
}

// MeanCI is the mean of xs and its 95% confidence interval
// (t_{0.975, n-1} · s/√n, s the sample standard deviation), summed in
// order so the same values give the same bits.
func MeanCI(xs []float64) Interval {
	n := len(xs)
	if n == 0 {
		return Interval{HalfWidth: math.NaN()}
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(n)
	if n < 2 {
		return Interval{Mean: mean, HalfWidth: math.NaN(), N: n}
	}
	ss := 0.0
	for _, x := range xs {
		d := x - mean
		ss += d * d
	}
	sd := math.Sqrt(ss / float64(n-1))
	return Interval{Mean: mean, HalfWidth: T95(n-1) * sd / math.Sqrt(float64(n)), N: n}
}
