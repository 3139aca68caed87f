package limiter

// NetflixAIMD is Netflix's AIMDLimit (concurrency-limits-core/src/main/java/
// com/netflix/concurrency/limits/limit/AIMDLimit.java at NetflixCommit,
// _update lines 102-112): on each sample, a drop or an RTT over the
// timeout gives (int)(L·backoff_ratio); else, while inflight·2 ≥ L, L+1;
// then L is clamped to [min_limit, max_limit]. Builder defaults (lines
// 34-38): initial 20, min 20, max 200, backoff 0.9, timeout 5 s.
type NetflixAIMD struct {
	limit        int
	backoffRatio float64
	timeoutNS    int64
	minLimit     int
	maxLimit     int
}

// NewNetflixAIMD is AIMDLimit built with these settings.
func NewNetflixAIMD(initial, minLimit, maxLimit int, backoffRatio, timeoutMS float64) *NetflixAIMD {
	return &NetflixAIMD{limit: initial, backoffRatio: backoffRatio, timeoutNS: nanos(timeoutMS), minLimit: minLimit, maxLimit: maxLimit}
}

func (a *NetflixAIMD) onSample(_, rtt int64, inflight int, didDrop bool) {
	current := a.limit
	if didDrop || rtt > a.timeoutNS {
		current = int(float64(current) * a.backoffRatio)
	} else if inflight*2 >= current {
		current = current + 1
	}
	a.limit = min(a.maxLimit, max(a.minLimit, current))
}

func (a *NetflixAIMD) getLimit() int { return a.limit }

// The netflix-aimd gate's own parameters.
const (
	ParamBackoffRatio = "backoff_ratio"
	ParamRTTTimeout   = "rtt_timeout_ms"
)

// TypeNetflixAIMD is the AIMDLimit gate's type name.
const TypeNetflixAIMD Type = "netflix-aimd"

func netflixAIMDKind() *Kind {
	return &Kind{
		Type:  TypeNetflixAIMD,
		Model: "Netflix concurrency-limits AIMDLimit in a SimpleLimiter: +1 per sample while in flight ≥ limit/2, ×backoff_ratio on a drop or an RTT over timeout_ms",
		Params: []Param{
			limitParamOf(ParamInitialLimit, "Initial limit", "initialLimit: the limit before the first sample", 20),
			limitParamOf(ParamMinLimit, "Min limit", "minLimit: the limit never goes below it", 20),
			limitParamOf(ParamMaxLimit, "Max limit", "maxLimit: the limit never goes above it", 200),
			{Name: ParamBackoffRatio, Admits: AdmitsLarger, Label: "Backoff ratio", Unit: "fraction", Min: 0.5, Max: 0.999999, Default: 0.9,
				Doc: "backoffRatio: the limit's factor on a drop", RangeNote: "AIMDLimit takes a ratio in [0.5, 1)"},
			{Name: ParamRTTTimeout, Admits: AdmitsLarger, Label: "Timeout", Unit: "ms", Min: 0.000001, Max: MaxWindowMS, Default: 5000,
				Doc: "timeout: an RTT over it counts as a drop"},
		},
		Options:  []Option{netflixWindowOption},
		Size:     ParamMaxLimit,
		Adaptive: true,
		Example:  Params{ParamInitialLimit: 20, ParamMinLimit: 20, ParamMaxLimit: 200, ParamBackoffRatio: 0.9, ParamRTTTimeout: 5000},
		New: func(s *Spec, p Params, _ Env) (Gate, error) {
			a := NewNetflixAIMD(int(p[ParamInitialLimit]), int(p[ParamMinLimit]), int(p[ParamMaxLimit]), p[ParamBackoffRatio], p[ParamRTTTimeout])
			return newNetflixLimiter(s, a, nil, nil)
		},
	}
}
