// Package shadow replays an access log through a deployed limiter's
// configuration, offline: which keys would have been limited, when, and
// what the service behind the limiter would have seen. The log comes from
// experiments/accesslog (each line's start, keys, status and logged
// upstream time, in start order), the configuration from
// experiments/deploy's Import (library-exact gates, each with its key
// expression), and the gates decide as the library does
// (limiter.NewKeyed: nginx's zones checked as nginx's handler checks
// them). The verdict is per key (the report key, by default the first
// stage's) and per minute. Pure: the caller opens the files.
package shadow

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/accesslog"
	"github.com/ratelab/ratelab/experiments/deploy"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/metrics"
)

// DefaultMaxBadPct is the share of bad lines past which a replay fails.
const DefaultMaxBadPct = 1.0

// Options say what to replay.
type Options struct {
	// Import is the limiter configuration: its stages and their keys.
	Import *deploy.Imported
	// ReportKey is the key expression the verdict is per ("" = the first
	// stage's key with a variable, else $remote_addr when logged, else the
	// first stage's).
	ReportKey string
	// Log: the format, filters and reorder window (Keys are set by Open).
	Log accesslog.Options
	// MaxBadPct fails the replay when more than this share of lines are bad
	// (DefaultMaxBadPct when 0; negative: never).
	MaxBadPct float64
	// Each, when set, hears every decision in start order.
	Each func(*Decision)
	// Progress, when set, hears the lines read every 2^16 requests.
	Progress func(lines int64)
	// WhatIf replays the same requests at the imported rate and burst
	// times 0.5, 1, 2 and 4 in the same pass (Result.WhatIf), and answers
	// Objectives over them (Result.Recommendation).
	WhatIf bool
	// Objectives are the what-if sweep's (ObjectiveMetrics;
	// DefaultObjectives when empty).
	Objectives []experiments.Objective
	// Stopped, when set, is asked every 1024 requests; when it says so
	// the replay stops and Run returns the verdict of what was read
	// (Result.Stopped) with ErrStopped.
	Stopped func() bool
}

// ErrStopped is Run's error when Options.Stopped stopped it: the result
// holds what was read.
var ErrStopped = errors.New("shadow: stopped before the end of the log")

// Decision is one request's fate.
type Decision struct {
	Request *accesslog.Request
	// Key is the report key's text.
	Key string
	// Limited: the limiter refuses the request (Status).
	Limited bool
	// DelayMS is how long the limiter holds a passed request (0: at once).
	DelayMS float64
}

// Replay is an open replay: the reader and the gate.
type Replay struct {
	opt    Options
	rd     *accesslog.Reader
	gate   limiter.KeyedGate
	stages int
	report int // the report key's index among the reader's keys
	whatIf []*WhatIf
}

// Open prepares the replay of the log r holds.
func Open(r io.Reader, opt Options) (*Replay, error) {
	if opt.Import == nil || len(opt.Import.Stages) == 0 {
		return nil, errors.New("shadow: no limiter configuration")
	}
	f := opt.Log.Format
	if f == nil {
		return nil, errors.New("shadow: no log format")
	}
	stages := opt.Import.Stages
	if len(stages)+1 > accesslog.MaxKeys {
		return nil, fmt.Errorf("shadow: %d stages: at most %d", len(stages), accesslog.MaxKeys-1)
	}
	var keys []string
	for i, st := range stages {
		if _, err := f.CompileKey(st.Key); err != nil {
			return nil, fmt.Errorf("shadow: %s %s (stage %d): %w", opt.Import.Format, st.Name, i+1, err)
		}
		keys = append(keys, st.Key)
	}
	report := opt.ReportKey
	if report == "" {
		report = defaultReportKey(opt.Import, f)
	}
	keys = append(keys, report)
	logOpt := opt.Log
	logOpt.Keys = keys
	rd, err := accesslog.NewReader(r, logOpt)
	if err != nil {
		return nil, fmt.Errorf("shadow: %w", err)
	}
	gate, err := limiter.NewKeyed(opt.Import.Specs())
	if err != nil {
		return nil, fmt.Errorf("shadow: %w", err)
	}
	if opt.MaxBadPct == 0 {
		opt.MaxBadPct = DefaultMaxBadPct
	}
	if len(opt.Objectives) == 0 {
		opt.Objectives = DefaultObjectives()
	}
	if errs := ValidateObjectives(opt.Objectives); len(errs) > 0 {
		return nil, fmt.Errorf("shadow: %w", errs.Err())
	}
	rp := &Replay{opt: opt, rd: rd, gate: gate, stages: len(stages), report: len(keys) - 1}
	if opt.WhatIf {
		if rp.whatIf, err = whatIfs(opt.Import); err != nil {
			return nil, fmt.Errorf("shadow: %w", err)
		}
	}
	return rp, nil
}

