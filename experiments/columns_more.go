package experiments

import (
	"slices"
	"strconv"
	"strings"
)

// The columns of a point beyond Columns: the names of its server and load
// (with servers or loads), the queue model's outcomes, per class results
// (with classes) and the SLO (with one). results.csv has them only when the
// config has what they measure (withSeedColumns), so a config without them
// writes the same file as before; a "points" report picks them by key.

// variantColumns name the point's server, load and client policy.
var variantColumns = []Column{
	{Key: "server", Format: Text, Label: func(p *Point) string { return p.ServerName }},
	{Key: "load", Format: Text, Label: func(p *Point) string { return p.LoadName }},
	{Key: "policy", Format: Text, Label: func(p *Point) string { return p.PolicyName }},
}

// clientColumns are the client model's measurements (ClientMetrics):
// empty cells for a point without client behaviour; with replications the
// runs' mean and its interval, as every measured column.
var clientColumns = measuredAll([]Column{
	clientMetric("attempts", Int, func(c *ClientMetrics) float64 { return float64(c.Attempts) }),
	clientMetric("retries", Int, func(c *ClientMetrics) float64 { return float64(c.Retries) }),
	clientMetric("attempts_rps", Fixed1, func(c *ClientMetrics) float64 { return c.AttemptsRPS }),
	clientMetric("amplification", Fixed4, func(c *ClientMetrics) float64 { return c.Amplification }),
	clientMetric("retry_share_pct", Fixed1, func(c *ClientMetrics) float64 { return c.RetrySharePct }),
	clientMetric("retry_share_server_pct", Fixed1, func(c *ClientMetrics) float64 { return c.RetryShareServerPct }),
	clientMetric("success_pct", Fixed1, func(c *ClientMetrics) float64 { return c.SuccessPct }),
	clientMetric("failed_attempts_pct", Fixed1, func(c *ClientMetrics) float64 { return c.FailedAttemptsPct }),
	clientMetric("abandoned", Int, func(c *ClientMetrics) float64 { return float64(c.Abandoned) }),
	clientMetric("dropped", Int, func(c *ClientMetrics) float64 { return float64(c.Dropped) }),
	clientMetric("throttled", Int, func(c *ClientMetrics) float64 { return float64(c.Throttled) }),
	clientMetric("budget_denied", Int, func(c *ClientMetrics) float64 { return float64(c.BudgetDenied) }),
	clientMetric("wasted_work_ms", Fixed1, func(c *ClientMetrics) float64 { return c.WastedWorkMS }),
	clientMetric("wasted_work_pct", Fixed1, func(c *ClientMetrics) float64 { return c.WastedWorkPct }),
	clientMetric("queue_depth_mean", Fixed4, func(c *ClientMetrics) float64 { return c.QueueDepthMean }),
	clientMetric("ideal_goodput_rps", Fixed1, func(c *ClientMetrics) float64 { return c.IdealGoodputRPS }),
	clientMetric("users_in_flight_max", Int, func(c *ClientMetrics) float64 { return float64(c.UsersInFlightMax) }),
	// recovered: after the trigger, "yes" within the run, "no" when
	// goodput never came back (metastable), empty without a measure. A
	// replicated point says "k of N" when only some of its runs did
	// (recovery_ms is then the mean of those k).
	{Key: "recovered", Format: Text, Label: func(p *Point) string {
		r := p.Metrics.Recovery
		switch {
		case p.Metrics.Client == nil || r == nil:
			return ""
		}
		rec, okRec := p.Stat("recovery_ms")
		runs, okRuns := p.Stat("arrivals") // every run has a value
		switch {
		case okRec && okRuns && rec.N == 0:
			return "no"
		case okRec && okRuns && rec.N < runs.N:
			return strconv.Itoa(rec.N) + " of " + strconv.Itoa(runs.N)
		case okRec && okRuns:
			return "yes"
		case r.RecoveryMS == nil:
			return "no"
		}
		return "yes"
	}},
})

func clientMetric(key string, f Format, get func(c *ClientMetrics) float64) Column {
	return Column{Key: key, Format: f, Value: func(p *Point) (float64, bool) {
		if p.Metrics.Client == nil {
			return 0, false
		}
		return get(p.Metrics.Client), true
	}}
}

// queueColumns are the queue model's outcomes: empty cells for a point of
// the forward pass.
var queueColumns = measuredAll([]Column{
	queueMetric("served", Int, func(m *Metrics) float64 { return float64(m.Served) }),
	queueMetric("shed", Int, func(m *Metrics) float64 { return float64(m.Shed) }),
	queueMetric("shed_pct", Fixed1, func(m *Metrics) float64 { return m.ShedPct }),
	queueMetric("shed_wait_p50_ms", Fixed1, func(m *Metrics) float64 { return float64(m.ShedWait.P50) }),
	queueMetric("shed_wait_p99_ms", Fixed1, func(m *Metrics) float64 { return float64(m.ShedWait.P99) }),
	queueMetric("shed_wait_max_ms", Fixed1, func(m *Metrics) float64 { return float64(m.ShedWait.Max) }),
	queueMetric("wasted_pct", Fixed1, func(m *Metrics) float64 { return m.WastedPct }),
})

