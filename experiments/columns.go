package experiments

import (
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// Format says how a column prints: the CSV conventions of the lab spec.
type Format int

// Formats.
const (
	Text   Format = iota // plain text, quoted when needed
	Int                  // plain integer
	Fixed1               // %.1f: rates, percentages, delays
	Fixed4               // %.4f: Jain's index
)

// Places is how many decimal places a number of format f prints with
// (AppendValue): 0 for Int (and Text), 1 for Fixed1, 4 for Fixed4.
func (f Format) Places() int {
	switch f {
	case Fixed1:
		return 1
	case Fixed4:
		return 4
	}
	return 0
}

// MeanFormat is the format of the column's mean over replications (and
// of its interval's half-width): a mean of counts (Int) prints as Fixed1.
func (c *Column) MeanFormat() Format {
	if c.Format == Int {
		return Fixed1
	}
	return c.Format
}

// Column is one scalar of a point: a results.csv column, and a value that a
// "points" report or a chart can pick by its key.
type Column struct {
	Key    string
	Format Format
	// Value is the number, or ok=false for an empty cell (a parameter the
	// limiter does not have).
	Value func(p *Point) (v float64, ok bool)
	// Label for text columns.
	Label func(p *Point) string
	// Measured: the column is a measurement (not the point's settings),
	// averaged over replications with a confidence interval
	// (replications.go); Value gives a replicated point's mean.
	Measured bool
}

// measured marks a numeric column as a measurement: at a point with
// Stats its value is the mean over the replications.
func measured(c Column) Column {
	if c.Format == Text {
		return c
	}
	get, key := c.Value, c.Key
	c.Measured = true
	c.Value = func(p *Point) (float64, bool) {
		if len(p.Stats) > 0 {
			if s, ok := p.Stat(key); ok {
				return s.Mean, s.N > 0
			}
		}
		return get(p)
	}
	return c
}

func measuredAll(cs []Column) []Column {
	for i := range cs {
		cs[i] = measured(cs[i])
	}
	return cs
}

func metric(key string, f Format, get func(m *Metrics) float64) Column {
	return Column{Key: key, Format: f, Value: func(p *Point) (float64, bool) { return get(&p.Metrics), true }}
}

// param is the column of a limiter parameter: empty for a point whose
// gate does not take it (a chain's point has its swept stage's values).
func param(q limiter.Param) Column {
	return Column{Key: q.Name, Format: paramFormat(q), Value: func(p *Point) (float64, bool) {
		v, ok := p.Params[q.Name]
		return v, ok
	}}
}

func paramFormat(q limiter.Param) Format {
	if q.Integer {
		return Int
	}
	return Fixed1
}

// bound is a column of a point's bounds, empty when it has none.
func bound(key string, f Format, get func(b *Bounds) float64) Column {
	return Column{Key: key, Format: f, Value: func(p *Point) (float64, bool) {
		if p.Bounds == nil || !p.Bounds.Bounded {
			return 0, false
		}
		return get(p.Bounds), true
	}}
}

// Columns are every scalar column a point has, in order: the point, its
// limiter, a column per limiter parameter of the registry (limiter.AllParams),
// then the metrics. A report or a chart picks one by its key.
func Columns() []Column { return columns(func(limiter.Param) bool { return true }) }

// ResultColumns are the scalar columns of cfg's results.csv, in order: the
// columns of the parameters every run has (Param.Column) and of the others
// that a limiter of the sweep takes (or a stage of a chain), among Columns.
// Group share columns (share_pct_<group>) follow them, one per workload
// group.
func ResultColumns(cfg *Config) []Column {
	used := map[string]bool{}
	var mark func(s *limiter.Spec)
	mark = func(s *limiter.Spec) {
		for name := range s.Params {
			used[name] = true
		}
		for j := range s.Stages {
			mark(&s.Stages[j].Spec)
		}
	}
	for i := range cfg.Limiters {
		mark(&cfg.Limiters[i])
	}
	cols := withOptionalColumns(cfg, columns(func(q limiter.Param) bool { return q.Column || used[q.Name] }))
	if ax := axisColumns(cfg); len(ax) > 0 {
		at := slices.IndexFunc(cols, func(c Column) bool { return c.Measured })
		cols = slices.Insert(cols, at, ax...)
	}
	return cols
}

func columns(keep func(limiter.Param) bool) []Column {
	cols := slices.Clone(headColumns)
	for _, q := range limiter.AllParams() {
		if keep(q) {
			cols = append(cols, param(q))
		}
	}
	return append(cols, metricColumns...)
}

var headColumns = []Column{
	{Key: "point", Format: Int, Value: func(p *Point) (float64, bool) { return float64(p.Index), true }},
	{Key: "limiter", Format: Text, Label: func(p *Point) string { return p.Limiter }},
	{Key: "type", Format: Text, Label: func(p *Point) string { return string(p.Type) }},
}

var metricColumns = slices.Concat(measuredAll([]Column{
	metric("arrivals", Int, func(m *Metrics) float64 { return float64(m.Arrivals) }),
	metric("admitted", Int, func(m *Metrics) float64 { return float64(m.Admitted) }),
	metric("rejected", Int, func(m *Metrics) float64 { return float64(m.Rejected) }),
	metric("on_time", Int, func(m *Metrics) float64 { return float64(m.OnTime) }),
	metric("late", Int, func(m *Metrics) float64 { return float64(m.Late) }),
}), []Column{
	// level_rps is the load's configured rate (Metrics.LevelRPS), a
	// setting rather than a measurement: empty when a part has none.
	{Key: "level_rps", Format: Fixed1, Value: func(p *Point) (float64, bool) {
		if p.Metrics.LevelRPS == nil {
			return 0, false
		}
		return *p.Metrics.LevelRPS, true
	}},
}, measuredAll([]Column{
	metric("offered_rps", Fixed1, func(m *Metrics) float64 { return m.OfferedRPS }),
	metric("admitted_rps", Fixed1, func(m *Metrics) float64 { return m.AdmittedRPS }),
	metric("goodput_rps", Fixed1, func(m *Metrics) float64 { return m.GoodputRPS }),
	metric("reject_pct", Fixed1, func(m *Metrics) float64 { return m.RejectPct }),
	metric("served_late_pct", Fixed1, func(m *Metrics) float64 { return m.ServedLatePct }),
	metric("gate_delay_p50_ms", Fixed1, func(m *Metrics) float64 { return float64(m.GateDelay.P50) }),
	metric("gate_delay_p99_ms", Fixed1, func(m *Metrics) float64 { return float64(m.GateDelay.P99) }),
	metric("gate_delay_max_ms", Fixed1, func(m *Metrics) float64 { return float64(m.GateDelay.Max) }),
	metric("server_wait_p50_ms", Fixed1, func(m *Metrics) float64 { return float64(m.ServerWait.P50) }),
	metric("server_wait_p99_ms", Fixed1, func(m *Metrics) float64 { return float64(m.ServerWait.P99) }),
	metric("server_wait_max_ms", Fixed1, func(m *Metrics) float64 { return float64(m.ServerWait.Max) }),
	metric("sojourn_p50_ms", Fixed1, func(m *Metrics) float64 { return float64(m.Sojourn.P50) }),
	metric("sojourn_p99_ms", Fixed1, func(m *Metrics) float64 { return float64(m.Sojourn.P99) }),
	metric("sojourn_max_ms", Fixed1, func(m *Metrics) float64 { return float64(m.Sojourn.Max) }),
	metric("downstream_peak_rps", Fixed1, func(m *Metrics) float64 { return m.DownstreamPeakRPS }),
	metric("rolling_max", Int, func(m *Metrics) float64 { return float64(m.RollingMax) }),
	metric("utilization_pct", Fixed1, func(m *Metrics) float64 { return m.UtilizationPct }),
	metric("in_system_max", Int, func(m *Metrics) float64 { return float64(m.InSystemMax) }),
	metric("server_sojourn_max_ms", Fixed1, func(m *Metrics) float64 { return m.ServerSojournMaxMS }),
	metric("jain_index", Fixed4, func(m *Metrics) float64 { return m.Jain }),
	// Network-calculus bounds (see Bounds): empty cells when the point has
	// none, and bound_note says why ("unbounded (r > R)", "no arrival
	// curve (admission)", "no bound (lifo server: ...)"): every point
	// has bounds or a note; tightness is measured / bound.
	{Key: "bound_note", Format: Text, Label: func(p *Point) string {
		if p.Bounds == nil {
			return ""
		}
		return p.Bounds.Note
	}},
	bound("backlog_bound", Fixed1, func(b *Bounds) float64 { return b.BacklogBound }),
	bound("backlog_tightness", Fixed4, func(b *Bounds) float64 { return Tightness(float64(b.BacklogMax), b.BacklogBound) }),
	bound("sojourn_bound_ms", Fixed1, func(b *Bounds) float64 { return b.SojournBoundMS }),
	bound("sojourn_tightness", Fixed4, func(b *Bounds) float64 { return Tightness(b.SojournMaxMS, b.SojournBoundMS) }),
	bound("gate_delay_bound_ms", Fixed1, func(b *Bounds) float64 { return b.GateDelayBoundMS }),
	bound("end_to_end_bound_ms", Fixed1, func(b *Bounds) float64 { return b.EndToEndBoundMS }),
	bound("per_hop_sum_ms", Fixed1, func(b *Bounds) float64 { return b.PerHopSumMS }),
	{Key: "concatenated_bound_ms", Format: Fixed1, Value: func(p *Point) (float64, bool) {
		if p.Bounds == nil || !p.Bounds.Bounded || p.Bounds.ConcatenatedMS == 0 {
			return 0, false
		}
		return p.Bounds.ConcatenatedMS, true
	}},
	{Key: "end_to_end_max_ms", Format: Fixed1, Value: func(p *Point) (float64, bool) {
		if p.Bounds == nil {
			return 0, false
		}
		return p.Bounds.EndToEndMaxMS, true
	}},
	bound("end_to_end_tightness", Fixed4, func(b *Bounds) float64 { return Tightness(b.EndToEndMaxMS, b.EndToEndBoundMS) }),
	// recovery_ms is empty without a flash crowd or when the run ends first.
	{Key: "recovery_ms", Format: Fixed1, Value: func(p *Point) (float64, bool) {
		if r := p.Metrics.Recovery; r != nil && r.RecoveryMS != nil {
			return *r.RecoveryMS, true
		}
		return 0, false
	}},
}))

// ColumnByKey finds a column of Columns, or nil.
func ColumnByKey(key string) *Column {
	cols := Columns()
	for i := range cols {
		if cols[i].Key == key {
			return &cols[i]
		}
	}
	return nil
}

// ColumnKeys lists the keys of Columns.
func ColumnKeys() []string {
	cols := Columns()
	keys := make([]string, len(cols))
	for i, c := range cols {
		keys[i] = c.Key
	}
	return keys
}

// SweptColumn prints a point's swept parameter in its own format: an
// empty cell for a limiter without parameters (none), which sweeps nothing.
func SweptColumn() Column {
	return Column{Key: "swept", Value: func(p *Point) (float64, bool) {
		if _, ok := p.Params[p.Swept]; p.Swept == "" || !ok {
			return 0, false
		}
		return p.SweptValue(), true
	}}
}

// FormatFor is the format of a parameter's values.
func FormatFor(param string) Format {
	if q, ok := limiter.ParamByName(param); ok {
		return paramFormat(q)
	}
	return Fixed1
}

// AppendValue formats v under f (Text is not a number format).
func AppendValue(b []byte, f Format, v float64) []byte {
	switch f {
	case Int:
		return strconv.AppendInt(b, int64(v), 10)
	case Fixed4:
		return strconv.AppendFloat(b, v+0, 'f', 4, 64)
	}
	if v == 0 {
		v = 0 // no "-0.0"
	}
	return strconv.AppendFloat(b, v, 'f', 1, 64)
}

// The columns of a point beyond Columns: the names of its server and load
// (with servers or loads), the queue model's outcomes, per class results
// (with classes) and the SLO (with one). results.csv has them only when the
// config has what they measure (withOptionalColumns), so a config without
// them writes the same file as before; a "points" report picks them by key.

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

// withOptionalColumns adds to results.csv's columns (ResultColumns) those
// a config has only when it has what they measure: the server, policy and
// load names after the type (with servers, policies or loads), then the
// queue model's outcomes (when a point runs it), the client model's (when
// a point runs it), the per class values (with classes) and slo_met (with
// an SLO).
func withOptionalColumns(cfg *Config, cols []Column) []Column {
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
	if cfg.AnyQueue() {
		cols = append(cols, queueColumns...)
	}
	if cfg.AnyClients() {
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
	if cfg.AnyInstances() {
		var params []Column
		for _, q := range limiter.ReplicaParams() {
			if cfg.anyLimiterGives(q.Name) {
				params = append(params, param(q))
			}
		}
		at := slices.IndexFunc(cols, func(c Column) bool { return c.Measured })
		cols = slices.Insert(cols, at, params...)
		cols = append(cols, instanceColumns...)
		if slices.ContainsFunc(cfg.Limiters, func(s limiter.Spec) bool { return s.Options[limiter.OptionSharing] == limiter.SharingCentral }) {
			cols = append(cols, storeColumns...)
		}
	}
	if cfg.AnyAdaptive() {
		cols = append(cols, adaptiveColumns...)
	}
	return cols
}

// AnyInstances reports whether a limiter of the config runs as instances
// (limiter.Spec.Replicated): its results have the instances' columns.
func (c *Config) AnyInstances() bool {
	return slices.ContainsFunc(c.Limiters, func(s limiter.Spec) bool { return s.Replicated() })
}

// anyLimiterGives reports whether a limiter of the config gives param.
func (c *Config) anyLimiterGives(param string) bool {
	return slices.ContainsFunc(c.Limiters, func(s limiter.Spec) bool { return len(s.Params[param]) > 0 })
}

// instanceColumns are the measures of a replicated limiter's instances
// (ReplicaMetrics): empty cells for a point of one instance, and where a
// gate promises no rate, its ratios.
var instanceColumns = measuredAll([]Column{
	instanceMetric("configured_rps", Fixed1, func(r *ReplicaMetrics) (float64, bool) { return r.ConfiguredRPS, r.ConfiguredRPS > 0 }),
	instanceMetric("effective_ratio", Fixed4, func(r *ReplicaMetrics) (float64, bool) { return r.EffectiveRatio, r.ConfiguredRPS > 0 }),
	instanceMetric("over_admission", Fixed4, func(r *ReplicaMetrics) (float64, bool) { return r.OverAdmission, r.OverAdmission > 0 }),
	instanceMetric("skew_ratio", Fixed4, func(r *ReplicaMetrics) (float64, bool) { return r.SkewRatio, true }),
	instanceMetric("busiest_share_pct", Fixed1, func(r *ReplicaMetrics) (float64, bool) { return r.BusiestSharePct, true }),
})

// storeColumns are what a central store's outage let through and
// refused: results.csv has them when a limiter shares a central store.
var storeColumns = measuredAll([]Column{
	instanceMetric("store_down_admitted", Int, func(r *ReplicaMetrics) (float64, bool) {
		if r.Store == nil {
			return 0, false
		}
		return float64(r.Store.DownAdmitted), true
	}),
	instanceMetric("store_down_refused", Int, func(r *ReplicaMetrics) (float64, bool) {
		if r.Store == nil {
			return 0, false
		}
		return float64(r.Store.DownRefused), true
	}),
})

func instanceMetric(key string, f Format, get func(r *ReplicaMetrics) (float64, bool)) Column {
	return Column{Key: key, Format: f, Value: func(p *Point) (float64, bool) {
		if p.Metrics.Replicas == nil {
			return 0, false
		}
		return get(p.Metrics.Replicas)
	}}
}

// PointColumn finds the column a "points" report names by key (and class,
// for a per-class value), or nil.
func PointColumn(cfg *Config, key, class string) *Column {
	if c := ColumnByKey(key); c != nil {
		return c
	}
	for _, list := range [][]Column{variantColumns, queueColumns, clientColumns, {sloColumn}, instanceColumns, storeColumns, adaptiveColumns} {
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
	for _, list := range [][]Column{variantColumns, queueColumns, clientColumns, {sloColumn}, instanceColumns, storeColumns, adaptiveColumns} {
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
