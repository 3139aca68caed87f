package experiments

import (
	"math"
	"slices"
	"strconv"

	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/lists"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
)

// Swept fields beyond the limiters. A numeric field whose row says Sweep
// (workload.Field.Sweep for a part's fields, server.Field.Sweep for the
// server's) takes a list of values, and so does the seed:
//
//	"server": {"service_ms": [5, 10, 20]},
//	"workload": {"parts": [{"type": "poisson", "rate_rps": [50, 100]}]},
//	"seed": [1, 2, 3]
//
// Each list is an Axis. The sweep is the product of the limiters' points
// and the axes, in this order (outer to inner): limiters in the order
// given, their parameter values, servers, the swept server fields (in the
// server's row order), loads, the swept workload fields (parts in order,
// each part's fields in its row order), the seed, then the replications;
// the client policies (policies.go) come between the server fields and
// the loads.
// With a seed list and "replications": N, every listed seed s runs its
// replications with seeds s … s+N-1 (results.csv's seed column is s,
// replications.csv's is each run's); listed seeds closer than N apart are
// refused (checkSeedRanges).
// Every combination of the workload axes (and seed, and replication) is a
// load of its own, generated once (the loads of variants.go, multiplied);
// a server combination is a server variant. results.csv has a column per
// axis, named by its config path, only when some field is swept: a config
// without lists writes the same bytes as before.

// Axis is one swept field outside the limiters.
type Axis struct {
	Path    string // the field's config path: "workload.parts[0].rate_rps", "server.service_ms", "seed"
	Key     string // its JSON key
	Label   string
	Unit    string
	Integer bool
	Values  []float64
	// Part is the index of the workload part, or AxisServer, AxisSeed.
	Part int
}

// Places of an axis that is not a workload part's.
const (
	AxisServer = -1
	AxisSeed   = -2
)

// MaxReplications bounds a config's replications.
const MaxReplications = 100

// Axes lists the config's swept fields outside the limiters, in sweep
// order (outer first).
func (c *Config) Axes() []Axis {
	var out []Axis
	for _, f := range server.Fields() {
		if xs := c.Server.Lists[f.Name]; f.Sweep && len(xs) > 1 {
			out = append(out, Axis{Path: field.Join("server", f.Name), Key: f.Name, Label: f.Label, Unit: f.Unit, Integer: f.Integer, Values: xs, Part: AxisServer})
		}
	}
	for i := range c.Workload.Parts {
		p := &c.Workload.Parts[i]
		k := p.Kind()
		if k == nil {
			continue
		}
		for _, f := range k.Fields {
			if xs := p.Lists[f.Name]; f.Sweep && len(xs) > 1 {
				out = append(out, Axis{Path: field.Join(field.Index("workload.parts", i), f.Name), Key: f.Name, Label: f.Label, Unit: f.Unit,
					Integer: f.Input == workload.InputInteger, Values: xs, Part: i})
			}
		}
	}
	if len(c.Seeds) > 1 {
		xs := make([]float64, len(c.Seeds))
		for i, s := range c.Seeds {
			xs[i] = float64(s)
		}
		out = append(out, Axis{Path: "seed", Key: "seed", Label: "Seed", Integer: true, Values: xs, Part: AxisSeed})
	}
	return out
}

// Replicas is the number of runs of each point (1 without replications).
func (c *Config) Replicas() int { return max(1, c.Replications) }

// Replicated reports whether the config runs each point several times.
func (c *Config) Replicated() bool { return c.Replications > 1 }

// sweepShape is how the axes multiply the sweep: the server axes, the
// workload axes (seed included) and the count of each one's combinations.
type sweepShape struct {
	axes                 []Axis
	server, load         []int // indexes into axes
	serverCombos, combos int   // combinations of the server and workload axes
}

func (c *Config) shape() sweepShape {
	s := sweepShape{axes: c.Axes(), serverCombos: 1, combos: 1}
	for i, a := range s.axes {
		if a.Part == AxisServer {
			s.server = append(s.server, i)
			s.serverCombos *= len(a.Values)
		} else {
			s.load = append(s.load, i)
			s.combos *= len(a.Values)
		}
	}
	return s
}

// combo is combination k of the axes idx (the last varying fastest): the
// index of each one's value.
func (s *sweepShape) combo(idx []int, k int) []int {
	out := make([]int, len(idx))
	for j := len(idx) - 1; j >= 0; j-- {
		n := len(s.axes[idx[j]].Values)
		out[j] = k % n
		k /= n
	}
	return out
}

