package limiter

import (
	"math"

	"github.com/ratelab/ratelab/experiments/cacheline"
	"github.com/ratelab/ratelab/experiments/calculus"
)

// EnvoyRatelimit is envoyproxy/ratelimit's Redis backend (the global rate
// limit service Envoy's ratelimit filter asks), worked from its source at
// commit f2fb15770f7fd1c88ca6c3a1b58ee513917ace96 (2026-07-05): one
// RateLimitRequest per request, hits_addend 1, of one descriptor
// (requests_per_unit per unit_s) or two (a second, requests_per_unit_2 per
// unit_2_s, on the same request, as the README's example of a per-second
// and a per-minute limit), with the settings' defaults: no local cache
// (LOCAL_CACHE_SIZE_IN_BYTES 0), NEAR_LIMIT_RATIO 0.8, shadow mode off.
//
//   - Fixed windows: the cache key of a descriptor is its entries and the
//     window start (now/divider)*divider, now the service's Unix time in
//     whole seconds (src/limiter/cache_key.go:81-82, base_limiter.go:51)
//     and divider the unit in seconds (src/utils/utilities.go:20-39:
//     second 1, minute 60, hour 3600, day 86400). Windows are aligned to
//     the Unix epoch, so the run's t = 0 sits at clock_start_unix_s (as
//     redis-rate's): a run that starts mid-minute meets a window boundary
//     within the minute.
//   - Every request increments every descriptor's counter, even when it is
//     over the limit: INCRBY key hits then EXPIRE key divider, pipelined
//     (src/redis/fixed_cache_impl.go:35-38, 160-187), then compares the
//     value after the increment with requests_per_unit: over when after >
//     limit (base_limiter.go:104). So the first limit requests of a window
//     pass and every later one is refused, and a request refused by one
//     descriptor still counts against the other (envoyproxy/ratelimit
//     #427, #1060): a request refused by the per-second limit spends the
//     per-minute quota.
//   - stop_increment_when_over_limit true is
//     STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: a GET of each key first;
//     when a descriptor's count + hits would exceed its limit
//     (IsOverLimitThresholdReached, base_limiter.go:76-79), only the
//     descriptors that would exceed are incremented
//     (fixed_cache_impl.go:117-158, getHitsAddend 44-72): the others keep
//     their quota. With one descriptor it changes nothing.
//   - The request is refused when any descriptor is OVER_LIMIT
//     (src/service/ratelimit.go:251-254; Envoy's filter answers 429).
//   - Near the limit: near_limit threshold = floor(float32(limit) × 0.8)
//     (base_limiter.go:102); the counters total_hits (58), over_limit,
//     near_limit (159-174: the hits past the threshold, up to the limit,
//     of a request that goes over; 176-188 for one that does not) and
//     within_limit (130) are kept per descriptor (Stats): they move no
//     decision.
//   - Key expiry: EXPIRE key divider after every INCRBY (the
//     EXPIRATION_JITTER_MAX_SECONDS jitter, default 300, only lengthens
//     it: left out). A key read after its expiry would be a new key at 0,
//     but the expiry, set at a time inside the key's window for the
//     window's length, never falls before the window ends, and a later
//     window is another key: the gate keeps the expiry and reads it, and
//     TestEnvoyRatelimitKeyExpiry checks it never fires in a live window.
//
// The units are parameters in seconds (unit_s, unit_2_s: 1, 60, 3600 or
// 86400) so the gate's curve can read them.
//
// descriptor "client" makes each descriptor's entry the client's key
// (remote_address): a counter per client and window.
//
// Shared by N instances (sharing central) the store is this gate, one
// Redis every instance's request reaches after half the round trip; a
// Redis error fails the request as the filter's failure_mode_deny says
// (store_down).
type EnvoyRatelimit struct {
	_        cacheline.Pad // a sweep's points run side by side (package cacheline)
	limits   [2]uint64
	dividers [2]int64 // the unit in seconds; 0: no such descriptor
	n        int      // descriptors
	keys     []envoyKey
	perKey   int // keys per descriptor: 1, or the clients
	stop     bool
	epochSec int64
	stats    [2]EnvoyRatelimitStats
	_        cacheline.Pad
}

// envoyKey is one cache key as Redis holds it: the window of its key
// name, its count and its expiry (ns after the clock start).
type envoyKey struct {
	window    int64 // the window start, Unix s; -1: no key yet
	count     uint64
	expiresNS int64
}

