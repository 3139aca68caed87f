package output

import (
	"slices"
	"strconv"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/decide"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// SettingsCSV is settings.csv, for a config with objectives (nil without):
// a row per setting (experiments/decide: a limiter at one value of each
// swept parameter, with the server, policy and swept fields that are not
// scenarios), in sweep order. Columns: limiter, type, the parameter
// columns as results.csv names them, a column per setting axis beyond the
// limiter (server, policy, or a swept field's config path, when the
// config's decision makes it part of the setting), then per objective its
// worst value over the scenarios, worst_<metric> (worst_<metric>_<op>_<value>
// when another column has that name: two objectives on one metric, or an
// objective on goodput_rps), and its results.csv pass column (it passes
// in every scenario); then meets_all, worst_goodput_rps (the lowest
// goodput over the scenarios; a replicated scenario's mean), margin (the
// smallest relative margin over the objectives with a target other than
// 0, as a fraction; empty without one), binding_objective and
// binding_scenario (where the margin is reached; the scenario empty when
// the sweep has one), recommended (the limiter's recommended setting) and
// best_overall (the sweep's), both only for a setting meeting every
// objective, and closest (the limiter's closest setting when none of its
// settings meets every objective). A cancelled run's setting without a
// point in every scenario has its values over the scenarios that ran
// (blank without any); its pass columns and meets_all are false when a
// scenario that ran fails, else blank (not known).
func SettingsCSV(res *experiments.Result) []byte {
	a := decide.Decide(res)
	if a == nil {
		return nil
	}
	w := newWriter(res)
	var params []experiments.Column
	for _, c := range experiments.ResultColumns(res.Config) {
		if _, ok := limiter.ParamByName(c.Key); ok {
			params = append(params, c)
		}
	}
	var axes []string
	for i := range a.Settings {
		for _, p := range a.Settings[i].Parts {
			if !slices.Contains(axes, p.Axis) {
				axes = append(axes, p.Axis)
			}
		}
	}
	names := []string{"limiter", "type"}
	for _, c := range params {
		names = append(names, c.Key)
	}
	names = append(names, axes...)
	worst := WorstColumns(a.Objectives)
	for j, o := range a.Objectives {
		names = append(names, worst[j], o.Column())
	}
	names = append(names, "meets_all", "worst_goodput_rps", "margin", "binding_objective", "binding_scenario", "recommended", "best_overall", "closest")
	w.header(names...)
	ci := res.Config.Replicated()
	// Each objective's column, found once (not once a setting: a lookup
	// builds the column list).
	metricCols := make([]*experiments.Column, len(a.Objectives))
	for j, o := range a.Objectives {
		metricCols[j] = experiments.ColumnByKey(o.Metric)
	}
	for i := range a.Settings {
		s := &a.Settings[i]
		ran := 0 // the scenarios with a point
		for _, p := range s.Points {
			if p >= 0 {
				ran++
			}
		}
		// pass prints whether a setting passes in every scenario: blank
		// for an incomplete one that fails in none that ran.
		pass := func(ok, failed bool) {
			if !s.Complete && !failed {
				w.empty()
				return
			}
			w.text(strconv.FormatBool(ok))
		}
		w.text(s.Limiter)
		w.text(string(s.Type))
		p := experiments.Point{LimiterIndex: s.LimiterIndex, Limiter: s.Limiter, Type: s.Type, Params: s.Params}
		for c := range params {
			w.cell(&params[c], &p)
		}
		for _, ax := range axes {
			k := slices.IndexFunc(s.Parts, func(p decide.ScenarioPart) bool { return p.Axis == ax })
			if k < 0 {
				w.empty()
				continue
			}
			w.text(s.Parts[k].Value)
		}
		for _, o := range s.Outcomes {
			if !o.HasValue {
				w.empty()
			} else {
				f := experiments.Fixed1
				if col := outcomeColumn(a.Objectives, metricCols, o.Objective); col != nil {
					f = col.Format
					if ci && col.Measured {
						f = col.MeanFormat()
					}
				}
				w.num(f, o.Measured)
			}
			pass(s.Complete && o.Pass, o.Met < ran)
		}
		pass(s.MeetsAll, slices.ContainsFunc(s.Outcomes, func(o decide.Outcome) bool { return o.Met < ran }))
		if ran > 0 {
			w.num(experiments.Fixed1, s.WorstGoodputRPS)
		} else {
			w.empty()
		}
		if s.HasMargin {
			w.num(experiments.Fixed4, s.Margin)
		} else {
			w.empty()
		}
		if s.Binding >= 0 {
			w.text(a.Objectives[s.Binding].String())
			w.text(a.Scenarios[s.BindingScenario].Name())
		} else {
			w.empty()
			w.empty()
		}
		w.text(strconv.FormatBool(s.Recommended))
		w.text(strconv.FormatBool(s.BestOverall))
		w.text(strconv.FormatBool(s.Closest))
		w.end()
	}
	return w.b
}

// WorstColumns are settings.csv's worst-value column names, one per
// objective: worst_<metric>, or worst_<metric>_<op>_<value> (the tail of
// the objective's pass column) when the metric is goodput_rps (whose
// worst_goodput_rps is the mean's) or has another objective.
func WorstColumns(objs []experiments.Objective) []string {
	out := make([]string, len(objs))
	for j, o := range objs {
		n := 0
		for _, q := range objs {
			if q.Metric == o.Metric {
				n++
			}
		}
		out[j] = "worst_" + o.Metric
		if n > 1 || o.Metric == "goodput_rps" {
			out[j] = "worst_" + o.Column()[len("pass_"):]
		}
	}
	return out
}

// outcomeColumn is the column of objective o's metric, from cols (the
// column of each of objectives, in order), looked up when o is not one of
// them.
func outcomeColumn(objectives []experiments.Objective, cols []*experiments.Column, o experiments.Objective) *experiments.Column {
	for j := range objectives {
		if objectives[j].Metric == o.Metric {
			return cols[j]
		}
	}
	return experiments.ColumnByKey(o.Metric)
}
