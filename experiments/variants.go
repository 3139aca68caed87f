package experiments

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
)

// Load is one workload a sweep runs every point on (the "loads" of a
// config): the workload's arrival window with its own parts, or the
// workload's parts when it gives none. Offered-load levels are loads:
//
//	"loads": [{"name": "50", "parts": [{"type": "constant", "rate_rps": 50}]},
//	          {"name": "100", "parts": [{"type": "constant", "rate_rps": 100}]}]
type Load struct {
	Name  string          `json:"name"`
	Parts []workload.Part `json:"parts,omitempty"`
}

// ServerVariant is one server a sweep runs every point on (the "servers" of
// a config): the server section with the fields the variant gives
// replaced, for example
//
//	"servers": [{"name": "fifo"}, {"name": "lifo", "discipline": "lifo"}]
type ServerVariant struct {
	Name string `json:"name"`
	server.Spec
}

// MarshalJSON writes the name, then the fields the variant sets in the
// server section's order.
func (v ServerVariant) MarshalJSON() ([]byte, error) {
	raw, err := json.Marshal(v.Spec)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"name":`)
	name, _ := json.Marshal(v.Name)
	b.Write(name)
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		if string(val) == "0" {
			continue // not set: the base's
		}
		k, _ := json.Marshal(key)
		b.WriteByte(',')
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Limits on variants.
const (
	MaxLoads   = 100
	MaxServers = 20
)

// LoadCount is the number of workloads each point runs on (1 without loads).
func (c *Config) LoadCount() int { return max(1, len(c.Loads)) }

// ServerCount is the number of servers each point runs on (1 without servers).
func (c *Config) ServerCount() int { return max(1, len(c.Servers)) }

// ServerAt is the server of variant i: the server section, overridden by
// the variant's fields.
func (c *Config) ServerAt(i int) server.Spec {
	if len(c.Servers) == 0 {
		return c.Server
	}
	return c.Server.Override(c.Servers[i].Spec)
}

// WorkloadAt is the workload of load i: the workload section with the
// load's parts.
func (c *Config) WorkloadAt(i int) workload.Spec {
	w := c.Workload
	if len(c.Loads) > 0 && len(c.Loads[i].Parts) > 0 {
		w.Parts = c.Loads[i].Parts
	}
	return w
}

// PointConfig is the config one point runs: cfg itself, or a shallow copy
// with the point's server and workload.
func (c *Config) PointConfig(pt *Point) *Config {
	if len(c.Servers) == 0 && len(c.Loads) == 0 && len(pt.Axes) == 0 {
		return c
	}
	pc := *c
	pc.Server = c.ServerAt(pt.Server)
	pc.Workload = c.WorkloadAt(pt.Load)
	c.withAxes(&pc, pt)
	return &pc
}

// UsesQueue reports whether the points on server variant si run the queue
// model (server.Queue) rather than the forward pass: a server setting other
// than the plain FIFO one, request classes, a scoring window other than the
// whole run, or a series report of the served p99 per window.
func (c *Config) UsesQueue(si int) bool {
	srv := c.ServerAt(si)
	if !srv.Classic() || len(c.Classes) > 0 || c.Rule("metrics.score_until") != ScoreToEnd {
		return true
	}
	for _, r := range c.Reports {
		if r.Type == ReportSeries && slices.ContainsFunc(r.Columns, func(col ReportColumn) bool { return col.Value == "sojourn_p99_ms" }) {
			return true
		}
	}
	return false
}

// AnyQueue reports whether some point runs the queue model.
func (c *Config) AnyQueue() bool {
	for si := range c.ServerCount() {
		if c.UsesQueue(si) {
			return true
		}
	}
	return false
}

func checkName(errs *field.List, path, name string, seen map[string]int, list string) {
	switch {
	case name == "":
		errs.Add(path, "is required: each of %s is named in results", list)
	case len(name) > 100 || strings.ContainsAny(name, ",\""):
		errs.Add(path, "must be a plain name of at most 100 characters (no commas, quotes or line breaks)")
	case field.Line(name, 100) != "":
		errs.Add(path, "%s", field.Line(name, 100))
	}
	if j, dup := seen[name]; dup && name != "" {
		errs.Add(path, "%s[%d] is also called %q", list, j, name)
	}
	seen[name] = len(seen)
}

// validateVariants checks the loads and the servers.
func (c *Config) validateVariants() field.List {
	var errs field.List
	if len(c.Loads) > MaxLoads {
		errs.Add("loads", "at most %d loads", MaxLoads)
	}
	if len(c.Servers) > MaxServers {
		errs.Add("servers", "at most %d servers", MaxServers)
	}
	seen := map[string]int{}
	for i := range c.Loads {
		path := field.Index("loads", i)
		checkName(&errs, field.Join(path, "name"), c.Loads[i].Name, seen, "loads")
		if len(c.Loads[i].Parts) > 0 {
			w := c.WorkloadAt(i)
			for _, e := range w.Validate(path) {
				if !strings.HasPrefix(e.Path, field.Join(path, "duration_ms")) { // the workload's, reported there
					errs = append(errs, e)
				}
			}
		}
	}
	if len(errs) == 0 && len(c.Loads) > 1 {
		// clients.csv and the per-client results index one client table.
		w0 := c.WorkloadAt(0)
		first := w0.ClientTable()
		for i := 1; i < len(c.Loads); i++ {
			w := c.WorkloadAt(i)
			if !slices.Equal(w.ClientTable(), first) {
				errs.Add(field.Join(field.Index("loads", i), "parts"), "declare other clients than loads[0]: every load sends from the same clients")
			}
		}
	}
	seen = map[string]int{}
	base := c.Server.Validate("")
	for i := range c.Servers {
		path := field.Index("servers", i)
		checkName(&errs, field.Join(path, "name"), c.Servers[i].Name, seen, "servers")
		srv := c.ServerAt(i)
		for _, e := range srv.Validate("") {
			if !slices.Contains(base, e) { // the base's own errors are reported at server
				errs.Add(field.Join(path, e.Path), "%s", e.Msg)
			}
		}
	}
	return errs
}

// ExpectedArrivals is the most arrivals a load of the sweep produces (of
// each generated load: swept workload fields make several).
func (c *Config) ExpectedArrivals() float64 {
	s := c.shape()
	n := 0.0
	for g := 0; g < c.GeneratedLoads(); g += c.Replicas() {
		w, _ := c.genWorkload(&s, g)
		n = max(n, w.Expected())
	}
	return n
}