// EnvoyRatelimitStats are a descriptor's counters as the service keeps
// them (src/stats: total_hits, over_limit, near_limit, within_limit).
type EnvoyRatelimitStats struct {
	TotalHits, OverLimit, NearLimit, WithinLimit uint64
}

// envoyNearLimitRatio is NEAR_LIMIT_RATIO's default (settings.go:109).
const envoyNearLimitRatio float32 = 0.8

// NewEnvoyRatelimit returns the service's decisions on one descriptor of
// limit requests per unitSec seconds (1, 60, 3600, 86400: second, minute,
// hour, day) and, when limit2 > 0, a second of limit2 per unit2Sec; keys
// 1 (one counter) or the clients (a counter per client); its t = 0 at
// Unix second clockStartSec.
func NewEnvoyRatelimit(limit uint64, unitSec int64, limit2 uint64, unit2Sec int64, stop bool, keys int, clockStartSec int64) *EnvoyRatelimit {
	g := &EnvoyRatelimit{n: 1, stop: stop, epochSec: clockStartSec, perKey: max(keys, 1)}
	g.limits[0], g.dividers[0] = limit, max(unitSec, 1)
	if limit2 > 0 {
		g.n = 2
		g.limits[1], g.dividers[1] = limit2, max(unit2Sec, 1)
	}
	g.keys = make([]envoyKey, g.n*g.perKey)
	for i := range g.keys {
		g.keys[i].window = -1
	}
	return g
}

// nowNS is an arrival's time on the service's clock, ns after the clock
// start, and its whole Unix second (UnixNow).
func (g *EnvoyRatelimit) now(t float64) (ns, sec int64) {
	ns = xrateNS(t)
	s := ns / 1e9
	if ns < 0 && s*1e9 != ns {
		s--
	}
	return ns, g.epochSec + s
}

// key is descriptor d's key of client's request.
func (g *EnvoyRatelimit) key(d int, client int32) *envoyKey {
	k := 0
	if g.perKey > 1 && int(client) < g.perKey && client >= 0 {
		k = int(client)
	}
	return &g.keys[d*g.perKey+k]
}

// count is what GET of descriptor d's key of the window at sec reads at
// ns: 0 for a missing key (another window's, or expired).
func (k *envoyKey) read(window, ns int64) uint64 {
	if k.window != window || ns >= k.expiresNS {
		return 0
	}
	return k.count
}

// Offer is DoLimit of one request with hits_addend 1.
func (g *EnvoyRatelimit) Offer(t float64, client int32) (float64, bool) {
	ns, now := g.now(t)
	var keys [2]*envoyKey
	var windows [2]int64
	var counts [2]uint64
	for d := range g.n {
		keys[d] = g.key(d, client)
		windows[d] = now / g.dividers[d] * g.dividers[d] // cache_key.go:81-82
		counts[d] = keys[d].read(windows[d], ns)
		g.stats[d].TotalHits++ // base_limiter.go:58
	}
	var near [2]bool
	anyNear := false
	if g.stop { // fixed_cache_impl.go:117-158: GET, then after = count + hits
		for d := range g.n {
			near[d] = counts[d]+1 > g.limits[d] // IsOverLimitThresholdReached
			anyNear = anyNear || near[d]
		}
	}
	ok := true
	for d := range g.n {
		addend := uint64(1)
		if g.stop && anyNear && !near[d] { // getHitsAddend, 44-72
			addend = 0
		}
		k := keys[d]
		if k.window != windows[d] || ns >= k.expiresNS {
			k.window, k.count = windows[d], 0 // a new key
		}
		k.count += addend                    // INCRBY key addend
		k.expiresNS = ns + g.dividers[d]*1e9 // EXPIRE key divider
		after, before := k.count, k.count-1  // fixed_cache_impl.go:211-212 (uint64)
		if !g.stats[d].status(g.limits[d], before, after) {
			ok = false
		}
	}
	if !ok {
		return 0, false
	}
	return t, true
}

