package charts

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/decide"
	"github.com/ratelab/ratelab/web/format"
)

// Table is the results table: headers with units and formatted cells, a
// row per point, in the order and filter the page's Query asks for.
type Table struct {
	Header []TableHeader
	Rows   []TableRow
	// Points is how many points the run has (Rows may hold fewer: Feasible).
	Points int
	// Objectives: the config has objectives, so rows say whether they meet
	// them all and the table can show only those that do.
	Objectives bool
	// Sort and Desc are the column the rows are sorted by ("": sweep
	// order) and its direction; Feasible keeps only the points meeting
	// every objective.
	Sort     string
	Desc     bool
	Feasible bool
}

// TableHeader is one column of the results table.
type TableHeader struct {
	Key, Label string
	Num        bool
}

// TableRow is one point.
type TableRow struct {
	Point  int
	Cells  []string
	Link   string // the run page showing this point's time series
	Chosen bool
	// MeetsAll: the point meets every objective (false without objectives).
	MeetsAll bool
	// Sort holds each cell's sort key: the unrounded number of a numeric
	// cell ("" when it has none), the text of a text cell.
	Sort []string
	nums []float64 // unrounded values, NaN: none
}

// tableColumns are the results table's columns after limiter and swept
// value: results.csv keys with their labels and units.
var tableColumns = []struct{ key, label string }{
	{"offered_rps", "offered (req/s)"},
	{"goodput_rps", "goodput (req/s)"},
	{"reject_pct", "rejected (%)"},
	{"served_late_pct", "served late (%)"},
	{"gate_delay_p99_ms", "gate delay p99 (ms)"},
	{"server_wait_p99_ms", "server wait p99 (ms)"},
	{"sojourn_p99_ms", "time in system p99, arrival to finish (ms)"},
	{"downstream_peak_rps", "downstream peak (req/s)"},
	{"rolling_max", "rolling max (requests)"},
	{"utilization_pct", "utilization (%)"},
	{"jain_index", "Jain's index"},
}

// TableKeys are the keys a results table sorts by: "point", "limiter",
// "swept" and the metric columns.
func TableKeys() []string {
	keys := []string{"point", "limiter", "swept"}
	for _, c := range tableColumns {
		keys = append(keys, c.key)
	}
	return keys
}

// newTable is the results table of a view; Jain's index shows only for a
// run of several clients. A row names its limiter by its sweep line, so
// the limiter's other swept parameters show ("token-bucket (rate_rps=50)").
// Rows are in the view's Query order, only the feasible ones when it asks.
func newTable(v *View, runID string) Table {
	multi := len(v.Res.Clients) > 1
	t := Table{Header: []TableHeader{{Key: "limiter", Label: "limiter"}, {Key: "swept", Label: "swept value"}},
		Points: len(v.Res.Points), Objectives: len(v.Res.Config.Objectives) > 0}
	var cols []*experiments.Column
	for _, c := range tableColumns {
		if c.key == "jain_index" && !multi {
			continue
		}
		col := experiments.ColumnByKey(c.key)
		if col == nil {
			continue
		}
		cols = append(cols, col)
		t.Header = append(t.Header, TableHeader{Key: c.key, Label: c.label, Num: true})
	}
	var ans *decide.Answer
	if t.Objectives {
		ans = decide.Decide(v.Res)
	}
	swept := experiments.SweptColumn()
	for i := range v.Res.Points {
		p := &v.Res.Points[i]
		cell, sv := "", math.NaN() // a limiter without parameters sweeps nothing
		if val, ok := swept.Value(p); ok {
			cell, sv = fmt.Sprintf("%s = %s", p.Swept, format.Num(val)), val
		}
		name := p.Limiter
		if li := v.lineOf(p); li >= 0 {
			name = v.Lines[li].Name
		}
		row := TableRow{Point: i, Cells: []string{name, cell}, Link: fmt.Sprintf("/runs/%s?point=%d#timeline", runID, i), Chosen: i == v.Chosen,
			Sort: []string{name, numKey(sv)}, nums: []float64{math.NaN(), sv}}
		if ans != nil {
			row.MeetsAll = ans.Verdicts[i].MeetsAll
		}
		for _, col := range cols {
			cell, num := "", math.NaN()
			if val, ok := col.Value(p); ok {
				f := col.Format
				if col.Measured && len(p.Stats) > 0 {
					f = col.MeanFormat() // a mean over replications, as results.csv
				}
				cell, num = string(experiments.AppendValue(nil, f, val)), val
			}
			row.Cells = append(row.Cells, cell)
			row.Sort = append(row.Sort, numKey(num))
			row.nums = append(row.nums, num)
		}
		if v.Query.Feasible && t.Objectives && !row.MeetsAll {
			continue
		}
		t.Rows = append(t.Rows, row)
	}
	t.Feasible = v.Query.Feasible && t.Objectives
	t.sortBy(v.Query.Sort, v.Query.Desc)
	return t
}

// numKey is a number's sort key: its shortest form, "" for none.
func numKey(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// sortBy orders the rows by a column key (the point index, a header's
// key); cells without a value go last in either direction, ties keep
// sweep order. An unknown key keeps sweep order.
func (t *Table) sortBy(key string, desc bool) {
	col := -1
	for i, h := range t.Header {
		if h.Key == key {
			col = i
		}
	}
	if col < 0 && key != "point" {
		return
	}
	t.Sort, t.Desc = key, desc
	slices.SortStableFunc(t.Rows, func(a, b TableRow) int {
		var c int
		switch {
		case col < 0:
			c = cmp.Compare(a.Point, b.Point)
		case col == 0:
			c = cmp.Compare(a.Cells[0], b.Cells[0])
		default:
			x, y := a.nums[col], b.nums[col]
			switch xn, yn := math.IsNaN(x), math.IsNaN(y); {
			case xn && yn:
				return 0
			case xn:
				return 1
			case yn:
				return -1
			}
			c = cmp.Compare(x, y)
		}
		if desc {
			c = -c
		}
		return c
	})
}
