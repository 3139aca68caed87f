package limiter

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ratelab/ratelab/experiments/cacheline"
)

// EnvoyAdaptiveCommit is the commit of envoyproxy/envoy whose gradient
// controller the envoy-adaptive-concurrency gate follows
// (source/extensions/filters/http/adaptive_concurrency/controller/
// gradient_controller.cc).
const EnvoyAdaptiveCommit = "c35f67fb14e41582c2530dcdad417f2516113d0f"

// EnvoyAdaptive is Envoy's adaptive concurrency filter with its gradient
// controller (gradient_controller.cc at EnvoyAdaptiveCommit; the lines
// below are that file's). A request is forwarded while fewer than the limit
// are outstanding (forwardingDecision, l. 199-212), else refused (503).
// Its answer records its latency, from the forward to the response, in
// whole µs (recordLatencySample, l. 214-232), unless it was sent before
// the current minRTT window opened; a request whose client gave up first
// (the lab's timed out) only counts out (cancelLatencySample: the filter's
// onDestroy without encodeComplete); a request the server shed is
// answered (a 5xx) and records its latency like any other.
//
// The controller starts in a minRTT window (l. 70): the limit is pinned at
// min_concurrency, the limit before it kept (deferred), the samples
// cleared and the window's epoch set (l. 84-103); once request_count
// samples are in (l. 106-124), minRTT is their percentile, the deferred
// limit is restored, the next window is armed after interval + rand %
// ceil(interval·jitter) ms (applyJitter, l. 126-134; rand a PCG of
// jitter_seed here) and the sample timer after
// concurrency_update_interval. Each sample timer outside a window
// (l. 58-68, 136-147) takes the samples' percentile as sampleRTT (none: no
// update) and sets the limit to calculateNewLimit (l. 157-181):
// g = max(0.5, min(2, minRTT·(1 + buffer)/sampleRTT)), then
// (uint32)(L·g + sqrt(L·g)) clamped to [min_concurrency,
// max_concurrency_limit]; inside a window the sample timer stops until
// the window ends. Five updates in a row that leave the limit at
// min_concurrency outside a window (l. 238-257) start a window at once.
//
// Envoy aggregates the samples in an approximate histogram (circllhist's
// hist_approx_quantile); the lab takes the percentile of the samples
// exactly (linear between the closest ranks, numpy's default), then
// truncates it to whole µs as static_cast<int> does. min and max are C++'s
// std::min/std::max (a NaN gradient clamps to 2, as there). When both
// timers fall due at one instant the sample timer fires first.
//
// Envoy requires interval and concurrency_update_interval; the lab's
// defaults are the ones of Envoy's documentation example (60 s, 100 ms).
type EnvoyAdaptive struct {
	_           cacheline.Pad // a sweep's points run side by side (package cacheline)
	adm         admissions
	limit       uint32
	deferred    uint32
	minRTTNS    int64
	sampleRTTNS int64
	samplesUS   []int64
	epochNS     int64
	consecutive int

	minRTTTimerMS float64 // +Inf: disarmed
	sampleTimerMS float64
	lastSyncMS    float64

	intervalMS       float64
	updateIntervalMS float64
	jitter           float64
	maxLimit         uint32
	requestCount     int
	percentile       float64
	minConcurrency   uint32
	buffer           float64
	rng              *rand.Rand
	sorted           []int64
	_                cacheline.Pad
}

// EnvoyAdaptiveConfig is the gradient controller's configuration, in
// Envoy's names (percentages as given, 50 = 50%).
type EnvoyAdaptiveConfig struct {
	MinRTTCalcIntervalMS        float64
	ConcurrencyUpdateIntervalMS float64
	JitterPct                   float64
	MaxConcurrencyLimit         int
	RequestCount                int
	SampleAggregatePercentile   float64
	MinConcurrency              int
	BufferPct                   float64
	Seed                        uint64
}

