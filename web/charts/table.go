package charts

import (
	"fmt"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/web/format"
)

// Table is the results table: headers with units and formatted cells, a
// row per point.
type Table struct {
	Header []TableHeader
	Rows   []TableRow
}

// TableHeader is one column of the results table.
type TableHeader struct {
	Key, Label string
	Num        bool
}

// TableRow is one point.
type TableRow struct {
	Cells  []string
	Link   string // the run page showing this point's time series
	Chosen bool
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
	{"sojourn_p99_ms", "sojourn p99 (ms)"},
	{"downstream_peak_rps", "downstream peak (req/s)"},
	{"rolling_max", "rolling max (requests)"},
	{"utilization_pct", "utilization (%)"},
	{"jain_index", "Jain's index"},
}

// newTable is the results table of a view; Jain's index shows only for a
// run of several clients. A row names its limiter by its sweep line, so
// the limiter's other swept parameters show ("token-bucket (rate_rps=50)").
func newTable(v *View, runID string) Table {
	multi := len(v.Res.Clients) > 1
	t := Table{Header: []TableHeader{{Key: "limiter", Label: "limiter"}, {Key: "swept", Label: "swept value"}}}
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
	for i := range v.Res.Points {
		p := &v.Res.Points[i]
		swept := "—"
		if p.Swept != "" {
			swept = fmt.Sprintf("%s = %s", p.Swept, format.Num(p.SweptValue()))
		}
		name := p.Limiter
		if li := v.lineOf(p); li >= 0 {
			name = v.Lines[li].Name
		}
		row := TableRow{Cells: []string{name, swept}, Link: fmt.Sprintf("/runs/%s?point=%d#timeline", runID, i), Chosen: i == v.Chosen}
		for _, col := range cols {
			cell := ""
			if val, ok := col.Value(p); ok {
				cell = string(experiments.AppendValue(nil, col.Format, val))
			}
			row.Cells = append(row.Cells, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