// GeneratedLoads is the number of arrival lists the sweep generates: loads ×
// workload combinations × replications.
func (c *Config) GeneratedLoads() int {
	s := c.shape()
	return c.LoadCount() * s.combos * c.Replicas()
}

// generatedLoad is what generated load g is: its config load, the value
// index of each workload axis, and its replication.
type generatedLoad struct {
	load, replica int
	values        []int // per workload axis (shape.load)
}

func (c *Config) genAt(s *sweepShape, g int) generatedLoad {
	r := g % c.Replicas()
	g /= c.Replicas()
	return generatedLoad{load: g / s.combos, replica: r, values: s.combo(s.load, g%s.combos)}
}

// genWorkload is the workload and seed of generated load g.
func (c *Config) genWorkload(s *sweepShape, g int) (workload.Spec, uint64) {
	ge := c.genAt(s, g)
	w := c.WorkloadAt(ge.load)
	seed := c.Seed
	if len(s.load) > 0 {
		w.Parts = slices.Clone(w.Parts)
	}
	for j, ai := range s.load {
		a := &s.axes[ai]
		v := ge.values[j]
		if a.Part == AxisSeed {
			seed = c.Seeds[v]
			continue
		}
		lists.Set(&w.Parts[a.Part], a.Key, a.Values[v])
	}
	return w, seed + uint64(ge.replica)
}

// GeneratedLoad is generated load g of the sweep (0 ≤ g <
// GeneratedLoads(): the config's loads outermost, then the combinations of
// the swept workload fields and seeds, then the replications): its config
// load (an index of Loads, 0 without them), the workload it is generated
// from (the load with g's swept values set) and its seed (the listed
// seed's, plus the replication).
func (c *Config) GeneratedLoad(g int) (load int, w workload.Spec, seed uint64) {
	s := c.shape()
	w, seed = c.genWorkload(&s, g)
	return c.genAt(&s, g).load, w, seed
}

// GeneratedLoadOf is the generated load (GeneratedLoad) that run pt of
// Runs runs on; of a point of Points, its first run's.
func (c *Config) GeneratedLoadOf(pt *Point) int {
	s := c.shape()
	// Point indexes count the workload combinations innermost (Runs).
	return (pt.Load*s.combos+pt.Index%s.combos)*c.Replicas() + pt.Replica
}

// PointArrivals is the workload and seed of point pt's arrivals (its first
// run's): its load with its swept workload values set (and its parts'
// lists left out, so it writes as what generates them), and its seed.
func (c *Config) PointArrivals(pt *Point) (workload.Spec, uint64) {
	s := c.shape()
	w, seed := c.genWorkload(&s, c.GeneratedLoadOf(pt))
	w.Parts = slices.Clone(w.Parts)
	for i := range w.Parts {
		w.Parts[i].Lists = nil
	}
	return w, seed
}

// Runs lists every run of the sweep: the points of Points, each Replicas
// times (replicas adjacent); run pt runs on generated load
// GeneratedLoadOf(pt).
func (c *Config) Runs() []Point {
	s := c.shape()
	reps := c.Replicas()
	var pts []Point
	logical := 0
	for li := range c.Limiters {
		l := &c.Limiters[li]
		for _, p := range l.Points() {
			for si := range c.ServerCount() {
				for sc := range s.serverCombos {
					sv := s.combo(s.server, sc)
					for pi := range c.PolicyCount() {
						for lo := range c.LoadCount() {
							for wc := range s.combos {
								wv := s.combo(s.load, wc)
								for r := range reps {
									pt := Point{Index: logical, LimiterIndex: li, Limiter: l.Label(), Type: l.Type, Params: p, Swept: l.Swept(), Server: si, Policy: pi, Load: lo}
									if len(c.Servers) > 0 {
										pt.ServerName = c.Servers[si].Name
									}
									if len(c.Policies) > 0 {
										pt.PolicyName = c.Policies[pi].Name
									}
									if len(c.Loads) > 0 {
										pt.LoadName = c.Loads[lo].Name
									}
									if len(s.axes) > 0 {
										pt.Axes = make([]float64, 0, len(s.axes))
										for j, ai := range s.server {
											pt.Axes = append(pt.Axes, s.axes[ai].Values[sv[j]])
										}
										for j, ai := range s.load {
											pt.Axes = append(pt.Axes, s.axes[ai].Values[wv[j]])
										}
									}
									if len(c.Seeds) > 1 || reps > 1 {
										seed := c.Seed
										for j, ai := range s.load {
											if s.axes[ai].Part == AxisSeed {
												seed = c.Seeds[wv[j]]
											}
										}
										pt.Seed = strconv.FormatUint(seed+uint64(r), 10)
										pt.Replica = r
									}
									pts = append(pts, pt)
								}
								logical++
							}
						}
					}
				}
			}
		}
	}
	return pts
}

