package web

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
)

// Limits of the new-sweep form.
const (
	MaxTraceBytes = 10 << 20 // one uploaded or pasted trace
	MaxFormBytes  = 24 << 20 // a whole form submission
	maxFormParts  = 100
	maxFormLimits = experiments.MaxLimiters
)

// SweepForm is the new-sweep form as typed: every value is the text the user
// entered, so a form with errors comes back exactly as it was sent. Keys of
// inputs (and of Errors) are "name", "seed", "duration_ms",
// "server.workers", "metrics.rolling_window_ms", "reports",
// "parts.<i>.<field>" and "limiters.<i>.<field>".
type SweepForm struct {
	Name, Description, Seed, DurationMS string
	Workers, ServiceMS, DeadlineMS      string
	RollingWindowMS, FairnessWindowMS   string
	Reports                             string // JSON list of extra CSV reports (a preset's), or empty
	Parts                               []PartForm
	Limiters                            []LimiterForm

	// Errors maps an input's key to its messages.
	Errors map[string][]string
	// Problems lists every error with the config path it came from, for the
	// summary above the form.
	Problems []field.Error
}

// PartForm is one workload part as typed. Segments are "rate_rps,duration_ms"
// lines; Bursts are "at_ms,count[,spread_ms]" lines; CSV is a trace.
type PartForm struct {
	Type, Client, Group, Clients, Weight         string
	Segments                                     string
	RateRPS, StartMS, EndMS, Arrival             string
	Bursts                                       string
	BaseRPS, Multiplier, DurationMS, RampMS, CSV string
}

// LimiterForm is one limiter as typed; parameter fields are lists for
// ParseValues.
type LimiterForm struct {
	Type, Name, RateRPS, Burst, Queue, Limit, WindowMS, Shares string
}

// partFields lists the inputs each part type shows (the engine's accepted
// fields; TestPartFieldsMatchEngine keeps them in step).
var partFields = map[string][]string{
	workload.DemandCurve: {"client", "group", "weight", "segments"},
	workload.Constant:    {"client", "group", "weight", "rate_rps", "start_ms", "end_ms"},
	workload.Poisson:     {"client", "group", "weight", "rate_rps", "start_ms", "end_ms"},
	workload.Bursts:      {"client", "group", "clients", "weight", "bursts"},
	workload.Clients:     {"group", "clients", "weight", "rate_rps", "start_ms", "end_ms", "arrival"},
	workload.FlashCrowd:  {"client", "group", "clients", "weight", "base_rps", "multiplier", "start_ms", "duration_ms", "ramp_ms", "arrival"},
	workload.Trace:       {"group", "weight", "csv"},
}

// limiterFields lists the inputs each limiter type shows.
func limiterFields(typ string) []string {
	fs := append([]string{"name"}, limiter.ParamsOf(typ)...)
	if limiter.HasShares(typ) {
		fs = append(fs, "shares")
	}
	return fs
}

// Has reports whether a part type uses an input.
func partHas(typ, name string) bool {
	for _, f := range partFields[typ] {
		if f == name {
			return true
		}
	}
	return false
}

// DefaultForm is the form a new user sees: one Poisson client against a
// token bucket swept over its burst.
func DefaultForm() *SweepForm {
	return &SweepForm{
		Name: "my sweep", Seed: "1", DurationMS: "10000",
		Workers: "1", ServiceMS: "10", DeadlineMS: "200",
		RollingWindowMS: "1000", FairnessWindowMS: "1000",
		Parts: []PartForm{{Type: workload.Poisson, RateRPS: "90"}},
		Limiters: []LimiterForm{
			{Type: limiter.TypeTokenBucket, RateRPS: "100", Burst: "1, 2, 4, 8, 16, 32, 64"},
		},
	}
}