// NewEnvoyAdaptive is the controller as constructed at t = 0: in its first
// minRTT window, the sample timer armed.
func NewEnvoyAdaptive(c EnvoyAdaptiveConfig) *EnvoyAdaptive {
	pct := func(v float64) float64 { return max(0, min(v, 100)) / 100 }
	e := &EnvoyAdaptive{
		limit: uint32(c.MinConcurrency), intervalMS: c.MinRTTCalcIntervalMS, updateIntervalMS: c.ConcurrencyUpdateIntervalMS,
		jitter: pct(c.JitterPct), maxLimit: uint32(c.MaxConcurrencyLimit), requestCount: c.RequestCount,
		percentile: pct(c.SampleAggregatePercentile), minConcurrency: uint32(c.MinConcurrency), buffer: pct(c.BufferPct),
		rng: rand.New(rand.NewPCG(c.Seed, 0x656e766f79)), minRTTTimerMS: math.Inf(1),
	}
	e.enterMinRTTWindow(0)
	e.sampleTimerMS = e.updateIntervalMS
	return e
}

func (e *EnvoyAdaptive) inWindow() bool { return e.deferred > 0 }

func (e *EnvoyAdaptive) enterMinRTTWindow(t float64) {
	if e.inWindow() {
		return
	}
	e.deferred = e.limit
	e.updateLimit(e.minConcurrency, t)
	e.samplesUS = e.samplesUS[:0]
	e.epochNS = nanos(t)
}

func (e *EnvoyAdaptive) updateMinRTT(t float64) {
	if !e.inWindow() || len(e.samplesUS) < e.requestCount {
		return
	}
	e.minRTTNS = e.processSamples() * 1000
	e.updateLimit(e.deferred, t)
	e.deferred = 0
	e.minRTTTimerMS = t + e.applyJitter(e.intervalMS)
	e.sampleTimerMS = t + e.updateIntervalMS
}

func (e *EnvoyAdaptive) applyJitter(intervalMS float64) float64 {
	if e.jitter == 0 {
		return intervalMS
	}
	r := uint64(uint32(math.Ceil(intervalMS * e.jitter)))
	return intervalMS + float64(e.rng.Uint64()%r)
}

func (e *EnvoyAdaptive) resetSampleWindow(t float64) {
	if len(e.samplesUS) == 0 {
		return
	}
	e.sampleRTTNS = e.processSamples() * 1000
	e.updateLimit(e.calculateNewLimit(), t)
}

// processSamples is the samples' percentile in whole µs; it clears them.
func (e *EnvoyAdaptive) processSamples() int64 {
	e.sorted = append(e.sorted[:0], e.samplesUS...)
	slices.Sort(e.sorted)
	e.samplesUS = e.samplesUS[:0]
	return int64(int32(exactQuantile(e.sorted, e.percentile)))
}

// exactQuantile is the q-quantile of sorted (non-empty), linear between the
// closest ranks.
func exactQuantile(sorted []int64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	i := int(pos)
	if i >= len(sorted)-1 {
		return float64(sorted[len(sorted)-1])
	}
	f := pos - float64(i)
	return float64(sorted[i]) + f*float64(sorted[i+1]-sorted[i])
}

// cppMin and cppMax are std::min and std::max: (b < a) ? b : a and
// (a < b) ? b : a.
func cppMin(a, b float64) float64 {
	if b < a {
		return b
	}
	return a
}

func cppMax(a, b float64) float64 {
	if a < b {
		return b
	}
	return a
}

func (e *EnvoyAdaptive) calculateNewLimit() uint32 {
	buffered := float64(e.minRTTNS) + float64(e.minRTTNS)*e.buffer
	raw := buffered / float64(e.sampleRTTNS)
	gradient := cppMax(0.5, cppMin(2.0, raw))
	limit := float64(e.limit) * gradient
	headroom := math.Sqrt(limit)
	newLimit := uint32(limit + headroom)
	return max(e.minConcurrency, min(e.maxLimit, newLimit))
}

