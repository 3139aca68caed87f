package limiter

import (
	"fmt"
	"math"
	"slices"

	"github.com/ratelab/ratelab/experiments/cacheline"
)

// FailsafeModule is the failsafe-go module version the
// failsafe-go-adaptive gate follows (adaptivelimiter/adaptivelimiter.go,
// internal/util, and github.com/influxdata/tdigest v0.0.1 it requires).
const FailsafeModule = "github.com/failsafe-go/failsafe-go@v0.9.8"

// FailsafeAdaptive is failsafe-go's adaptive limiter (adaptivelimiter.go
// at FailsafeModule: NewBuilder defaults, TryAcquirePermit, record,
// updateLimit, computeChange, computeMaxLimit), without queueing (its
// queueing mode draws rand.Float64(); not modelled) and without the
// optional stabilization window and max-limit decay. A request passes
// while the semaphore's used permits are below its size (int(limit)); its
// permit remembers the permits used with it. Its completion records
// (Record) its RTT, from its release, into the recent window (a t-digest
// of compression 100, the window's min RTT and max in flight); a request
// that timed out or was shed by the server is Drop()ped: no sample, but it
// may close the window as any completion does. A late one is recorded.
//
// A completion after nextUpdateTime (0 at first), with at least
// recent_window_min_samples samples in the window, updates the limit: the
// window's recent_quantile (p90) through a moving median of 5 and a
// moving average (age 5, a plain mean of the first 10) is recentRTT;
// baseline = a moving average of age baseline_window_age (plain mean of
// the first 10) of it; queue = ceil(L·(1 − baseline/recentRTT)); with
// α = 3·log10 L, β = 6·log10 L (a table: 1 below 100, 2 below 1000):
// queue > β decreases; full (used ≥ size) and the throughput's
// correlation with in-flight < 0, or < 0.3 with RTT's correlation > 0.5,
// or the throughput's CV < 0.2 with RTT's correlation > 0.5 (windows of
// correlation_window_size) decreases; queue < α increases; else hold;
// ± log10 L. The limit is capped at max_limit_factor × the window's max in
// flight (above it: from above a decrease, from below the cap), then
// clamped to [min_limit, max_limit]; the next update is after
// min(max(2·min RTT, min duration), max duration). Times are the
// library's time.Duration: whole ns.
type FailsafeAdaptive struct {
	_              cacheline.Pad // a sweep's points run side by side (package cacheline)
	adm            admissions
	used, size     int
	limit          float64
	minLimit       float64
	maxLimit       float64
	maxLimitFactor float64

	recentMinNS, recentMaxNS int64
	recentMinSamples         uint
	recentQuantile           float64

	recent          recentSample
	lastMaxInflight int
	median          movingMedian
	smoothedRecent  movingAverage
	baseline        movingAverage
	nextUpdateNS    int64
	throughputCorr  correlationWindow
	rttCorr         correlationWindow

	lastRecentRTT, lastBaselineRTT float64
	_                              cacheline.Pad
}

// FailsafeAdaptiveConfig is the builder's settings.
type FailsafeAdaptiveConfig struct {
	MinLimit, MaxLimit, InitialLimit int
	MaxLimitFactor                   float64
	RecentWindowMinMS                float64
	RecentWindowMaxMS                float64
	RecentWindowMinSamples           int
	RecentQuantile                   float64
	BaselineWindowAge                int
	CorrelationWindowSize            int
}

// NewFailsafeAdaptive is NewBuilder() with these settings, Build() at t = 0.
func NewFailsafeAdaptive(c FailsafeAdaptiveConfig) *FailsafeAdaptive {
	return &FailsafeAdaptive{
		size: c.InitialLimit, limit: float64(c.InitialLimit), minLimit: float64(max(1, c.MinLimit)), maxLimit: float64(c.MaxLimit),
		maxLimitFactor: c.MaxLimitFactor, recentMinNS: nanos(c.RecentWindowMinMS), recentMaxNS: nanos(c.RecentWindowMaxMS),
		recentMinSamples: uint(c.RecentWindowMinSamples), recentQuantile: c.RecentQuantile,
		recent:         recentSample{digest: newTDigest(100)},
		median:         newMovingMedian(5),
		smoothedRecent: newMovingAverage(5, 10),
		baseline:       newMovingAverage(uint(c.BaselineWindowAge), 10),
		throughputCorr: newCorrelationWindow(uint(c.CorrelationWindowSize), 10),
		rttCorr:        newCorrelationWindow(uint(c.CorrelationWindowSize), 10),
	}
}