// FormFromConfig fills the form from a config (a preset or a stored run).
func FormFromConfig(cfg *experiments.Config) *SweepForm {
	f := &SweepForm{
		Name:             cfg.Name,
		Description:      cfg.Description,
		Seed:             strconv.FormatUint(cfg.Seed, 10),
		DurationMS:       formatNum(cfg.Workload.DurationMS),
		Workers:          strconv.Itoa(cfg.Server.Workers),
		ServiceMS:        formatNum(cfg.Server.ServiceMS),
		DeadlineMS:       formatNum(cfg.Server.DeadlineMS),
		RollingWindowMS:  formatNum(cfg.Metrics.RollingWindowMS),
		FairnessWindowMS: formatNum(cfg.Metrics.FairnessWindowMS),
	}
	if len(cfg.Reports) > 0 {
		b, err := json.MarshalIndent(cfg.Reports, "", "  ")
		if err == nil {
			f.Reports = string(b)
		}
	}
	for _, p := range cfg.Workload.Parts {
		pf := PartForm{Type: p.Type, Client: p.Client, Group: p.Group, Arrival: p.Arrival, CSV: p.CSV}
		if p.Clients != 0 {
			pf.Clients = strconv.Itoa(p.Clients)
		}
		pf.Weight = numOrEmpty(p.Weight)
		pf.RateRPS = numOrEmpty(p.RateRPS)
		pf.StartMS = numOrEmpty(p.StartMS)
		if p.EndMS != nil {
			pf.EndMS = formatNum(*p.EndMS)
		}
		pf.BaseRPS = numOrEmpty(p.BaseRPS)
		pf.Multiplier = numOrEmpty(p.Multiplier)
		pf.DurationMS = numOrEmpty(p.DurationMS)
		pf.RampMS = numOrEmpty(p.RampMS)
		var lines []string
		for _, s := range p.Segments {
			lines = append(lines, formatNum(s.RateRPS)+","+formatNum(s.DurationMS))
		}
		pf.Segments = strings.Join(lines, "\n")
		lines = nil
		for _, b := range p.Bursts {
			l := formatNum(b.AtMS) + "," + strconv.Itoa(b.Count)
			if b.SpreadMS != 0 {
				l += "," + formatNum(b.SpreadMS)
			}
			lines = append(lines, l)
		}
		pf.Bursts = strings.Join(lines, "\n")
		f.Parts = append(f.Parts, pf)
	}
	for _, l := range cfg.Limiters {
		f.Limiters = append(f.Limiters, LimiterForm{
			Type: l.Type, Name: l.Name, Shares: l.Shares,
			RateRPS: FormatValues(l.RateRPS), Burst: FormatValues(l.Burst), Queue: FormatValues(l.Queue),
			Limit: FormatValues(l.Limit), WindowMS: FormatValues(l.WindowMS),
		})
	}
	return f
}

func numOrEmpty(v float64) string {
	if v == 0 {
		return ""
	}
	return formatNum(v)
}

// formValues is a submitted form: the last value of each key.
type formValues map[string]string

var indexedKey = regexp.MustCompile(`^(parts|limiters)\.(\d{1,4})\.`)