// defaultReportKey is the first stage key with a variable, else
// $remote_addr when logged, else the first stage's key.
func defaultReportKey(im *deploy.Imported, f *accesslog.Format) string {
	for _, st := range im.Stages {
		if k, err := f.CompileKey(st.Key); err == nil && !k.Constant() {
			return st.Key
		}
	}
	if f.Logs("remote_addr") {
		return "$remote_addr"
	}
	return im.Stages[0].Key
}

// ReportKey is the expression the verdict's keys are of.
func (rp *Replay) ReportKey() string { return rp.rd.Key(rp.report).Expr }

// TooManyBad is the error of a log with more bad lines than allowed.
type TooManyBad struct {
	Stats     accesslog.Stats
	MaxBadPct float64
}

func (e *TooManyBad) Error() string {
	return fmt.Sprintf("%d of %d lines (%.2f%%) are bad, more than --max-bad-pct %g%%: nothing written", e.Stats.Bad, e.Stats.Lines, e.Stats.BadPct(), e.MaxBadPct)
}

// Run replays the whole log and returns the verdict; a log with more bad
// lines than MaxBadPct returns *TooManyBad (with no verdict) after reading
// it all, before the caller writes anything.
func (rp *Replay) Run() (*Result, error) {
	v := newVerdict(rp.opt.Import.Status)
	keys := make([]int32, rp.stages)
	var d Decision
	stopped := false
	for {
		if rp.opt.Stopped != nil && v.requests&1023 == 0 && rp.opt.Stopped() {
			stopped = true
			break
		}
		req, err := rp.rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("shadow: %w", err)
		}
		copy(keys, req.Keys[:rp.stages])
		release, ok := rp.gate.OfferKeys(req.StartMS, keys)
		d = Decision{Request: req, Limited: !ok}
		if ok {
			d.DelayMS = release - req.StartMS
		}
		v.add(req, req.Keys[rp.report], &d)
		for _, w := range rp.whatIf {
			w.offer(req, keys, req.Keys[rp.report])
		}
		if rp.opt.Each != nil {
			d.Key = rp.rd.Key(rp.report).Name(req.Keys[rp.report])
			rp.opt.Each(&d)
		}
		if rp.opt.Progress != nil && v.requests&(1<<16-1) == 0 {
			rp.opt.Progress(rp.rd.Stats().Lines)
		}
	}
	st := rp.rd.Stats()
	if rp.opt.MaxBadPct >= 0 && st.BadPct() > rp.opt.MaxBadPct {
		return nil, &TooManyBad{Stats: st, MaxBadPct: rp.opt.MaxBadPct}
	}
	res := v.result(st, rp.rd.Key(rp.report))
	for _, w := range rp.whatIf {
		w.finish()
	}
	res.WhatIf = rp.whatIf
	if rp.opt.WhatIf {
		res.Recommendation = res.recommend(rp.opt.Objectives)
	}
	if stopped {
		res.Stopped = true
		return res, ErrStopped
	}
	return res, nil
}

