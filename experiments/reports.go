package experiments

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// Report asks for an extra CSV file in a fixed layout, such as the seed
// lab's two files. Type "points" writes a row per point; type "series" a row
// per aligned series window (Config.SeriesWindow: 100 ms unless
// metrics.series_window_ms says otherwise) of [0, duration).
type Report struct {
	Type    string         `json:"type"`
	File    string         `json:"file"`
	Columns []ReportColumn `json:"columns"`
	// Select keeps the rows of some limiters, servers and loads of a
	// "points" report (all when nil).
	Select *Selection `json:"select,omitempty"`
}

// Selection lists indices into the config's limiters, servers and loads;
// an empty list keeps them all.
type Selection struct {
	Limiters []int `json:"limiters,omitempty"`
	Servers  []int `json:"servers,omitempty"`
	Loads    []int `json:"loads,omitempty"`
}

// Keeps reports whether the point is one of the selection's rows.
func (s *Selection) Keeps(p *Point) bool {
	in := func(xs []int, x int) bool { return len(xs) == 0 || slices.Contains(xs, x) }
	return s == nil || in(s.Limiters, p.LimiterIndex) && in(s.Servers, p.Server) && in(s.Loads, p.Load)
}

// ReportColumn is one column: a header and the value it shows. For "points"
// reports Value is a results.csv column, a column of PointColumnKeys (a
// per-class one with Class), "swept" (the point's swept parameter) or
// SweptOrLimiter (the same, but the limiter's name for a limiter without
// parameters, as the seed lab's limit sweep writes "none"). For "series"
// reports Value is one of SeriesValues, and Limiter, Swept, Server, Load
// and Policy (a client policy's name) pick the point (Server, Load and
// Policy default to the first), Class the class.
type ReportColumn struct {
	Header  string   `json:"header"`
	Value   string   `json:"value"`
	Limiter *int     `json:"limiter,omitempty"`
	Swept   *float64 `json:"swept,omitempty"`
	Server  *int     `json:"server,omitempty"`
	Load    *int     `json:"load,omitempty"`
	Policy  string   `json:"policy,omitempty"`
	Class   string   `json:"class,omitempty"`
	// Places prints a number column with this many decimal places (0 to
	// 6, by the decimals rule) instead of its own format: the seed lab's
	// Post 1 prints its offered rate as a whole number and its queue depth
	// with two places.
	Places *int `json:"places,omitempty"`
}

// MaxPlaces bounds a report column's places.
const MaxPlaces = 6

// SeriesValue is one value a "series" report can show per window.
type SeriesValue struct {
	Key   string
	Point bool // needs a point (limiter, swept, server, load)
	Class bool // needs a class
	Doc   string
}

// SeriesValues lists the values of "series" reports.
func SeriesValues() []SeriesValue {
	return []SeriesValue{
		{"window_start_ms", false, false, "the window's start, 100 k"},
		{"offered_rps", false, false, "arrivals in the window × 10 (of the column's load)"},
		{"released_rps", true, false, "releases to the server × 10"},
		{"rejected_rps", true, false, "arrivals the gate rejected × 10"},
		{"in_system_max", true, false, "most requests at the server seen at a release"},
		{"sojourn_p99_ms", true, false, "p99 sojourn of the requests that finished in the window (by finish time; the queue model's), 0 when none did"},
		{"class_offered_rps", true, true, "scored arrivals of the class × 10"},
		{"class_success_pct", true, true, "share of the class's scored arrivals in the window (by arrival) served within the deadline; 100 when it had none"},
	}
}

// seriesValue finds a series value by key.
func seriesValue(key string) (SeriesValue, bool) {
	for _, v := range SeriesValues() {
		if v.Key == key {
			return v, true
		}
	}
	return SeriesValue{}, false
}

