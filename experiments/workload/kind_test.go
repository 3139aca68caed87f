package workload_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/workload"
)

// pulseKind is a part type the lab does not have: one request from one
// client every 1000/rate_rps ms from start_ms, drawn with the generator's
// exported helpers only.
func pulseKind() *workload.Kind {
	constant, _ := workload.LookupKind(workload.Constant)
	client, _ := constant.Field("client")
	rate, _ := constant.Field("rate_rps")
	start, _ := constant.Field("start_ms")
	return &workload.Kind{
		Type:   "pulse",
		Label:  "pulse",
		Model:  "one client paced at rate_rps from start_ms (a test type)",
		Fields: []workload.Field{*client, *rate, *start},
		Validate: func(p *workload.Part, path string, _ float64) field.List {
			var errs field.List
			if p.RateRPS <= 0 || p.RateRPS > 1000 {
				errs.Add(field.Join(path, "rate_rps"), "pulses at more than 0 and at most 1000 requests/s")
			}
			return errs
		},
		Expected: func(p *workload.Part, w float64) float64 { return p.RateRPS * (w - p.StartMS) / 1000 },
		Generate: func(g *workload.Generator, p *workload.Part) error {
			c := g.PartClients(p)[0]
			g.StartRun()
			g.Paced(p.StartMS, g.WindowMS(), p.RateRPS, c)
			return nil
		},
		Describe: func(p *workload.Part) string { return "pulse" },
	}
}

// TestRegisteredKindNeedsNoOtherEdit: a part type registered from outside
// the package is known to the field check, validation, the config decoder
// and the generator through its row alone, and unregistering it forgets it
// everywhere again.
func TestRegisteredKindNeedsNoOtherEdit(t *testing.T) {
	good := json.RawMessage(`{"type": "pulse", "client": "p", "rate_rps": 10, "start_ms": 100}`)
	foreign := json.RawMessage(`{"type": "pulse", "rate_rps": 10, "segments": []}`)
	spec := workload.Spec{DurationMS: 1000, Parts: []workload.Part{{Type: "pulse", Client: "p", RateRPS: 10, StartMS: 100}}}
	config := `{"version": 1, "workload": {"duration_ms": 1000, "parts": [` + string(good) + `]}, "limiters": [{"type": "none"}]}`

	unknown := func(what string) {
		t.Helper()
		if errs := workload.CheckFields("p", good); len(errs) != 1 || !strings.Contains(errs[0].Msg, `unknown part type "pulse"`) {
			t.Errorf("%s: CheckFields = %v, want an unknown part type", what, errs)
		}
		if errs := spec.Validate("workload"); len(errs) != 1 || !strings.Contains(errs[0].Msg, `unknown part type "pulse"`) {
			t.Errorf("%s: Validate = %v, want an unknown part type", what, errs)
		}
		if _, ok := workload.LookupKind("pulse"); ok || slices.Contains(workload.PartTypes(), "pulse") {
			t.Errorf("%s: pulse is in the registry", what)
		}
	}
	unknown("before Register")

	unregister := workload.Register(pulseKind())
	if errs := workload.CheckFields("p", good); len(errs) > 0 {
		t.Errorf("CheckFields refuses a pulse part: %v", errs)
	}
	if errs := workload.CheckFields("p", foreign); len(errs) != 1 || errs[0].Path != "p.segments" ||
		errs[0].Msg != `is not a field of a "pulse" part (fields: [client rate_rps start_ms])` {
		t.Errorf("CheckFields of a pulse part with segments = %v", errs)
	}
	if errs := spec.Validate("workload"); len(errs) > 0 {
		t.Errorf("Validate refuses a pulse part: %v", errs)
	}
	bad := workload.Spec{DurationMS: 1000, Parts: []workload.Part{{Type: "pulse", RateRPS: 5000}}}
	if errs := bad.Validate("workload"); len(errs) != 1 || errs[0].Path != "workload.parts[0].rate_rps" {
		t.Errorf("Validate of a 5000 rps pulse = %v, want the kind's rate_rps error", errs)
	}
	if got := workload.TypesWith("start_ms"); !slices.Contains(got, "pulse") {
		t.Errorf("TypesWith(start_ms) = %v, want pulse among them", got)
	}
	cfg, err := document.DecodeConfig([]byte(config))
	if err != nil {
		t.Fatalf("DecodeConfig refuses a pulse part: %v", err)
	}
	a, err := workload.Generate(&cfg.Workload, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{100, 200, 300, 400, 500, 600, 700, 800, 900}; !slices.Equal(a.T, want) || a.Clients[0].Name != "p" {
		t.Errorf("pulse arrivals %v from %+v, want %v from p", a.T, a.Clients, want)
	}
	if got := cfg.Workload.Parts[0].String(); got != "pulse" {
		t.Errorf("String() = %q, want the kind's description", got)
	}

	unregister()
	unknown("after unregister")
	if _, err := document.DecodeConfig([]byte(config)); err == nil {
		t.Error("DecodeConfig still takes a pulse part after unregister")
	}
}

func TestRegisterRefusesADuplicateOrIncompleteKind(t *testing.T) {
	for name, k := range map[string]*workload.Kind{
		"duplicate":   {Type: workload.Constant, Generate: pulseKind().Generate},
		"no Generate": {Type: "pulse"},
		"no type":     {Generate: pulseKind().Generate},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Register did not panic", name)
				}
			}()
			workload.Register(k)()
		}()
	}
	if got := len(workload.PartTypes()); got != 8 {
		t.Errorf("%d part types after refused registrations, want 8", got)
	}
}

// TestKindsAreComplete: every built-in row says what the form and the docs
// need, accepts only fields a Part decodes, and has every function.
func TestKindsAreComplete(t *testing.T) {
	keys := map[string]bool{}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[workload.Part]()) {
		keys[strings.Split(f.Tag.Get("json"), ",")[0]] = true
	}
	for _, k := range workload.Kinds() {
		if k.Label == "" || k.Model == "" || len(k.Fields) == 0 {
			t.Errorf("%s: label %q, model %q, %d fields", k.Type, k.Label, k.Model, len(k.Fields))
		}
		if k.Validate == nil || k.Expected == nil || k.Generate == nil || k.Describe == nil {
			t.Errorf("%s: a function of the row is missing", k.Type)
		}
		for _, f := range k.Fields {
			if !keys[f.Name] || f.Name == "type" {
				t.Errorf("%s: field %q is not a key of a part", k.Type, f.Name)
			}
			if f.Label == "" || f.Input == "" || f.Doc == "" {
				t.Errorf("%s.%s: label %q, input %q, doc %q", k.Type, f.Name, f.Label, f.Input, f.Doc)
			}
			switch f.Input {
			case workload.InputChoice:
				if len(f.Choices) == 0 || !slices.Contains(f.Choices, f.Default) {
					t.Errorf("%s.%s: choices %v, default %q", k.Type, f.Name, f.Choices, f.Default)
				}
			case workload.InputLines, workload.InputCSV:
				if f.Line == "" {
					t.Errorf("%s.%s: no line format", k.Type, f.Name)
				}
			}
			if !k.Has(f.Name) {
				t.Errorf("%s: Has(%q) is false", k.Type, f.Name)
			}
		}
		if k.Has("type") || k.Has("nosuch") {
			t.Errorf("%s: Has accepts a key it does not list", k.Type)
		}
	}
}
