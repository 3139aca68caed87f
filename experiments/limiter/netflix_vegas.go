package limiter

import (
	"math"
	"math/rand/v2"
)

// NetflixVegas is Netflix's VegasLimit (concurrency-limits-core/src/main/
// java/com/netflix/concurrency/limits/limit/VegasLimit.java at
// NetflixCommit; _update lines 249-277, updateEstimatedLimit lines
// 279-321), with its Builder defaults (lines 48-58): initial 20,
// maxConcurrency 1000, smoothing 1.0, probeMultiplier 30, and
// t = Log10RootIntFunction(L) = max(1, (int)log10(L))
// (functions/Log10RootIntFunction.java), α = 3t, β = 6t, threshold = t,
// increase L + t, decrease L − t, each of (int)L.
//
// Each sample counts a probe; when jitter·probe_multiplier·L ≤ the count
// (jitter drawn from U(0.5, 1), ThreadLocalRandom there, a PCG of
// jitter_seed here, drawn anew after each probe and once at construction)
// the sample only sets rtt_noload and resets the count. Else the first
// sample, or one with a lower RTT, only sets rtt_noload. Else, with
// q = (int)ceil(L·(1 − rtt_noload/rtt)): a drop gives L − t; no update
// while inflight·2 < L; q ≤ threshold → L + β; q < α → L + t; q > β →
// L − t; else hold. The new limit is clamped to [1, max] before the
// smoothing (1 − s)·L + s·new; the gate's limit is (int)L.
type NetflixVegas struct {
	estimated       float64
	limit           int
	rttNoLoad       int64
	maxLimit        int
	smoothing       float64
	probeMultiplier int
	probeCount      int
	probeJitter     float64
	rng             *rand.Rand
}

// NewNetflixVegas is VegasLimit built with these settings, its probe
// jitter drawn from a PCG of seed.
func NewNetflixVegas(initial, maxConcurrency int, smoothing float64, probeMultiplier int, seed uint64) *NetflixVegas {
	v := &NetflixVegas{estimated: float64(initial), limit: initial, maxLimit: maxConcurrency, smoothing: smoothing,
		probeMultiplier: probeMultiplier, rng: rand.New(rand.NewPCG(seed, 0x7665676173))}
	v.resetProbeJitter()
	return v
}

// log10Root is Log10RootIntFunction.create(0).applyAsInt.
func log10Root(t int) int {
	if t < 1000 {
		if t <= 0 {
			return 1 // lookup[0] = max(1, (int)log10(0) = (int)-Inf = Integer.MIN_VALUE)
		}
		return max(1, int(math.Log10(float64(t))))
	}
	return int(math.Log10(float64(t)))
}

func (v *NetflixVegas) resetProbeJitter() { v.probeJitter = 0.5 + v.rng.Float64()*0.5 }

func (v *NetflixVegas) shouldProbe() bool {
	return v.probeJitter*float64(v.probeMultiplier)*v.estimated <= float64(v.probeCount)
}

func (v *NetflixVegas) onSample(_, rtt int64, inflight int, didDrop bool) {
	v.limit = v.update(rtt, inflight, didDrop)
}

func (v *NetflixVegas) update(rtt int64, inflight int, didDrop bool) int {
	v.probeCount++
	if v.shouldProbe() {
		v.resetProbeJitter()
		v.probeCount = 0
		v.rttNoLoad = rtt
		return int(v.estimated)
	}
	if v.rttNoLoad == 0 || rtt < v.rttNoLoad {
		v.rttNoLoad = rtt
		return int(v.estimated)
	}
	return v.updateEstimatedLimit(rtt, v.rttNoLoad, inflight, didDrop)
}

func (v *NetflixVegas) updateEstimatedLimit(rtt, rttNoLoad int64, inflight int, didDrop bool) int {
	estimated := v.estimated
	queueSize := int(math.Ceil(estimated * (1 - float64(rttNoLoad)/float64(rtt))))
	var newLimit float64
	if didDrop {
		newLimit = estimated - float64(log10Root(int(estimated)))
	} else if float64(inflight*2) < estimated {
		return int(estimated)
	} else {
		t := log10Root(int(estimated))
		alpha, beta, threshold := 3*t, 6*t, t
		switch {
		case queueSize <= threshold:
			newLimit = estimated + float64(beta)
		case queueSize < alpha:
			newLimit = estimated + float64(log10Root(int(estimated)))
		case queueSize > beta:
			newLimit = estimated - float64(log10Root(int(estimated)))
		default:
			return int(estimated)
		}
	}
	newLimit = math.Max(1, math.Min(float64(v.maxLimit), newLimit))
	newLimit = (1-v.smoothing)*estimated + v.smoothing*newLimit
	v.estimated = newLimit
	return int(newLimit)
}

func (v *NetflixVegas) getLimit() int { return v.limit }

// The netflix-vegas gate's own parameters.
const (
	ParamMaxConcurrency  = "max_concurrency"
	ParamProbeMultiplier = "probe_multiplier"
)

// TypeNetflixVegas is the VegasLimit gate's type name.
const TypeNetflixVegas Type = "netflix-vegas"

func netflixVegasKind() *Kind {
	return &Kind{
		Type: TypeNetflixVegas,
		Model: "Netflix concurrency-limits VegasLimit in a SimpleLimiter: queue = ceil(L·(1 − rtt_noload/rtt)) against α = 3·log10 L, β = 6·log10 L; " +
			"rtt_noload the lowest RTT, re-probed every U(0.5,1)·probe_multiplier·L samples",
		Params: []Param{
			limitParamOf(ParamInitialLimit, "Initial limit", "initialLimit: the limit before the first sample", 20),
			limitParamOf(ParamMaxConcurrency, "Max concurrency", "maxConcurrency: the limit never goes above it", 1000),
			smoothingParam(1, "smoothing: the weight of the new limit against the old (1: none)"),
			{Name: ParamProbeMultiplier, Admits: AdmitsNone, Label: "Probe multiplier", Unit: "samples", Integer: true, Min: 1, Max: 1_000_000, Default: 30,
				Doc: "probeMultiplier: rtt_noload is re-probed after U(0.5,1)·probe_multiplier·limit samples"},
			jitterSeedParam("the seed of the probe jitter's PCG (ThreadLocalRandom in the library)"),
		},
		Options:  []Option{netflixWindowOption},
		Size:     ParamMaxConcurrency,
		Adaptive: true,
		Example:  Params{ParamInitialLimit: 20, ParamMaxConcurrency: 1000, ParamSmoothing: 1, ParamProbeMultiplier: 30},
		New: func(s *Spec, p Params, _ Env) (Gate, error) {
			v := NewNetflixVegas(int(p[ParamInitialLimit]), int(p[ParamMaxConcurrency]), p[ParamSmoothing], int(p[ParamProbeMultiplier]), uint64(p[ParamJitterSeed]))
			return newNetflixLimiter(s, v, []string{"rtt_noload_ms"}, func(dst []float64) []float64 {
				return append(dst, float64(v.rttNoLoad)/1e6)
			})
		},
	}
}
