package deploy

import (
	"fmt"
	"strings"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// goRedisRateFormat is a Go file of package limits around
// github.com/go-redis/redis_rate/v10: Limit is the redis_rate.Limit
// {Rate, Burst, Period}, and Admit decides one request of a key with
// Limiter.Allow (a policer: the script's GCRA, cost 1).
//
// Mapping. The redis-rate gate's point is written as it is (exact). A
// policer bucket (rate r, burst b) is Limit{Rate: n, Burst: b, Period: P}
// with n/P = r: whole n per 1 s, 1 min or 1 h, or per 10^k s for a rate
// with decimals (Period at most 10000 s, n at most 10^6, as the gate
// takes them); otherwise the nearest whole n per period, said in the
// notes. redis_rate never delays, so a point whose requests may wait is
// not expressible, and its key is the caller's: one key for every request
// is the point's single bucket. The script runs a GCRA on Redis's 1 µs
// clock in float64 seconds since 2017, which rounds on a busy key: every
// export but the gate's own offers the redis-rate gate as its rerun.
func goRedisRateFormat() *Format {
	return &Format{
		Name:    "go-redis-rate",
		Label:   "Go redis_rate v10",
		Ext:     "go",
		File:    "limiter.go",
		Doc:     "a Go file (package limits): the redis_rate.Limit and Admit around Limiter.Allow",
		Comment: "// ",
		From: append([]From{{Type: limiter.TypeRedisRate, export: goRedisFromRedis}},
			bucketFrom(goRedisFromBucket, limiter.TypeRedisRate)...),
	}
}

// redisMaxRate is the most Limit.Rate the redis-rate gate takes.
const redisMaxRate = 1_000_000

func goRedisText(n, burst, periodNS int64) string {
	var b strings.Builder
	b.WriteString("package limits\n\n")
	b.WriteString("import (\n\t\"context\"\n\t\"time\"\n\n\t\"github.com/go-redis/redis_rate/v10\"\n\t\"github.com/redis/go-redis/v9\"\n)\n\n")
	fmt.Fprintf(&b, "// Limit is the deployed setting: %d requests per %s, %d back to back.\n", n, unitDuration(periodNS), burst)
	fmt.Fprintf(&b, "var Limit = redis_rate.Limit{Rate: %d, Burst: %d, Period: %s}\n\n", n, burst, goDuration(periodNS))
	b.WriteString("// NewLimiter returns a limiter on the Redis of rdb.\n")
	b.WriteString("func NewLimiter(rdb *redis.Client) *redis_rate.Limiter {\n\treturn redis_rate.NewLimiter(rdb)\n}\n\n")
	b.WriteString("// Admit decides one request of key now: true to serve it, false to\n// refuse it (429). One key for every request is one bucket for all.\n")
	b.WriteString("func Admit(ctx context.Context, lim *redis_rate.Limiter, key string) (bool, error) {\n")
	b.WriteString("\tres, err := lim.Allow(ctx, key, Limit)\n\tif err != nil {\n\t\treturn false, err\n\t}\n\treturn res.Allowed > 0, nil\n}\n")
	return gofmt(b.String())
}

func goRedisRerun(n, burst int64, periodMS float64) *limiter.Spec {
	return spec(limiter.TypeRedisRate,
		limiter.Params{limiter.ParamLimit: float64(n), limiter.ParamBurst: float64(burst), limiter.ParamPeriod: periodMS}, nil)
}

// goRedisFromRedis writes the redis-rate gate's own setting.
func goRedisFromRedis(pt *reading) (*Export, error) {
	n, burst := int64(pt.param(limiter.ParamLimit)), int64(pt.param(limiter.ParamBurst))
	period := pt.param(limiter.ParamPeriod)
	start := pt.param(limiter.ParamClockStart)
	rerun := goRedisRerun(n, burst, period)
	rerun.SetValues(limiter.ParamClockStart, limiter.Values{start})
	e := &Export{Text: goRedisText(n, burst, msToNS(period)), Rerun: rerun}
	e.Notes = append(e.Notes, fmt.Sprintf("The point runs with clock_start_unix_s %s, its t = 0 on Redis's clock; a deployed limiter reads Redis's own TIME, and the script's float64 seconds since 2017 round as at the date it runs (rerun with that clock start to see its decisions).", num(start)))
	if burst == 0 {
		e.Notes = append(e.Notes, "Burst 0 refuses every request, in redis_rate as in the point.")
	}
	return e, nil
}

// goRedisFromBucket writes a policer bucket (see goRedisRateFormat).
func goRedisFromBucket(b bucket) (*Export, error) {
	if !b.policer() {
		return nil, cannot("redis_rate's Allow never delays a request, and this point lets %d requests wait for their token", b.queue)
	}
	if b.perClient {
		return nil, onlyOneBucket("redis_rate")
	}
	n, period, exact := perPeriod(b.rate, redisMaxRate)
	e := &Export{Text: goRedisText(n, b.burst, period*1e6)}
	if !exact {
		e.Notes = append(e.Notes, fmt.Sprintf("redis_rate takes whole requests per period: %s requests/s is written %d per %s (%s requests/s).",
			num(b.rate), n, unitDuration(period*1e6), num(float64(n)*1000/float64(period))))
	}
	e.Notes = append(e.Notes, "redis_rate's script is a GCRA on Redis's 1 µs clock in float64 seconds since 2017: rerun with the redis-rate gate to see it beside the point.")
	e.Rerun = goRedisRerun(n, b.burst, float64(period))
	return e, nil
}
