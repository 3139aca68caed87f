// Package presets holds ready-made sweeps: ordinary config documents,
// embedded, run through the same code path as a user's config.
package presets

import (
	"embed"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
)

//go:embed *.json
var files embed.FS

// Preset is one embedded config.
type Preset struct {
	Name    string
	Summary string // first sentence of the description
	JSON    []byte // the document as stored
}

// All lists the presets by name.
func All() []Preset {
	entries, err := files.ReadDir(".")
	if err != nil {
		panic(err) // embedded: cannot fail
	}
	var out []Preset
	for _, e := range entries {
		p, err := Get(strings.TrimSuffix(e.Name(), ".json"))
		if err != nil {
			panic(err) // a broken preset is a build bug; TestPresets catches it
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Preset) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Names lists the preset names.
func Names() []string {
	var names []string
	for _, p := range All() {
		names = append(names, p.Name)
	}
	return names
}

// Get returns one preset by name.
func Get(name string) (Preset, error) {
	data, err := files.ReadFile(path.Clean(name) + ".json")
	if err != nil {
		return Preset{}, fmt.Errorf("no preset %q (presets: %s)", name, strings.Join(names(), ", "))
	}
	cfg, err := document.DecodeConfig(data)
	if err != nil {
		return Preset{}, fmt.Errorf("preset %s: %w", name, err)
	}
	summary, _, _ := strings.Cut(cfg.Description, ". ")
	return Preset{Name: name, Summary: strings.TrimSuffix(summary, "."), JSON: data}, nil
}

// Config decodes a preset.
func Config(name string) (*experiments.Config, error) {
	p, err := Get(name)
	if err != nil {
		return nil, err
	}
	return document.DecodeConfig(p.JSON)
}

func names() []string {
	entries, _ := files.ReadDir(".")
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".json"))
	}
	return out
}
