package experiments

import (
	"encoding/json"
	"fmt"

	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/workload"
)

// Result is everything a sweep measured, in point order (limiters in the
// order given, then parameter values in the order given).
type Result struct {
	Config   *Config           `json:"config"`
	Arrivals int               `json:"arrivals"`
	Clients  []workload.Client `json:"clients"`
	Groups   []string          `json:"groups"`
	Points   []Point           `json:"points"`
	// LoadArrivals are the arrivals of each of the config's loads
	// (Arrivals is the first's).
	LoadArrivals []int `json:"load_arrivals,omitempty"`
	// ArrivalCurves is the empirical arrival curve of the offered traffic
	// (nil above MaxCurveArrivals).
	ArrivalCurves *ArrivalCurves `json:"arrival_curves,omitempty"`
	// Replicas are the rows of every run of a replicated sweep, point by
	// point, replications adjacent (Points hold their means); without
	// series, clients or curves.
	Replicas []Point `json:"replicas,omitempty"`
	// Partial is set when the sweep was cancelled after some of its
	// points finished: Points holds the first PointsDone (experiments/sweep).
	Partial *Partial `json:"partial,omitempty"`
	// Inputs are the trace files the run read (Run with Options.Traces),
	// by name, with the digest of what it read (experiments/sweep, trace_digest.go).
	Inputs []Input `json:"inputs,omitempty"`
}

// UnmarshalJSON reads a stored result and restores what its JSON leaves
// out: each client's index into Groups.
func (r *Result) UnmarshalJSON(b []byte) error {
	type plain Result
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	if err := workload.IndexGroups(r.Clients, r.Groups); err != nil {
		return fmt.Errorf("result clients: %w", err)
	}
	return nil
}

// Point is one limiter at one set of parameter values.
type Point struct {
	Index        int            `json:"index"`
	LimiterIndex int            `json:"limiter_index"`
	Limiter      string         `json:"limiter"` // the limiter's label
	Type         limiter.Type   `json:"type"`
	Params       limiter.Params `json:"params"`
	Swept        string         `json:"swept"` // name of the swept parameter
	// Server and Load index the config's servers and loads (variants.go);
	// their names are empty when the config has none.
	Server     int    `json:"server,omitempty"`
	ServerName string `json:"server_name,omitempty"`
	Load       int    `json:"load,omitempty"`
	LoadName   string `json:"load_name,omitempty"`
	// Policy indexes the config's client policies (policies.go); its name
	// is empty when the config has none.
	Policy     int    `json:"policy,omitempty"`
	PolicyName string `json:"policy_name,omitempty"`
	// Axes are the point's values of the config's swept fields beyond the
	// limiters (Config.Axes, in order); empty when none is swept.
	Axes []float64 `json:"axes,omitempty"`
	// Seed is the seed the point's arrivals came from, with a swept seed
	// or replications (empty otherwise: the config's); Replica is the
	// point's replication (a row of replications.csv).
	Seed    string `json:"seed,omitempty"`
	Replica int    `json:"replica,omitempty"`
	// Stats are each measured column's mean and confidence interval over
	// the replications (replications.go; computed by experiments/sweep); empty without them.
	Stats   []Stat  `json:"stats,omitempty"`
	Metrics Metrics `json:"metrics"`
	Series  Series  `json:"series"`
	// Band is a replicated point's count series over all its runs (Series
	// is its first run's); nil without replications (replications.go).
	Band    *SeriesBand    `json:"band,omitempty"`
	Clients []ClientResult `json:"clients,omitempty"`
	// JainSeries is Jain's index over the clients' admissions per fairness
	// window (empty with one client).
	JainSeries []float64 `json:"jain_series,omitempty"`
	// Bounds are the network-calculus bounds beside the measurements.
	Bounds *Bounds `json:"bounds,omitempty"`
	// OutputCurve is the empirical arrival curve of the releases into the
	// server on Result.ArrivalCurves.GridMS.
	OutputCurve []int `json:"output_curve,omitempty"`
}

// SweptValue is the point's value of its swept parameter.
func (p *Point) SweptValue() float64 { return p.Params.Get(p.Swept) }

