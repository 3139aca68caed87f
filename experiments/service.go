package experiments

import (
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
	if n, _, _ := c.serviceColumn(); n > 0 {
		return nil
	}
	at := func(path string) {
		errs.Add(field.Join(path, server.OptService), "%q reads the service_ms column of a trace part (\"t_ms,client,service_ms\" lines), and no trace of the workload gives one", server.ServiceEmpirical)
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
