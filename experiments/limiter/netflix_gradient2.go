package limiter

import "math"

// NetflixGradient2 is Netflix's Gradient2Limit (concurrency-limits-core/
// src/main/java/com/netflix/concurrency/limits/limit/Gradient2Limit.java
// at NetflixCommit, _update lines 278-323) with its Builder defaults
// (lines 75-83): initial 20, min 20, maxConcurrency 200, smoothing 0.2,
// queueSize 4, longWindow 600, rttTolerance 1.5. The long RTT is an
// ExpAvgMeasurement(longWindow, 10) (measurement/ExpAvgMeasurement.java: a
// plain mean of the first 10 samples, then v·(1 − f) + x·f, f =
// 2/(window+1)); the short RTT is the sample. On each sample: long =
// add(rtt); when long/short > 2 the stored long decays ×0.95 (this update
// still uses the value before the decay); no update while inflight < L/2;
// g = max(0.5, min(1, tolerance·long/short)); new = L·g + queueSize;
// new = L·(1 − smoothing) + new·smoothing; then clamped to [min, max]. The
// gate's limit is (int)L.
type NetflixGradient2 struct {
	estimated float64
	limit     int
	longRTT   expAvg
	lastRTT   int64
	minLimit  int
	maxLimit  int
	queueSize int
	smoothing float64
	tolerance float64
}

// expAvg is ExpAvgMeasurement.
type expAvg struct {
	value, sum   float64
	window       int
	warmupWindow int
	count        int
}

func (e *expAvg) add(sample float64) float64 {
	if e.count < e.warmupWindow {
		e.count++
		e.sum += sample
		e.value = e.sum / float64(e.count)
	} else {
		factor := 2.0 / float64(e.window+1)
		e.value = e.value*(1-factor) + sample*factor
	}
	return e.value
}

// NewNetflixGradient2 is Gradient2Limit built with these settings.
func NewNetflixGradient2(initial, minLimit, maxConcurrency int, smoothing float64, queueSize, longWindow int, rttTolerance float64) *NetflixGradient2 {
	return &NetflixGradient2{estimated: float64(initial), limit: initial, longRTT: expAvg{window: longWindow, warmupWindow: 10},
		minLimit: minLimit, maxLimit: maxConcurrency, queueSize: queueSize, smoothing: smoothing, tolerance: rttTolerance}
}

func (g *NetflixGradient2) onSample(_, rtt int64, inflight int, _ bool) {
	g.limit = g.update(rtt, inflight)
}

func (g *NetflixGradient2) update(rtt int64, inflight int) int {
	estimated := g.estimated
	queueSize := float64(g.queueSize)
	g.lastRTT = rtt
	shortRTT := float64(rtt)
	longRTT := g.longRTT.add(float64(rtt))
	if longRTT/shortRTT > 2 {
		g.longRTT.value = g.longRTT.value * 0.95
	}
	if float64(inflight) < estimated/2 {
		return int(estimated)
	}
	gradient := math.Max(0.5, math.Min(1.0, g.tolerance*longRTT/shortRTT))
	newLimit := estimated*gradient + queueSize
	newLimit = estimated*(1-g.smoothing) + newLimit*g.smoothing
	newLimit = math.Max(float64(g.minLimit), math.Min(float64(g.maxLimit), newLimit))
	g.estimated = newLimit
	return int(newLimit)
}

func (g *NetflixGradient2) getLimit() int { return g.limit }

// The netflix-gradient2 gate's own parameters.
const (
	ParamQueueSize    = "queue_size"
	ParamLongWindow   = "long_window"
	ParamRTTTolerance = "rtt_tolerance"
)

// TypeNetflixGradient2 is the Gradient2Limit gate's type name.
const TypeNetflixGradient2 Type = "netflix-gradient2"

func netflixGradient2Kind() *Kind {
	return &Kind{
		Type: TypeNetflixGradient2,
		Model: "Netflix concurrency-limits Gradient2Limit in a SimpleLimiter: L ← smoothed L·clamp(rtt_tolerance·long/short, 0.5, 1) + queue_size, " +
			"long the RTT's exponential mean over long_window samples",
		Params: []Param{
			limitParamOf(ParamInitialLimit, "Initial limit", "initialLimit: the limit before the first sample", 20),
			limitParamOf(ParamMinLimit, "Min limit", "minLimit: the limit never goes below it", 20),
			limitParamOf(ParamMaxConcurrency, "Max concurrency", "maxConcurrency: the limit never goes above it", 200),
			smoothingParam(0.2, "smoothing: the weight of the new limit against the old"),
			{Name: ParamQueueSize, Admits: AdmitsLarger, Label: "Queue size", Unit: "requests", Integer: true, Min: 0, Max: MaxAdaptiveLimit, Default: 4, Optional: true,
				Doc: "queueSize: added to the limit at each update (the growth while RTTs are flat)"},
			{Name: ParamLongWindow, Admits: AdmitsNone, Label: "Long window", Unit: "samples", Integer: true, Min: 1, Max: 1_000_000, Default: 600,
				Doc: "longWindow: the long RTT's exponential mean spans this many samples"},
			{Name: ParamRTTTolerance, Admits: AdmitsLarger, Label: "RTT tolerance", Unit: "ratio", Min: 1, Max: 100, Default: 1.5,
				Doc: "rttTolerance: how far the short RTT may exceed the long before the limit shrinks", RangeNote: "Gradient2Limit takes a tolerance >= 1"},
		},
		Options:  []Option{netflixWindowOption},
		Size:     ParamMaxConcurrency,
		Adaptive: true,
		Example:  Params{ParamInitialLimit: 20, ParamMinLimit: 20, ParamMaxConcurrency: 200, ParamSmoothing: 0.2, ParamQueueSize: 4, ParamLongWindow: 600, ParamRTTTolerance: 1.5},
		New: func(s *Spec, p Params, _ Env) (Gate, error) {
			g := NewNetflixGradient2(int(p[ParamInitialLimit]), int(p[ParamMinLimit]), int(p[ParamMaxConcurrency]), p[ParamSmoothing],
				int(p[ParamQueueSize]), int(p[ParamLongWindow]), p[ParamRTTTolerance])
			return newNetflixLimiter(s, g, []string{"short_rtt_ms", "long_rtt_ms"}, func(dst []float64) []float64 {
				return append(dst, float64(g.lastRTT)/1e6, g.longRTT.value/1e6)
			})
		},
	}
}