// Metrics are the scalar measurements of one point.
type Metrics struct {
	Arrivals int `json:"arrivals"`
	Admitted int `json:"admitted"`
	Rejected int `json:"rejected"`
	OnTime   int `json:"on_time"`
	Late     int `json:"late"`

	// LevelRPS is the load's configured rate, the sum of its parts' levels
	// (workload.Spec.LevelRPS: a constant or Poisson part's rate_rps, a
	// client group's clients × rate_rps, a demand curve's mean over one
	// cycle); nil when a part has none (a trace, bursts, a flash crowd,
	// users). OfferedRPS is the measured rate, arrivals over the window.
	LevelRPS    *float64 `json:"level_rps,omitempty"`
	OfferedRPS  float64  `json:"offered_rps"`
	AdmittedRPS float64  `json:"admitted_rps"`
	GoodputRPS  float64  `json:"goodput_rps"`
	// RejectPct and ServedLatePct are shares of the arrivals; under the
	// client model (retries) of the attempts at the gate.
	RejectPct     float64 `json:"reject_pct"`
	ServedLatePct float64 `json:"served_late_pct"`

	GateDelay  Delays `json:"gate_delay_ms"`
	ServerWait Delays `json:"server_wait_ms"`
	Sojourn    Delays `json:"sojourn_ms"`

	DownstreamPeakRPS float64 `json:"downstream_peak_rps"`
	RollingMax        int     `json:"rolling_max"`
	UtilizationPct    float64 `json:"utilization_pct"`
	// InSystemMax is the largest number of requests at the server (waiting
	// or in service), seen at release instants: the measured backlog.
	InSystemMax int `json:"in_system_max"`
	// ServerSojournMaxMS is the largest finish - release, unrounded: the
	// measured delay at the server, beside its network-calculus bound.
	ServerSojournMaxMS float64 `json:"server_sojourn_max_ms"`

	Jain          float64   `json:"jain_index"`
	GroupSharePct []float64 `json:"group_share_pct,omitempty"` // per workload group

	// Recovery after the workload's flash crowd (see Recovery); nil without one.
	Recovery *Recovery `json:"recovery,omitempty"`

	// The queue model's (server.Queue) outcomes, absent from the forward
	// pass, where every admitted request is served: the requests the
	// server shed (at its door, by eviction, by expiry, at the end of the
	// window), as a share of the arrivals (under the client model, of
	// the attempts at the gate); how long a shed request waited
	// before it learned (from its arrival at the gate to its shedding);
	// and the late share of the served requests (late / served).
	Served    int     `json:"served,omitempty"`
	Shed      int     `json:"shed,omitempty"`
	ShedPct   float64 `json:"shed_pct,omitempty"`
	ShedWait  *Delays `json:"shed_wait_ms,omitempty"`
	WastedPct float64 `json:"wasted_pct,omitempty"`
	// Classes are the per-class results, in the config's class order.
	Classes []ClassMetrics `json:"classes,omitempty"`
	// SLOMet says whether the config's SLO holds (nil without one).
	SLOMet *bool `json:"slo_met,omitempty"`
	// Client is what the client model measures (experiments/simulate, clients.go): nil
	// for a point without client behaviour.
	Client *ClientMetrics `json:"client,omitempty"`
	// Instances are each instance's decisions and state when the point's
	// gate runs as several instances behind a balancer
	// (limiter.Replicated, experiments/simulate hooks.go): nil otherwise.
	Instances []InstanceMetrics `json:"instances,omitempty"`
	// Replicas are the measures of the instances against the configured
	// limit (nil unless the limiter gives instances).
	Replicas *ReplicaMetrics `json:"replicas,omitempty"`
	// Adaptive is what an adaptive concurrency gate (limiter.Adaptive)
	// did: its limit over time against the server's ideal concurrency
	// (adaptive.go); nil for other gates.
	Adaptive *AdaptiveMetrics `json:"adaptive,omitempty"`
}

// InstanceMetrics are one instance's decisions of a replicated gate: the
// requests the balancer sent it and those it admitted, and its State at
// the end of the run.
type InstanceMetrics struct {
	Offered  int     `json:"offered"`
	Admitted int     `json:"admitted"`
	State    float64 `json:"state"`
	// AdmittedSeries counts the instance's admissions per series window
	// of their arrival (Config.SeriesWindow), to its last admission.
	AdmittedSeries []int32 `json:"admitted_series,omitempty"`
}

// StoreMetrics are the requests that reached a central store while it
// was down: admitted by fail-open, refused by fail-closed.
type StoreMetrics struct {
	DownAdmitted int `json:"down_admitted"`
	DownRefused  int `json:"down_refused"`
}

