package experiments

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/lists"
	"github.com/ratelab/ratelab/experiments/workload"
)

// ClientPolicy is one client behaviour a sweep runs every point with (the
// "policies" of a config): the behaviour fields it gives (workload.Behaviour)
// replace those of every workload part, for example
//
//	"policies": [{"name": "no-retry", "timeout_ms": 200},
//	             {"name": "retry", "timeout_ms": 200, "retries": 3, "backoff_ms": 50}]
//
// Points run on the policies after the servers and before the loads, so a
// report lists a policy's loads together (the seed lab's Post 1: every
// offered rate without retries, then with).
//
// A policy gives the behaviour fields its document names, even as 0 or
// "none": those replace the part's own, and the part keeps the others
// ("retries": 0 over a part with retries 3 runs without retries; a policy
// silent on timeout_ms keeps the part's timeout). Decoding records them in
// Given and the canonical document writes them back (MarshalJSON), so the
// manifest, config_sha256 and the form's round trip keep them.
type ClientPolicy struct {
	Name string `json:"name"`
	workload.Behaviour
	// Given lists the behaviour fields (JSON keys) the policy's document
	// names. A field set to something other than zero counts as given
	// either way (a policy built in Go need not list them).
	Given []string `json:"-"`
}

// Gives reports whether the policy gives the behaviour field of JSON key
// name.
func (p *ClientPolicy) Gives(name string) bool {
	return p.Behaviour.Sets(name) || slices.Contains(p.Given, name)
}

// MarshalJSON writes the name and the fields the policy gives, in struct
// order: a policy without zero-valued given fields writes what the plain
// struct (omitempty) would.
func (p ClientPolicy) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	name, err := json.Marshal(p.Name)
	if err != nil {
		return nil, err
	}
	buf.WriteString(`{"name":`)
	buf.Write(name)
	for _, key := range workload.BehaviourKeys() {
		if !p.Gives(key) {
			continue
		}
		v, err := json.Marshal(p.Behaviour.Value(key))
		if err != nil {
			return nil, err
		}
		buf.WriteString(`,"` + key + `":`)
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads a policy strictly (unknown fields are errors) and
// records the behaviour fields its document gives (null gives nothing).
func (p *ClientPolicy) UnmarshalJSON(data []byte) error {
	type plain ClientPolicy // without the methods
	var q plain
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&q); err != nil {
		return err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return err
	}
	q.Given = nil
	for _, key := range workload.BehaviourKeys() {
		for k, v := range keys { // encoding/json matches keys in any case
			if strings.EqualFold(k, key) && string(v) != "null" {
				q.Given = append(q.Given, key)
				break
			}
		}
	}
	*p = ClientPolicy(q)
	return nil
}

// MaxPolicies bounds the policies of a sweep.
const MaxPolicies = 20

// PolicyCount is the number of client policies each point runs on (1
// without policies).
func (c *Config) PolicyCount() int { return max(1, len(c.Policies)) }

// Trigger is the interval of the config's trigger (the "trigger" of a
// config): recovery is measured after it (recovery.go). Left out, a flash
// crowd of the workload is the trigger.
type TriggerSpec struct {
	StartMS float64 `json:"start_ms"`
	EndMS   float64 `json:"end_ms"`
}

// Behaviours is the behaviour of each part of workload w under policy pi
// (the parts' own without policies).
func (c *Config) Behaviours(w *workload.Spec, pi int) []workload.Behaviour {
	bs := make([]workload.Behaviour, len(w.Parts))
	for i := range w.Parts {
		bs[i] = w.Parts[i].Behaviour
		if len(c.Policies) > 0 {
			bs[i] = bs[i].Override(c.Policies[pi].Behaviour, c.Policies[pi].Gives)
		}
	}
	return bs
}

// UsesClients reports whether the points on policy pi and load lo run the
// client model (experiments/simulate, clients.go): a part with client behaviour, or a
// closed loop.
func (c *Config) UsesClients(pi, lo int) bool {
	w := c.WorkloadAt(lo)
	bs := c.Behaviours(&w, pi)
	for i := range w.Parts {
		if bs[i].Active() {
			return true
		}
		if k := w.Parts[i].Kind(); k != nil && k.Users != nil {
			return true
		}
		// A swept behaviour field (retries [0, 3]) runs the client model
		// at every value when one of its values makes the clients behave.
		for key, xs := range w.Parts[i].Lists {
			for _, v := range xs {
				q := w.Parts[i]
				lists.Set(&q, key, v)
				if q.Behaviour.Active() {
					return true
				}
			}
		}
	}
	return false
}

