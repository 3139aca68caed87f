package deploy_test

import (
	"encoding/json"
	"strings"
	"testing"

	localv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/local_ratelimit/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/encoding/protojson"
)

// envoyFilters decodes an export's YAML strictly into the HTTP connection
// manager's HttpFilter protos: YAML to JSON, then protojson with unknown
// fields refused, the typed_config resolved by its @type.
func envoyFilters(t *testing.T, text string) ([]*hcm.HttpFilter, error) {
	t.Helper()
	var doc []any
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, err
	}
	var out []*hcm.HttpFilter
	for _, entry := range doc {
		js, err := json.Marshal(entry)
		if err != nil {
			return nil, err
		}
		var f hcm.HttpFilter
		if err := (protojson.UnmarshalOptions{DiscardUnknown: false}).Unmarshal(js, &f); err != nil {
			return nil, err
		}
		out = append(out, &f)
	}
	return out, nil
}

// TestEnvoyExportsDecodeStrictlyAndValidate: every Envoy export is one
// http_filters entry that decodes into the filter's proto (the field names
// and types go-control-plane generates from Envoy's API) and passes the
// proto's own validation rules, with the values the rerun gate runs.
func TestEnvoyExportsDecodeStrictlyAndValidate(t *testing.T) {
	t.Parallel()
	for i, e := range exports(t, "envoy") {
		filters, err := envoyFilters(t, e.Text)
		if err != nil {
			t.Fatalf("export %d %s: %v\n%s", i, label(e), err, e.Text)
		}
		if len(filters) != 1 {
			t.Fatalf("export %d: %d filters", i, len(filters))
		}
		f := filters[0]
		if err := f.ValidateAll(); err != nil {
			t.Errorf("export %d: HttpFilter: %v", i, err)
		}
		if f.GetName() != "envoy.filters.http.local_ratelimit" {
			t.Errorf("export %d: filter name %q", i, f.GetName())
		}
		var lr localv3.LocalRateLimit
		if err := f.GetTypedConfig().UnmarshalTo(&lr); err != nil {
			t.Fatalf("export %d: typed_config: %v", i, err)
		}
		if err := lr.ValidateAll(); err != nil {
			t.Errorf("export %d: LocalRateLimit: %v", i, err)
		}
		tb := lr.GetTokenBucket()
		fill := tb.GetFillInterval().AsDuration()
		if fill.Milliseconds() < 50 || fill%1e6 != 0 {
			t.Errorf("export %d: fill_interval %v: Envoy needs whole ms, at least 50", i, fill)
		}
		if n := lr.GetFilterEnabled().GetDefaultValue().GetNumerator(); n != 100 {
			t.Errorf("export %d: filter_enabled %d%%", i, n)
		}
		if n := lr.GetFilterEnforced().GetDefaultValue().GetNumerator(); n != 100 {
			t.Errorf("export %d: filter_enforced %d%%", i, n)
		}
		if e.Rerun != nil {
			want := map[string]float64{"max_tokens": float64(tb.GetMaxTokens()),
				"tokens_per_fill": float64(tb.GetTokensPerFill().GetValue()), "fill_interval_ms": float64(fill.Milliseconds())}
			for name, v := range want {
				if got := e.Rerun.ValuesOf(name)[0]; got != v {
					t.Errorf("export %d: %s %g, rerun %g", i, name, v, got)
				}
			}
		}
	}
}

// TestEnvoyDecodeIsStrict: the decoding refuses what Envoy would, so that
// the test above means something.
func TestEnvoyDecodeIsStrict(t *testing.T) {
	t.Parallel()
	e := exports(t, "envoy")[0]
	cases := map[string]string{
		"unknown field":     strings.Replace(e.Text, "stat_prefix:", "stat_prefixx:", 1),
		"unknown @type":     strings.Replace(e.Text, "v3.LocalRateLimit", "v3.LocalRateLimitt", 1),
		"not a duration":    strings.Replace(e.Text, "fill_interval: ", "fill_interval: x", 1),
		"not a fraction":    strings.Replace(e.Text, "denominator: HUNDRED", "denominator: PERCENT", 1),
		"wrong number type": strings.Replace(e.Text, "max_tokens: ", "max_tokens: -", 1),
	}
	for name, text := range cases {
		if _, err := envoyFilters(t, text); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	// A proto-valid config that breaks Envoy's rules fails Validate.
	bad := strings.Replace(e.Text, "stat_prefix: http_local_rate_limiter", `stat_prefix: ""`, 1)
	filters, err := envoyFilters(t, bad)
	if err != nil {
		t.Fatal(err)
	}
	var lr localv3.LocalRateLimit
	if err := filters[0].GetTypedConfig().UnmarshalTo(&lr); err != nil {
		t.Fatal(err)
	}
	if err := lr.ValidateAll(); err == nil {
		t.Error("an empty stat_prefix validated")
	}
}
