package shadow_test

import (
	"encoding/csv"
	"fmt"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/accesslog"
	"github.com/ratelab/ratelab/experiments/deploy"
	"github.com/ratelab/ratelab/experiments/shadow"
)

const unitFormat = `$remote_addr $msec $request_time $status $upstream_response_time`

func run(t *testing.T, conf, log string, opt shadow.Options) *shadow.Result {
	t.Helper()
	im, err := deploy.Import("nginx", conf, deploy.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := accesslog.ParseFormat(unitFormat)
	if err != nil {
		t.Fatal(err)
	}
	opt.Import = im
	opt.Log.Format = f
	rp, err := shadow.Open(strings.NewReader(log), opt)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rp.Run()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The case: rate=6000r/m with no burst limits a client that sent
// 154 requests in a minute, because nginx spaces requests 10 ms apart: of
// each pair 5 ms apart the second is refused. Another client 100 ms apart
// is never limited; the service sees the passed ones' upstream times.
func TestSixThousandPerMinute(t *testing.T) {
	t.Parallel()
	conf := "limit_req_zone $binary_remote_addr zone=z:1m rate=6000r/m;\nlimit_req zone=z;\n"
	var b strings.Builder
	base := 1796148840.0 // a whole minute
	for i := range 77 {
		at := base + float64(i)*0.7
		fmt.Fprintf(&b, "10.0.0.1 %.3f 0.000 200 0.004\n", at)
		fmt.Fprintf(&b, "10.0.0.1 %.3f 0.000 200 0.020\n", at+0.005)
	}
	for i := range 10 {
		fmt.Fprintf(&b, "10.0.0.2 %.3f 0.000 200 -\n", base+0.05+float64(i)*0.1)
	}
	res := run(t, conf, b.String(), shadow.Options{WhatIf: true})
	// The sweep around the setting: burst 0 scales to 0, so four rates;
	// at x1 the verdict itself; at x2 (5 ms apart at 200r/s) none.
	var whatIf strings.Builder
	if err := res.WriteWhatIf(&whatIf); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(whatIf.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	line := func(i int) string { return strings.Join(rows[i][:10], ",") }
	if len(rows) != 5 || line(1) != "0.5,1,rate_rps=50 burst=0 delay=0,164,77,46.95,0,1,12,4" ||
		line(2) != "1,1,rate_rps=100 burst=0 delay=0,164,77,46.95,0,1,12,4" || line(3) != "2,1,rate_rps=200 burst=0 delay=0,164,0,0.00,0,0,14,20" ||
		!strings.Contains(rows[2][10], "limit_req_zone $binary_remote_addr zone=z:10m rate=100r/s;") {
		t.Errorf("shadow-whatif.csv:\n%s", whatIf.String())
	}
	// The answer rule (experiments/decide) over the sweep, default
	// objective reject_pct <= 1: x2 and x4 limit none; the less permissive.
	if rec := res.Recommended(); rec == nil || rec.Setting() != "rate_rps=200 burst=0 delay=0" || rows[3][12] != "recommended" || rows[2][12] != "" {
		t.Errorf("recommended %+v\n%s", res.Recommendation, whatIf.String())
	}
	// Other objectives, another pick: at most 50% limited and 12/s reaching
	// the service hold at x0.5 and x1 only (margin 0 on the peak for both),
	// so the less permissive x0.5; at most 10/s, none: the closest.
	for _, c := range []struct {
		objs, want string
		feasible   int
	}{
		{"reject_pct <= 50\ndownstream_peak_rps <= 12", "rate_rps=50 burst=0 delay=0", 2},
		{"downstream_peak_rps <= 10", "rate_rps=50 burst=0 delay=0", 0},
	} {
		objs, errs := experiments.ParseObjectives(c.objs)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		res := run(t, conf, b.String(), shadow.Options{WhatIf: true, Objectives: objs})
		if rec := res.Recommended(); rec == nil || rec.Setting() != c.want || res.Recommendation.Feasible != c.feasible {
			t.Errorf("%q: recommended %+v", c.objs, res.Recommendation)
		}
	}
	var keys, timeline strings.Builder
	if err := res.WriteKeys(&keys); err != nil {
		t.Fatal(err)
	}
	if err := res.WriteTimeline(&timeline); err != nil {
		t.Fatal(err)
	}
	wantKeys := `key,requests,limited,limited_pct,delayed,first_limited_at,longest_limited_streak,peak_rps
10.0.0.1,154,77,50.00,0,2026-12-01T18:14:00.005Z,1,4
10.0.0.2,10,0,0.00,0,,0,10
`
	if keys.String() != wantKeys {
		t.Errorf("shadow.csv:\n%s\nwant:\n%s", keys.String(), wantKeys)
	}
	wantTimeline := "minute,requests,limited,delayed,passed_rps\n2026-12-01T18:14:00.000Z,164,77,0,1.450\n"
	if timeline.String() != wantTimeline {
		t.Errorf("shadow-timeline.csv:\n%s\nwant:\n%s", timeline.String(), wantTimeline)
	}
	if res.ServiceCount != 77 || res.ServiceP99MS != 4 || res.PassedPeakRPS != 12 {
		t.Errorf("service: %d p99 %g peak %d", res.ServiceCount, res.ServiceP99MS, res.PassedPeakRPS)
	}
}

// A log over --max-bad-pct is refused after reading, with no verdict.
func TestMaxBadPct(t *testing.T) {
	t.Parallel()
	conf := "limit_req_zone $binary_remote_addr zone=z:1m rate=10r/s;\nlimit_req zone=z;\n"
	log := "10.0.0.1 1000.000 0.000 200 -\nnot a line\n10.0.0.1 1000.100 0.000 200 -\n"
	im, _ := deploy.Import("nginx", conf, deploy.ImportOptions{})
	f, _ := accesslog.ParseFormat(unitFormat)
	rp, err := shadow.Open(strings.NewReader(log), shadow.Options{Import: im, Log: accesslog.Options{Format: f}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := rp.Run()
	if _, ok := err.(*shadow.TooManyBad); !ok || res != nil || !strings.Contains(err.Error(), "1 of 3 lines (33.33%) are bad") {
		t.Errorf("got %v, %v", res, err)
	}
	res = run(t, conf, log, shadow.Options{MaxBadPct: 50})
	if res.Requests != 2 || res.Log.Bad != 1 {
		t.Errorf("%+v", res)
	}
}

// A zone key the log format does not give is refused, naming it.
func TestKeyNotLogged(t *testing.T) {
	t.Parallel()
	im, _ := deploy.Import("nginx", "limit_req_zone $http_x_api_key zone=k:1m rate=1r/s;\nlimit_req zone=k;", deploy.ImportOptions{})
	f, _ := accesslog.ParseFormat(unitFormat)
	_, err := shadow.Open(strings.NewReader(""), shadow.Options{Import: im, Log: accesslog.Options{Format: f}})
	if err == nil || !strings.Contains(err.Error(), "$http_x_api_key is not in the log format") {
		t.Errorf("%v", err)
	}
}

// Objectives name what a replay measures, else the field is named.
func TestObjectivesRefused(t *testing.T) {
	t.Parallel()
	im, _ := deploy.Import("nginx", "limit_req_zone $remote_addr zone=k:1m rate=1r/s;\nlimit_req zone=k;", deploy.ImportOptions{})
	f, _ := accesslog.ParseFormat(unitFormat)
	_, err := shadow.Open(strings.NewReader(""), shadow.Options{Import: im, Log: accesslog.Options{Format: f}, WhatIf: true,
		Objectives: []experiments.Objective{{Metric: "sojourn_p99_ms", Op: "<=", Value: 1}}})
	if err == nil || !strings.Contains(err.Error(), "objectives[0].metric") {
		t.Errorf("%v", err)
	}
}

// A stopped replay returns the verdict of what it read.
func TestStoppedKeepsWhatWasRead(t *testing.T) {
	t.Parallel()
	im, _ := deploy.Import("nginx", "limit_req_zone $remote_addr zone=k:1m rate=1r/s;\nlimit_req zone=k;", deploy.ImportOptions{})
	f, _ := accesslog.ParseFormat(unitFormat)
	var b strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&b, "10.0.0.1 %.3f 0.000 200 -\n", 1000+float64(i)*0.01)
	}
	asked := 0
	rp, err := shadow.Open(strings.NewReader(b.String()), shadow.Options{Import: im, Log: accesslog.Options{Format: f},
		Stopped: func() bool { asked++; return asked > 2 }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := rp.Run()
	if err != shadow.ErrStopped || res == nil || !res.Stopped || res.Requests != 2048 {
		t.Errorf("%v %+v", err, res)
	}
}
