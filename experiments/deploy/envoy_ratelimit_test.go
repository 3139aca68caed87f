package deploy_test

import (
	"bytes"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ratelab/ratelab/experiments/deploy"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// envoyRatelimitRoot mirrors the service's YamlRoot and YamlDescriptor
// (src/config/config_impl.go:21-45 at f2fb157) for the keys the export
// writes; the service's loader knows more, which the export leaves out.
type envoyRatelimitRoot struct {
	Domain      string `yaml:"domain"`
	Descriptors []struct {
		Key       string `yaml:"key"`
		Value     string `yaml:"value"`
		RateLimit *struct {
			RequestsPerUnit uint32 `yaml:"requests_per_unit"`
			Unit            string `yaml:"unit"`
		} `yaml:"rate_limit"`
	} `yaml:"descriptors"`
}

// The rate limit service's export decodes strictly as its config, one
// descriptor per limit with the unit's name, names what Envoy must send
// and #427, and reruns as the envoy-ratelimit gate; a fixed window of a
// unit's length deploys, another does not.
func TestEnvoyRatelimitExport(t *testing.T) {
	for _, c := range []struct {
		point     *deploy.Point
		units     []string
		limits    []uint32
		key       string
		notes     []string
		exact     bool
		refuseMsg string
	}{
		{pt(limiter.TypeEnvoyRatelimit, limiter.Params{"requests_per_unit": 10, "requests_per_unit_2": 100}), []string{"second", "minute"}, []uint32{10, 100}, "generic_key",
			[]string{"two rate_limits entries, generic_key actions ratelab-1 and ratelab-2", "even one the other descriptor refuses (#427)"}, true, ""},
		{pt(limiter.TypeEnvoyRatelimit, limiter.Params{"requests_per_unit": 5, "unit_s": 3600}, "descriptor", "client", "stop_increment_when_over_limit", "true"), []string{"hour"}, []uint32{5}, "remote_address",
			[]string{"a remote_address action", "STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT=true"}, true, ""},
		{pt(limiter.TypeFixedWindow, limiter.Params{"limit": 50, "window_ms": 60000}), []string{"minute"}, []uint32{50}, "generic_key",
			[]string{"multiples of a minute since 1970"}, false, ""},
		{pt(limiter.TypeFixedWindow, limiter.Params{"limit": 50, "window_ms": 500}), nil, nil, "", nil, false, "window_ms 500 is none of them"},
	} {
		e, err := deploy.Render("envoy-ratelimit", c.point)
		if c.refuseMsg != "" {
			if err == nil || !strings.Contains(err.Error(), c.refuseMsg) {
				t.Errorf("%v: err %v, want %q", c.point.Params, err, c.refuseMsg)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.point.Params, err)
		}
		var root envoyRatelimitRoot
		dec := yaml.NewDecoder(bytes.NewReader([]byte(e.Text)))
		dec.KnownFields(true)
		if err := dec.Decode(&root); err != nil {
			t.Fatalf("%v: %v\n%s", c.point.Params, err, e.Text)
		}
		if root.Domain != "ratelab" || len(root.Descriptors) != len(c.units) {
			t.Fatalf("%v: %+v", c.point.Params, root)
		}
		for i, d := range root.Descriptors {
			if d.Key != c.key || d.RateLimit == nil || d.RateLimit.Unit != c.units[i] || d.RateLimit.RequestsPerUnit != c.limits[i] {
				t.Errorf("%v: descriptor %d %+v, want %s, %d per %s", c.point.Params, i, d, c.key, c.limits[i], c.units[i])
			}
		}
		notes := strings.Join(e.Notes, "\n")
		for _, w := range c.notes {
			if !strings.Contains(notes, w) {
				t.Errorf("%v: notes\n%s\nlack %q", c.point.Params, notes, w)
			}
		}
		if e.Exact != c.exact || !c.exact && (e.Rerun == nil || e.Rerun.Type != limiter.TypeEnvoyRatelimit) {
			t.Errorf("%v: exact %v, rerun %v", c.point.Params, e.Exact, e.Rerun)
		}
	}
}
