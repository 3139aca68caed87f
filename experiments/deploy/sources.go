package deploy

import (
	"fmt"
	"math"
	"slices"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// reading is a point as a format reads it: its parameter values and
// options only through its type's registry row (limiter.Kind), each one
// read recorded. An export reads every parameter and option of the rows of
// the types it expresses, or names it in a note as "name value" (the
// point's own value): TestExportsReadEveryParameter holds that for every
// format, type and option choice, so a parameter added to an exported
// gate cannot be deployed as if it did not exist.
type reading struct {
	kind   *limiter.Kind
	spec   *limiter.Spec
	values limiter.Params
	read   []string // the names read, in the order first read
}

// newReading reads pt through its type's row.
func newReading(pt *Point) (*reading, error) {
	k, ok := limiter.Lookup(pt.Spec.Type)
	if !ok {
		return nil, fmt.Errorf("deploy: limiter type %q is not registered", pt.Spec.Type)
	}
	return &reading{kind: k, spec: pt.Spec, values: pt.Params}, nil
}

// param is the point's value of a parameter of its row; a name the row
// does not have is a bug of the format (a panic, never a silent 0).
func (r *reading) param(name string) float64 {
	if _, ok := r.kind.Param(name); !ok {
		panic(fmt.Sprintf("deploy: %s has no parameter %q (its row: %v)", r.kind.Type, name, r.kind.ParamNames()))
	}
	r.note(name)
	return r.values[name]
}

// option is the point's choice of an option of its row (its default when
// the spec leaves it out); a name the row does not have panics.
func (r *reading) option(name string) string {
	if _, ok := r.kind.Option(name); !ok {
		panic(fmt.Sprintf("deploy: %s has no option %q", r.kind.Type, name))
	}
	r.note(name)
	return r.spec.Option(name)
}

func (r *reading) note(name string) {
	if !slices.Contains(r.read, name) {
		r.read = append(r.read, name)
	}
}

// bucket is a point read as a token bucket, whatever its type: the common
// model that nginx, Envoy, x/time/rate, redis_rate, Guava, Resilience4j
// and Traefik each express in their own terms.
type bucket struct {
	rate  float64 // tokens per second (> 0)
	burst int64   // requests a full bucket passes back to back (>= 1)
	// queue is how many requests beyond the burst may wait for their
	// token, and maxWaitMS the longest such a wait (queue/rate); both 0
	// for a policer, which refuses what finds no token.
	queue     int64
	maxWaitMS float64
	// perClient: one bucket per client, each with the whole setting.
	perClient bool
	// notes say how the point's own model differs from this reading.
	notes []string
}

// policer reports whether the bucket refuses at once what finds no token.
func (b *bucket) policer() bool { return b.queue == 0 }

// bucketReader reads a point of one type as a bucket.
type bucketReader struct {
	typ  limiter.Type
	read func(pt *reading) (bucket, error)
}

// bucketReaders are the types a format that deploys a token bucket reads
// as one, in the order the formats list them.
func bucketReaders() []bucketReader {
	return []bucketReader{
		{limiter.TypeTokenBucket, readTokenBucket},
		{limiter.TypeLeakyBucket, readLeakyBucket},
		{limiter.TypeGCRA, readTokenBucket},
		{limiter.TypeXTimeRate, readXTimeRate},
		{limiter.TypeRedisRate, readRedisRate},
		{limiter.TypeNginxLimitReq, readNginx},
		{limiter.TypeEnvoyLocalRateLimit, readEnvoy},
	}
}

// bucketFrom is a format's From rows for every bucket reader but the
// types in skip (which the format translates exactly itself): the point
// read as a bucket, then deploy; the reading's notes come first.
func bucketFrom(deploy func(b bucket) (*Export, error), skip ...limiter.Type) []From {
	var out []From
	for _, r := range bucketReaders() {
		if contains(skip, r.typ) {
			continue
		}
		read := r.read
		out = append(out, From{Type: r.typ, export: func(pt *reading) (*Export, error) {
			b, err := read(pt)
			if err != nil {
				return nil, err
			}
			e, err := deploy(b)
			if err != nil {
				return nil, err
			}
			e.Notes = append(b.notes, e.Notes...)
			return e, nil
		}})
	}
	return out
}

func contains(ts []limiter.Type, t limiter.Type) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// readTokenBucket: the token bucket and the GCRA (the same decisions in
// exact arithmetic) are the bucket itself.
func readTokenBucket(pt *reading) (bucket, error) {
	return bucket{rate: pt.param(limiter.ParamRate), burst: int64(pt.param(limiter.ParamBurst))}, nil
}

// readLeakyBucket: releases 1000/rate ms apart, queue requests pending at
// most. A bucket of one token at the same rate where a request may wait
// (queue-1)/rate s for its token takes the same decisions: the request
// arriving with k releases pending waits k/rate and is admitted while
// k < queue.
func readLeakyBucket(pt *reading) (bucket, error) {
	r, q := pt.param(limiter.ParamRate), int64(pt.param(limiter.ParamQueue))
	return bucket{rate: r, burst: 1, queue: q - 1, maxWaitMS: float64(q-1) * 1000 / r}, nil
}

// readXTimeRate: rate.NewLimiter(rate_rps, burst); in reserve mode a
// request may wait max_wait_ms, which at the rate is floor(max_wait*rate)
// requests beyond the burst.
func readXTimeRate(pt *reading) (bucket, error) {
	r, b := pt.param(limiter.ParamRate), int64(pt.param(limiter.ParamBurst))
	if r <= 0 {
		return bucket{}, cannot("rate 0 passes the first burst requests and then none: there is no rate to deploy")
	}
	if b < 1 {
		return bucket{}, cannot("burst 0 refuses every request")
	}
	out := bucket{rate: r, burst: b}
	if pt.option(limiter.OptionXTimeRateMode) == limiter.XTimeRateReserve {
		w := pt.param(limiter.ParamMaxWait)
		out.maxWaitMS = w
		out.queue = int64(math.Floor(w*r/1000 + 1e-9))
		if out.queue == 0 {
			out.maxWaitMS = 0
		}
		out.notes = append(out.notes, fmt.Sprintf(
			"x/time/rate's reserve mode lets a request wait up to max_wait_ms %s for its token: read as %d requests beyond the burst that may wait.",
			num(w), out.queue))
	}
	return out, nil
}

// readRedisRate: Limit{Rate: limit, Period: period_ms, Burst: burst} is a
// GCRA of limit per period.
func readRedisRate(pt *reading) (bucket, error) {
	b := int64(pt.param(limiter.ParamBurst))
	if b < 1 {
		return bucket{}, cannot("burst 0 refuses every request")
	}
	return bucket{rate: pt.param(limiter.ParamLimit) * 1000 / pt.param(limiter.ParamPeriod), burst: b,
		notes: []string{fmt.Sprintf("The point's script rounds its float64 seconds since 2017 as at clock_start_unix_s %s; read as a bucket, that rounding is left out.", num(pt.param(limiter.ParamClockStart)))}}, nil
}

// readNginx: limit_req rate=r burst=B (delay=D | nodelay). A key's first
// request passes with excess 0 and each later one adds one request of
// excess, so B+1 requests pass back to back: with nodelay (or D >= B) a
// bucket of B+1; otherwise D+1 pass at once and B-D more wait their turn.
// The rate is nginx's, in truncated thousandths.
func readNginx(pt *reading) (bucket, error) {
	r := float64(thousandths(pt.param(limiter.ParamRate))) / 1000
	bb, d := int64(pt.param(limiter.ParamBurst)), int64(pt.param(limiter.ParamNginxDelay))
	out := bucket{rate: r, perClient: pt.option(limiter.OptionNginxKey) == "client"}
	var note string
	switch nodelay := pt.option(limiter.OptionNodelay) == "on"; {
	case nodelay || d >= bb:
		out.burst = bb + 1
		how := "nodelay"
		if !nodelay {
			how = fmt.Sprintf("delay=%d", d)
		}
		note = fmt.Sprintf("burst=%d %s is read as a bucket of %d: all pass at once, none wait.", bb, how, bb+1)
	default:
		out.burst, out.queue = d+1, bb-d
		out.maxWaitMS = float64(bb-d) * 1000 / r
		how := "without nodelay or delay"
		if d > 0 {
			how = fmt.Sprintf("delay=%d", d)
		}
		more := fmt.Sprintf("%d more requests that wait their turn", bb-d)
		if bb-d == 1 {
			more = "1 more request that waits its turn"
		}
		note = fmt.Sprintf("burst=%d %s is read as a bucket of %d (passing at once) and %s, paced at the rate.",
			bb, how, d+1, more)
	}
	out.notes = append(out.notes, "nginx's burst counts the excess beyond a key's first request: "+note)
	return out, nil
}

// readEnvoy: max_tokens refilled by tokens_per_fill every fill_interval
// (whole ms) is a bucket of max_tokens at tokens_per_fill/fill_interval.
func readEnvoy(pt *reading) (bucket, error) {
	per, fill := pt.param(limiter.ParamTokensPerFill), math.Trunc(pt.param(limiter.ParamFillIntervalMS))
	out := bucket{rate: per * 1000 / fill, burst: int64(pt.param(limiter.ParamMaxTokens)),
		perClient: pt.option(limiter.OptionEnvoyDescriptor) == "client"}
	if pt.option(limiter.OptionEnvoyBucket) == "timer" {
		out.notes = append(out.notes, fmt.Sprintf(
			"The point's timer bucket adds %s tokens at each %s ms fill: read as a bucket refilled continuously at the same average rate.",
			num(per), num(fill)))
	}
	return out, nil
}

// thousandths is a rate in nginx's thousandths of a request per second,
// truncated as nginx and the nginx-limit-req gate hold it.
func thousandths(rate float64) int64 {
	u := int64(math.Floor(rate * 1000))
	for float64(u+1)/1000 <= rate {
		u++
	}
	for u > 0 && float64(u)/1000 > rate {
		u--
	}
	return u
}

// onlyOneBucket is the reason a format with one shared limiter cannot take
// a point that keeps a bucket per client.
func onlyOneBucket(label string) error {
	return cannot("the point keeps one bucket per client; this %s snippet is one limiter for every request, and the lab has no gate of it per client to rerun", label)
}
