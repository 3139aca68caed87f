package experiments

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
)

// The service-time distribution is the server's (server/service.go); the
// config ties it to the workload: the empirical distribution reads the
// traces' service_ms column, and the sweep draws every load's service
// times once per server (serviceLoads, sweep.go).

// usesEmpirical reports whether the server or a server variant draws from
// the traces' service column.
func (c *Config) usesEmpirical() bool {
	for si := range c.ServerCount() {
		if s := c.ServerAt(si); s.Option(server.OptService) == server.ServiceEmpirical {
			return true
		}
	}
	return false
}

// serviceColumn pools the service_ms column of every trace the sweep
// replays (the workload's parts and every load's): how many values, their
// mean and their maximum.
func (c *Config) serviceColumn() (n int, meanMS, maxMS float64) {
	sum := 0.0
	add := func(parts []workload.Part) {
		k, s, m := workload.ServiceColumn(parts)
		n, sum, maxMS = n+k, sum+s, max(maxMS, m)
	}
	add(c.Workload.Parts)
	for i := range c.Loads {
		add(c.Loads[i].Parts)
	}
	if n > 0 {
		meanMS = sum / float64(n)
	}
	return n, meanMS, maxMS
}

// normalizeService gives an empirical server the column's mean (its
// service_ms) and maximum (its bound).
func (c *Config) normalizeService() {
	if !c.usesEmpirical() {
		return
	}
	if n, mean, mx := c.serviceColumn(); n > 0 {
		c.Server.SetColumn(mean, mx)
	}
}

// validateService checks that an empirical server has a column to read.
func (c *Config) validateService() field.List {
	var errs field.List
	if !c.usesEmpirical() {
		return nil
	}
	n, mean, _ := c.serviceColumn()
	if n > 0 && mean > 0 {
		return nil
	}
	at := func(path string) {
		if n > 0 {
			errs.Add(field.Join(path, server.OptService), "%q reads the service_ms column of the traces, and every value in it is 0", server.ServiceEmpirical)
			return
		}
		errs.Add(field.Join(path, server.OptService), "%q reads the service_ms column of a trace part given as csv (\"t_ms,client,service_ms\" lines), and no trace of the workload gives one", server.ServiceEmpirical)
	}
	if c.Server.Option(server.OptService) == server.ServiceEmpirical {
		at("server")
	}
	for i := range c.Servers {
		if c.Servers[i].Service == server.ServiceEmpirical {
			at(field.Index("servers", i))
		}
	}
	return errs
}

// serviceArrivals gives a load's requests their service times on every
// server (server.Spec.Draw): a itself where the server's service is fixed,
// else a copy with ServiceMS. Servers with the same distribution share one
// draw; every draw starts from the seed, so request i always takes the
// i-th draw whatever the server.
func (c *Config) serviceArrivals(a *workload.Arrivals) []*workload.Arrivals {
	out := make([]*workload.Arrivals, c.ServerCount())
	var seen []server.Spec
	var drawn [][]float64
	for si := range out {
		srv := c.ServerAt(si)
		if srv.FixedService() {
			out[si] = a
			continue
		}
		var svc []float64
		for k := range seen {
			if seen[k].SameService(&srv) {
				svc = drawn[k]
			}
		}
		if svc == nil {
			svc = srv.Draw(c.Seed, a.Len(), a.GivenServiceMS)
			seen, drawn = append(seen, srv), append(drawn, svc)
		}
		cp := *a
		cp.ServiceMS = svc
		out[si] = &cp
	}
	return out
}

// servedFor gives each point the arrivals with its server's service times
// (serviceArrivals for the point's server, with its swept server fields,
// drawn from the seed of the point's load: a replication or a swept seed
// draws its own). Points whose servers draw alike share one draw.
func (c *Config) servedFor(a *workload.Arrivals, pts []*Point) map[*Point]*workload.Arrivals {
	out := make(map[*Point]*workload.Arrivals, len(pts))
	var seen []server.Spec
	var seeds []uint64
	var drawn []*workload.Arrivals
	for _, pt := range pts {
		srv := c.pointConfig(pt).Server
		if srv.FixedService() {
			out[pt] = a
			continue
		}
		seed := c.Seed
		if pt.Seed != "" {
			if v, err := strconv.ParseUint(pt.Seed, 10, 64); err == nil {
				seed = v
			}
		}
		k := slices.IndexFunc(seen, func(s server.Spec) bool { return s.SameService(&srv) })
		if k >= 0 && seeds[k] == seed {
			out[pt] = drawn[k]
			continue
		}
		cp := *a
		cp.ServiceMS = srv.Draw(seed, a.Len(), a.GivenServiceMS)
		seen, seeds, drawn = append(seen, srv), append(seeds, seed), append(drawn, &cp)
		out[pt] = &cp
	}
	return out
}

// givenService is the service_ms column of load lo's traces, one value per
// arrival in stream order (NaN where a line gives none), when a server
// draws from it (empirical); nil otherwise. The stream does not carry the
// column: the load is generated whole (workload.Generate, the same
// arrivals in the same order) to read it.
func (c *Config) givenService(lo, n int, traces workload.TraceOpener) ([]float64, error) {
	if !c.usesEmpirical() {
		return nil, nil
	}
	w := c.WorkloadAt(lo)
	a, err := workload.GenerateWith(&w, c.Seed, traces)
	if err != nil {
		return nil, err
	}
	if a.GivenServiceMS != nil && a.Len() != n {
		return nil, fmt.Errorf("workload: %d arrivals with service times, %d streamed", a.Len(), n)
	}
	return a.GivenServiceMS, nil
}

// fixedService reports whether every request takes service_ms on server
// variant si.
func (c *Config) fixedService(si int) bool {
	s := c.ServerAt(si)
	return s.FixedService()
}
