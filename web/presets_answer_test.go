package web

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/web/charts"
)

// presetsWithObjectives are the presets issue 22 names as stating a
// target: the seed posts' deadline, slo-load-control's SLO, flash-crowd's
// recovery, the fairness presets' Jain's index, delay-budget's bound.
var presetsWithObjectives = []string{"admission-control", "token-vs-leaky", "load-shedding", "collapse", "slo-load-control",
	"flash-crowd", "heterogeneous", "synchronized", "poisson-120", "delay-budget"}

// TestPresetPagesOpenOnAnswer: every preset carrying objectives (at least
// those named above) runs in the web lab (presetRuns, the runs
// TestBrowserPresetPages visits) and its page opens on the
// answer, with Deploy and the results table on the recommended setting's
// point (the best overall setting in its binding scenario), named in the
// answer's lead.
func TestPresetPagesOpenOnAnswer(t *testing.T) {
	t.Parallel()
	l := presetLab(t)
	var with []string
	for _, p := range presets.All() {
		cfg, err := presets.Config(p.Name)
		if err != nil {
			t.Fatal(err)
		}
		if len(cfg.Objectives) > 0 {
			with = append(with, p.Name)
		}
	}
	for _, name := range presetsWithObjectives {
		if !slices.Contains(with, name) {
			t.Errorf("preset %s carries no objectives", name)
		}
	}
	deployed := regexp.MustCompile(`<option value="(\d+)" selected>`)
	for _, name := range with {
		id := presetRunID(t, name)
		res, err := l.store.Result(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		want := charts.RecommendedPoint(charts.NewView(res, -1).Answer)
		body := l.get("/runs/" + id).Body.String()
		if !strings.Contains(body, `id="answer"`) || want < 0 {
			t.Errorf("%s: the page opens on no answer", name)
			continue
		}
		if !strings.Contains(body, `id="answer-best" data-point="`+strconv.Itoa(want)+`"`) {
			t.Errorf("%s: the answer does not lead with point %d", name, want)
		}
		deploy := body[strings.Index(body, `id="deploy-point"`):]
		if m := deployed.FindStringSubmatch(deploy); m == nil || m[1] != strconv.Itoa(want) {
			t.Errorf("%s: Deploy opens on %v, want the recommended point %d", name, m, want)
		}
		if !strings.Contains(body, `title="Deploy and Over time show it">`+strconv.Itoa(want)+` shown</span>`) {
			t.Errorf("%s: the results table does not show point %d over time", name, want)
		}
	}
}