// indices lists the row numbers present for a prefix, in numeric order.
func (v formValues) indices(prefix string) []int {
	seen := map[int]bool{}
	for k := range v {
		if m := indexedKey.FindStringSubmatch(k); m != nil && m[1] == prefix {
			n, _ := strconv.Atoi(m[2])
			seen[n] = true
		}
	}
	out := make([]int, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// formFromValues reads a submitted form. Rows are renumbered 0..n-1 in the
// order of their numbers, so gaps left by removed rows close up.
func formFromValues(v formValues) *SweepForm {
	f := &SweepForm{
		Name: v["name"], Description: v["description"], Seed: v["seed"], DurationMS: v["duration_ms"],
		Workers: v["server.workers"], ServiceMS: v["server.service_ms"], DeadlineMS: v["server.deadline_ms"],
		RollingWindowMS: v["metrics.rolling_window_ms"], FairnessWindowMS: v["metrics.fairness_window_ms"],
		Reports: v["reports"],
	}
	for i, n := range v.indices("parts") {
		if i == maxFormParts {
			break
		}
		g := func(name string) string { return v[fmt.Sprintf("parts.%d.%s", n, name)] }
		f.Parts = append(f.Parts, PartForm{
			Type: g("type"), Client: g("client"), Group: g("group"), Clients: g("clients"), Weight: g("weight"),
			Segments: g("segments"), RateRPS: g("rate_rps"), StartMS: g("start_ms"), EndMS: g("end_ms"),
			Arrival: g("arrival"), Bursts: g("bursts"), BaseRPS: g("base_rps"), Multiplier: g("multiplier"),
			DurationMS: g("duration_ms"), RampMS: g("ramp_ms"), CSV: g("csv"),
		})
	}
	for i, n := range v.indices("limiters") {
		if i == maxFormLimits {
			break
		}
		g := func(name string) string { return v[fmt.Sprintf("limiters.%d.%s", n, name)] }
		f.Limiters = append(f.Limiters, LimiterForm{
			Type: g("type"), Name: g("name"), RateRPS: g("rate_rps"), Burst: g("burst"), Queue: g("queue"),
			Limit: g("limit"), WindowMS: g("window_ms"), Shares: g("shares"),
		})
	}
	return f
}

// AddError records a message for an input key (and the summary).
func (f *SweepForm) AddError(key, path, msg string) {
	if f.Errors == nil {
		f.Errors = map[string][]string{}
	}
	f.Errors[key] = append(f.Errors[key], msg)
	f.Problems = append(f.Problems, field.Error{Path: path, Msg: msg})
}

// dropErrors forgets the messages of one input (and their summary lines).
func (f *SweepForm) dropErrors(key string) {
	if len(f.Errors[key]) == 0 {
		return
	}
	delete(f.Errors, key)
	f.Problems = slices.DeleteFunc(f.Problems, func(e field.Error) bool { return FormKey(e.Path) == key })
}

// Err returns the messages of one input.
func (f *SweepForm) Err(key string) []string { return f.Errors[key] }

// HasErrors reports whether any input has an error.
func (f *SweepForm) HasErrors() bool { return len(f.Problems) > 0 }

// FormKey maps a config path from the engine ("workload.parts[2].segments[1].rate_rps",
// "limiters[0].burst[3]") to the key of the input that holds it
// ("parts.2.segments", "limiters.0.burst").
func FormKey(path string) string {
	p := strings.TrimPrefix(path, "workload.")
	if p == "workload" {
		p = "parts"
	}
	p = strings.NewReplacer("[", ".", "]", "").Replace(p)
	segs := strings.Split(p, ".")
	keep := 1
	switch segs[0] {
	case "parts", "limiters":
		keep = 3
	case "server", "metrics":
		keep = 2
	}
	if len(segs) > keep {
		segs = segs[:keep]
	}
	key := strings.Join(segs, ".")
	if segs[0] == "version" {
		key = ""
	}
	return key
}

// number parses an optional number input; empty gives 0.
func (f *SweepForm) number(key, path, text string) float64 {
	text = strings.TrimSpace(text)
	if text == "" {
		return 0
	}
	v, err := parseNumber(text)
	if err != nil {
		f.AddError(key, path, err.Error())
	}
	return v
}

func (f *SweepForm) integer(key, path, text string) int {
	text = strings.TrimSpace(text)
	if text == "" {
		return 0
	}
	v, err := strconv.Atoi(text)
	if err != nil {
		f.AddError(key, path, fmt.Sprintf("%q is not a whole number", clipText(text, 40)))
	}
	return v
}

var (
	rowItemPath   = regexp.MustCompile(`^workload\.parts\[(\d+)\]\.(segments|bursts)\[(\d+)\]`)
	valueItemPath = regexp.MustCompile(`^limiters\[(\d+)\]\.([a-z_]+)\[(\d+)\]`)
)

// itemPrefix names the item of a list input that an engine error is about
// ("segment 2 (-600,200): ", "value 3 (-4): "): the input holds the whole
// list, so without it the message beside the input does not say which
// line or value is wrong.
func itemPrefix(cfg *experiments.Config, path string) string {
	if m := rowItemPath.FindStringSubmatch(path); m != nil {
		pi, _ := strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[3])
		if pi >= len(cfg.Workload.Parts) {
			return ""
		}
		p := cfg.Workload.Parts[pi]
		if m[2] == "segments" && n < len(p.Segments) {
			sg := p.Segments[n]
			return fmt.Sprintf("segment %d (%s,%s): ", n+1, formatNum(sg.RateRPS), formatNum(sg.DurationMS))
		}
		if m[2] == "bursts" && n < len(p.Bursts) {
			b := p.Bursts[n]
			return fmt.Sprintf("burst %d (%s,%d): ", n+1, formatNum(b.AtMS), b.Count)
		}
		return ""
	}
	if m := valueItemPath.FindStringSubmatch(path); m != nil {
		li, _ := strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[3])
		if li >= len(cfg.Limiters) {
			return ""
		}
		var vs limiter.Values
		if p := cfg.Limiters[li].ValuesOf(m[2]); p != nil {
			vs = *p
		}
		if n < len(vs) {
			return fmt.Sprintf("value %d (%s): ", n+1, formatNum(vs[n]))
		}
	}
	return ""
}

