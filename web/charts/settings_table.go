package charts

import (
	"math"
	"strings"

	"github.com/ratelab/ratelab/experiments/output"
)

// newSettingsTable is the settings table of a run with objectives: a row
// per setting (experiments/decide: what settings.csv holds, its columns
// keyed by settings.csv's names), with the
// worst value of each objective over its scenarios, whether it meets them
// all, its worst-scenario goodput, its margin, the objective and scenario
// that bind it and whether it is recommended; sorted and filtered as the
// page's Query asks (ssort, sdir, sfeasible), like the results table.
// Each row selects its setting's point in its binding scenario. Nil
// without objectives.
func newSettingsTable(v *View) *Table {
	a := v.Answer
	if a == nil {
		return nil
	}
	t := &Table{Points: len(a.Settings), Objectives: true,
		Header: []TableHeader{{Key: "limiter", Label: "limiter"}, {Key: "setting", Label: "setting"}}}
	worst := output.WorstColumns(a.Objectives) // settings.csv's names
	for j, ob := range a.Objectives {
		t.Header = append(t.Header, TableHeader{Key: worst[j], Label: "worst " + ob.Metric + " (" + strings.TrimPrefix(ob.String(), ob.Metric+" ") + ")", Num: true})
	}
	t.Header = append(t.Header,
		TableHeader{Key: "worst_goodput_rps", Label: "worst goodput (req/s)", Num: true},
		TableHeader{Key: "margin", Label: "margin (%)", Num: true},
		TableHeader{Key: "binding_objective", Label: "binding objective"},
		TableHeader{Key: "binding_scenario", Label: "binding scenario"},
		TableHeader{Key: "recommended", Label: "answer"}) // recommended, best overall, closest (misses …)
	for si := range a.Settings {
		s := &a.Settings[si]
		point := s.Point(-1)
		row := TableRow{Order: si, Point: point, Chosen: point == v.Chosen && point >= 0, MeetsAll: s.MeetsAll,
			Recommended: s.Recommended && s.MeetsAll, Best: s.BestOverall && s.MeetsAll}
		add := func(cell, sortKey string, num float64) {
			row.Cells = append(row.Cells, cell)
			row.Sort = append(row.Sort, sortKey)
			row.nums = append(row.nums, num)
		}
		add(s.Limiter, s.Limiter, math.NaN())
		add(s.Name(), s.Name(), math.NaN())
		for _, o := range s.Outcomes {
			if !o.HasValue {
				add("no value", "", math.NaN())
				continue
			}
			cell := metricText(o.Objective.Metric, o.Measured)
			if !o.Pass {
				cell += " (misses)"
			}
			add(cell, numKey(o.Measured), o.Measured)
		}
		add(metricText("goodput_rps", s.WorstGoodputRPS), numKey(s.WorstGoodputRPS), s.WorstGoodputRPS)
		if s.HasMargin {
			add(string(percentNumber(s.Margin)), numKey(s.Margin), s.Margin)
		} else {
			add("", "", math.NaN())
		}
		binding, scenario := "", ""
		if s.Binding >= 0 {
			binding = a.Objectives[s.Binding].String()
		}
		if s.BindingScenario >= 0 && s.BindingScenario < len(a.Scenarios) {
			scenario = a.Scenarios[s.BindingScenario].Name()
		}
		add(binding, binding, math.NaN())
		add(scenario, scenario, math.NaN())
		rec := SettingMark(s)
		add(rec, rec, math.NaN())
		if v.Query.SettingsFeasible && !s.MeetsAll {
			continue
		}
		t.Rows = append(t.Rows, row)
	}
	t.Feasible = v.Query.SettingsFeasible
	t.sortBy(v.Query.SettingsSort, v.Query.SettingsDesc)
	if t.Sort == "point" { // no column: the settings' own order
		t.Sort, t.Desc = "", false
	}
	return t
}

// percentNumber prints a relative margin as a percentage, without the sign.
func percentNumber(x float64) string { return strings.TrimSuffix(percent(x), "%") }
