package shadow

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The files a replay writes (lab shadow --out DIR).
const (
	KeysFile     = "shadow.csv"
	TimelineFile = "shadow-timeline.csv"
	SummaryFile  = "shadow-summary.txt"
	RequestsFile = "shadow-requests.csv"
	WhatIfFile   = "shadow-whatif.csv"
)

// stamp writes Unix ms as RFC 3339 UTC with milliseconds ("" for NaN).
func stamp(ms float64) string {
	if math.IsNaN(ms) {
		return ""
	}
	whole := math.Floor(ms)
	s := time.UnixMilli(int64(whole)).UTC().Format("2006-01-02T15:04:05.000Z")
	if frac := ms - whole; frac != 0 { // a spread second's place
		s = strings.TrimSuffix(s, "Z") + strconv.FormatFloat(frac, 'f', -1, 64)[1:] + "Z"
	}
	return s
}

func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// csvField quotes a key for CSV when it needs it.
func csvField(s string) string {
	if s == "" || !strings.ContainsAny(s, ",\"\r\n") && s[0] != ' ' {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// WriteKeys writes shadow.csv: a row per key, the most limited first.
// An empty key (nginx does not limit a request whose key is empty) is the
// row with an empty key.
func (r *Result) WriteKeys(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("key,requests,limited,limited_pct,delayed,first_limited_at,longest_limited_streak,peak_rps\n")
	for i := range r.Keys {
		k := &r.Keys[i]
		fmt.Fprintf(bw, "%s,%d,%d,%s,%d,%s,%d,%d\n", csvField(k.Key), k.Requests, k.Limited,
			strconv.FormatFloat(k.LimitedPct(), 'f', 2, 64), k.Delayed, stamp(k.FirstLimitedMS), k.LongestStreak, k.PeakRPS)
	}
	return bw.Flush()
}

// WriteTimeline writes shadow-timeline.csv: a row per minute with
// requests (minutes without any are left out).
func (r *Result) WriteTimeline(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("minute,requests,limited,delayed,passed_rps\n")
	for _, m := range r.Timeline {
		fmt.Fprintf(bw, "%s,%d,%d,%d,%s\n", stamp(m.StartMS), m.Requests, m.Limited, m.Delayed,
			strconv.FormatFloat(float64(m.Requests-m.Limited)/60, 'f', 3, 64))
	}
	return bw.Flush()
}

// WriteSummary writes the verdict in words: the log read, the limiter,
// the totals and what the service would have seen.
func (r *Result) WriteSummary(w io.Writer, where string) error {
	bw := bufio.NewWriter(w)
	st := &r.Log
	fmt.Fprintf(bw, "log: %d lines, %d requests, %d filtered out, %d bad (%.2f%%)\n", st.Lines, st.Requests, st.Filtered, st.Bad, st.BadPct())
	if st.Skipped > 0 {
		fmt.Fprintf(bw, "  %d lines skipped: not requests (k6's other metrics)\n", st.Skipped)
	}
	reasons := make([]string, 0, len(st.Reasons))
	for reason := range st.Reasons {
		reasons = append(reasons, reason)
	}
	slices.Sort(reasons)
	for _, reason := range reasons {
		fmt.Fprintf(bw, "  bad: %d %s\n", st.Reasons[reason], reason)
	}
	for _, b := range st.FirstBad {
		fmt.Fprintf(bw, "  line %d: %s: %s\n", b.Line, b.Reason, b.Text)
	}
	fmt.Fprintf(bw, "times: %s\n", st.StartNote)
	if st.Approximate {
		bw.WriteString("APPROXIMATE: the log's times are whole seconds; the verdict can differ from the limiter's on requests close together\n")
	}
	fmt.Fprintf(bw, "limiter: %s; limited requests get %d\n", where, r.Status)
	fmt.Fprintf(bw, "from %s to %s\n", stamp(r.FirstMS), stamp(r.LastMS))
	pct := 0.0
	if r.Requests > 0 {
		pct = 100 * float64(r.Limited) / float64(r.Requests)
	}
	limitedKeys := 0
	for _, k := range r.Keys {
		if k.Limited > 0 {
			limitedKeys++
		}
	}
	fmt.Fprintf(bw, "requests: %d; limited: %d (%.2f%%); delayed: %d (longest %s ms)\n", r.Requests, r.Limited, pct, r.Delayed, num(r.MaxDelayMS))
	fmt.Fprintf(bw, "keys (%s): %d; limited: %d\n", r.ReportKey, len(r.Keys), limitedKeys)
	for i, k := range r.Keys {
		if i == 10 || k.Limited == 0 {
			break
		}
		fmt.Fprintf(bw, "  %s: %d of %d limited (%.2f%%), first at %s, longest streak %d, peak %d/s\n",
			printable(k.Key), k.Limited, k.Requests, k.LimitedPct(), stamp(k.FirstLimitedMS), k.LongestStreak, k.PeakRPS)
	}
	fmt.Fprintf(bw, "the service would have seen: %d requests, at most %d in one second", r.Passed(), r.PassedPeakRPS)
	if r.ServiceCount > 0 {
		fmt.Fprintf(bw, "; logged upstream time of %d of them: p50 %s ms, p99 %s ms", r.ServiceCount, num(r.ServiceP50MS), num(r.ServiceP99MS))
	}
	bw.WriteString("\n")
	if r.Stopped {
		bw.WriteString("STOPPED: the replay was stopped before the end of the log; this is the verdict of the lines read\n")
	}
	if rec := r.Recommendation; rec != nil {
		bw.WriteString(rec.Text(r))
	}
	return bw.Flush()
}

// mark is the what-if row's recommended cell: "recommended", "closest"
// (no setting meets every objective) or "".
func (rec *Recommendation) mark(i int) string {
	switch {
	case rec == nil || rec.Setting != i:
		return ""
	case rec.Feasible > 0:
		return "recommended"
	default:
		return "closest"
	}
}

// Text is the recommendation in words, with its config to paste back.
func (rec *Recommendation) Text(r *Result) string {
	var b strings.Builder
	objs := make([]string, len(rec.Objectives))
	for i, o := range rec.Objectives {
		objs[i] = o.String()
	}
	fmt.Fprintf(&b, "what-if objectives: %s\n", strings.Join(objs, "; "))
	if rec.Setting < 0 {
		b.WriteString("no what-if setting to recommend\n")
		return b.String()
	}
	w := r.WhatIf[rec.Setting]
	if rec.Feasible > 0 {
		fmt.Fprintf(&b, "recommended (%d of %d settings meet every objective): rate ×%s, burst ×%s: %s", rec.Feasible, len(r.WhatIf), num(w.Rate), num(w.Burst), w.Setting())
		if rec.Binding >= 0 {
			fmt.Fprintf(&b, " (binding: %s, margin %.1f%%)", rec.Objectives[rec.Binding], 100*rec.Margin)
		}
	} else {
		var miss []string
		for _, j := range rec.Misses {
			miss = append(miss, rec.Objectives[j].String())
		}
		fmt.Fprintf(&b, "no setting meets every objective; the closest: rate ×%s, burst ×%s: %s (misses %s)", num(w.Rate), num(w.Burst), w.Setting(), strings.Join(miss, "; "))
	}
	b.WriteString("\n")
	if w.Config != "" {
		b.WriteString("its config:\n")
		for _, line := range strings.Split(strings.TrimRight(w.Config, "\n"), "\n") {
			b.WriteString("  " + line + "\n")
		}
	}
	return b.String()
}

func printable(key string) string {
	if key == "" {
		return "(empty key: not limited)"
	}
	return strconv.Quote(key)
}

// RequestsWriter writes shadow-requests.csv, a row per request as Each
// hears it: line, start, key, limited, delay_ms, logged status and the
// status the limiter would give (its limited status, else the logged).
type RequestsWriter struct {
	bw     *bufio.Writer
	status int
}

// NewRequestsWriter writes the header.
func NewRequestsWriter(w io.Writer, limitedStatus int) *RequestsWriter {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString("line,start,key,limited,delay_ms,logged_status,shadow_status\n")
	return &RequestsWriter{bw: bw, status: limitedStatus}
}

// Add writes one decision.
func (rw *RequestsWriter) Add(d *Decision) {
	st := int(d.Request.Status)
	if d.Limited {
		st = rw.status
	}
	fmt.Fprintf(rw.bw, "%d,%s,%s,%t,%s,%d,%d\n", d.Request.Line, stamp(d.Request.StartMS), csvField(d.Key), d.Limited, num(d.DelayMS), d.Request.Status, st)
}

// Flush writes what is buffered.
func (rw *RequestsWriter) Flush() error { return rw.bw.Flush() }

// WriteWhatIf writes shadow-whatif.csv: a row per setting of the sweep
// around the imported one, with its config to paste back.
func (r *Result) WriteWhatIf(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("rate_x,burst_x,setting,requests,limited,limited_pct,delayed,keys_limited,passed_peak_rps,service_p99_ms,config,gate_delay_p99_ms,recommended\n")
	for i, s := range r.WhatIf {
		pct := 0.0
		if r.Requests > 0 {
			pct = 100 * float64(s.Limited) / float64(r.Requests)
		}
		p99 := ""
		if !math.IsNaN(s.ServiceP99MS) {
			p99 = num(s.ServiceP99MS)
		}
		fmt.Fprintf(bw, "%s,%s,%s,%d,%d,%s,%d,%d,%d,%s,%s,%s,%s\n", num(s.Rate), num(s.Burst), csvField(s.Setting()), r.Requests, s.Limited,
			strconv.FormatFloat(pct, 'f', 2, 64), s.Delayed, s.KeysLimited, s.PassedPeakRPS, p99, csvField(s.Config), num(s.DelayP99MS), r.Recommendation.mark(i))
	}
	return bw.Flush()
}