// ReplicaMetrics are what a point whose limiter runs as instances
// (limiter.Spec.Replicated) measures of them (experiments/simulate,
// instances.go): the limit one gate of the configured settings keeps
// against what the instances let through.
type ReplicaMetrics struct {
	// ConfiguredRPS is the configured limit's long-run rate: the rate of
	// one gate's arrival curve (limiter.ArrivalCurve), else the slope of
	// its Nominal; 0 for a gate that promises none.
	ConfiguredRPS float64 `json:"configured_rps"`
	// EffectiveRatio is the admitted rate over ConfiguredRPS: the
	// effective limit in units of the configured one (under load above
	// the limit).
	EffectiveRatio float64 `json:"effective_ratio"`
	// OverAdmission is rolling_max over what one gate of the configured
	// settings lets through in a rolling window (its arrival curve at
	// metrics.rolling_window_ms, b + r·w for a bucket; else its Nominal):
	// above 1, the instances let through more than the limit in some
	// window.
	OverAdmission float64 `json:"over_admission"`
	// SkewRatio is the busiest instance's offered requests over the mean
	// instance's (1: even); BusiestSharePct its share of all offers.
	SkewRatio       float64 `json:"skew_ratio"`
	BusiestSharePct float64 `json:"busiest_share_pct"`
	// Store is what a central store's outage let through and refused
	// (nil without a central store).
	Store *StoreMetrics `json:"store,omitempty"`
	// Note says what dividing the limit rounded (sharing divided).
	Note string `json:"note,omitempty"`
}

// ClientMetrics are the client model's measurements of one point. Under
// it Metrics counts requests and attempts apart: Arrivals are the first
// attempts (logical requests; OfferedRPS their rate), Admitted and
// Rejected are attempts at the gate, OnTime the requests that succeeded
// (GoodputRPS: logical goodput), Late the served attempts that did not
// (late or abandoned), and RejectPct and ServedLatePct are shares of the
// attempts.
type ClientMetrics struct {
	Attempts      int `json:"attempts"`       // attempts that reached the gate
	Retries       int `json:"retries"`        // of them, retries
	Served        int `json:"served"`         // attempts the server worked on
	RetriesServed int `json:"retries_served"` // of them, retries
	Succeeded     int `json:"succeeded"`      // requests served within deadline and timeout
	Abandoned     int `json:"abandoned"`      // attempts whose client gave up (timeout_ms)
	Dropped       int `json:"dropped"`        // of them, dropped unstarted (cancel_on_timeout)
	Throttled     int `json:"throttled"`      // attempts their own client refused (adaptive throttling)
	BudgetDenied  int `json:"budget_denied"`  // retries the retry budget did not send
	AttemptsMax   int `json:"attempts_max"`   // the most attempts one request made
	Users         int `json:"users,omitempty"`
	// UsersInFlightMax is the most closed-loop requests in flight at once.
	UsersInFlightMax int `json:"users_in_flight_max,omitempty"`

	AttemptsRPS   float64 `json:"attempts_rps"`
	Amplification float64 `json:"amplification"` // attempts per first attempt
	// RetrySharePct is the retries' share of the attempts at the gate,
	// RetryShareServerPct of the attempts the server worked on.
	RetrySharePct       float64 `json:"retry_share_pct"`
	RetryShareServerPct float64 `json:"retry_share_server_pct"`
	SuccessPct          float64 `json:"success_pct"`         // succeeded / first attempts
	FailedAttemptsPct   float64 `json:"failed_attempts_pct"` // attempts that did not succeed
	// WastedWorkMS is the server's time on attempts nobody waited for (served
	// after their client gave up); WastedWorkPct its share of the busy time.
	WastedWorkMS  float64 `json:"wasted_work_ms"`
	WastedWorkPct float64 `json:"wasted_work_pct"`
	// QueueDepthMean is the mean number of requests in the system that an
	// attempt found at the gate (by the server's occupancy rule).
	QueueDepthMean float64 `json:"queue_depth_mean"`
	// IdealGoodputRPS is min(level, capacity): the goodput a server
	// without losses would give (Metrics.LevelRPS; the measured
	// offered_rps where the load has no level), as the seed lab's Post 1.
	IdealGoodputRPS float64 `json:"ideal_goodput_rps"`
}

// ClassMetrics are one request class's results over the scored arrivals:
// a request succeeds when it is served within its deadline.
type ClassMetrics struct {
	Offered    int     `json:"offered"`
	Success    int     `json:"success"`
	OfferedRPS float64 `json:"offered_rps"`
	SuccessPct float64 `json:"success_pct"` // 100 when nothing was offered
	Sojourn    Delays  `json:"sojourn_ms"`  // of the class's served requests
}

// Delays summarizes whole-millisecond delays over admitted requests.
type Delays struct {
	P50 int `json:"p50"`
	P99 int `json:"p99"`
	Max int `json:"max"`
}

