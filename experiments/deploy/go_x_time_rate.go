package deploy

import (
	"fmt"
	"strings"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// goXTimeRateFormat is a Go file of package limits around
// golang.org/x/time/rate: NewLimiter returns rate.NewLimiter(r, b), and
// Admit decides one request with Limiter.Allow (a policer) or, when
// requests may wait, Limiter.Reserve, Reservation.Delay and, past the
// longest wait, Reservation.Cancel (the x-time-rate gate's reserve mode).
//
// Mapping. The x-time-rate gate's point is written as it is (the gate is
// the library's arithmetic, so the export is exact). A bucket (rate r,
// burst b, q requests that may wait up to w ms) is NewLimiter(r, b) with
// Allow when q = 0, else Reserve with MaxWait w: a leaky bucket (r, queue)
// is NewLimiter(r, 1) waiting up to (queue-1)/r. The rates and bursts are
// the library's own (a float64 Limit and an int burst): nothing is
// rounded but MaxWait, to the nanosecond. The library's bucket starts
// full and refills continuously in float64 on a 1 ns clock: every export
// but the gate's own offers the x-time-rate gate as its rerun.
func goXTimeRateFormat() *Format {
	return &Format{
		Name:    "go-x-time-rate",
		Label:   "Go golang.org/x/time/rate",
		Ext:     "go",
		File:    "limiter.go",
		Doc:     "a Go file (package limits): NewLimiter and Admit around rate.NewLimiter",
		Comment: "// ",
		From: append([]From{{Type: limiter.TypeXTimeRate, export: goXFromX}},
			bucketFrom(goXFromBucket, limiter.TypeXTimeRate)...),
	}
}

// goXText is the file: allow mode when maxWaitNS < 0.
func goXText(rate float64, burst int64, reserve bool, maxWaitNS int64) string {
	var b strings.Builder
	b.WriteString("package limits\n\n")
	if reserve {
		b.WriteString("import (\n\t\"time\"\n\n\t\"golang.org/x/time/rate\"\n)\n\n")
		fmt.Fprintf(&b, "// MaxWait is the longest a request waits for its token.\nconst MaxWait = %s\n\n", goDuration(maxWaitNS))
	} else {
		b.WriteString("import \"golang.org/x/time/rate\"\n\n")
	}
	fmt.Fprintf(&b, "// NewLimiter returns the deployed limiter: a bucket of %s, full at the\n// start, refilled at %s per second.\n", count(burst, "token"), num(rate))
	fmt.Fprintf(&b, "func NewLimiter() *rate.Limiter {\n\treturn rate.NewLimiter(rate.Limit(%s), %d)\n}\n\n", num(rate), burst)
	if !reserve {
		b.WriteString("// Admit decides one request now: true to serve it, false to refuse it\n// (429).\n")
		b.WriteString("func Admit(lim *rate.Limiter) bool {\n\treturn lim.Allow()\n}\n")
		return gofmt(b.String())
	}
	b.WriteString("// Admit decides one request now: it waits for the request's token when\n// that takes at most MaxWait and returns true, else it gives the\n// reservation back and returns false (429).\n")
	b.WriteString("func Admit(lim *rate.Limiter) bool {\n\tr := lim.Reserve()\n\tif !r.OK() {\n\t\treturn false\n\t}\n")
	b.WriteString("\td := r.Delay()\n\tif d > MaxWait {\n\t\tr.Cancel()\n\t\treturn false\n\t}\n\ttime.Sleep(d)\n\treturn true\n}\n")
	return gofmt(b.String())
}

// goXRerun is the x-time-rate gate.
func goXRerun(rate float64, burst int64, reserve bool, maxWaitMS float64) *limiter.Spec {
	mode := limiter.XTimeRateAllow
	if reserve {
		mode = limiter.XTimeRateReserve
	}
	return spec(limiter.TypeXTimeRate,
		limiter.Params{limiter.ParamRate: rate, limiter.ParamBurst: float64(burst), limiter.ParamMaxWait: maxWaitMS},
		map[string]string{limiter.OptionXTimeRateMode: mode})
}

// goXFromX writes the x-time-rate gate's own setting.
func goXFromX(pt *reading) (*Export, error) {
	rate, burst := pt.param(limiter.ParamRate), int64(pt.param(limiter.ParamBurst))
	reserve := pt.option(limiter.OptionXTimeRateMode) == limiter.XTimeRateReserve
	w := pt.param(limiter.ParamMaxWait)
	e := &Export{Text: goXText(rate, burst, reserve, msToNS(w)), Rerun: goXRerun(rate, burst, reserve, w)}
	if reserve && nsToMS(msToNS(w)) != w {
		e.Notes = append(e.Notes, fmt.Sprintf("MaxWait is whole ns: max_wait_ms %s is written %s (the gate rounds it so too).", num(w), goDuration(msToNS(w))))
	}
	return e, nil
}

// goXFromBucket writes a bucket (see goXTimeRateFormat).
func goXFromBucket(b bucket) (*Export, error) {
	if b.perClient {
		return nil, onlyOneBucket("x/time/rate")
	}
	reserve := !b.policer()
	waitNS := msToNS(b.maxWaitMS)
	e := &Export{Text: goXText(b.rate, b.burst, reserve, waitNS)}
	e.Notes = append(e.Notes, "x/time/rate's bucket starts full and refills continuously, in float64 tokens on a 1 ns clock: rerun with the x-time-rate gate to see it beside the point.")
	if reserve {
		e.Notes = append(e.Notes, fmt.Sprintf("Requests past the burst reserve their token and wait for it up to MaxWait (%s); a longer wait is cancelled and refused.", msText(waitNS)))
	}
	e.Rerun = goXRerun(b.rate, b.burst, reserve, nsToMS(waitNS))
	return e, nil
}