// Offer is TryAcquirePermit.
func (f *FailsafeAdaptive) Offer(t float64, client int32) (float64, bool) {
	if f.used >= f.size {
		return 0, false
	}
	f.used++
	f.adm.admit(t, client)
	return t, true
}

// Complete is the permit's Record (served) or Drop (timed out, shed).
func (f *FailsafeAdaptive) Complete(c Completion) {
	inflight := f.adm.complete(c)
	if inflight == 0 {
		return
	}
	now := nanos(c.DoneMS)
	f.record(now, now-nanos(c.ReleaseMS), inflight, c.Outcome == TimedOut || c.Outcome == Dropped)
}

// record is adaptiveLimiter.record.
func (f *FailsafeAdaptive) record(now, rtt int64, inflight int, dropped bool) {
	if !dropped {
		f.recent.add(rtt, inflight)
	}
	if now > f.nextUpdateNS && f.recent.size >= f.recentMinSamples {
		quantile := f.recent.digest.quantile(f.recentQuantile)
		filtered := f.median.add(quantile)
		smoothed := f.smoothedRecent.add(filtered)
		f.lastMaxInflight = f.recent.maxInflight
		f.updateLimit(smoothed, f.recent.maxInflight)
		minRTT := f.recent.minRTT
		f.recent.reset()
		minWindow := max(minRTT*2, f.recentMinNS)
		f.nextUpdateNS = now + min(minWindow, f.recentMaxNS)
	}
	f.used--
}

// failsafeLog10 is util.Log10Func(factor).
func failsafeLog10(factor, limit int) int {
	switch {
	case limit < 100:
		return factor
	case limit < 1000:
		return factor * 2
	}
	return factor * int(math.Log10(float64(limit)))
}

type limitChange int

const (
	changeIncrease limitChange = iota
	changeDecrease
	changeHold
)

func (f *FailsafeAdaptive) updateLimit(recentRTT float64, inflight int) {
	baselineRTT := f.baseline.add(recentRTT)
	f.lastRecentRTT, f.lastBaselineRTT = recentRTT, baselineRTT
	gradient := baselineRTT / recentRTT
	queueSize := int(math.Ceil(f.limit * (1 - gradient)))
	throughput := float64(inflight) / (recentRTT / 1e9)
	throughputCorr, _, throughputCV := f.throughputCorr.add(float64(inflight), throughput)
	rttCorr, _, _ := f.rttCorr.add(float64(inflight), recentRTT)
	overloaded := f.used >= f.size
	alpha := failsafeLog10(3, int(f.limit))
	beta := failsafeLog10(6, int(f.limit))
	change := computeChange(queueSize, alpha, beta, overloaded, throughputCorr, throughputCV, rttCorr)
	oldLimit := f.limit
	newLimit := oldLimit
	switch change {
	case changeDecrease:
		newLimit = oldLimit - float64(failsafeLog10(1, int(oldLimit)))
	case changeIncrease:
		newLimit = oldLimit + float64(failsafeLog10(1, int(oldLimit)))
	}
	maxLimit := float64(inflight) * f.maxLimitFactor
	if newLimit > maxLimit {
		if oldLimit > maxLimit {
			newLimit = oldLimit - float64(failsafeLog10(1, int(oldLimit)))
		} else {
			newLimit = maxLimit
		}
	}
	if newLimit > f.maxLimit {
		newLimit = f.maxLimit
	} else if newLimit < f.minLimit {
		newLimit = f.minLimit
	}
	f.size = int(newLimit)
	f.limit = newLimit
}

func computeChange(queueSize, alpha, beta int, overloaded bool, throughputCorr, throughputCV, rttCorr float64) limitChange {
	switch {
	case queueSize > beta:
		return changeDecrease
	case overloaded && throughputCorr < 0:
		return changeDecrease
	case overloaded && throughputCorr < .3 && rttCorr > .5:
		return changeDecrease
	case overloaded && throughputCV < .2 && rttCorr > .5:
		return changeDecrease
	case queueSize < alpha:
		return changeIncrease
	}
	return changeHold
}

// LimitNow is Limit(): int(limit).
func (f *FailsafeAdaptive) LimitNow() int { return int(f.limit) }

// InFlight is Inflight(): the semaphore's used permits.
func (f *FailsafeAdaptive) InFlight() int { return f.used }

// Estimates: the smoothed recent RTT and the baseline RTT at the last
// update (ms).
func (f *FailsafeAdaptive) Estimates(dst []float64) []float64 {
	return append(dst, f.lastRecentRTT/1e6, f.lastBaselineRTT/1e6)
}

// EstimateNames names them.
func (f *FailsafeAdaptive) EstimateNames() []string {
	return []string{"recent_rtt_ms", "baseline_rtt_ms"}
}