// notZero refuses a typed 0 in an input whose 0 means "the default" in the
// config document: the engine would silently run the default instead of
// what the user typed (workers 0 ran 1 worker, deadline 0 ran 200 ms). An
// empty input still means the default.
func (f *SweepForm) notZero(key, path, text string, v float64, msg, def string) {
	if strings.TrimSpace(text) == "" || v != 0 || len(f.Errors[key]) > 0 {
		return
	}
	f.AddError(key, path, fmt.Sprintf("%s (leave it empty for the default, %s)", msg, def))
}

// Document turns the form into a config document and checks it with the
// engine's decoder, the same one the CLI and the JSON API use. Errors land
// on the inputs at fault (f.Errors); the returned config is nil then.
func (f *SweepForm) Document() ([]byte, *experiments.Config) {
	f.Errors, f.Problems = nil, nil
	cfg := experiments.Config{Version: experiments.Version, Name: strings.TrimSpace(f.Name), Description: strings.TrimSpace(f.Description)}
	if s := strings.TrimSpace(f.Seed); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			f.AddError("seed", "seed", fmt.Sprintf("%q is not a whole number from 0 to %d", clipText(s, 40), uint64(1<<64-1)))
		}
		cfg.Seed = seed
	}
	cfg.Workload.DurationMS = f.number("duration_ms", "workload.duration_ms", f.DurationMS)
	cfg.Server.Workers = f.integer("server.workers", "server.workers", f.Workers)
	f.notZero("server.workers", "server.workers", f.Workers, float64(cfg.Server.Workers), "must be at least 1", strconv.Itoa(server.DefaultWorkers))
	cfg.Server.ServiceMS = f.number("server.service_ms", "server.service_ms", f.ServiceMS)
	f.notZero("server.service_ms", "server.service_ms", f.ServiceMS, cfg.Server.ServiceMS, "must be more than 0 ms", formatNum(server.DefaultServiceMS)+" ms")
	cfg.Server.DeadlineMS = f.number("server.deadline_ms", "server.deadline_ms", f.DeadlineMS)
	f.notZero("server.deadline_ms", "server.deadline_ms", f.DeadlineMS, cfg.Server.DeadlineMS, "must be more than 0 ms", formatNum(server.DefaultDeadlineMS)+" ms")
	cfg.Metrics.RollingWindowMS = f.number("metrics.rolling_window_ms", "metrics.rolling_window_ms", f.RollingWindowMS)
	f.notZero("metrics.rolling_window_ms", "metrics.rolling_window_ms", f.RollingWindowMS, cfg.Metrics.RollingWindowMS, "must be more than 0 ms", "1000 ms")
	cfg.Metrics.FairnessWindowMS = f.number("metrics.fairness_window_ms", "metrics.fairness_window_ms", f.FairnessWindowMS)
	f.notZero("metrics.fairness_window_ms", "metrics.fairness_window_ms", f.FairnessWindowMS, cfg.Metrics.FairnessWindowMS, "must be more than 0 ms", "1000 ms")
	if len(f.Parts) == 0 {
		f.AddError("parts", "workload.parts", "add at least one workload part")
	}
	for i, pf := range f.Parts {
		cfg.Workload.Parts = append(cfg.Workload.Parts, f.part(i, pf))
	}
	if len(f.Limiters) == 0 {
		f.AddError("limiters", "limiters", "add at least one limiter")
	}
	for i, lf := range f.Limiters {
		cfg.Limiters = append(cfg.Limiters, f.limiter(i, lf))
	}
	if s := strings.TrimSpace(f.Reports); s != "" {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg.Reports); err != nil {
			f.AddError("reports", "reports", "must be a JSON list of reports: "+strings.TrimPrefix(err.Error(), "json: "))
		}
	}
	// The engine checks the rest even when some inputs did not parse, so
	// every mistake shows at once; an input that did not parse keeps only its
	// own message.
	unparsed := map[string]bool{}
	for k := range f.Errors {
		unparsed[k] = true
	}
	doc, err := json.Marshal(&cfg)
	if err != nil {
		f.AddError("", "", fmt.Sprintf("encode the config: %v", err))
		return nil, nil
	}
	decoded, err := experiments.DecodeConfig(doc)
	if err != nil {
		for _, e := range field.Errors(err) {
			if key := FormKey(e.Path); !unparsed[key] {
				f.AddError(key, e.Path, itemPrefix(&cfg, e.Path)+e.Msg)
			}
		}
	}
	if f.HasErrors() {
		return nil, nil
	}
	return doc, decoded
}

