package simulate

import (
	"slices"
	"strconv"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
)

// ServiceArrivals gives every point of a load its requests' service times
// (server.Spec.Draw): the load itself where the point's server (with its
// swept fields) serves a fixed time, else a copy with ServiceMS, drawn from
// the point's seed (the run's, or its replication's or swept seed). Points
// with the same distribution and seed share one draw, so every limiter of
// the sweep serves the same requests for the same times.
func ServiceArrivals(c *experiments.Config, a *workload.Arrivals, points []*experiments.Point) []*workload.Arrivals {
	type drawn struct {
		srv  server.Spec
		seed uint64
		a    *workload.Arrivals
	}
	var seen []drawn
	out := make([]*workload.Arrivals, len(points))
	for i, pt := range points {
		srv := c.PointConfig(pt).Server
		if srv.FixedService() {
			out[i] = a
			continue
		}
		seed := pointSeed(c, pt)
		k := slices.IndexFunc(seen, func(d drawn) bool { return d.seed == seed && d.srv.SameService(&srv) })
		if k < 0 {
			cp := *a
			cp.ServiceMS = srv.Draw(seed, a.Len(), a.GivenServiceMS)
			seen = append(seen, drawn{srv, seed, &cp})
			k = len(seen) - 1
		}
		out[i] = seen[k].a
	}
	return out
}

// pointSeed is the seed a point's load was generated from.
func pointSeed(c *experiments.Config, pt *experiments.Point) uint64 {
	if pt.Seed != "" {
		if v, err := strconv.ParseUint(pt.Seed, 10, 64); err == nil {
			return v
		}
	}
	return c.Seed
}