// recentSample is tdigestSample.
type recentSample struct {
	minRTT      int64
	maxInflight int
	size        uint
	digest      tDigest
}

func (r *recentSample) add(rtt int64, inflight int) {
	if r.size == 0 {
		r.minRTT = rtt
		r.maxInflight = inflight
	} else {
		r.minRTT = min(r.minRTT, rtt)
		r.maxInflight = max(r.maxInflight, inflight)
	}
	r.size++
	r.digest.add(float64(rtt), 1)
}

func (r *recentSample) reset() {
	r.digest.reset()
	r.minRTT, r.maxInflight, r.size = 0, 0, 0
}

// movingMedian is util.MovingMedian.
type movingMedian struct {
	values, sorted []float64
	index, size    int
}

func newMovingMedian(size int) movingMedian {
	return movingMedian{values: make([]float64, size), sorted: make([]float64, size)}
}

func (m *movingMedian) add(value float64) float64 {
	m.values[m.index] = value
	m.index = (m.index + 1) % len(m.values)
	if m.size < len(m.values)-1 {
		m.size++
		return value
	}
	copy(m.sorted, m.values)
	slices.Sort(m.sorted)
	return m.sorted[len(m.sorted)/2]
}

// movingAverage is util.MovingAverage.
type movingAverage struct {
	warmupSamples   uint8
	smoothingFactor float64
	count           uint8
	value, sum      float64
}

func newMovingAverage(age uint, warmupSamples uint8) movingAverage {
	return movingAverage{warmupSamples: warmupSamples, smoothingFactor: 2 / (float64(age) + 1)}
}

func (e *movingAverage) add(v float64) float64 {
	if e.count < e.warmupSamples {
		e.count++
		e.sum += v
		e.value = e.sum / float64(e.count)
	} else {
		e.value = e.value*(1-e.smoothingFactor) + v*e.smoothingFactor
	}
	return e.value
}

// movingSum is util.MovingSum.
type movingSum struct {
	samples          []float64
	size, index      int
	sumY, sumSquares float64
}

func (r *movingSum) add(value float64) (oldValue float64, full bool) {
	if value != 0 {
		if r.size == len(r.samples) {
			full = true
			oldValue = r.samples[r.index]
			r.sumY -= oldValue
			r.sumSquares -= oldValue * oldValue
		} else {
			r.size++
		}
		r.samples[r.index] = value
		r.sumY += value
		r.sumSquares += value * value
		r.index = (r.index + 1) % len(r.samples)
	}
	return oldValue, full
}

func (r *movingSum) cv() (cv, mean, variance float64) {
	if r.size < 2 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	mean = r.sumY / float64(r.size)
	variance = (r.sumSquares / float64(r.size)) - (mean * mean)
	if variance < 0 || mean == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	return math.Sqrt(variance) / mean, mean, variance
}

// correlationWindow is util.CorrelationWindow.
type correlationWindow struct {
	warmupSamples uint8
	x, y          movingSum
	corrSumXY     float64
}

func newCorrelationWindow(capacity uint, warmupSamples uint8) correlationWindow {
	return correlationWindow{warmupSamples: warmupSamples, x: movingSum{samples: make([]float64, capacity)}, y: movingSum{samples: make([]float64, capacity)}}
}

func (w *correlationWindow) add(x, y float64) (correlation, cvX, cvY float64) {
	if math.IsInf(x, 0) || math.IsInf(y, 0) {
		return 0, 0, 0
	}
	oldX, full := w.x.add(x)
	oldY, _ := w.y.add(y)
	cvX, meanX, varX := w.x.cv()
	cvY, meanY, varY := w.y.cv()
	if full {
		w.corrSumXY -= oldX * oldY
	}
	w.corrSumXY += x * y
	if math.IsNaN(cvX) || math.IsNaN(cvY) {
		return 0, 0, 0
	}
	if w.x.size < int(w.warmupSamples) {
		return 0, 0, 0
	}
	if cvX < 0.01 || cvY < 0.01 {
		return 0, cvX, cvY
	}
	covariance := (w.corrSumXY / float64(w.x.size)) - (meanX * meanY)
	return covariance / (math.Sqrt(varX) * math.Sqrt(varY)), cvX, cvY
}

// The failsafe-go-adaptive gate's own parameters (the builder's names).
const (
	ParamMaxLimitFactor         = "max_limit_factor"
	ParamRecentWindowMin        = "recent_window_min_ms"
	ParamRecentWindowMax        = "recent_window_max_ms"
	ParamRecentWindowMinSamples = "recent_window_min_samples"
	ParamRecentQuantile         = "recent_quantile"
	ParamBaselineWindowAge      = "baseline_window_age"
	ParamCorrelationWindowSize  = "correlation_window_size"
)