func (f *SweepForm) part(i int, pf PartForm) workload.Part {
	key := func(name string) string { return fmt.Sprintf("parts.%d.%s", i, name) }
	path := func(name string) string { return fmt.Sprintf("workload.parts[%d].%s", i, name) }
	p := workload.Part{Type: strings.TrimSpace(pf.Type)}
	if _, ok := partFields[p.Type]; !ok {
		f.AddError(key("type"), path("type"), fmt.Sprintf("choose a part type (one of %s)", strings.Join(workload.PartTypes(), ", ")))
		return p
	}
	has := func(name string) bool { return partHas(p.Type, name) }
	if has("client") {
		p.Client = strings.TrimSpace(pf.Client)
	}
	if has("group") {
		p.Group = strings.TrimSpace(pf.Group)
	}
	if has("clients") {
		p.Clients = f.integer(key("clients"), path("clients"), pf.Clients)
	}
	if has("weight") {
		p.Weight = f.number(key("weight"), path("weight"), pf.Weight)
		f.notZero(key("weight"), path("weight"), pf.Weight, p.Weight, "must be more than 0", "1")
	}
	if has("rate_rps") {
		p.RateRPS = f.number(key("rate_rps"), path("rate_rps"), pf.RateRPS)
	}
	if has("start_ms") {
		p.StartMS = f.number(key("start_ms"), path("start_ms"), pf.StartMS)
	}
	if has("end_ms") && strings.TrimSpace(pf.EndMS) != "" {
		end := f.number(key("end_ms"), path("end_ms"), pf.EndMS)
		p.EndMS = &end
	}
	if has("arrival") {
		p.Arrival = strings.TrimSpace(pf.Arrival)
	}
	if has("base_rps") {
		p.BaseRPS = f.number(key("base_rps"), path("base_rps"), pf.BaseRPS)
	}
	if has("multiplier") {
		p.Multiplier = f.number(key("multiplier"), path("multiplier"), pf.Multiplier)
	}
	if has("duration_ms") {
		p.DurationMS = f.number(key("duration_ms"), path("duration_ms"), pf.DurationMS)
	}
	if has("ramp_ms") {
		p.RampMS = f.number(key("ramp_ms"), path("ramp_ms"), pf.RampMS)
	}
	if has("segments") {
		rows, err := parseRows(pf.Segments, 2, 2)
		if err != nil {
			f.AddError(key("segments"), path("segments"), err.Error())
		}
		for _, r := range rows {
			p.Segments = append(p.Segments, workload.Segment{RateRPS: r[0], DurationMS: r[1]})
		}
	}
	if has("bursts") {
		rows, err := parseRows(pf.Bursts, 2, 3)
		if err != nil {
			f.AddError(key("bursts"), path("bursts"), err.Error())
		}
		for n, r := range rows {
			if r[1] != float64(int(r[1])) {
				f.AddError(key("bursts"), path("bursts"), fmt.Sprintf("line %d: count %s is not a whole number", n+1, formatNum(r[1])))
			}
			b := workload.Burst{AtMS: r[0], Count: int(r[1])}
			if len(r) > 2 {
				b.SpreadMS = r[2]
			}
			p.Bursts = append(p.Bursts, b)
		}
	}
	if has("csv") {
		if len(pf.CSV) > MaxTraceBytes {
			f.AddError(key("csv"), path("csv"), fmt.Sprintf("the trace is %s; the limit is %s", byteSize(len(pf.CSV)), byteSize(MaxTraceBytes)))
		} else {
			p.CSV = pf.CSV
		}
	}
	return p
}