func queueMetric(key string, f Format, get func(m *Metrics) float64) Column {
	return Column{Key: key, Format: f, Value: func(p *Point) (float64, bool) {
		if p.Metrics.ShedWait == nil {
			return 0, false
		}
		return get(&p.Metrics), true
	}}
}

// ClassColumn is a per-class value: a report names it by Key and a class;
// results.csv has it once per class, as <class>_<Key without "class_">.
type ClassColumn struct {
	Key    string
	Format Format
	Value  func(c *ClassMetrics) float64
}

// ClassColumns lists the per-class values.
func ClassColumns() []ClassColumn {
	return []ClassColumn{
		{"class_offered", Int, func(c *ClassMetrics) float64 { return float64(c.Offered) }},
		{"class_offered_rps", Fixed1, func(c *ClassMetrics) float64 { return c.OfferedRPS }},
		{"class_success", Int, func(c *ClassMetrics) float64 { return float64(c.Success) }},
		{"class_success_pct", Fixed1, func(c *ClassMetrics) float64 { return c.SuccessPct }},
		{"class_sojourn_p50_ms", Fixed1, func(c *ClassMetrics) float64 { return float64(c.Sojourn.P50) }},
		{"class_sojourn_p99_ms", Fixed1, func(c *ClassMetrics) float64 { return float64(c.Sojourn.P99) }},
	}
}

// column is the per-class value of class k as a column named key.
func (cc ClassColumn) column(key string, k int) Column {
	return measured(Column{Key: key, Format: cc.Format, Value: func(p *Point) (float64, bool) {
		if k >= len(p.Metrics.Classes) {
			return 0, false
		}
		return cc.Value(&p.Metrics.Classes[k]), true
	}})
}

// sloColumn says yes or no (empty without an SLO).
var sloColumn = Column{Key: "slo_met", Format: Text, Label: func(p *Point) string {
	switch {
	case p.Metrics.SLOMet == nil:
		return ""
	case *p.Metrics.SLOMet:
		return "yes"
	}
	return "no"
}}

// withSeedColumns adds to results.csv's columns (ResultColumns) those of
// the config's seed-lab models: the server and load names after the type
// (with servers, policies or loads), then the queue model's outcomes (when
// a point runs it), the client model's (when a point runs it), the per
// class values (with classes) and slo_met (with an SLO).
func withSeedColumns(cfg *Config, cols []Column) []Column {
	if len(cfg.Servers) > 0 || len(cfg.Loads) > 0 || len(cfg.Policies) > 0 {
		at := 3 // after point, limiter, type
		var vc []Column
		if len(cfg.Servers) > 0 {
			vc = append(vc, variantColumns[0])
		}
		if len(cfg.Policies) > 0 {
			vc = append(vc, variantColumns[2])
		}
		if len(cfg.Loads) > 0 {
			vc = append(vc, variantColumns[1])
		}
		cols = slices.Insert(cols, at, vc...)
	}
	if cfg.anyQueue() {
		cols = append(cols, queueColumns...)
	}
	if cfg.anyClients() {
		cols = append(cols, clientColumns...)
	}
	for k, cl := range cfg.Classes {
		for _, cc := range ClassColumns() {
			cols = append(cols, cc.column(cl.Name+"_"+strings.TrimPrefix(cc.Key, "class_"), k))
		}
	}
	if cfg.SLO != nil {
		cols = append(cols, sloColumn)
	}
	return cols
}

// PointColumn finds the column a "points" report names by key (and class,
// for a per-class value), or nil.
func PointColumn(cfg *Config, key, class string) *Column {
	if c := ColumnByKey(key); c != nil {
		return c
	}
	for _, list := range [][]Column{variantColumns, queueColumns, clientColumns, {sloColumn}} {
		for i := range list {
			if list[i].Key == key {
				return &list[i]
			}
		}
	}
	for _, cc := range ClassColumns() {
		if cc.Key == key {
			k := cfg.ClassIndex(class)
			if k < 0 {
				return nil
			}
			c := cc.column(cfg.Classes[k].Name+"_"+strings.TrimPrefix(cc.Key, "class_"), k) // results.csv's name, for the means
			c.Key = key
			return &c
		}
	}
	return nil
}

// PointColumnKeys lists every key a "points" report can name.
func PointColumnKeys() []string {
	keys := append([]string{"swept", SweptOrLimiter}, ColumnKeys()...)
	for _, list := range [][]Column{variantColumns, queueColumns, clientColumns, {sloColumn}} {
		for _, c := range list {
			keys = append(keys, c.Key)
		}
	}
	for _, cc := range ClassColumns() {
		keys = append(keys, cc.Key)
	}
	return keys
}

// IsClassKey reports whether a report value is a per-class value (it needs
// a class).
func IsClassKey(key string) bool { return strings.HasPrefix(key, "class_") }