// AxisValue is the point's value of axis i (ok false without one).
func (p *Point) AxisValue(i int) (float64, bool) {
	if i < len(p.Axes) {
		return p.Axes[i], true
	}
	return 0, false
}

// withAxes applies the point's swept server and workload values to pc (a
// copy of the config that it may change).
func (c *Config) withAxes(pc *Config, pt *Point) {
	axes := c.Axes()
	cloned := false
	for i, a := range axes {
		if i >= len(pt.Axes) {
			break
		}
		switch {
		case a.Part == AxisServer:
			lists.Set(&pc.Server, a.Key, pt.Axes[i])
			pc.Server.Normalize() // a distribution's swept setting moves its mean (service_ms)
		case a.Part >= 0:
			if !cloned {
				pc.Workload.Parts = slices.Clone(pc.Workload.Parts)
				cloned = true
			}
			lists.Set(&pc.Workload.Parts[a.Part], a.Key, pt.Axes[i])
		}
	}
}

// axisColumns are results.csv's columns of the swept fields, named by
// their config paths.
func axisColumns(cfg *Config) []Column {
	var cols []Column
	for i, a := range cfg.Axes() {
		if a.Part == AxisSeed {
			cols = append(cols, seedColumn)
			continue
		}
		f := Fixed1
		if a.Integer {
			f = Int
		}
		cols = append(cols, Column{Key: a.Path, Format: f, Value: func(p *Point) (float64, bool) { return p.AxisValue(i) }})
	}
	return cols
}

// seedColumn is a point's seed (with a swept seed or replications), exact.
var seedColumn = Column{Key: "seed", Format: Text, Label: func(p *Point) string { return p.Seed }}

// validateAxes checks the swept fields: each list's values (each value of
// a list with its index in the path, every combination of one section's
// lists), where lists may be, and the replications.
func (c *Config) validateAxes() field.List {
	var errs field.List
	if c.Replications != 0 && (c.Replications < 2 || c.Replications > MaxReplications) {
		errs.Add("replications", "must be from 2 to %d (leave it out for one run a point)", MaxReplications)
	}
	errs = append(errs, c.checkSeedRanges()...)
	if len(c.Seeds) > lists.MaxValues {
		errs.Add("seed", "at most %d values", lists.MaxValues)
	}
	if len(c.Server.Lists) > 0 {
		if len(c.Servers) > 0 {
			errs.Add("server", "sweeps %v and has servers: give the values as servers, or sweep here without servers", sortedKeys(c.Server.Lists))
		}
		errs = append(errs, checkLists(c.Server.Lists, "server", func(key string) (bool, bool) {
			f, ok := server.FieldByName(key)
			return ok && f.Sweep, f.Integer
		}, func(set func(any)) field.List {
			s := c.Server
			s.Lists = nil
			set(&s)
			return s.Validate("server")
		})...)
	}
	for i := range c.Workload.Parts {
		p := &c.Workload.Parts[i]
		if len(p.Lists) == 0 {
			continue
		}
		path := field.Index("workload.parts", i)
		if len(c.Loads) > 0 {
			errs.Add(path, "sweeps %v and the config has loads: give the values as loads, or sweep here without loads", sortedKeys(p.Lists))
		}
		k := p.Kind()
		errs = append(errs, checkLists(p.Lists, path, func(key string) (bool, bool) {
			if k == nil {
				return false, false
			}
			f, ok := k.Field(key)
			return ok && f.Sweep, ok && f.Input == workload.InputInteger
		}, func(set func(any)) field.List {
			q := *p
			q.Lists = nil
			set(&q)
			return q.Validate(path, c.Workload.DurationMS)
		})...)
	}
	return errs
}

// checkSeedRanges checks a seed list with replications: seed s runs seeds
// s … s+N-1, so two listed seeds closer than N apart would run the same
// seeds under two values of the seed column (their means would share runs,
// and a run's seed in replications.csv would not say which listed seed it
// belongs to). Such lists are refused at the later seed's index.
func (c *Config) checkSeedRanges() field.List {
	var errs field.List
	n := uint64(c.Replicas())
	if n < 2 {
		return nil
	}
	if len(c.Seeds) < 2 {
		if c.Seed > math.MaxUint64-(n-1) {
			errs.Add("seed", "%d with %d replications runs seeds past the largest, %d", c.Seed, n, uint64(math.MaxUint64))
		}
		return errs
	}
	for i, s := range c.Seeds {
		if s > math.MaxUint64-(n-1) {
			errs.Add(field.Index("seed", i), "%d with %d replications runs seeds past the largest, %d", s, n, uint64(math.MaxUint64))
			continue
		}
		for _, t := range c.Seeds[:i] {
			if max(s, t)-min(s, t) < n {
				errs.Add(field.Index("seed", i), "seeds %d and %d overlap: with %d replications seed s runs seeds s … s+%d, so listed seeds must be at least %d apart", t, s, n, n-1, n)
				break
			}
		}
		if len(errs) >= MaxFieldErrors {
			break
		}
	}
	return errs
}