// status is GetResponseDescriptorStatus (base_limiter.go:99-131) without
// the local cache: OK (true) or OVER_LIMIT, with the counters it adds.
func (s *EnvoyRatelimitStats) status(limit, before, after uint64) bool {
	nearT := uint64(math.Floor(float64(float32(limit) * envoyNearLimitRatio)))
	if after > limit {
		if before >= limit { // checkOverLimitThreshold, 159-174
			s.OverLimit++
		} else {
			s.OverLimit += after - limit
			s.NearLimit += limit - max(nearT, before)
		}
		return false
	}
	if after > nearT { // checkNearLimitThreshold, 176-188
		if before >= nearT {
			s.NearLimit++
		} else {
			s.NearLimit += after - nearT
		}
	}
	s.WithinLimit++
	return true
}

// Stats are descriptor d's counters (0: requests_per_unit's, 1:
// requests_per_unit_2's).
func (g *EnvoyRatelimit) Stats(d int) EnvoyRatelimitStats { return g.stats[d] }

// Count is what Redis holds for descriptor d's key of client's request
// at t (GET: 0 when there is no key).
func (g *EnvoyRatelimit) Count(d int, client int32, t float64) uint64 {
	ns, now := g.now(t)
	return g.key(d, client).read(now/g.dividers[d]*g.dividers[d], ns)
}

// KeyExpiresMS is when descriptor d's key of client expires (ms after
// the clock start) and the end of its window (ms), or ok=false with no
// key yet.
func (g *EnvoyRatelimit) KeyExpiresMS(d int, client int32) (expiresMS, windowEndMS float64, ok bool) {
	k := g.key(d, client)
	if k.window < 0 {
		return 0, 0, false
	}
	return float64(k.expiresNS) / 1e6, float64((k.window + g.dividers[d] - g.epochSec) * 1000), true
}

// admits reports whether a request of client at t would pass: every
// descriptor's count + 1 within its limit.
func (g *EnvoyRatelimit) admits(t float64, client int32) bool {
	ns, now := g.now(t)
	for d := range g.n {
		if g.key(d, client).read(now/g.dividers[d]*g.dividers[d], ns)+1 > g.limits[d] {
			return false
		}
	}
	return true
}

// NextAdmitMS is the end of the window of every descriptor at its limit
// (Advisor; the service's DurationUntilReset, utils.CalculateReset: unit -
// now % unit s), at the first float64 time whose ns reads as the next
// window; +Inf when a limit is 0.
func (g *EnvoyRatelimit) NextAdmitMS(t float64, client int32) float64 {
	guess := t
	for d := range g.n {
		if g.limits[d] == 0 {
			return math.Inf(1)
		}
		_, now := g.now(t)
		w := now / g.dividers[d] * g.dividers[d]
		if g.key(d, client).read(w, xrateNS(t))+1 > g.limits[d] {
			guess = max(guess, float64((w+g.dividers[d]-g.epochSec)*1000))
		}
	}
	return firstAdmit(t, guess, func(x float64) bool { return g.admits(x, client) })
}

// releaseAt is y: a policer releases what it admits at once (releaser).
func (*EnvoyRatelimit) releaseAt(y float64, _ int32) float64 { return y }

// TypeEnvoyRatelimit is envoyproxy/ratelimit's type name.
const TypeEnvoyRatelimit Type = "envoy-ratelimit"

// Parameter and option names of envoy-ratelimit.
const (
	ParamRequestsPerUnit  = "requests_per_unit"
	ParamUnit             = "unit_s"
	ParamRequestsPerUnit2 = "requests_per_unit_2"
	ParamUnit2            = "unit_2_s"
	OptionEnvoyStop       = "stop_increment_when_over_limit"
)

// envoyRatelimitCurve is the arrival curve of the descriptors' fixed
// windows, each at most its requests_per_unit in an aligned window of its
// unit: the one of the lower rate (either bounds the output).
func envoyRatelimitCurve(p Params) calculus.Curve {
	c := calculus.FixedWindow(p[ParamRequestsPerUnit], p[ParamUnit]*1000)
	if p[ParamRequestsPerUnit2] > 0 {
		if c2 := calculus.FixedWindow(p[ParamRequestsPerUnit2], p[ParamUnit2]*1000); c2.Rate() < c.Rate() {
			return c2
		}
	}
	return c
}

