package form

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/workload"
	"github.com/ratelab/ratelab/web/charts"
)

// What the form knows of the engine's part and limiter types, in one
// place: which inputs each type shows, the rows a new form and an added
// row start with, and a limiter's parameters to and from its inputs.

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

// partHas reports whether a part type uses an input.
func partHas(typ, name string) bool { return slices.Contains(partFields[typ], name) }

// partTypes lists the part types in the engine's order.
func partTypes() []string { return workload.PartTypes() }

// arrivals are the arrival patterns a part may choose besides the default.
var arrivals = []string{workload.Uniform, workload.PoissonArr, workload.Synchronized}

// partTypesFor lists the part types that use an input, space separated.
func partTypesFor(name string) string {
	var out []string
	for _, t := range partTypes() {
		if partHas(t, name) {
			out = append(out, t)
		}
	}
	return strings.Join(out, " ")
}

// partTypeLabels name the part types in the type menu.
var partTypeLabels = map[string]string{
	workload.DemandCurve: "demand curve (rate segments)",
	workload.Constant:    "constant rate",
	workload.Poisson:     "Poisson",
	workload.Bursts:      "bursts",
	workload.Clients:     "client group",
	workload.FlashCrowd:  "flash crowd",
	workload.Trace:       "trace replay (CSV)",
}

// partTypeLabel names a part type in the type menu (an unknown one by
// itself).
func partTypeLabel(t string) string {
	if l, ok := partTypeLabels[t]; ok {
		return l
	}
	return t
}

// rateHint qualifies a part's rate: a client group's is per client.
func rateHint(typ string) string {
	if typ == workload.Clients {
		return "per client"
	}
	return ""
}

// limiterTypes lists the limiter types the form builds: all but chain,
// whose stages are edited as a config document.
func limiterTypes() []string {
	var out []string
	for _, t := range limiter.Types() {
		if t != limiter.TypeChain {
			out = append(out, t)
		}
	}
	return out
}

// limiterDoc is a limiter type's one-line description.
func limiterDoc(typ string) string { return limiter.Doc(typ) }

// limiterTypesFor lists the limiter types that take a parameter.
func limiterTypesFor(param string) string {
	var out []string
	for _, t := range limiter.Types() {
		if slices.Contains(limiter.ParamsOf(t), param) {
			out = append(out, t)
		}
	}
	return strings.Join(out, " ")
}

// sharesTypes lists the limiter types that split their rate by shares.
func sharesTypes() string {
	var out []string
	for _, t := range limiter.Types() {
		if limiter.HasShares(t) {
			out = append(out, t)
		}
	}
	return strings.Join(out, " ")
}

// HasChain reports whether a config has a limiter the form cannot show.
func HasChain(cfg *experiments.Config) bool {
	return slices.ContainsFunc(cfg.Limiters, func(l limiter.Spec) bool { return l.Type == limiter.TypeChain })
}

// Default is the form a new user sees: one Poisson client against a token
// bucket swept over its burst.
func Default() *Sweep {
	return &Sweep{
		Name: "my sweep", Seed: "1", DurationMS: "10000",
		Workers: "1", ServiceMS: "10", DeadlineMS: "200",
		RollingWindowMS: "1000", FairnessWindowMS: "1000",
		Parts: []Part{{Type: workload.Poisson, RateRPS: "90"}},
		Limiters: []Limiter{
			{Type: limiter.TypeTokenBucket, RateRPS: "100", Burst: "1, 2, 4, 8, 16, 32, 64"},
		},
	}
}

// Rows a form gains from "+ Add workload part" and "+ Add limiter".
var (
	newPart    = Part{Type: workload.Constant, RateRPS: "50"}
	newLimiter = Limiter{Type: limiter.TypeLeakyBucket, RateRPS: "100", Queue: "1, 2, 4, 8, 16, 32, 64"}
)

// paramInputs are a limiter row's parameter inputs in page order: the
// parameter (the input's name) and its label.
var paramInputs = []struct{ param, label string }{
	{limiter.ParamRate, "Rate"},
	{limiter.ParamBurst, "Burst"},
	{limiter.ParamQueue, "Queue"},
	{limiter.ParamLimit, "Limit"},
	{limiter.ParamWindow, "Window"},
}

// paramUnit is a parameter's unit, the same as on the run page's charts.
func paramUnit(param string) string { return charts.ParamUnit(param) }

// The choices of a limiter's shares.
const (
	sharesEqual    = limiter.SharesEqual
	sharesWeighted = limiter.SharesWeighted
)

// param is the text of a limiter's parameter input.
func (l *Limiter) param(name string) string { return *l.params()[name] }

// params are a limiter's parameter inputs, by parameter name.
func (l *Limiter) params() map[string]*string {
	return map[string]*string{
		limiter.ParamRate: &l.RateRPS, limiter.ParamBurst: &l.Burst, limiter.ParamQueue: &l.Queue,
		limiter.ParamLimit: &l.Limit, limiter.ParamWindow: &l.WindowMS,
	}
}

// limiterOf fills a limiter's inputs from its spec.
func limiterOf(s limiter.Spec) Limiter {
	l := Limiter{Type: s.Type, Name: s.Name, Shares: s.Shares}
	for name, text := range l.params() {
		if vs := s.ValuesOf(name); vs != nil {
			*text = FormatValues(*vs)
		}
	}
	return l
}

// limiter reads limiter row i into a spec, its type's parameters parsed
// and the others left out; errors land on the inputs.
func (f *Sweep) limiter(i int, lf Limiter) limiter.Spec {
	key := func(name string) string { return RowKey("limiters", i, name) }
	path := func(name string) string { return fmt.Sprintf("limiters[%d].%s", i, name) }
	l := limiter.Spec{Type: strings.TrimSpace(lf.Type), Name: strings.TrimSpace(lf.Name)}
	if limiter.Doc(l.Type) == "" {
		f.AddError(key("type"), path("type"), fmt.Sprintf("choose a limiter (one of %s)", strings.Join(limiter.Types(), ", ")))
		return l
	}
	texts := lf.params()
	for _, p := range limiter.ParamsOf(l.Type) {
		vs, err := ParseValues(*texts[p])
		if err != nil {
			f.AddError(key(p), path(p), err.Error())
		}
		*l.ValuesOf(p) = vs
	}
	if limiter.HasShares(l.Type) {
		l.Shares = strings.TrimSpace(lf.Shares)
	}
	return l
}

// paramValue is value n of parameter name of limiter li in cfg; ok=false
// when there is no such value.
func paramValue(cfg *experiments.Config, li int, name string, n int) (v float64, ok bool) {
	if li >= len(cfg.Limiters) {
		return 0, false
	}
	vs := cfg.Limiters[li].ValuesOf(name)
	if vs == nil || n >= len(*vs) {
		return 0, false
	}
	return (*vs)[n], true
}