func sortedKeys(ls lists.Lists) []string {
	var out []string
	for k := range ls {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// checkLists checks a section's lists: each key takes a list (row says
// Sweep), each value is whole where the field is, and every combination
// of the section's values validates (errors at a swept field's own path
// get the value's index).
func checkLists(ls lists.Lists, path string, row func(key string) (sweep, integer bool), validate func(set func(any)) field.List) field.List {
	var errs field.List
	keys := sortedKeys(ls)
	ok := true
	for _, key := range keys {
		sweep, integer := row(key)
		switch {
		case !sweep:
			errs.Add(field.Join(path, key), "takes one value, not a list")
			ok = false
		case len(ls[key]) > lists.MaxValues:
			errs.Add(field.Join(path, key), "at most %d values", lists.MaxValues)
			ok = false
		case integer:
			for j, v := range ls[key] {
				if v != math.Trunc(v) {
					errs.Add(field.Index(field.Join(path, key), j), "must be a whole number")
					ok = false
				}
			}
		}
	}
	if !ok || ls.Count() > MaxPoints {
		return errs
	}
	seen := map[field.Error]bool{}
	idx := make([]int, len(keys))
	for k := range ls.Count() {
		rest := k
		for j := len(keys) - 1; j >= 0; j-- {
			idx[j] = rest % len(ls[keys[j]])
			rest /= len(ls[keys[j]])
		}
		for _, e := range validate(func(dst any) {
			for j, key := range keys {
				lists.Set(dst, key, ls[key][idx[j]])
			}
		}) {
			if j := slices.Index(keys, lastKey(e.Path, path)); j >= 0 {
				e.Path = field.Index(e.Path, idx[j])
			}
			if !seen[e] {
				seen[e] = true
				errs = append(errs, e)
			}
		}
		if len(errs) >= MaxFieldErrors {
			break
		}
	}
	return errs
}

// lastKey is the key of path under base ("rate_rps" of
// "workload.parts[0].rate_rps" under "workload.parts[0]"), or "".
func lastKey(path, base string) string {
	if len(path) > len(base)+1 && path[:len(base)] == base && path[len(base)] == '.' {
		return path[len(base)+1:]
	}
	return ""
}

// sweepSize counts the product: the points, the arrivals of the largest
// load the sweep generates and of all of them (held at once), and the
// decisions (arrivals × the points that replay them). Past MaxPoints it
// counts only the points.
func (c *Config) sweepSize(limiterPoints int) (points int, maxLoad, allLoads, work float64) {
	s := c.shape()
	gens := c.LoadCount() * s.combos * c.Replicas()
	perGen := limiterPoints * c.ServerCount() * s.serverCombos * c.PolicyCount()
	points = perGen * gens
	if points > MaxPoints || gens > MaxPoints {
		return points, 0, 0, 0
	}
	last := 0.0
	for g := range gens {
		if g%c.Replicas() == 0 { // a replication expects what its first does
			w, _ := c.genWorkload(&s, g)
			last = w.Expected()
		}
		maxLoad = max(maxLoad, last)
		allLoads += last
		work += last * float64(perGen)
	}
	return points, maxLoad, allLoads, work
}

// sizePaths are the inputs a size error stands at: the lists that
// multiply the sweep, or otherwise the one given.
func sizePaths(z Size, otherwise string) []string {
	if paths := z.Paths(); len(paths) > 0 {
		return paths
	}
	return []string{otherwise}
}

// Points lists the sweep's points in output order without running them:
// limiters in the order given, then their parameter values, then the
// servers, the swept server fields, the client policies, the loads, the
// swept workload fields
// and the seed (axes.go). A replicated point is one point.
func (c *Config) Points() []Point {
	pts := c.Runs()
	if reps := c.Replicas(); reps > 1 {
		out := make([]Point, 0, len(pts)/reps)
		for i := 0; i < len(pts); i += reps {
			out = append(out, pts[i])
		}
		pts = out
	}
	return pts
}
