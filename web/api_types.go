package web

import (
	"net/http"

	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/workload"
)

// APITypes is GET /api/types: the engine's type tables, the reference of
// what a config document's limiters and workload parts take.
type APITypes struct {
	Limiters []APILimiterType `json:"limiters"`
	Parts    []APIPartType    `json:"parts"`
}

// APILimiterType is one gate type of the registry.
type APILimiterType struct {
	Type    string      `json:"type"`
	Model   string      `json:"model"`
	Params  []APIParam  `json:"params"`
	Options []APIOption `json:"options,omitempty"`
	// Stages: the type holds stages (a chain) instead of parameters.
	Stages bool `json:"stages,omitempty"`
	// Stage: the type may be a stage of a chain.
	Stage bool `json:"stage"`
	// RetryAfter: what the gate answers a refused client as its
	// Retry-After (limiter.Kind.RetryAfter); empty when it gives none.
	RetryAfter string `json:"retry_after,omitempty"`
}

// APIParam is one parameter of a gate type: a number, or a list of numbers
// to sweep.
type APIParam struct {
	Name    string  `json:"name"`
	Unit    string  `json:"unit"`
	Integer bool    `json:"integer"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	Default float64 `json:"default,omitempty"`
	// Admits says which way of the values admits more requests: "larger",
	// "smaller" or "none" (the recommendation prefers the less permissive
	// setting on a tie; limiter.Param.Admits).
	Admits string `json:"admits"`
	Doc    string `json:"doc"`
}

// APIOption is one word-valued setting of a gate type; the first choice is
// the default.
type APIOption struct {
	Name    string   `json:"name"`
	Choices []string `json:"choices"`
	Doc     string   `json:"doc"`
}

// APIPartType is one workload part type.
type APIPartType struct {
	Type   string         `json:"type"`
	Model  string         `json:"model"`
	Fields []APIPartField `json:"fields"`
}

// APIPartField is one field of a part type.
type APIPartField struct {
	Name    string   `json:"name"`
	Input   string   `json:"input"`
	Unit    string   `json:"unit,omitempty"`
	Choices []string `json:"choices,omitempty"`
	Line    string   `json:"line,omitempty"`
	Default string   `json:"default,omitempty"`
	Doc     string   `json:"doc"`
}

// apiTypes answers GET /api/types from the registries.
func (s *Server) apiTypes(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, typesDoc())
}

func typesDoc() APITypes {
	out := APITypes{Limiters: []APILimiterType{}, Parts: []APIPartType{}}
	for _, k := range limiter.Kinds() {
		t := APILimiterType{Type: string(k.Type), Model: k.Model, Params: []APIParam{}, Stages: k.Compound(), Stage: k.Stage, RetryAfter: k.RetryAfter}
		for _, p := range k.Params {
			t.Params = append(t.Params, APIParam{Name: p.Name, Unit: p.Unit, Integer: p.Integer, Min: p.Min, Max: p.Max, Default: p.Default, Admits: string(p.Admits), Doc: p.Doc})
		}
		for _, o := range k.Options {
			t.Options = append(t.Options, APIOption{Name: o.Name, Choices: o.Choices, Doc: o.Doc})
		}
		out.Limiters = append(out.Limiters, t)
	}
	for _, k := range workload.Kinds() {
		t := APIPartType{Type: string(k.Type), Model: k.Model}
		for _, f := range k.Fields {
			t.Fields = append(t.Fields, APIPartField{Name: f.Name, Input: string(f.Input), Unit: f.Unit, Choices: f.Choices, Line: f.Line, Default: f.Default, Doc: f.Doc})
		}
		out.Parts = append(out.Parts, t)
	}
	return out
}
