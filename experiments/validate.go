package experiments

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/workload"
)

// Validate checks a normalized config, including the size limits.
func (c *Config) Validate() error {
	var errs field.List
	if c.Version != Version {
		errs.Add("version", "must be %d", Version)
	}
	if msg := field.Line(c.Name, 200); msg != "" {
		errs.Add("name", "%s", msg)
	}
	if len(c.Description) > 10_000 {
		errs.Add("description", "is longer than 10000 characters")
	}
	errs = append(errs, c.Workload.Validate("workload")...)
	errs = append(errs, c.Server.Validate("server")...)
	for _, m := range []struct {
		name string
		v    float64
	}{{"rolling_window_ms", c.Metrics.RollingWindowMS}, {"fairness_window_ms", c.Metrics.FairnessWindowMS}} {
		if math.IsNaN(m.v) || m.v <= 0 || m.v > workload.MaxDurationMS {
			errs.Add(field.Join("metrics", m.name), "must be more than 0 and at most %d ms", workload.MaxDurationMS)
		}
	}
	if sw := c.Metrics.SeriesWindowMS; sw != 0 {
		if !(sw >= 1 && sw <= workload.MaxDurationMS) || sw != math.Trunc(sw) {
			errs.Add(field.Join("metrics", "series_window_ms"), "must be a whole number of ms between 1 and %d", workload.MaxDurationMS)
		} else if sw != SeriesWindowMS && c.hasTrigger() {
			errs.Add(field.Join("metrics", "series_window_ms"), "must be %d (or left out) with a flash crowd: its recovery is measured on windows of %d ms", SeriesWindowMS, SeriesWindowMS)
		}
	}
	if len(c.Limiters) == 0 {
		errs.Add("limiters", "needs at least one limiter")
	}
	if len(c.Limiters) > MaxLimiters {
		errs.Add("limiters", "at most %d limiters", MaxLimiters)
	}
	seen := map[string]int{}
	points := 0
	for i := range c.Limiters {
		l := &c.Limiters[i]
		path := field.Index("limiters", i)
		le := l.Validate(path)
		errs = append(errs, le...)
		if j, dup := seen[l.Label()]; dup {
			errs.Add(field.Join(path, "name"), "limiters[%d] is also called %q: give each limiter its own name", j, l.Label())
		}
		seen[l.Label()] = i
		if len(le) == 0 {
			points += l.Count()
		}
	}
	errs = append(errs, c.validateObjectives()...)
	errs = append(errs, c.validateDecision()...)
	errs = append(errs, c.validateRules()...)
	errs = append(errs, c.validateVariants()...)
	errs = append(errs, c.validateClasses()...)
	errs = append(errs, c.validateService()...)
	errs = append(errs, c.validatePolicies()...)
	errs = append(errs, c.validateRetryAfter()...)
	errs = append(errs, c.validateAxes()...)
	if len(errs) > 0 {
		return errs
	}
	limiterPoints := points
	size := c.size(limiterPoints)
	points, expected, work := size.Runs, size.maxLoad, size.Arrivals
	if points > MaxPoints {
		limit := "points"
		if size.Replications > 1 {
			limit = "runs"
		}
		for _, path := range sizePaths(size, "limiters") {
			errs.Add(path, "the sweep is too large: %s; the limit is %d %s", size, MaxPoints, limit)
		}
		return errs
	}
	switch {
	case expected > MaxArrivals && (c.AnyQueue() || c.AnyClients()):
		errs.Add("workload", "produces about %.0f arrivals; the limit is %d for a sweep that runs the queue model (a server setting, classes or a scoring rule) or the client model (client behaviour, closed loops), which hold their arrivals in memory (shorten duration_ms or lower the rates)", expected, MaxArrivals)
	case work*float64(c.maxAttempts()) > MaxDecisions:
		what := "arrivals"
		if tries := c.maxAttempts(); tries > 1 {
			what = fmt.Sprintf("arrivals × %d attempts", tries) // retries count too
		}
		for _, path := range sizePaths(size, "workload.duration_ms") {
			errs.Add(path, "%d points × about %.0f %s is more than %d decisions; sweep fewer values or a shorter workload", points, work/float64(points), what, int64(MaxDecisions))
		}
	}
	sw := c.SeriesWindow()
	windows := math.Ceil(c.Workload.DurationMS / sw)
	if k := float64(len(c.Classes)); windows*float64(points)*k > MaxSeriesRows {
		errs.Add("classes", "%d points × %.0f windows of %g ms × %.0f classes is more than %d series rows; shorten the run, sweep fewer values or use fewer classes", points, windows, sw, k, MaxSeriesRows)
	}
	if windows*float64(points) > MaxSeriesRows {
		errs.Add("workload.duration_ms", "%d points × %.0f windows of %g ms is more than %d series rows; shorten the run, sweep fewer values or widen metrics.series_window_ms", points, windows, sw, MaxSeriesRows)
	} else if rows, li := c.seriesRows(); rows*float64(points/max(limiterPoints, 1)) > MaxSeriesRows {
		at := limiter.ParamRate
		if c.Limiters[li].Kind().Compound() {
			at = "stages"
		}
		errs.Add(field.Join(field.Index("limiters", li), at), "releases up to %.0f ms after the run ends ((queue-1) × 1000/rate_rps): with it the series need %.0f rows of %g ms, more than %d; raise the rate or shorten the queue", c.Limiters[li].LagMS(c.Limiters[li].Points()), rows, sw, MaxSeriesRows)
	}
	errs = append(errs, c.validateClients(points)...)
	errs = append(errs, c.validateShares()...)
	errs = append(errs, c.validateReports()...)
	return errs.Err()
}

