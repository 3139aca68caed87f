package experiments

import (
	"fmt"
	"slices"

	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
)

// The service-time distribution is the server's (server/service.go); the
// config ties it to the workload: the empirical distribution reads the
// traces' service_ms column, and the sweep draws every load's service
// times once per server (ServiceArrivals, experiments/simulate).

// UsesEmpirical reports whether the server or a server variant draws from
// the traces' service column.
func (c *Config) UsesEmpirical() bool {
	for si := range c.ServerCount() {
		if s := c.ServerAt(si); s.Option(server.OptService) == server.ServiceEmpirical {
			return true
		}
	}
	return false
}

// serviceColumn pools the service_ms column of every trace the sweep
// replays (the workload's parts and every load's): how many values, their
// mean and their maximum. Trace files are read through traces (nil: they
// are skipped, their column unknown until the run reads them).
func (c *Config) serviceColumn(traces workload.TraceOpener) (n int, meanMS, maxMS float64, err error) {
	sum := 0.0
	add := func(parts []workload.Part) error {
		k, s, m, err := workload.ServiceColumnWith(parts, c.Workload.DurationMS, traces)
		n, sum, maxMS = n+k, sum+s, max(maxMS, m)
		return err
	}
	if err := add(c.Workload.Parts); err != nil {
		return 0, 0, 0, err
	}
	for i := range c.Loads {
		if err := add(c.Loads[i].Parts); err != nil {
			return 0, 0, 0, fmt.Errorf("loads[%d]: %w", i, err)
		}
	}
	if n > 0 {
		meanMS = sum / float64(n)
	}
	return n, meanMS, maxMS, nil
}

// readsTraceFiles reports whether a trace part of the workload or of a
// load names a file.
func (c *Config) readsTraceFiles() bool {
	has := func(parts []workload.Part) bool {
		return slices.ContainsFunc(parts, func(p workload.Part) bool { return p.Type == workload.Trace && p.File != "" })
	}
	if has(c.Workload.Parts) {
		return true
	}
	return slices.ContainsFunc(c.Loads, func(l Load) bool { return has(l.Parts) })
}

// WithTraceFileColumn is the config a run replays when an empirical server
// reads a trace file's column: its mean and maximum come from the files
// (read once through traces, with the traces in the config), which a
// config read without them cannot know. Otherwise it is c.
func (c *Config) WithTraceFileColumn(traces workload.TraceOpener) (*Config, error) {
	if !c.UsesEmpirical() || !c.readsTraceFiles() {
		return c, nil
	}
	n, mean, mx, err := c.serviceColumn(traces)
	if err != nil {
		return nil, fmt.Errorf("the service_ms column for service %q: %w", server.ServiceEmpirical, err)
	}
	if errs := c.columnErrors(n, mean); len(errs) > 0 {
		return nil, errs
	}
	out := *c
	out.Server.SetColumn(mean, mx)
	return &out, nil
}

// normalizeService gives an empirical server the column's mean (its
// service_ms) and maximum (its bound) when the config holds every trace
// it reads; a config that reads trace files keeps its service_ms until
// the run reads them.
func (c *Config) normalizeService() {
	if !c.UsesEmpirical() {
		return
	}
	if c.readsTraceFiles() {
		// The files' column, unread here, pools with the config's: the
		// run reads both (WithTraceFileColumn). The config's alone would
		// give service_ms another mean than the run's, and the config the
		// run kept would not read back as itself.
		return
	}
	if n, mean, mx, _ := c.serviceColumn(nil); n > 0 {
		c.Server.SetColumn(mean, mx)
	}
}

// validateService checks that an empirical server has a column to read:
// the traces in the config give one, or a trace file may (the run reads
// it, WithTraceFileColumn).
func (c *Config) validateService() field.List {
	if !c.UsesEmpirical() {
		return nil
	}
	if c.readsTraceFiles() {
		return nil // the files' column pools with the config's: the run checks them together
	}
	n, mean, _, _ := c.serviceColumn(nil)
	return c.columnErrors(n, mean)
}

// columnErrors are the errors of an empirical server whose traces give n
// service times of mean mean: none, or none but zeros.
func (c *Config) columnErrors(n int, mean float64) field.List {
	var errs field.List
	if n > 0 && mean > 0 {
		return nil
	}
	at := func(path string) {
		if n > 0 {
			errs.Add(field.Join(path, server.OptService), "%q reads the service_ms column of the traces, and every value in it is 0", server.ServiceEmpirical)
			return
		}
		errs.Add(field.Join(path, server.OptService), "%q reads the service_ms column of the traces (\"t_ms,client,service_ms\" lines, in the config or in a trace file), and no trace of the workload gives one", server.ServiceEmpirical)
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
