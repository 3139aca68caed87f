package web

import (
	"fmt"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/server"
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
	var parts []string
	for _, p := range cfg.Workload.Parts {
		parts = append(parts, p.String())
	}
	add("Workload", strings.Join(parts, "; "))
	add("Server", fmt.Sprintf("%d worker(s), %s (capacity %s req/s), deadline %s ms",
		cfg.Server.Workers, serviceSummary(&cfg.Server), format.Round(cfg.Server.RateRPS(), 1), format.Num(cfg.Server.DeadlineMS)))
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