// KeyVerdict is one key's verdict.
type KeyVerdict struct {
	Key      string
	Requests int64
	Limited  int64
	Delayed  int64
	// FirstLimitedMS is the start of the key's first limited request (Unix
	// ms), NaN when none was.
	FirstLimitedMS float64
	// LongestStreak is the most limited requests of the key in a row.
	LongestStreak int64
	// PeakRPS is the most requests the key started in one second (aligned).
	PeakRPS int64
}

// LimitedPct is the key's limited share in percent.
func (k *KeyVerdict) LimitedPct() float64 {
	if k.Requests == 0 {
		return 0
	}
	return 100 * float64(k.Limited) / float64(k.Requests)
}

// Minute is one minute of the timeline.
type Minute struct {
	StartMS                    float64 // Unix ms, whole minute
	Requests, Limited, Delayed int64
}

// Result is a replay's verdict.
type Result struct {
	Log       accesslog.Stats
	ReportKey string
	Status    int // the status of a limited request
	Keys      []KeyVerdict
	Timeline  []Minute
	Requests  int64
	Limited   int64
	Delayed   int64
	// FirstMS and LastMS are the first and last requests' starts.
	FirstMS, LastMS float64
	// What the service behind the limiter would have seen: the requests
	// passed, the most released in one second, and the p99 of the logged
	// upstream times of the passed requests that log one (ServiceCount;
	// NaN when none).
	PassedPeakRPS int64
	ServiceCount  int64
	ServiceP50MS  float64
	ServiceP99MS  float64
	// MaxDelayMS is the longest a passed request was held.
	MaxDelayMS float64
	// WhatIf is the sweep around the imported setting (Options.WhatIf),
	// Recommendation its answer to the objectives.
	WhatIf         []*WhatIf
	Recommendation *Recommendation
	// Stopped: the replay was stopped (Options.Stopped) before the log's
	// end; the verdict is of the requests read.
	Stopped bool
}

// Passed is the number of requests the limiter lets through.
func (r *Result) Passed() int64 { return r.Requests - r.Limited }

// verdict accumulates a replay.
type verdict struct {
	status            int
	keys              []keyState
	noKey             keyState
	timeline          []Minute
	requests, limited int64
	delayed           int64
	first, last       float64
	releases          releaseWindow
	service           metrics.Histogram
	maxDelay          float64
}

type keyState struct {
	KeyVerdict
	streak   int64
	sec      int64
	inSecond int64
	seen     bool
}

func newVerdict(status int) *verdict {
	return &verdict{status: status, first: math.NaN(), last: math.NaN()}
}

func (v *verdict) add(req *accesslog.Request, key int32, d *Decision) {
	t := req.StartMS
	if v.requests == 0 {
		v.first = t
	}
	v.last = t
	v.requests++
	ks := &v.noKey
	if key >= 0 {
		for int(key) >= len(v.keys) {
			v.keys = append(v.keys, keyState{})
		}
		ks = &v.keys[key]
	}
	if !ks.seen {
		ks.seen, ks.FirstLimitedMS, ks.sec = true, math.NaN(), math.MinInt64
	}
	ks.Requests++
	sec := int64(math.Floor(t / 1000))
	if sec != ks.sec {
		ks.sec, ks.inSecond = sec, 0
	}
	ks.inSecond++
	ks.PeakRPS = max(ks.PeakRPS, ks.inSecond)

	minute := math.Floor(t/60000) * 60000
	if n := len(v.timeline); n == 0 || v.timeline[n-1].StartMS != minute {
		v.timeline = append(v.timeline, Minute{StartMS: minute})
	}
	m := &v.timeline[len(v.timeline)-1]
	m.Requests++
	if d.Limited {
		v.limited++
		m.Limited++
		ks.Limited++
		ks.streak++
		ks.LongestStreak = max(ks.LongestStreak, ks.streak)
		if math.IsNaN(ks.FirstLimitedMS) {
			ks.FirstLimitedMS = t
		}
		return
	}
	ks.streak = 0
	if d.DelayMS > 0 {
		v.delayed++
		m.Delayed++
		ks.Delayed++
		v.maxDelay = max(v.maxDelay, d.DelayMS)
	}
	v.releases.add(t + d.DelayMS)
	if !math.IsNaN(req.ServiceMS) {
		v.service.Record(req.ServiceMS)
	}
}