func (f *SweepForm) limiter(i int, lf LimiterForm) limiter.Spec {
	key := func(name string) string { return fmt.Sprintf("limiters.%d.%s", i, name) }
	path := func(name string) string { return fmt.Sprintf("limiters[%d].%s", i, name) }
	l := limiter.Spec{Type: strings.TrimSpace(lf.Type), Name: strings.TrimSpace(lf.Name)}
	if limiter.Doc(l.Type) == "" {
		f.AddError(key("type"), path("type"), fmt.Sprintf("choose a limiter (one of %s)", strings.Join(limiter.Types(), ", ")))
		return l
	}
	for _, p := range limiter.ParamsOf(l.Type) {
		var text string
		var dst *limiter.Values
		switch p {
		case limiter.ParamRate:
			text, dst = lf.RateRPS, &l.RateRPS
		case limiter.ParamBurst:
			text, dst = lf.Burst, &l.Burst
		case limiter.ParamQueue:
			text, dst = lf.Queue, &l.Queue
		case limiter.ParamLimit:
			text, dst = lf.Limit, &l.Limit
		case limiter.ParamWindow:
			text, dst = lf.WindowMS, &l.WindowMS
		}
		vs, err := ParseValues(text)
		if err != nil {
			f.AddError(key(p), path(p), err.Error())
		}
		*dst = vs
	}
	if limiter.HasShares(l.Type) {
		l.Shares = strings.TrimSpace(lf.Shares)
	}
	return l
}

// parseRows reads lines of comma-separated numbers (a ";" also ends a
// line), each with min to max fields. Blank lines are skipped.
func parseRows(text string, min, max int) ([][]float64, error) {
	var rows [][]float64
	lines := strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == ';' })
	for n, line := range lines {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		cells := strings.Split(line, ",")
		if len(cells) < min || len(cells) > max {
			want := strconv.Itoa(min)
			if max > min {
				want += " or " + strconv.Itoa(max)
			}
			return rows, fmt.Errorf("line %d %q: expected %s numbers separated by commas", n+1, clipText(line, 40), want)
		}
		row := make([]float64, len(cells))
		for c, cell := range cells {
			v, err := parseNumber(cell)
			if err != nil {
				return rows, fmt.Errorf("line %d: %w", n+1, err)
			}
			row[c] = v
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