// SweptOrLimiter is the points report value that shows the swept
// parameter's value, or the limiter's name when it has no parameters.
const SweptOrLimiter = "swept_or_limiter"

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
	files := map[string]bool{FileResults: true, FileSeries: true, FileClients: true, FileManifest: true, FileReplications: true, FileSettings: true}
	// The keys a points report may name, listed once for the run's
	// reports (PointColumn per column built the column list each time:
	// half the decoding of the seed model's config, before its run).
	var pointKeys map[string]bool
	isPointKey := func(key string) bool {
		if pointKeys == nil {
			pointKeys = map[string]bool{}
			for _, k := range PointColumnKeys() {
				pointKeys[k] = true
			}
		}
		return pointKeys[key]
	}
	for i, r := range c.Reports {
		path := field.Index("reports", i)
		if !reportFile.MatchString(r.File) {
			errs.Add(field.Join(path, "file"), "must be a lower-case file name ending in .csv")
		} else if files[r.File] {
			errs.Add(field.Join(path, "file"), "%q is already an output of the run", r.File)
		}
		files[r.File] = true
		if r.Select != nil && r.Type != ReportPoints {
			errs.Add(field.Join(path, "select"), "keeps rows of a points report only")
		}
		errs = append(errs, c.validateSelect(path, r.Select)...)
		if len(r.Columns) == 0 || len(r.Columns) > 100 {
			errs.Add(field.Join(path, "columns"), "needs 1 to 100 columns")
		}
		for j, col := range r.Columns {
			cp := field.Index(field.Join(path, "columns"), j)
			if col.Header == "" || strings.ContainsAny(col.Header, ",\"\n\r") || len(col.Header) > 100 {
				errs.Add(field.Join(cp, "header"), "must be a plain name (no commas, quotes or line breaks)")
			}
			errs = append(errs, c.validateColumnPicks(r.Type, cp, &col)...)
			if col.Places != nil && (*col.Places < 0 || *col.Places > MaxPlaces) {
				errs.Add(field.Join(cp, "places"), "must be between 0 and %d", MaxPlaces)
			}
			switch r.Type {
			case ReportPoints:
				if col.Value != "swept" && col.Value != SweptOrLimiter && !IsClassKey(col.Value) && !isPointKey(col.Value) {
					errs.Add(field.Join(cp, "value"), "unknown column %q (one of %s)", col.Value, strings.Join(PointColumnKeys(), ", "))
				}
				if col.Limiter != nil || col.Swept != nil || col.Server != nil || col.Load != nil || col.Policy != "" {
					errs.Add(cp, "limiter, swept, server, load and policy pick a point in series reports only (a points report's select keeps rows)")
				}
			case ReportSeries:
				sv, known := seriesValue(col.Value)
				switch {
				case !known:
					var keys []string
					for _, v := range SeriesValues() {
						keys = append(keys, v.Key)
					}
					errs.Add(field.Join(cp, "value"), "must be one of %s", strings.Join(keys, ", "))
				case sv.Point:
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

// validateColumnPicks checks a column's class, server and load, and a
// points report's selection is checked by validateSelect.
func (c *Config) validateColumnPicks(typ, cp string, col *ReportColumn) field.List {
	var errs field.List
	if IsClassKey(col.Value) {
		if len(c.Classes) == 0 {
			errs.Add(field.Join(cp, "value"), "%s is a per-class value: give the config classes", col.Value)
		} else if c.ClassIndex(col.Class) < 0 {
			var names []string
			for _, cl := range c.Classes {
				names = append(names, cl.Name)
			}
			errs.Add(field.Join(cp, "class"), "must name one of the classes (%s)", strings.Join(names, ", "))
		}
	} else if col.Class != "" {
		errs.Add(field.Join(cp, "class"), "picks the class of a per-class value (class_...) only")
	}
	if typ != ReportSeries {
		return errs
	}
	if col.Server != nil && (*col.Server < 0 || *col.Server >= c.ServerCount()) {
		errs.Add(field.Join(cp, "server"), "must be the index of a server (0 to %d)", c.ServerCount()-1)
	}
	if col.Load != nil && (*col.Load < 0 || *col.Load >= c.LoadCount()) {
		errs.Add(field.Join(cp, "load"), "must be the index of a load (0 to %d)", c.LoadCount()-1)
	}
	if col.Policy != "" && c.PolicyIndex(col.Policy) < 0 {
		if len(c.Policies) == 0 {
			errs.Add(field.Join(cp, "policy"), "picks a client policy by name, and the config has no policies")
		} else {
			var names []string
			for _, p := range c.Policies {
				names = append(names, p.Name)
			}
			errs.Add(field.Join(cp, "policy"), "%q is not a policy: must name one of the policies (%s)", col.Policy, strings.Join(names, ", "))
		}
	}
	return errs
}

// PolicyIndex is the index of the client policy of that name (-1 without
// one).
func (c *Config) PolicyIndex(name string) int {
	for i := range c.Policies {
		if c.Policies[i].Name == name {
			return i
		}
	}
	return -1
}

// validateSelect checks a points report's selection.
func (c *Config) validateSelect(path string, s *Selection) field.List {
	var errs field.List
	if s == nil {
		return nil
	}
	for _, x := range []struct {
		name string
		idx  []int
		n    int
	}{{"limiters", s.Limiters, len(c.Limiters)}, {"servers", s.Servers, c.ServerCount()}, {"loads", s.Loads, c.LoadCount()}} {
		for i, v := range x.idx {
			if v < 0 || v >= x.n {
				errs.Add(field.Index(field.Join(field.Join(path, "select"), x.name), i), "must be the index of one of the %s (0 to %d)", x.name, x.n-1)
			}
		}
	}
	return errs
}