// releaseWindow counts releases per aligned second; releases come nearly
// in order (a delayed one later), so it keeps the seconds of the last
// minute.
type releaseWindow struct {
	counts map[int64]int64
	newest int64
	peak   int64
}

func (w *releaseWindow) add(t float64) {
	sec := int64(math.Floor(t / 1000))
	if w.counts == nil {
		w.counts = map[int64]int64{}
		w.newest = sec
	}
	w.counts[sec]++
	w.peak = max(w.peak, w.counts[sec])
	if sec > w.newest {
		w.newest = sec
		if len(w.counts) > 120 {
			for s := range w.counts {
				if s < sec-60 {
					delete(w.counts, s)
				}
			}
		}
	}
}

func (v *verdict) result(st accesslog.Stats, k *accesslog.Key) *Result {
	r := &Result{Log: st, ReportKey: k.Expr, Status: v.status, Timeline: v.timeline,
		Requests: v.requests, Limited: v.limited, Delayed: v.delayed, FirstMS: v.first, LastMS: v.last,
		PassedPeakRPS: v.releases.peak, MaxDelayMS: v.maxDelay, ServiceP50MS: math.NaN(), ServiceP99MS: math.NaN()}
	for i := range v.keys {
		if v.keys[i].seen {
			kv := v.keys[i].KeyVerdict
			kv.Key = k.Name(int32(i))
			r.Keys = append(r.Keys, kv)
		}
	}
	if v.noKey.seen {
		kv := v.noKey.KeyVerdict
		kv.Key = "" // no key: nginx does not limit it
		r.Keys = append(r.Keys, kv)
	}
	slices.SortStableFunc(r.Keys, func(a, b KeyVerdict) int {
		return cmp.Or(cmp.Compare(b.Limited, a.Limited), cmp.Compare(b.Requests, a.Requests), cmp.Compare(a.Key, b.Key))
	})
	if n := v.service.Count(); n > 0 {
		r.ServiceCount = int64(n)
		r.ServiceP50MS = float64(v.service.Quantile(50))
		r.ServiceP99MS = float64(v.service.Quantile(99))
	}
	return r
}

// CheckLines is how many lines Check reads.
const CheckLines = 10000

// Check reads the first lines (at most CheckLines) of a log with the
// replay's format, keys and filters, deciding nothing, and returns
// *TooManyBad when more than MaxBadPct of them are bad: the web form
// refuses such a log before it stores anything. A log whose first lines
// pass may still fail Run over the whole log.
func Check(r io.Reader, opt Options) error {
	opt.WhatIf = false
	rp, err := Open(&firstLines{r: r, left: CheckLines}, opt)
	if err != nil {
		return err
	}
	for {
		_, err := rp.rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("shadow: %w", err)
		}
	}
	if st := rp.rd.Stats(); rp.opt.MaxBadPct >= 0 && st.BadPct() > rp.opt.MaxBadPct {
		return &TooManyBad{Stats: st, MaxBadPct: rp.opt.MaxBadPct}
	}
	return nil
}

// firstLines reads r up to its left-th newline.
type firstLines struct {
	r    io.Reader
	left int
}

func (f *firstLines) Read(p []byte) (int, error) {
	if f.left <= 0 {
		return 0, io.EOF
	}
	n, err := f.r.Read(p)
	for i := 0; i < n; i++ {
		if p[i] == '\n' {
			if f.left--; f.left == 0 {
				return i + 1, nil
			}
		}
	}
	return n, err
}
