package limiter

import "math"

// The adaptive concurrency limits (netflix-aimd, netflix-vegas,
// netflix-gradient2, envoy-adaptive-concurrency, failsafe-go-adaptive)
// share this file: a gate that admits a request while fewer than its limit
// are in flight, and moves the limit from the completions it observes
// (an Observer of the event loop, limiter/hooks.go). Each algorithm is its
// own file, exact to its library's source at the commit its doc comment
// names.
//
// Every library measures a sample from the moment its limiter let the
// request pass (here its release, which for these policers is its arrival)
// to its completion, and passes the number in flight at that moment, the
// request itself included (Netflix's AbstractLimiter.createListener,
// failsafe-go's newPermit: semaphore.Used() after the acquire). The gate
// does not see a request's Seq when it admits it, so it keeps its
// admissions in order and matches a completion to the oldest unmatched
// admission of the same client at the same release time: requests of one
// client released at one instant are matched in admission order.

// Adaptive is an adaptive concurrency gate as the lab measures it: its
// limit and the requests it has in flight now, and its own estimates
// (named numbers such as a minimum RTT, in the library's units turned into
// ms), for the series of a run.
type Adaptive interface {
	Gate
	Observer
	// LimitNow is the gate's current concurrency limit.
	LimitNow() int
	// InFlight is the number of admitted requests not yet completed.
	InFlight() int
	// Estimates appends the gate's current estimates to dst, in the order
	// of EstimateNames.
	Estimates(dst []float64) []float64
	// EstimateNames names the numbers Estimates gives ("min_rtt_ms").
	EstimateNames() []string
}

// admission is one admitted request awaiting its completion.
type admission struct {
	releaseMS float64
	client    int32
	inflight  int32 // in flight right after its admission, itself included
	matched   bool
}

// admissions is a gate's in-flight count and its admissions awaiting their
// completions, oldest first.
type admissions struct {
	inflight int
	recs     []admission
	head     int
}

// admit counts a request admitted at t and returns the number in flight
// with it.
func (a *admissions) admit(t float64, client int32) int {
	a.inflight++
	a.recs = append(a.recs, admission{releaseMS: t, client: client, inflight: int32(a.inflight)})
	return a.inflight
}

// complete counts c out and returns the number that was in flight right
// after its admission (itself included); 0 when no admission matches it
// (a completion of a request the gate did not admit).
func (a *admissions) complete(c Completion) int {
	for i := a.head; i < len(a.recs); i++ {
		r := &a.recs[i]
		if r.matched || r.releaseMS != c.ReleaseMS || r.client != c.Client {
			continue
		}
		r.matched = true
		a.inflight--
		for a.head < len(a.recs) && a.recs[a.head].matched {
			a.head++
		}
		if a.head == len(a.recs) {
			a.recs, a.head = a.recs[:0], 0
		} else if a.head > 1024 && a.head*2 > len(a.recs) {
			n := copy(a.recs, a.recs[a.head:])
			a.recs, a.head = a.recs[:n], 0
		}
		return int(r.inflight)
	}
	return 0
}

// nanos is a time in ms as a library's clock reading in whole ns (rounded
// to the nearest).
func nanos(ms float64) int64 { return int64(math.Round(ms * 1e6)) }

// The parameters the adaptive gates share (each library names them alike;
// the ones a library names otherwise are in its file).
const (
	ParamInitialLimit = "initial_limit"
	ParamMinLimit     = "min_limit"
	ParamMaxLimit     = "max_limit"
	ParamSmoothing    = "smoothing"
	ParamJitterSeed   = "jitter_seed"
)

// MaxAdaptiveLimit bounds the adaptive gates' limits in a config.
const MaxAdaptiveLimit = 100_000

func limitParamOf(name, label, doc string, def float64) Param {
	return Param{Name: name, Admits: AdmitsLarger, Label: label, Unit: "requests", Integer: true,
		Min: 1, Max: MaxAdaptiveLimit, Default: def, Doc: doc}
}

func smoothingParam(def float64, doc string) Param {
	return Param{Name: ParamSmoothing, Admits: AdmitsNone, Label: "Smoothing", Unit: "fraction", Min: 0.001, Max: 1,
		Default: def, Doc: doc}
}

func jitterSeedParam(doc string) Param {
	return Param{Name: ParamJitterSeed, Admits: AdmitsNone, Label: "Jitter seed", Unit: "seed", Integer: true,
		Min: 0, Max: 1 << 53, Optional: true, Doc: doc}
}