// ArrivalsSpan is the fewest and the most arrivals (first attempts, a
// closed loop's requests among them) a run of the result measured.
// Arrivals counts the first generated load's list alone: under swept
// workload fields, seeds or loads the points see others, and a closed
// loop makes its requests as it runs (none in the list).
func (r *Result) ArrivalsSpan() (lo, hi int) {
	runs := r.Points
	if len(r.Replicas) > 0 {
		runs = r.Replicas
	}
	if len(runs) == 0 {
		return r.Arrivals, r.Arrivals
	}
	lo, hi = runs[0].Metrics.Arrivals, runs[0].Metrics.Arrivals
	for i := range runs {
		lo, hi = min(lo, runs[i].Metrics.Arrivals), max(hi, runs[i].Metrics.Arrivals)
	}
	return lo, hi
}

// Series are counts per aligned window of w = Config.SeriesWindow() ms
// (100 by default); index k covers [k·w, (k+1)·w).
type Series struct {
	Offered     []int32 `json:"offered"`
	Released    []int32 `json:"released"`
	Rejected    []int32 `json:"rejected"`
	InSystemMax []int32 `json:"in_system_max"`
	// SojournP99 is the queue model's p99 sojourn of the requests that
	// finished in each window, by finish time (0 where none did).
	SojournP99 []int32 `json:"sojourn_p99,omitempty"`
	// Classes count each class's scored arrivals and successes by arrival
	// window (with classes).
	Classes []ClassSeries `json:"classes,omitempty"`
	// The client model's (experiments/simulate, clients.go): attempts at the gate and
	// the retries among them by arrival window, and the requests that
	// succeeded by finish window (Offered counts first attempts).
	Attempts []int32 `json:"attempts,omitempty"`
	Retries  []int32 `json:"retries,omitempty"`
	Goodput  []int32 `json:"goodput,omitempty"`
}

// ClassSeries are one class's counts per arrival window.
type ClassSeries struct {
	Offered []int32 `json:"offered"`
	Success []int32 `json:"success"`
}

// Windows is the number of windows the series covers (releases after the
// arrival window extend it).
func (s *Series) Windows() int {
	return max(len(s.Offered), len(s.Released), len(s.Rejected), len(s.InSystemMax))
}

// At returns window k of a series slice, 0 past its end.
func At(xs []int32, k int) int32 {
	if k < len(xs) {
		return xs[k]
	}
	return 0
}

// ClientResult is one client's outcome at one point.
type ClientResult struct {
	Offered int `json:"offered"`
	// Attempts are the client's attempts that reached the gate, retries
	// included (the client model; 0 elsewhere, where every arrival is
	// one): Admitted counts attempts, so it is at most Attempts there.
	Attempts    int     `json:"attempts,omitempty"`
	Admitted    int     `json:"admitted"`
	AdmittedRPS float64 `json:"admitted_rps"`
	// SojournMaxMS is the client's longest time at the run's server,
	// release to finish, unrounded (measured where Flow is set).
	SojournMaxMS float64 `json:"sojourn_max_ms,omitempty"`
	// Flow is the client's own network-calculus bound at a FIFO server it
	// shares with the others (nil where the point has none).
	Flow *FlowBound `json:"flow,omitempty"`
}

// FlowBound is one client's delay bound at the run's server (release to
// finish, ms) when the clients of a gate that keys them (per-client or
// hierarchical token bucket) share one FIFO server: calculus.FIFODelay,
// the smallest bound of the FIFO residual service curves and the theta
// that attains it (or the aggregate's FIFO bound where smaller: FIFO serves
// every request within it), and calculus.BlindDelay, blind multiplexing's
// (no assumption on the order; 0 where the client's rate exceeds what the
// others leave). Without a FIFO bound (r > R) the numbers are 0 and Note
// says so.
type FlowBound struct {
	FIFOBoundMS  float64 `json:"fifo_bound_ms"`
	ThetaMS      float64 `json:"theta_ms"`
	BlindBoundMS float64 `json:"blind_bound_ms,omitempty"` // 0: none (r_i > R - r')
	Note         string  `json:"note,omitempty"`
}

// Partial marks a result cut short: its sweep was cancelled (or the
// process interrupted) after the first PointsDone of its PointsTotal
// points had finished, and it holds those alone.
type Partial struct {
	PointsDone  int `json:"points_done"`
	PointsTotal int `json:"points_total"`
}

// Input is a trace file a run read, as manifest.json records it: its name
// (the trace part's file), the sha256 of its CSV text as read (after
// gunzip: `zcat -f FILE | sha256sum`), and that text's length, so that a
// run can be checked against the very trace it replayed.
type Input struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}