// TypeFailsafeAdaptive is failsafe-go's adaptive limiter's type name.
const TypeFailsafeAdaptive Type = "failsafe-go-adaptive"

func failsafeAdaptiveKind() *Kind {
	return &Kind{
		Type: TypeFailsafeAdaptive,
		Model: "failsafe-go adaptivelimiter (v0.9.8, no queueing): queue = ceil(L·(1 − baseline/recent)) of the recent window's p90 RTT against α = 3·log10 L, β = 6·log10 L, " +
			"throughput and RTT correlation with in-flight when full; ±log10 L, at most max_limit_factor × the window's max in flight",
		Params: []Param{
			limitParamOf(ParamMinLimit, "Min limit", "WithLimits minLimit", 1),
			limitParamOf(ParamMaxLimit, "Max limit", "WithLimits maxLimit", 200),
			limitParamOf(ParamInitialLimit, "Initial limit", "WithLimits initialLimit", 20),
			{Name: ParamMaxLimitFactor, Admits: AdmitsLarger, Label: "Max limit factor", Unit: "ratio", Min: 1, Max: 1000, Default: 5,
				Doc: "WithMaxLimitFactor: the limit stays within this multiple of the window's max in flight", RangeNote: "failsafe-go panics below 1"},
			{Name: ParamRecentWindowMin, Admits: AdmitsNone, Label: "Recent window min", Unit: "ms", Min: 0, Max: MaxWindowMS, Default: 1000, Optional: true,
				Doc: "WithRecentWindow minDuration"},
			{Name: ParamRecentWindowMax, Admits: AdmitsNone, Label: "Recent window max", Unit: "ms", Min: 0, Max: MaxWindowMS, Default: 30_000,
				Doc: "WithRecentWindow maxDuration"},
			{Name: ParamRecentWindowMinSamples, Admits: AdmitsNone, Label: "Recent window samples", Unit: "samples", Integer: true, Min: 0, Max: 1_000_000, Default: 50, Optional: true,
				Doc: "WithRecentWindow minSamples"},
			{Name: ParamRecentQuantile, Admits: AdmitsNone, Label: "Recent quantile", Unit: "fraction", Min: 0.001, Max: 0.999, Default: 0.9,
				Doc: "WithRecentQuantile"},
			{Name: ParamBaselineWindowAge, Admits: AdmitsNone, Label: "Baseline age", Unit: "samples", Integer: true, Min: 1, Max: 1_000_000, Default: 10,
				Doc: "WithBaselineWindow baselineAge"},
			{Name: ParamCorrelationWindowSize, Admits: AdmitsNone, Label: "Correlation window", Unit: "samples", Integer: true, Min: 1, Max: 1_000_000, Default: 50,
				Doc: "WithCorrelationWindow size"},
		},
		Size:     ParamMaxLimit,
		Adaptive: true,
		Example: Params{ParamMinLimit: 1, ParamMaxLimit: 200, ParamInitialLimit: 20, ParamMaxLimitFactor: 5, ParamRecentWindowMin: 1000, ParamRecentWindowMax: 30_000,
			ParamRecentWindowMinSamples: 50, ParamRecentQuantile: 0.9, ParamBaselineWindowAge: 10, ParamCorrelationWindowSize: 50},
		New: func(_ *Spec, p Params, _ Env) (Gate, error) {
			if lo, hi, init := p[ParamMinLimit], p[ParamMaxLimit], p[ParamInitialLimit]; lo > hi || init < lo || init > hi {
				return nil, fmt.Errorf("%s: initial_limit %g must lie within min_limit %g and max_limit %g (WithLimits panics otherwise)", TypeFailsafeAdaptive, init, lo, hi)
			}
			return NewFailsafeAdaptive(FailsafeAdaptiveConfig{
				MinLimit: int(p[ParamMinLimit]), MaxLimit: int(p[ParamMaxLimit]), InitialLimit: int(p[ParamInitialLimit]),
				MaxLimitFactor: p[ParamMaxLimitFactor], RecentWindowMinMS: p[ParamRecentWindowMin], RecentWindowMaxMS: p[ParamRecentWindowMax],
				RecentWindowMinSamples: int(p[ParamRecentWindowMinSamples]), RecentQuantile: p[ParamRecentQuantile],
				BaselineWindowAge: int(p[ParamBaselineWindowAge]), CorrelationWindowSize: int(p[ParamCorrelationWindowSize]),
			}), nil
		},
	}
}
