package shadow_test

import (
	"math"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/shadow"
)

// A replay's document: strict, normalized, told from a sweep's config,
// and every bad field named by its key.
func TestSpec(t *testing.T) {
	t.Parallel()
	conf := "http {\n log_format timed '$remote_addr $msec $request_time $status';\n limit_req_zone $binary_remote_addr zone=z:1m rate=5r/s;\n limit_req zone=z;\n}\n"
	sp := &shadow.Spec{Log: "day.log", LogFormat: "timed", Config: conf} // max_bad_pct 0: none may be bad
	sp.Normalize()
	doc := sp.JSON()
	back, err := shadow.DecodeSpec(doc)
	if err != nil || string(back.JSON()) != string(doc) {
		t.Fatalf("%v\n%s", err, back.JSON())
	}
	if _, err := shadow.DecodeSpec([]byte(`{"shadow":{"log":"a","burst":3}}`)); err == nil || !strings.Contains(err.Error(), `unknown field "burst"`) {
		t.Errorf("unknown field: %v", err)
	}
	opt, errs := back.Prepare()
	if len(errs) > 0 || opt.Import == nil || !opt.WhatIf || opt.Log.Format == nil || !opt.Log.Format.Logs("msec") || opt.MaxBadPct != math.SmallestNonzeroFloat64 {
		t.Fatalf("%v %+v", errs, opt)
	}
	bad := &shadow.Spec{Format: "iis", Config: conf, LogFormat: "$remote_addr", Key: "$nope", Status: "7xx", From: "x", MaxBadPct: 200, ReorderWindowMS: -1}
	bad.Normalize()
	_, errs = bad.Prepare()
	var paths []string
	for _, e := range errs {
		paths = append(paths, e.Path)
	}
	if got := strings.Join(paths, " "); got != "log format status from reorder_window_ms max_bad_pct" {
		t.Errorf("paths %q: %v", got, errs)
	}
	for want, cf := range map[string]string{"envoy": "name: envoy.filters.http.local_ratelimit", "traefik": "http:\n  middlewares:\n    m:\n      rateLimit:\n        average: 5", "nginx": conf} {
		if got := shadow.DetectConfigFormat(cf); got != want {
			t.Errorf("%s detected as %s", want, got)
		}
	}
}
