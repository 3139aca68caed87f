package limiter

import (
	"math"

	"github.com/ratelab/ratelab/experiments/cacheline"
	"github.com/ratelab/ratelab/experiments/calculus"
)

// EnvoyLocalRateLimit is the token bucket of Envoy's local rate limit
// filter (envoy.filters.http.local_ratelimit), exact to
// source/extensions/filters/common/local_ratelimit/local_ratelimit_impl.cc:
// the LocalRateLimiterImpl constructor (the 50 ms minimum fill interval,
// buckets start full, the fill timer armed for fill_interval),
// LocalRateLimiterImpl::onFillTimer and TimerTokenBucket::onFillTimer
// (tokens = min(max_tokens, tokens + tokens_per_fill) on every timer fire,
// the timer re-armed), TimerTokenBucket::consume (a request takes a whole
// token or is refused: 429); and, with token_bucket "atomic",
// AtomicTokenBucket::consume over AtomicTokenBucketImpl::consume in
// source/common/common/token_bucket_impl.cc.
//
// token_bucket "timer" (the default) is the bucket Envoy used until its
// PR 35207 (July 2024) and, with the runtime guard
// envoy.reloadable_features.no_timer_based_rate_limit_token_bucket set to
// false, after it until the guard was removed: tokens are whole and refill
// only when the fill timer fires, every fill_interval from the filter's
// creation (here exactly at k*fill_interval_ms, a refill at an arrival's
// instant first; real Envoy re-arms the timer after each fire, so its fires
// drift later by the dispatcher's latency). Clock: the timer's whole
// milliseconds (fill_interval is read as whole ms, truncated). "atomic" is
// the later default: a token bucket of max_tokens refilled continuously at
// tokens_per_fill/fill_interval per second, the time kept as a double of
// seconds (t/1000 here), starting full; an arrival at the bucket's own time
// stamp is refused.
//
// Both only reject (a policer): release at t or a 429. descriptor "none" is
// one bucket for all requests; "client" a descriptor per client, each its
// own bucket of the same settings filled by the same timer, the default
// bucket not consumed (always_consume_default_token_bucket false).
//
// Curve: one bucket's output obeys (max_tokens + tokens_per_fill) +
// (tokens_per_fill/fill_interval)*d (a window meets at most
// ceil(d/fill_interval) fires). With descriptor "client" every client has
// the full bucket (Keyed), so n clients obey n times that. A policer holds
// nothing: no DelayBoundMS. Nominal is tokens_per_fill per fill_interval
// times the window (per client with descriptor "client").
type EnvoyLocalRateLimit struct {
	_         cacheline.Pad // a sweep's points run side by side (package cacheline)
	perClient bool
	atomic    bool
	maxTokens int64
	perFill   int64
	fillMS    float64 // whole ms
	fillRate  float64 // atomic: tokens per second

	tokens []int64   // timer: whole tokens
	fires  []int64   // timer: fires applied
	stamp  []float64 // atomic: time_in_seconds_
	_      cacheline.Pad
}

// NewEnvoyLocalRateLimit builds the gate; fill interval in ms (truncated to
// whole ms, as Envoy reads it), one bucket per client when perClient.
func NewEnvoyLocalRateLimit(maxTokens, perFill, fillIntervalMS float64, atomic, perClient bool, clients int) *EnvoyLocalRateLimit {
	n := 1
	if perClient {
		n = max(clients, 1)
	}
	g := &EnvoyLocalRateLimit{
		perClient: perClient,
		atomic:    atomic,
		maxTokens: int64(maxTokens),
		perFill:   int64(perFill),
		fillMS:    math.Trunc(fillIntervalMS),
	}
	// tokens_per_fill / std::chrono::duration<double>(fill_interval).count()
	g.fillRate = float64(g.perFill) / (g.fillMS / 1000)
	if atomic {
		g.stamp = make([]float64, n)
		for i := range g.stamp {
			g.stamp[i] = 0 - float64(g.maxTokens)/g.fillRate // init_fill
		}
		return g
	}
	g.tokens = make([]int64, n)
	g.fires = make([]int64, n)
	for i := range g.tokens {
		g.tokens[i] = g.maxTokens
	}
	return g
}

// Offer takes a token from the client's bucket (or the one bucket).
func (g *EnvoyLocalRateLimit) Offer(t float64, client int32) (float64, bool) {
	k := keySlot(g.perClient, client)
	if g.atomic {
		now := t / 1000
		old := g.stamp[k]
		if now <= old {
			return 0, false
		}
		total := math.Min(float64(g.maxTokens), float64((now-old)*g.fillRate))
		if total < 1 {
			return 0, false
		}
		g.stamp[k] = now - (total-1)/g.fillRate
		return t, true
	}
	if f := envoyFires(t, g.fillMS); f > g.fires[k] {
		// min(max, tokens + n*per) applied once equals n single fires.
		n := f - g.fires[k]
		if n >= (g.maxTokens-g.tokens[k]+g.perFill-1)/g.perFill {
			g.tokens[k] = g.maxTokens
		} else {
			g.tokens[k] += n * g.perFill
		}
		g.fires[k] = f
	}
	if g.tokens[k] == 0 {
		return 0, false
	}
	g.tokens[k]--
	return t, true
}

