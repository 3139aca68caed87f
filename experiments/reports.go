package experiments

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// Report asks for an extra CSV file in a fixed layout, such as the seed
// lab's two files. Type "points" writes a row per point; type "series" a row
// per aligned 100 ms window of [0, duration).
type Report struct {
	Type    string         `json:"type"`
	File    string         `json:"file"`
	Columns []ReportColumn `json:"columns"`
}

// ReportColumn is one column: a header and the value it shows. For "points"
// reports Value is a results.csv column or "swept" (the point's swept
// parameter). For "series" reports Value is window_start_ms, offered_rps,
// released_rps, rejected_rps or in_system_max, and Limiter and Swept pick the
// point (released_rps, rejected_rps, in_system_max).
type ReportColumn struct {
	Header  string   `json:"header"`
	Value   string   `json:"value"`
	Limiter *int     `json:"limiter,omitempty"`
	Swept   *float64 `json:"swept,omitempty"`
}

// Report types.
const (
	ReportPoints = "points"
	ReportSeries = "series"
)

var reportFile = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,80}\.csv$`)

func (c *Config) validateReports() field.List {
	var errs field.List
	if len(c.Reports) > MaxReports {
		errs.Add("reports", "at most %d reports", MaxReports)
	}
	files := map[string]bool{FileResults: true, FileSeries: true, FileClients: true, FileManifest: true}
	for i, r := range c.Reports {
		path := field.Index("reports", i)
		if !reportFile.MatchString(r.File) {
			errs.Add(field.Join(path, "file"), "must be a lower-case file name ending in .csv")
		} else if files[r.File] {
			errs.Add(field.Join(path, "file"), "%q is already an output of the run", r.File)
		}
		files[r.File] = true
		if len(r.Columns) == 0 || len(r.Columns) > 100 {
			errs.Add(field.Join(path, "columns"), "needs 1 to 100 columns")
		}
		for j, col := range r.Columns {
			cp := field.Index(field.Join(path, "columns"), j)
			if col.Header == "" || strings.ContainsAny(col.Header, ",\"\n\r") || len(col.Header) > 100 {
				errs.Add(field.Join(cp, "header"), "must be a plain name (no commas, quotes or line breaks)")
			}
			switch r.Type {
			case ReportPoints:
				if col.Value != "swept" && ColumnByKey(col.Value) == nil {
					errs.Add(field.Join(cp, "value"), "unknown column %q (one of swept, %s)", col.Value, strings.Join(ColumnKeys(), ", "))
				}
				if col.Limiter != nil || col.Swept != nil {
					errs.Add(cp, "limiter and swept pick a point in series reports only")
				}
			case ReportSeries:
				switch col.Value {
				case "window_start_ms", "offered_rps":
				case "released_rps", "rejected_rps", "in_system_max":
					if col.Limiter == nil || *col.Limiter < 0 || *col.Limiter >= len(c.Limiters) {
						errs.Add(field.Join(cp, "limiter"), "must be the index of a limiter (0 to %d)", len(c.Limiters)-1)
					} else if col.Swept != nil {
						l := &c.Limiters[*col.Limiter]
						vs := *limiterValues(l)
						if n := countOf(vs, *col.Swept); n == 0 {
							errs.Add(field.Join(cp, "swept"), "%g is not a value of %s.%s (its values: %s): report %s draws the point where it is %g; give it one of the values, or remove the report", *col.Swept, l.Label(), l.Swept(), formatValues(vs), r.File, *col.Swept)
						} else if n > 1 {
							// The report would show the first of them.
							errs.Add(field.Join(cp, "swept"), "%s.%s = %g picks %d points (another parameter lists several values too): a series report column needs a limiter with one swept parameter", l.Label(), l.Swept(), *col.Swept, n)
						}
					} else if c.Limiters[*col.Limiter].Count() != 1 {
						errs.Add(field.Join(cp, "swept"), "is required: the limiter has several points")
					}
				default:
					errs.Add(field.Join(cp, "value"), "must be window_start_ms, offered_rps, released_rps, rejected_rps or in_system_max")
				}
			default:
				errs.Add(field.Join(path, "type"), "must be %q or %q", ReportPoints, ReportSeries)
			}
		}
	}
	return errs
}

// countOf is how many times v occurs in vs.
func countOf(vs []float64, v float64) int {
	n := 0
	for _, x := range vs {
		if x == v {
			n++
		}
	}
	return n
}

func limiterValues(l *limiter.Spec) *[]float64 {
	vs := []float64{}
	for _, p := range l.Points() {
		vs = append(vs, p.Get(l.Swept()))
	}
	return &vs
}

// formatValues lists values as "1, 2, 4".
func formatValues(vs []float64) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(parts, ", ")
}