func (e *EnvoyAdaptive) updateLimit(newLimit uint32, t float64) {
	old := e.limit
	e.limit = newLimit
	if !e.inWindow() && old == e.minConcurrency && newLimit == e.minConcurrency {
		e.consecutive++
	} else {
		e.consecutive = 0
	}
	if e.consecutive >= 5 {
		e.minRTTTimerMS = t
	}
}

// Offer forwards while fewer than the limit are outstanding.
func (e *EnvoyAdaptive) Offer(t float64, client int32) (float64, bool) {
	if uint32(e.adm.inflight) >= e.limit {
		return 0, false
	}
	e.adm.admit(t, client)
	return t, true
}

// Complete records the request's latency (or cancels it: timed out).
func (e *EnvoyAdaptive) Complete(c Completion) {
	if e.adm.complete(c) == 0 || c.Outcome == TimedOut {
		return
	}
	send := nanos(c.ReleaseMS)
	if send < e.epochNS {
		return
	}
	e.samplesUS = append(e.samplesUS, (nanos(c.DoneMS)-send)/1000)
	e.updateMinRTT(c.DoneMS)
}

// NextSyncMS is the earlier of the two timers, or sooner: the loop asks
// for the next sync only after a sync, and a completion may arm a timer
// (the end of a minRTT window arms both), always at least
// concurrency_update_interval after it; so the gate also asks for a sync
// that interval after its last, at which no timer may be due (nothing
// happens then), and never misses one.
func (e *EnvoyAdaptive) NextSyncMS() float64 {
	return min(e.minRTTTimerMS, e.sampleTimerMS, e.lastSyncMS+e.updateIntervalMS)
}

// Sync fires the timers due at t.
func (e *EnvoyAdaptive) Sync(t float64) {
	e.lastSyncMS = t
	for {
		switch {
		case e.sampleTimerMS <= t && e.sampleTimerMS <= e.minRTTTimerMS:
			if e.inWindow() {
				e.sampleTimerMS = math.Inf(1)
				continue
			}
			e.resetSampleWindow(t)
			e.sampleTimerMS = t + e.updateIntervalMS
		case e.minRTTTimerMS <= t:
			e.minRTTTimerMS = math.Inf(1)
			e.enterMinRTTWindow(t)
		default:
			return
		}
	}
}

// LimitNow is the concurrency limit.
func (e *EnvoyAdaptive) LimitNow() int { return int(e.limit) }

// InFlight is the outstanding count.
func (e *EnvoyAdaptive) InFlight() int { return e.adm.inflight }

// Estimates: minRTT with the buffer's factor left out, the last sampleRTT
// (ms), and 1 while a minRTT window is open.
func (e *EnvoyAdaptive) Estimates(dst []float64) []float64 {
	w := 0.0
	if e.inWindow() {
		w = 1
	}
	return append(dst, float64(e.minRTTNS)/1e6, float64(e.sampleRTTNS)/1e6, w)
}

// EstimateNames names them.
func (e *EnvoyAdaptive) EstimateNames() []string {
	return []string{"min_rtt_ms", "sample_rtt_ms", "min_rtt_window"}
}

// The envoy-adaptive-concurrency gate's parameters (the proto's names).
const (
	ParamMinRTTCalcInterval        = "min_rtt_calc_interval_ms"
	ParamConcurrencyUpdateInterval = "concurrency_update_interval_ms"
	ParamRequestCount              = "request_count"
	ParamSampleAggregatePercentile = "sample_aggregate_percentile"
	ParamJitterPct                 = "jitter_pct"
	ParamBufferPct                 = "buffer_pct"
	ParamMinConcurrency            = "min_concurrency"
	ParamMaxConcurrencyLimit       = "max_concurrency_limit"
)

// TypeEnvoyAdaptive is the adaptive concurrency filter's type name.
const TypeEnvoyAdaptive Type = "envoy-adaptive-concurrency"

