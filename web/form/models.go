package form

import (
	"encoding/json"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/server"
)

// The form's inputs of the seed lab's models: a select per server setting
// and per rule (the engine's tables: server.Options, experiments.Rules),
// the door's bound, and the servers, loads, classes, class draw, SLO,
// client policies and trigger as one JSON object ("models"), as a preset
// gives them.

// ModelsKey is the input key of the JSON object of the config's
// modelSections.
const ModelsKey = "models"

// models is the JSON object of the "models" input.
type models struct {
	Servers   []experiments.ServerVariant `json:"servers,omitempty"`
	Loads     []experiments.Load          `json:"loads,omitempty"`
	Classes   []experiments.Class         `json:"classes,omitempty"`
	ClassDraw *experiments.ClassDraw      `json:"class_draw,omitempty"`
	SLO       *experiments.SLO            `json:"slo,omitempty"`
	Policies  []experiments.ClientPolicy  `json:"policies,omitempty"`
	Trigger   *experiments.TriggerSpec    `json:"trigger,omitempty"`
	Decision  *experiments.Decision       `json:"decision,omitempty"`
	// ServerShape is the base server's knee and degrade events.
	ServerShape *server.Shape `json:"server_shape,omitempty"`
}

// modelSections are the config keys the "models" input holds.
var modelSections = []string{"servers", "loads", "classes", "class_draw", "slo", "policies", "trigger", "decision", "server_shape"}

// ServerOptionKey is the input key of a server setting: "server.door".
func ServerOptionKey(name string) string { return "server." + name }

// BoundKey is the input key of the door's bound.
const BoundKey = "server.bound"

// settingKeys lists the keys of the server settings, the bound and the rules.
func settingKeys() []string {
	var keys []string
	for _, o := range server.Options() {
		keys = append(keys, ServerOptionKey(o.Name))
	}
	keys = append(keys, BoundKey)
	for _, n := range server.Numbers() {
		keys = append(keys, ServerOptionKey(n.Name))
	}
	for _, r := range experiments.Rules() {
		keys = append(keys, r.Path)
	}
	return keys
}

// Setting is the text of a server setting, the bound or a rule input.
func (f *Sweep) Setting(key string) string { return f.Settings[key] }

// ChoiceNames are the words of a server option or a rule, the default first.
func ChoiceNames(key string) []string {
	var out []string
	for _, o := range server.Options() {
		if ServerOptionKey(o.Name) == key {
			for _, c := range o.Choices {
				out = append(out, c.Name)
			}
		}
	}
	for _, r := range experiments.Rules() {
		if r.Path == key {
			for _, c := range r.Choices {
				out = append(out, c.Name)
			}
		}
	}
	return out
}

// fillModels fills the model inputs from a config: each setting as given
// (empty when the config leaves it to its default).
func (f *Sweep) fillModels(cfg *experiments.Config) {
	f.Settings = map[string]string{}
	for _, o := range server.Options() {
		if v := cfg.Server.RawOption(o.Name); v != "" {
			f.Settings[ServerOptionKey(o.Name)] = v
		}
	}
	if cfg.Server.Bound != 0 {
		f.Settings[BoundKey] = serverText(&cfg.Server, "bound", float64(cfg.Server.Bound))
	}
	for _, n := range server.Numbers() {
		if v := n.Get(&cfg.Server); v != 0 {
			f.Settings[ServerOptionKey(n.Name)] = serverText(&cfg.Server, n.Name, v)
		}
	}
	for _, r := range experiments.Rules() {
		if v := cfg.RawRule(r.Path); v != "" {
			f.Settings[r.Path] = v
		}
	}
	m := models{Servers: cfg.Servers, Loads: cfg.Loads, Classes: cfg.Classes, ClassDraw: cfg.ClassDraw, SLO: cfg.SLO, Policies: cfg.Policies, Trigger: cfg.Trigger, Decision: cfg.Decision,
		ServerShape: cfg.Server.ShapeOf()}
	if b, err := json.MarshalIndent(m, "", "  "); err == nil && string(b) != "{}" {
		f.Models = string(b)
	}
}

// applyModels puts the model inputs into the config document; the engine's
// decoder checks them.
func (f *Sweep) applyModels(cfg *experiments.Config) {
	for _, o := range server.Options() {
		cfg.Server.SetOption(o.Name, strings.TrimSpace(f.Setting(ServerOptionKey(o.Name))))
	}
	// The bound and the distribution's settings sweep (their rows say
	// Sweep): one number, or a list or range, as the other server fields.
	cfg.Server.Bound = int(f.serverValues(&cfg.Server, "bound", f.Setting(BoundKey)))
	for _, n := range server.Numbers() {
		if text := strings.TrimSpace(f.Setting(ServerOptionKey(n.Name))); text != "" {
			n.Set(&cfg.Server, f.serverValues(&cfg.Server, n.Name, text))
		}
	}
	for _, r := range experiments.Rules() {
		cfg.SetRule(r.Path, strings.TrimSpace(f.Setting(r.Path)))
	}
	if s := strings.TrimSpace(f.Models); s != "" {
		// The engine's reader: its errors have the paths a config
		// document's have (policies[0].jitter), all on this input.
		var m experiments.Config
		if errs := document.DecodeModels(&m, []byte(s)); len(errs) > 0 {
			for _, e := range errs {
				if e.Path == "" || Key(e.Path) != ModelsKey {
					f.AddError(ModelsKey, ModelsKey, "must be a JSON object of "+strings.Join(modelSections, ", ")+": "+strings.TrimSpace(e.Path+" "+e.Msg))
					continue
				}
				f.AddError(ModelsKey, e.Path, e.Msg)
			}
			return
		}
		cfg.Servers, cfg.Loads, cfg.Classes, cfg.ClassDraw, cfg.SLO = m.Servers, m.Loads, m.Classes, m.ClassDraw, m.SLO
		cfg.Policies, cfg.Trigger, cfg.Decision = m.Policies, m.Trigger, m.Decision
		cfg.Server.SetShape(m.Server.ShapeOf())
	}
}