// envoyRatelimitNominal is the lower of the descriptors' limit × window /
// unit.
func envoyRatelimitNominal(p Params, windowMS float64) float64 {
	n := p[ParamRequestsPerUnit] * windowMS / (p[ParamUnit] * 1000)
	if p[ParamRequestsPerUnit2] > 0 {
		n = min(n, p[ParamRequestsPerUnit2]*windowMS/(p[ParamUnit2]*1000))
	}
	return n
}

// envoyUnitsSec are the units the service takes, in seconds.
var envoyUnitsSec = []float64{1, 60, 3600, 86400}

func envoyRatelimitKind() *Kind {
	return &Kind{
		Type:       TypeEnvoyRatelimit,
		RetryAfter: "the end of the window of every descriptor at its limit (the service's DurationUntilReset)",
		Model:      "envoyproxy/ratelimit with its Redis backend: fixed windows of requests_per_unit per unit_s aligned to the Unix epoch, every request INCRBY'd even when over the limit (#427), an optional second descriptor on the same request; policer",
		Params: []Param{
			{Name: ParamRequestsPerUnit, Admits: AdmitsLarger, Label: "Requests per unit", Unit: "requests", Integer: true, Min: 0, Max: envoyMaxUint32,
				Doc: "rate_limit.requests_per_unit (uint32): requests per window of unit_s; 0 refuses every request"},
			{Name: ParamUnit, Admits: AdmitsSmaller, Label: "Unit", Unit: "s", Integer: true, Min: 1, Max: 86400, Default: 1, OneOf: envoyUnitsSec,
				Doc:       "rate_limit.unit in seconds: second 1, minute 60, hour 3600, day 86400 (utils.UnitToDivider); windows aligned to the Unix epoch",
				RangeNote: "the service's units: SECOND, MINUTE, HOUR, DAY"},
			{Name: ParamRequestsPerUnit2, Admits: AdmitsLarger, Label: "Requests per unit 2", Unit: "requests", Integer: true, Min: 0, Max: envoyMaxUint32, Optional: true,
				Doc: "a second descriptor on the same request: requests per window of unit_2_s, incremented even by requests the first refuses (0: no second descriptor)"},
			{Name: ParamUnit2, Admits: AdmitsSmaller, Label: "Unit 2", Unit: "s", Integer: true, Min: 1, Max: 86400, Default: 60, OneOf: envoyUnitsSec,
				Doc:       "the second descriptor's unit in seconds (with requests_per_unit_2 > 0)",
				RangeNote: "the service's units: SECOND, MINUTE, HOUR, DAY"},
			{Name: ParamClockStart, Admits: AdmitsNone, Label: "Clock start", Unit: "s", Units: "s since 1970", Integer: true,
				Min: redisJan2017, Max: RedisClockStartMax, Default: RedisClockStartDefault,
				Doc:       "Unix second of the run's t = 0 on the service's clock (1767225600: 2026-01-01T00:00:00Z): windows start at multiples of the unit since 1970",
				RangeNote: "the lab takes dates from 2017-01-01 to 2100-01-01"},
		},
		Options: []Option{
			{Name: OptionEnvoyStop, Label: "Stop increment when over limit", Choices: []string{"false", "true"},
				Doc: "STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT (default false): when a descriptor would go over, leave the others' counters alone"},
			{Name: OptionEnvoyDescriptor, Label: "Descriptor", Choices: []string{"none", "client"},
				Doc: "none: one counter per descriptor for every request; client: the client's key as the descriptor's value, a counter per client"},
		},
		Size:    ParamRequestsPerUnit,
		Stage:   true,
		Example: Params{ParamRequestsPerUnit: 100, ParamUnit: 1, ParamRequestsPerUnit2: 0, ParamUnit2: 60, ParamClockStart: RedisClockStartDefault},
		New: func(s *Spec, p Params, env Env) (Gate, error) {
			keys := 1
			if s.Option(OptionEnvoyDescriptor) == "client" {
				keys = len(env.Weights)
			}
			return NewEnvoyRatelimit(uint64(p[ParamRequestsPerUnit]), int64(p[ParamUnit]), uint64(p[ParamRequestsPerUnit2]), int64(p[ParamUnit2]),
				s.Option(OptionEnvoyStop) == "true", keys, redisClockStart(p)), nil
		},
		Keyed:   func(s *Spec) bool { return s.Option(OptionEnvoyDescriptor) == "client" },
		Curve:   envoyRatelimitCurve,
		Nominal: envoyRatelimitNominal,
	}
}