// NextAdmitMS is when the client's bucket (or the one bucket) holds a
// token again (Advisor). With token_bucket "timer" that is the next fire
// of the fill timer, (f+1)*fill_interval_ms; with "atomic" the instant the
// continuous refill reaches one token (AtomicTokenBucketImpl's
// nextTokenAvailable), the first float64 time at which Offer's own test
// passes. Envoy's x-ratelimit-reset header (enable_x_ratelimit_headers)
// counts down to the same instant in whole seconds, truncated:
// TimerTokenBucket::remainingFillInterval is fill_interval less the whole
// seconds since the last fill, AtomicTokenBucket::resetSeconds
// nextTokenAvailable's milliseconds divided by 1000; the model keeps the
// instant.
func (g *EnvoyLocalRateLimit) NextAdmitMS(t float64, client int32) float64 {
	k := keySlot(g.perClient, client)
	if g.atomic {
		old := g.stamp[k]
		return firstAdmit(t, (old+1/g.fillRate)*1000, func(x float64) bool {
			now := x / 1000
			return now > old && math.Min(float64(g.maxTokens), float64((now-old)*g.fillRate)) >= 1
		})
	}
	f := envoyFires(t, g.fillMS)
	if g.tokens[k] > 0 || f > g.fires[k] {
		return t
	}
	return float64(f+1) * g.fillMS
}

// envoyFires is the number of fill timer fires at or before t: floor(t/I).
func envoyFires(t, fillMS float64) int64 {
	f := int64(t / fillMS)
	for float64(f+1)*fillMS <= t {
		f++
	}
	for f > 0 && float64(f)*fillMS > t {
		f--
	}
	return f
}

// TypeEnvoyLocalRateLimit is Envoy's local rate limit's type name.
const TypeEnvoyLocalRateLimit Type = "envoy-local-ratelimit"

// Parameter and option names of Envoy's local rate limit.
const (
	ParamMaxTokens        = "max_tokens"
	ParamTokensPerFill    = "tokens_per_fill"
	ParamFillIntervalMS   = "fill_interval_ms"
	OptionEnvoyDescriptor = "descriptor"
	OptionEnvoyBucket     = "token_bucket"
	// EnvoyMinFillIntervalMS is the constructor's minimum.
	EnvoyMinFillIntervalMS = 50
	envoyMaxUint32         = 1<<32 - 1
)

func envoyLocalRateLimitKind() *Kind {
	return &Kind{
		Type:       TypeEnvoyLocalRateLimit,
		RetryAfter: "the next fill (timer) or the next whole token (atomic): the instant x-ratelimit-reset counts down to in whole seconds",
		Model:      "Envoy local rate limit token bucket (max_tokens, tokens_per_fill, fill_interval_ms): starts full; token_bucket timer refills whole tokens when the fill timer fires (Envoy before 1.31), atomic refills continuously (Envoy 1.31 on); 429 without a token; policer",
		Params: []Param{
			{Name: ParamMaxTokens, Admits: AdmitsLarger, Label: "Max tokens", Unit: "requests", Integer: true, Min: 1, Max: envoyMaxUint32,
				Doc: "token_bucket.max_tokens (uint32, > 0): the bucket's size; it starts full"},
			{Name: ParamTokensPerFill, Admits: AdmitsLarger, Label: "Tokens per fill", Unit: "requests", Integer: true, Min: 1, Max: envoyMaxUint32, Default: 1,
				Doc: "token_bucket.tokens_per_fill (uint32, > 0; Envoy's default 1): tokens added on each fill"},
			{Name: ParamFillIntervalMS, Admits: AdmitsSmaller, Label: "Fill interval", Unit: "ms",
				RangeNote: `Envoy: "local rate limit token bucket fill timer must be >= 50ms"`,
				Min:       EnvoyMinFillIntervalMS, Max: MaxWindowMS,
				Doc: "token_bucket.fill_interval, read as whole ms (at least 50)"},
		},
		Options: []Option{
			{Name: OptionEnvoyDescriptor, Label: "Descriptor", Choices: []string{"none", "client"},
				Doc: "none: one bucket for every request; client: a descriptor per client, each its own full bucket"},
			{Name: OptionEnvoyBucket, Label: "Token bucket", Choices: []string{"timer", "atomic"},
				Doc: "timer: whole tokens refilled when the fill timer fires (Envoy before PR 35207, 2024); atomic: refilled continuously (Envoy's later default)"},
		},
		Size:    ParamMaxTokens,
		Stage:   true,
		Example: Params{ParamMaxTokens: 100, ParamTokensPerFill: 10, ParamFillIntervalMS: 100},
		New: func(s *Spec, p Params, env Env) (Gate, error) {
			return NewEnvoyLocalRateLimit(p[ParamMaxTokens], p[ParamTokensPerFill], p[ParamFillIntervalMS],
				s.Option(OptionEnvoyBucket) == "atomic", s.Option(OptionEnvoyDescriptor) == "client", len(env.Weights)), nil
		},
		Keyed: func(s *Spec) bool { return s.Option(OptionEnvoyDescriptor) == "client" },
		// Per bucket: (max_tokens + tokens_per_fill) + (tokens_per_fill /
		// fill_interval)*d, the interval read as whole ms.
		Curve: func(p Params) calculus.Curve {
			return calculus.Affine(p[ParamTokensPerFill]/math.Trunc(p[ParamFillIntervalMS]), p[ParamMaxTokens]+p[ParamTokensPerFill])
		},
		Nominal: func(p Params, windowMS float64) float64 {
			return p[ParamTokensPerFill] * windowMS / math.Trunc(p[ParamFillIntervalMS])
		},
	}
}

// releaseAt is y: a policer releases what it admits at once (releaser).
func (*EnvoyLocalRateLimit) releaseAt(y float64, _ int32) float64 { return y }
