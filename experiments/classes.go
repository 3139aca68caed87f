package experiments

import (
	"math"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/server"
)

// Class is a criticality class of requests ("classes" in a config), in
// priority order: the first is the most important. Every arrival gets one
// class by a seeded draw (ClassDraw): arrival i, in time order, draws
// u_i in [0, 1) and takes the first class whose cumulative share exceeds
// u_i; the last class, which gives no share, takes the rest. A class
// depends only on the arrival's index, never on the gate, the server or the
// rates. The server's door "priority" lets a request of a higher class
// evict one of a lower class; the metrics count each class's success
// within the deadline (ClassMetrics), and an SLO names a class's target.
type Class struct {
	Name  string  `json:"name"`
	Share float64 `json:"share,omitempty"`
}

// ClassDraw is the seeded generator of the class draws.
type ClassDraw struct {
	Generator string `json:"generator"`
	Seed      int64  `json:"seed"`
}

// Class draw generators.
const (
	// DrawJavaRandom is java.util.Random's 48-bit linear congruential
	// generator and its nextDouble, the seed lab's (Post 5): state =
	// (seed XOR 0x5DEECE66D) mod 2^48; a step sets state = state *
	// 0x5DEECE66D + 0xB mod 2^48 and gives its top bits; a draw is
	// (next(26) * 2^27 + next(27)) / 2^53.
	DrawJavaRandom = "java-random"
	// DrawPCG is math/rand/v2's PCG seeded with (seed, 0), Float64 per draw.
	DrawPCG = "pcg"
)

// ClassDrawGenerators lists the generators, the default first, with their docs.
func ClassDrawGenerators() []RuleChoice {
	return []RuleChoice{
		{DrawJavaRandom, "java.util.Random(seed).nextDouble(), the seed lab's draw"},
		{DrawPCG, "math/rand/v2 PCG(seed, 0).Float64()"},
	}
}

// SLO is a success-rate objective: at least SuccessPct percent of a class's
// scored arrivals complete within the deadline. Metrics.SLOMet says whether
// a point meets it (the unrounded percentage against the target).
type SLO struct {
	Class      string  `json:"class"`
	SuccessPct float64 `json:"success_pct"`
}

// MaxClasses bounds the classes of a config.
const MaxClasses = 16

// ClassIndex finds a class by name (-1 when there is none).
func (c *Config) ClassIndex(name string) int {
	for k, cl := range c.Classes {
		if cl.Name == name {
			return k
		}
	}
	return -1
}

// normalizeModels fills the class draw's defaults and makes empty lists
// nil, so that the stored document reads back the same.
func (c *Config) normalizeModels() {
	if len(c.Classes) == 0 {
		c.Classes = nil // "classes": [] is no classes
	}
	if len(c.Reports) == 0 {
		c.Reports = nil // nor "reports": [] any reports
	}
	for i := range c.Reports {
		if s := c.Reports[i].Select; s != nil {
			for _, xs := range []*[]int{&s.Limiters, &s.Servers, &s.Loads} {
				if len(*xs) == 0 {
					*xs = nil
				}
			}
		}
	}
	if len(c.Classes) > 0 && c.ClassDraw == nil {
		c.ClassDraw = &ClassDraw{}
	}
	if c.ClassDraw != nil && c.ClassDraw.Generator == "" {
		c.ClassDraw.Generator = DrawJavaRandom
	}
}

// validateClasses checks the classes, their draw, the SLO, and the doors
// that need classes.
func (c *Config) validateClasses() field.List {
	var errs field.List
	if len(c.Classes) > MaxClasses {
		errs.Add("classes", "at most %d classes", MaxClasses)
	}
	if len(c.Classes) == 1 {
		errs.Add("classes", "give two classes or more (one class is no class), or leave classes out")
	}
	seen := map[string]int{}
	sum := 0.0
	for k, cl := range c.Classes {
		path := field.Index("classes", k)
		checkName(&errs, field.Join(path, "name"), cl.Name, seen, "classes")
		last := k == len(c.Classes)-1
		switch {
		case last && cl.Share != 0:
			errs.Add(field.Join(path, "share"), "the last class takes the rest of the arrivals: leave its share out")
		case !last && (math.IsNaN(cl.Share) || cl.Share <= 0 || cl.Share > 1):
			errs.Add(field.Join(path, "share"), "must be more than 0 and at most 1 (the fraction of arrivals in the class)")
		default:
			sum += cl.Share
		}
	}
	if sum > 1 {
		errs.Add("classes", "the shares add up to %g, more than 1", sum)
	}
	if c.ClassDraw != nil {
		if len(c.Classes) == 0 {
			errs.Add("class_draw", "draws the classes: give classes, or leave class_draw out")
		}
		var names []string
		ok := false
		for _, g := range ClassDrawGenerators() {
			names = append(names, strconv.Quote(g.Name))
			ok = ok || g.Name == c.ClassDraw.Generator
		}
		if !ok {
			errs.Add("class_draw.generator", "must be one of %s", strings.Join(names, ", "))
		}
	}
	if c.SLO != nil {
		if c.ClassIndex(c.SLO.Class) < 0 {
			errs.Add("slo.class", "must name one of the classes")
		}
		if math.IsNaN(c.SLO.SuccessPct) || c.SLO.SuccessPct < 0 || c.SLO.SuccessPct > 100 {
			errs.Add("slo.success_pct", "must be between 0 and 100")
		}
	}
	for si := range c.ServerCount() {
		if srv := c.ServerAt(si); srv.Option(server.OptDoor) == server.DoorPriority && len(c.Classes) == 0 {
			p := "server.door"
			if len(c.Servers) > 0 && c.Servers[si].Door != "" {
				p = field.Join(field.Index("servers", si), "door")
			}
			errs.Add(p, "%q evicts requests of a lower class: give the workload classes", server.DoorPriority)
		}
	}
	if c.Rule("metrics.score_until") == ScoreToEndMinusDead {
		for si := range c.ServerCount() {
			if srv := c.ServerAt(si); !(c.Workload.DurationMS > srv.DeadlineMS) {
				errs.Add("workload.duration_ms", "the scoring window ends a deadline (%g ms) before the run does: duration_ms must be longer than the deadline", srv.DeadlineMS)
				break
			}
		}
		for si := 1; si < c.ServerCount(); si++ {
			if c.ServerAt(si).DeadlineMS != c.ServerAt(0).DeadlineMS {
				errs.Add(field.Join(field.Index("servers", si), "deadline_ms"), "the scoring window ends a deadline before the run: every server needs the same deadline")
				break
			}
		}
	}
	return errs
}

// SuccessPct is the share of the class's arrivals in window k served within
// the deadline: 100 success / offered, 100 when it had none.
func (c *ClassSeries) SuccessPct(k int) float64 {
	offered := At(c.Offered, k)
	if offered == 0 {
		return 100
	}
	return 100.0 * float64(At(c.Success, k)) / float64(offered)
}