func envoyAdaptiveKind() *Kind {
	return &Kind{
		Type: TypeEnvoyAdaptive,
		Model: "Envoy adaptive concurrency filter, gradient controller: L ← L·g + sqrt(L·g), g = clamp(minRTT·(1+buffer)/sampleRTT, 0.5, 2) every update interval; " +
			"minRTT the percentile of request_count samples with L pinned at min_concurrency, re-measured every interval (+ jitter)",
		Params: []Param{
			{Name: ParamMinRTTCalcInterval, Admits: AdmitsLarger, Label: "minRTT interval", Unit: "ms", Min: 1, Max: MaxWindowMS, Default: 60_000,
				Doc: "min_rtt_calc_params.interval: between minRTT windows (Envoy requires it; 60 s as in its docs' example)"},
			{Name: ParamConcurrencyUpdateInterval, Admits: AdmitsNone, Label: "Update interval", Unit: "ms", Min: 1, Max: MaxWindowMS, Default: 100,
				Doc: "concurrency_limit_params.concurrency_update_interval: between limit updates (Envoy requires it; 100 ms as in its docs' example)"},
			{Name: ParamRequestCount, Admits: AdmitsNone, Label: "minRTT requests", Unit: "samples", Integer: true, Min: 1, Max: 1_000_000, Default: 50,
				Doc: "min_rtt_calc_params.request_count: samples that make a minRTT"},
			{Name: ParamSampleAggregatePercentile, Admits: AdmitsNone, Label: "Percentile", Unit: "%", Min: 0, Max: 100, Default: 50,
				Doc: "sample_aggregate_percentile: the percentile of the samples taken as minRTT and sampleRTT"},
			{Name: ParamJitterPct, Admits: AdmitsNone, Label: "Jitter", Unit: "%", Min: 0, Max: 100, Default: 15,
				Doc: "min_rtt_calc_params.jitter: the next window after interval + rand % ceil(interval·jitter) ms"},
			{Name: ParamBufferPct, Admits: AdmitsLarger, Label: "Buffer", Unit: "%", Min: 0, Max: 100, Default: 25,
				Doc: "min_rtt_calc_params.buffer: minRTT's headroom in the gradient"},
			limitParamOf(ParamMinConcurrency, "Min concurrency", "min_rtt_calc_params.min_concurrency: the limit during a minRTT window and its floor", 3),
			limitParamOf(ParamMaxConcurrencyLimit, "Max concurrency limit", "concurrency_limit_params.max_concurrency_limit: the limit's ceiling", 1000),
			jitterSeedParam("the seed of the PCG that draws the minRTT windows' jitter (Envoy's random generator)"),
		},
		Size:     ParamMaxConcurrencyLimit,
		Adaptive: true,
		Example:  Params{ParamMinRTTCalcInterval: 60_000, ParamConcurrencyUpdateInterval: 100, ParamRequestCount: 50, ParamSampleAggregatePercentile: 50, ParamJitterPct: 15, ParamBufferPct: 25, ParamMinConcurrency: 3, ParamMaxConcurrencyLimit: 1000},
		New: func(_ *Spec, p Params, _ Env) (Gate, error) {
			return NewEnvoyAdaptive(EnvoyAdaptiveConfig{
				MinRTTCalcIntervalMS: p[ParamMinRTTCalcInterval], ConcurrencyUpdateIntervalMS: p[ParamConcurrencyUpdateInterval],
				JitterPct: p[ParamJitterPct], MaxConcurrencyLimit: int(p[ParamMaxConcurrencyLimit]), RequestCount: int(p[ParamRequestCount]),
				SampleAggregatePercentile: p[ParamSampleAggregatePercentile], MinConcurrency: int(p[ParamMinConcurrency]), BufferPct: p[ParamBufferPct],
				Seed: uint64(p[ParamJitterSeed]),
			}), nil
		},
	}
}