// validateRetryAfter refuses retry_after "honour" in a config whose
// limiters give no Retry-After (Kind.RetryAfter) while one of them refuses
// by the server's occupancy (Kind.ReadsServer: a concurrency limit cannot
// know when the server frees a place): there honour would change nothing,
// the clients retrying on their backoff as with "ignore", and the config
// most likely means a gate it does not have. Behind gates that never
// refuse (none, uber-ratelimit) it is moot, and beside a limiter that
// gives one it applies there; both are taken (documented with the field).
func (c *Config) validateRetryAfter() field.List {
	var blind []string
	for i := range c.Limiters {
		k := c.Limiters[i].Kind()
		if k == nil || k.RetryAfter != "" {
			return nil
		}
		if t := string(k.Type); k.ReadsServer && !slices.Contains(blind, t) {
			blind = append(blind, t)
		}
	}
	if len(blind) == 0 {
		return nil
	}
	var errs field.List
	check := func(path string, b *workload.Behaviour) {
		if b.RetryAfter == workload.RetryAfterHonour {
			errs.Add(field.Join(path, "retry_after"), "honour: no limiter here gives a Retry-After (%s refuses by the server's occupancy and cannot know when a place frees), so clients would retry on their backoff as with ignore; use ignore, or sweep a rate limiter, which gives one",
				strings.Join(blind, ", "))
		}
	}
	for i := range c.Workload.Parts {
		check(field.Index(field.Join("workload", "parts"), i), &c.Workload.Parts[i].Behaviour)
	}
	for li := range c.Loads {
		for i := range c.Loads[li].Parts {
			check(field.Index(field.Join(field.Index("loads", li), "parts"), i), &c.Loads[li].Parts[i].Behaviour)
		}
	}
	for i := range c.Policies {
		check(field.Index("policies", i), &c.Policies[i].Behaviour)
	}
	return errs
}

// validateClients bounds what a multi-client sweep keeps per point: a
// result per client (clients.csv) and Jain's index per fairness window, which
// costs a pass over the clients each.
func (c *Config) validateClients(points int) field.List {
	var errs field.List
	n := float64(len(c.Workload.ClientTable()))
	if n <= 1 {
		return nil // one client: no per-client results, no Jain series
	}
	if n*float64(points) > MaxClientRows {
		errs.Add("limiters", "%d points × %.0f clients is more than %d per-client results; sweep fewer values or fewer clients", points, n, MaxClientRows)
	}
	windows := math.Ceil(c.Workload.DurationMS / c.Metrics.FairnessWindowMS)
	if windows*float64(points) > MaxSeriesRows {
		errs.Add(field.Join("metrics", "fairness_window_ms"), "%d points × %.0f fairness windows is more than %d rows of Jain's index; raise fairness_window_ms", points, windows, MaxSeriesRows)
	} else if windows*n*float64(points) > MaxWork {
		errs.Add(field.Join("metrics", "fairness_window_ms"), "%d points × %.0f fairness windows × %.0f clients is more than %d steps of Jain's index; raise fairness_window_ms", points, windows, n, int64(MaxWork))
	}
	return errs
}

// validateShares asks each limiter (and each stage of a chain) whose type
// checks its settings against the workload's clients (Kind.CheckClients)
// whether they fit: a per-client limiter whose burst leaves a client less
// than one token could never admit that client.
func (c *Config) validateShares() field.List {
	var errs field.List
	var weights []float64
	check := func(path string, s *limiter.Spec) {
		k := s.Kind()
		if k == nil || k.CheckClients == nil {
			return
		}
		if weights == nil {
			for _, cl := range c.Workload.ClientTable() {
				weights = append(weights, cl.Weight)
			}
		}
		errs = append(errs, k.CheckClients(s, path, weights)...)
	}
	for i := range c.Limiters {
		l := &c.Limiters[i]
		path := field.Index("limiters", i)
		check(path, l)
		for j := range l.Stages {
			check(field.Index(field.Join(path, "stages"), j), &l.Stages[j].Spec)
		}
	}
	return errs
}

// seriesRows is how many 100 ms series rows the sweep can write, counting
// the windows of releases after the arrival window, and the limiter with
// the longest lag.
func (c *Config) seriesRows() (rows float64, worst int) {
	worstLag := -1.0
	for i := range c.Limiters {
		l := &c.Limiters[i]
		for _, p := range l.Points() {
			lag := l.LagMS([]limiter.Params{p})
			rows += math.Ceil((c.Workload.DurationMS + lag) / c.SeriesWindow())
			if lag > worstLag {
				worstLag, worst = lag, i
			}
		}
	}
	return rows, worst
}
