package deploy

import (
	"fmt"
	"strings"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// goUberRateLimitFormat is a Go file of package limits around
// go.uber.org/ratelimit: NewLimiter returns ratelimit.New(n,
// ratelimit.Per(P), ratelimit.WithSlack(s)), and Admit calls Take, which
// makes the caller wait its turn and never refuses.
//
// Mapping. The uber-ratelimit gate's point is written as it is (exact). A
// leaky bucket (rate r, queue q) paces requests 1/r apart like Take with
// no slack: New(n, Per(P), WithoutSlack) with n/P = r (whole n per 1 s,
// 1 min or 1 h, or per 10^k s for a rate with decimals, else the nearest
// whole n). Take has no queue bound, so the leaky bucket's refusals are
// gone: the notes say so and the rerun is the uber-ratelimit gate. A
// policer (which refuses instead of waiting) is not expressible.
func goUberRateLimitFormat() *Format {
	return &Format{
		Name:    "go-uber-ratelimit",
		Label:   "Go go.uber.org/ratelimit",
		Ext:     "go",
		File:    "limiter.go",
		Doc:     "a Go file (package limits): NewLimiter with ratelimit.New, and Admit calling Take",
		Comment: "// ",
		From: []From{
			{Type: limiter.TypeUberRateLimit, export: goUberFromUber},
			{Type: limiter.TypeLeakyBucket, export: goUberFromLeaky},
		},
	}
}

// uberMaxRate is the most requests per period the uber-ratelimit gate takes.
const uberMaxRate = 1_000_000

func goUberText(n, periodNS, slack int64) string {
	var b strings.Builder
	b.WriteString("package limits\n\n")
	b.WriteString("import (\n\t\"time\"\n\n\t\"go.uber.org/ratelimit\"\n)\n\n")
	slackOpt := "ratelimit.WithoutSlack"
	if slack > 0 {
		slackOpt = fmt.Sprintf("ratelimit.WithSlack(%d)", slack)
	}
	fmt.Fprintf(&b, "// NewLimiter returns the deployed limiter: %d requests per %s, paced\n// evenly, with a slack of %d.\n", n, unitDuration(periodNS), slack)
	fmt.Fprintf(&b, "func NewLimiter() ratelimit.Limiter {\n\treturn ratelimit.New(%d, ratelimit.Per(%s), %s)\n}\n\n", n, goDuration(periodNS), slackOpt)
	b.WriteString("// Admit waits for the request's turn: Take blocks and never refuses.\n")
	b.WriteString("func Admit(lim ratelimit.Limiter) time.Time {\n\treturn lim.Take()\n}\n")
	return gofmt(b.String())
}

func goUberRerun(n int64, periodMS float64, slack int64) *limiter.Spec {
	return spec(limiter.TypeUberRateLimit,
		limiter.Params{limiter.ParamLimit: float64(n), limiter.ParamPeriod: periodMS, limiter.ParamSlack: float64(slack)}, nil)
}

// goUberFromUber writes the uber-ratelimit gate's own setting.
func goUberFromUber(pt *reading) (*Export, error) {
	n, slack := int64(pt.param(limiter.ParamLimit)), int64(pt.param(limiter.ParamSlack))
	period := pt.param(limiter.ParamPeriod)
	return &Export{Text: goUberText(n, msToNS(period), slack), Rerun: goUberRerun(n, period, slack)}, nil
}

// goUberFromLeaky writes a leaky bucket as Take with no slack.
func goUberFromLeaky(pt *reading) (*Export, error) {
	rate, queue := pt.param(limiter.ParamRate), pt.param(limiter.ParamQueue)
	n, period, exact := perPeriod(rate, uberMaxRate)
	e := &Export{Text: goUberText(n, period*1e6, 0)}
	if !exact {
		e.Notes = append(e.Notes, fmt.Sprintf("ratelimit.New takes whole requests per period: %s requests/s is written %d per %s (%s requests/s).",
			num(rate), n, unitDuration(period*1e6), num(float64(n)*1000/float64(period))))
	}
	e.Notes = append(e.Notes,
		fmt.Sprintf("Take never refuses: every caller waits its turn, so the point's queue of %s (and its refusals) is gone and the wait has no bound.", num(queue)),
		"Take spaces requests Per/rate apart, truncated to the nanosecond, from the first request on: rerun with the uber-ratelimit gate to see it beside the point.")
	e.Rerun = goUberRerun(n, float64(period), 0)
	return e, nil
}
