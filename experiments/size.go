package experiments

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments/field"
)

// Size is how big a sweep is before it runs, by the rule the point limit
// applies (sweepSize): its points, the runs (points × replications), the
// arrivals they replay, and the lists that multiply. The form's live count
// and the size errors both read it.
type Size struct {
	// Points is the sweep's point count (len(Points())); Runs is Points ×
	// replications, the count MaxPoints bounds.
	Points, Runs int
	// Arrivals is the arrivals every run replays in all: each generated
	// load's expected arrivals (workload.Spec.Expected) × the points
	// replaying it; retries are not counted.
	Arrivals float64
	// Limiters are each limiter's points (summed) with the lists that
	// multiply them; Factors what multiplies their sum, in sweep order
	// (servers, server fields, policies, loads, workload fields, seed), and
	// Replications the runs of each point (1 without).
	Limiters     []LimiterSize
	Factors      []Factor
	Replications int
	// QueueModel reports a sweep some of whose points run the queue or
	// the client model (AnyQueue, AnyClients) or an adaptive gate
	// (AnyAdaptive): the event loop, slower per arrival.
	QueueModel bool
	maxLoad    float64 // the arrivals of the largest generated load
}

// LimiterSize is one limiter's share of the points.
type LimiterSize struct {
	Label  string
	Points int
	Lists  []Factor // its lists of more than one value, multiplying to Points
}

// Factor is one list that multiplies the sweep: the config path of its
// input, its name in a product ("burst", "parts[0].rate_rps", "loads")
// and its length.
type Factor struct {
	Path, Name string
	N          int
}

// Size measures a valid config (Validate passed).
func (c *Config) Size() Size {
	limiterPoints := 0
	for i := range c.Limiters {
		limiterPoints += c.Limiters[i].Count()
	}
	return c.size(limiterPoints)
}

// size is Size with the limiters' points counted by the caller (Validate
// counts only the limiters that passed their own checks).
func (c *Config) size(limiterPoints int) Size {
	runs, maxLoad, _, work := c.sweepSize(limiterPoints)
	z := Size{Runs: runs, Points: runs / c.Replicas(), Arrivals: work, Replications: c.Replicas(), maxLoad: maxLoad}
	if runs <= MaxPoints {
		z.QueueModel = c.AnyQueue() || c.AnyClients() || c.AnyAdaptive()
	}
	for i := range c.Limiters {
		l := &c.Limiters[i]
		ls := LimiterSize{Label: l.Label(), Points: l.Count()}
		for _, list := range l.Lists() {
			ls.Lists = append(ls.Lists, Factor{Path: field.Join(field.Index("limiters", i), list.Path), Name: list.Path, N: list.N})
		}
		z.Limiters = append(z.Limiters, ls)
	}
	add := func(path, name string, n int) {
		if n > 1 {
			z.Factors = append(z.Factors, Factor{Path: path, Name: name, N: n})
		}
	}
	add("servers", "servers", c.ServerCount())
	axes := c.Axes()
	for _, a := range axes {
		if a.Part == AxisServer {
			add(a.Path, a.Path, len(a.Values))
		}
	}
	add("policies", "policies", c.PolicyCount())
	add("loads", "loads", c.LoadCount())
	for _, a := range axes {
		if a.Part != AxisServer {
			add(a.Path, strings.TrimPrefix(a.Path, "workload."), len(a.Values))
		}
	}
	return z
}

// Paths are the inputs of the lists that multiply the sweep (each
// limiter's, the factors', replications), for a size error to stand at.
func (z Size) Paths() []string {
	var out []string
	for _, l := range z.Limiters {
		for _, f := range l.Lists {
			out = append(out, f.Path)
		}
	}
	for _, f := range z.Factors {
		out = append(out, f.Path)
	}
	if z.Replications > 1 {
		out = append(out, "replications")
	}
	return out
}

// Product names what multiplies to the points: "rate_rps 3 × burst 4";
// with several limiters their sum, each by its label
// ("(token-bucket: burst 4 + none 1) × loads 2"). Empty when nothing is
// swept.
func (z Size) Product() string {
	var terms []string
	lists := 0
	for _, l := range z.Limiters {
		lists += len(l.Lists)
	}
	if len(z.Limiters) == 1 {
		for _, f := range z.Limiters[0].Lists {
			terms = append(terms, f.Name+" "+strconv.Itoa(f.N))
		}
	} else if lists == 0 {
		terms = append(terms, "limiters "+strconv.Itoa(len(z.Limiters)))
	} else {
		var sum []string
		for _, l := range z.Limiters {
			var ps []string
			for _, f := range l.Lists {
				ps = append(ps, f.Name+" "+strconv.Itoa(f.N))
			}
			if len(ps) == 0 {
				sum = append(sum, l.Label+" 1")
			} else {
				sum = append(sum, l.Label+": "+strings.Join(ps, " × "))
			}
		}
		s := strings.Join(sum, " + ")
		if len(z.Factors) > 0 {
			s = "(" + s + ")"
		}
		terms = append(terms, s)
	}
	for _, f := range z.Factors {
		terms = append(terms, f.Name+" "+strconv.Itoa(f.N))
	}
	return strings.Join(terms, " × ")
}

// String is the count with what multiplies it: "rate_rps 3 × burst 4 = 12
// points", "… = 12 points × replications 2 = 24 runs", "1 point".
func (z Size) String() string {
	s := plural(z.Points, "point")
	if p := z.Product(); p != "" {
		s = p + " = " + s
	}
	if z.Replications > 1 {
		s += fmt.Sprintf(" × replications %d = %s", z.Replications, plural(z.Runs, "run"))
	}
	return s
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Per-arrival costs of the engine, for Seconds: the CPU time (user +
// system, every engine worker) one arrival costs a point, all included
// (generation, the gate, metrics, series, writing the files), measured
// with `lab run` (docs/web.md, "The live count"): a Poisson load of 1000
// req/s through a token bucket swept over 7 bursts, 1,000 s and 4,000 s
// (7 M and 28 M arrivals: 134 and 109 ns each) on the open-loop gate path;
// the same 1,000 s with a lifo server (the queue model: 254 ns) or with
// two retries (the client model: 246 ns); the adaptive presets
// capacity-drop and latency-knee about 375 and 300 ns, less the 0.05 s a
// run of a few hundred arrivals takes.
const (
	CostPerArrivalNS      = 110
	QueueCostPerArrivalNS = 260
)

// Seconds estimates the CPU seconds the sweep takes one engine worker:
// its arrivals × the measured cost of one.
func (z Size) Seconds() float64 {
	ns := float64(CostPerArrivalNS)
	if z.QueueModel {
		ns = QueueCostPerArrivalNS
	}
	return z.Arrivals * ns / 1e9
}
