package web

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
	"github.com/ratelab/ratelab/web/form"
	"github.com/ratelab/ratelab/web/format"
)

// ConfigSummary is the config in a few readable lines.
type ConfigSummary struct {
	Description string
	Items       []KeyValue
	Limiters    []string
}

// KeyValue is one line of a summary.
type KeyValue struct{ Key, Value string }

// summarize is the run page's summary of a config: the workload, the
// server and the windows, then each limiter with its parameters' values
// and units.
func summarize(cfg *experiments.Config) *ConfigSummary {
	sum := &ConfigSummary{Description: cfg.Description}
	add := func(k, v string) { sum.Items = append(sum.Items, KeyValue{k, v}) }
	add("Arrival window", format.Num(cfg.Workload.DurationMS)+" ms")
	add("Seed", fmt.Sprint(cfg.Seed))
	add("Workload", partsSummary(cfg.Workload.Parts))
	if len(cfg.Loads) > 0 {
		var loads []string
		for _, l := range cfg.Loads {
			what := "the workload above"
			if len(l.Parts) > 0 {
				what = partsSummary(l.Parts)
			}
			loads = append(loads, l.Name+": "+what)
		}
		add(fmt.Sprintf("Loads (%d, each run by every point)", len(cfg.Loads)), strings.Join(loads, "; "))
	}
	add("Server", fmt.Sprintf("%d worker(s), %s (capacity %s req/s), deadline %s ms",
		cfg.Server.Workers, serviceSummary(&cfg.Server), format.Round(cfg.Server.RateRPS(), 1), format.Num(cfg.Server.DeadlineMS)))
	if len(cfg.Servers) > 0 {
		var vs []string
		for _, v := range cfg.Servers {
			vs = append(vs, variantSummary(v))
		}
		add(fmt.Sprintf("Servers (%d variants)", len(cfg.Servers)), strings.Join(vs, "; "))
	}
	if len(cfg.Classes) > 0 {
		var cs []string
		for _, c := range cfg.Classes {
			if c.Share > 0 {
				cs = append(cs, fmt.Sprintf("%s %s%%", c.Name, format.Num(100*c.Share)))
			} else {
				cs = append(cs, c.Name+" (the rest)")
			}
		}
		add("Classes", strings.Join(cs, ", "))
	}
	if len(cfg.Policies) > 0 {
		var ps []string
		for _, p := range cfg.Policies {
			ps = append(ps, p.Name)
		}
		add("Client policies", strings.Join(ps, ", "))
	}
	add("Windows", fmt.Sprintf("rolling %s ms, fairness %s ms", format.Num(cfg.Metrics.RollingWindowMS), format.Num(cfg.Metrics.FairnessWindowMS)))
	add("Points", fmt.Sprint(len(cfg.Points())))
	for _, l := range cfg.Limiters {
		sum.Limiters = append(sum.Limiters, limiterSummary(l))
	}
	return sum
}

// serviceSummary is the server's service time: "10 ms service" when fixed,
// else the distribution with its settings (the engine's server.Numbers
// rows) and the mean that normalization derived into service_ms.
func serviceSummary(s *server.Spec) string {
	if s.FixedService() {
		return format.Num(s.ServiceMS) + " ms service"
	}
	dist := s.Option(server.OptService)
	var set []string
	for _, n := range server.Numbers() {
		if n.Service == dist {
			set = append(set, strings.TrimSpace(n.Name+" "+format.Num(n.Get(s))+" "+n.Unit))
		}
	}
	mean := "mean " + format.Round(s.ServiceMS, 2) + " ms"
	if len(set) == 0 {
		return fmt.Sprintf("%s service (%s)", dist, mean)
	}
	return fmt.Sprintf("%s service (%s; %s)", dist, strings.Join(set, ", "), mean)
}

// limiterSummary is a limiter's line: its label (and type when the label
// is another name), each parameter's values with its unit, and its shares.
func limiterSummary(l limiter.Spec) string {
	var ps []string
	k := l.Kind()
	if k == nil {
		return l.Label()
	}
	for _, p := range k.Params {
		ps = append(ps, fmt.Sprintf("%s = %s %s", p.Name, form.FormatValues(l.ValuesOf(p.Name)), p.Unit))
	}
	label := l.Label()
	if l.Name != "" && l.Name != string(l.Type) {
		label += " (" + string(l.Type) + ")"
	}
	for _, o := range k.Options {
		if v := l.Option(o.Name); v != "" {
			ps = append(ps, o.Name+" "+v)
		}
	}
	if len(ps) > 0 {
		label += ": " + strings.Join(ps, "; ")
	}
	return label
}

// partsSummary is a workload's parts in one line, each with the part of
// the window it covers when that is not all of it ("poisson 90 rps from
// 20 s").
func partsSummary(parts []workload.Part) string {
	var out []string
	for i := range parts {
		p := &parts[i]
		d := p.String()
		if p.StartMS > 0 && !strings.Contains(d, "start") && !strings.Contains(d, " ms") {
			d += " from " + windowTime(p.StartMS)
		}
		if p.EndMS != nil && !strings.Contains(d, "end") {
			d += " to " + windowTime(*p.EndMS)
		}
		out = append(out, d)
	}
	return strings.Join(out, "; ")
}

// windowTime is a time in whole seconds when it is one ("20 s"), else in ms.
func windowTime(ms float64) string {
	if ms >= 1000 && math.Mod(ms, 1000) == 0 {
		return format.Num(ms/1000) + " s"
	}
	return format.Num(ms) + " ms"
}

// variantSummary is a server variant: its name and the fields it sets
// ("blind: door tail-drop").
func variantSummary(v experiments.ServerVariant) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return v.Name
	}
	var fields map[string]any
	if json.Unmarshal(raw, &fields) != nil {
		return v.Name
	}
	delete(fields, "name")
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var sets []string
	for _, k := range keys {
		sets = append(sets, fmt.Sprintf("%s %v", k, fields[k]))
	}
	if len(sets) == 0 {
		return v.Name + ": the server above"
	}
	return v.Name + ": " + strings.Join(sets, ", ")
}
