package form

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
	"github.com/ratelab/ratelab/web/format"
)

// Document turns the form into a config document and checks it with the
// engine's decoder, the same one the CLI and the JSON API use. Errors land
// on the inputs at fault (f.Errors); the returned config is nil then. The
// engine checks every input that parsed even when others did not, so every
// mistake shows at once; an input that did not parse shows only its own
// message.
func (f *Sweep) Document() ([]byte, *experiments.Config) {
	f.Errors, f.Problems = nil, nil
	cfg := experiments.Config{Version: experiments.Version, Name: strings.TrimSpace(f.Name), Description: strings.TrimSpace(f.Description)}
	if s := strings.TrimSpace(f.Seed); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			f.AddError("seed", "seed", fmt.Sprintf("%q is not a whole number from 0 to %d", format.Clip(s, 40), uint64(1<<64-1)))
		}
		cfg.Seed = seed
	}
	cfg.Workload.DurationMS = f.number("duration_ms", "workload.duration_ms", f.DurationMS)
	cfg.Server.Workers = f.integer("server.workers", "server.workers", f.Workers)
	f.notZero("server.workers", "server.workers", f.Workers, float64(cfg.Server.Workers), "must be at least 1", strconv.Itoa(server.DefaultWorkers))
	cfg.Server.ServiceMS = f.number("server.service_ms", "server.service_ms", f.ServiceMS)
	f.notZero("server.service_ms", "server.service_ms", f.ServiceMS, cfg.Server.ServiceMS, "must be more than 0 ms", format.Num(server.DefaultServiceMS)+" ms")
	cfg.Server.DeadlineMS = f.number("server.deadline_ms", "server.deadline_ms", f.DeadlineMS)
	f.notZero("server.deadline_ms", "server.deadline_ms", f.DeadlineMS, cfg.Server.DeadlineMS, "must be more than 0 ms", format.Num(server.DefaultDeadlineMS)+" ms")
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
			if key := Key(e.Path); !unparsed[key] {
				f.AddError(key, e.Path, itemPrefix(&cfg, e.Path)+e.Msg)
			}
		}
	}
	if f.HasErrors() {
		return nil, nil
	}
	return doc, decoded
}

// number parses an optional number input; empty gives 0.
func (f *Sweep) number(key, path, text string) float64 {
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

// integer parses an optional whole-number input; empty gives 0.
func (f *Sweep) integer(key, path, text string) int {
	text = strings.TrimSpace(text)
	if text == "" {
		return 0
	}
	v, err := strconv.Atoi(text)
	if err != nil {
		f.AddError(key, path, fmt.Sprintf("%q is not a whole number", format.Clip(text, 40)))
	}
	return v
}

// notZero refuses a typed 0 in an input whose 0 means "the default" in the
// config document, so the engine never runs the default in place of what
// the user typed. An empty input still means the default.
func (f *Sweep) notZero(key, path, text string, v float64, msg, def string) {
	if strings.TrimSpace(text) == "" || v != 0 || len(f.Errors[key]) > 0 {
		return
	}
	f.AddError(key, path, fmt.Sprintf("%s (leave it empty for the default, %s)", msg, def))
}

var (
	rowItemPath   = regexp.MustCompile(`^workload\.parts\[(\d+)\]\.(segments|bursts)\[(\d+)\]`)
	valueItemPath = regexp.MustCompile(`^limiters\[(\d+)\]\.([a-z_]+)\[(\d+)\]`)
)

// itemPrefix names the item of a list input that an engine error is about
// ("segment 2 (-600,200): ", "value 3 (-4): "): the input holds the whole
// list, so the message beside it says which line or value is wrong.
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
			return fmt.Sprintf("segment %d (%s,%s): ", n+1, format.Num(sg.RateRPS), format.Num(sg.DurationMS))
		}
		if m[2] == "bursts" && n < len(p.Bursts) {
			b := p.Bursts[n]
			return fmt.Sprintf("burst %d (%s,%d): ", n+1, format.Num(b.AtMS), b.Count)
		}
		return ""
	}
	if m := valueItemPath.FindStringSubmatch(path); m != nil {
		n := atoi(m[3])
		if v, ok := paramValue(cfg, atoi(m[1]), m[2], n); ok {
			return fmt.Sprintf("value %d (%s): ", n+1, format.Num(v))
		}
	}
	return ""
}

// part reads part row i, only the inputs its type shows; errors land on
// the inputs.
func (f *Sweep) part(i int, pf Part) workload.Part {
	key := func(name string) string { return RowKey("parts", i, name) }
	path := func(name string) string { return fmt.Sprintf("workload.parts[%d].%s", i, name) }
	p := workload.Part{Type: strings.TrimSpace(pf.Type)}
	if _, ok := partFields[p.Type]; !ok {
		f.AddError(key("type"), path("type"), fmt.Sprintf("choose a part type (one of %s)", strings.Join(partTypes(), ", ")))
		return p
	}
	has := func(name string) bool { return partHas(p.Type, name) }
	text := func(name, s string) string {
		if has(name) {
			return strings.TrimSpace(s)
		}
		return ""
	}
	num := func(name, s string) float64 {
		if has(name) {
			return f.number(key(name), path(name), s)
		}
		return 0
	}
	p.Client, p.Group, p.Arrival = text("client", pf.Client), text("group", pf.Group), text("arrival", pf.Arrival)
	if has("clients") {
		p.Clients = f.integer(key("clients"), path("clients"), pf.Clients)
	}
	p.Weight = num("weight", pf.Weight)
	if has("weight") {
		f.notZero(key("weight"), path("weight"), pf.Weight, p.Weight, "must be more than 0", "1")
	}
	p.RateRPS, p.StartMS = num("rate_rps", pf.RateRPS), num("start_ms", pf.StartMS)
	if has("end_ms") && strings.TrimSpace(pf.EndMS) != "" {
		end := f.number(key("end_ms"), path("end_ms"), pf.EndMS)
		p.EndMS = &end
	}
	p.BaseRPS, p.Multiplier = num("base_rps", pf.BaseRPS), num("multiplier", pf.Multiplier)
	p.DurationMS, p.RampMS = num("duration_ms", pf.DurationMS), num("ramp_ms", pf.RampMS)
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
				f.AddError(key("bursts"), path("bursts"), fmt.Sprintf("line %d: count %s is not a whole number", n+1, format.Num(r[1])))
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
			f.AddError(key("csv"), path("csv"), fmt.Sprintf("the trace is %s; the limit is %s", format.Bytes(len(pf.CSV)), format.Bytes(MaxTraceBytes)))
		} else {
			p.CSV = pf.CSV
		}
	}
	return p
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
			return rows, fmt.Errorf("line %d %q: expected %s numbers separated by commas", n+1, format.Clip(line, 40), want)
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