// AnyClients reports whether some point runs the client model: results.csv
// then has the client columns.
func (c *Config) AnyClients() bool {
	for pi := range c.PolicyCount() {
		for lo := range c.LoadCount() {
			if c.UsesClients(pi, lo) {
				return true
			}
		}
	}
	return false
}

// maxAttempts is the most attempts one request of the sweep can make: a
// part's swept retries count at each value, where the policy keeps them.
func (c *Config) maxAttempts() int {
	n := 0
	for pi := range c.PolicyCount() {
		for lo := range c.LoadCount() {
			w := c.WorkloadAt(lo)
			for _, b := range c.Behaviours(&w, pi) {
				n = max(n, b.Retries)
			}
			for i := range w.Parts {
				for _, v := range w.Parts[i].Lists["retries"] {
					q := w.Parts[i]
					lists.Set(&q, "retries", v)
					b := q.Behaviour
					if len(c.Policies) > 0 {
						b = b.Override(c.Policies[pi].Behaviour, c.Policies[pi].Gives)
					}
					n = max(n, b.Retries)
				}
			}
		}
	}
	return 1 + n
}

// validatePolicies checks the policies, the trigger, and that the client
// model can run the sweep's scoring rule.
func (c *Config) validatePolicies() field.List {
	var errs field.List
	if len(c.Policies) > MaxPolicies {
		errs.Add("policies", "at most %d policies", MaxPolicies)
	}
	if len(c.Policies) > 0 {
		errs = append(errs, c.sweptBehaviourEveryPolicyGives()...)
	}
	seen := map[string]int{}
	for i := range c.Policies {
		path := field.Index("policies", i)
		checkName(&errs, field.Join(path, "name"), c.Policies[i].Name, seen, "policies")
		errs = append(errs, c.Policies[i].Behaviour.Validate(path)...)
	}
	if t := c.Trigger; t != nil {
		d := c.Workload.DurationMS
		// Recovery is measured after the trigger (measureGoodputRecovery):
		// against the whole seconds before it, in the arrival window after it.
		first := float64(RecoveryWindows * SeriesWindowMS)
		if !(t.StartMS >= first && t.StartMS < d) {
			errs.Add("trigger.start_ms", "must be a time in the arrival window from %g ms (recovery compares goodput with its level over the whole seconds before the trigger) to before duration_ms (%g)", first, d)
		}
		if !(t.EndMS > t.StartMS && t.EndMS < d) {
			errs.Add("trigger.end_ms", "must be after start_ms and before duration_ms (%g): recovery is measured after it, in the arrival window", d)
		}
	}
	if len(errs) == 0 && c.AnyClients() && c.Rule("metrics.score_until") != ScoreToEnd {
		errs.Add("metrics.score_until", "the client model (timeouts, retries, closed loops) scores every arrival of the run: leave it out or set %q", ScoreToEnd)
	}
	return errs
}

// sweptBehaviourEveryPolicyGives refuses a part's swept behaviour field
// that every policy gives: each policy replaces it, so its results column
// would change nothing. A part's other behaviour fields, given or swept,
// stand beside the policies (a policy keeps the fields it does not give).
func (c *Config) sweptBehaviourEveryPolicyGives() field.List {
	var errs field.List
	check := func(path string, parts []workload.Part) {
		for j := range parts {
			p := &parts[j]
			for _, f := range workload.BehaviourFields() {
				if _, swept := p.Lists[f.Name]; !swept {
					continue
				}
				every := true
				for i := range c.Policies {
					every = every && c.Policies[i].Gives(f.Name)
				}
				if every {
					errs.Add(field.Join(field.Index(path, j), f.Name),
						"is swept, but every policy gives %s, replacing the part's values: leave it out of a policy, or sweep the policies instead", f.Name)
				}
			}
		}
	}
	check("workload.parts", c.Workload.Parts) // a load's parts take no lists
	return errs
}
