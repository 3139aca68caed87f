package experiments_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/internal/enginetest"
)

// policyOverDoc has a part with its own behaviour (timeout 50 ms, 3
// retries 20 ms apart) and PART and POLICIES to fill in.
const policyOverDoc = `{"version": 1, "seed": 3,POLICIES
  "workload": {"duration_ms": 3000, "parts": [{"type": "poisson", "rate_rps": 220, PART}]},
  "server": {"service_ms": 4},
  "limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": 5}]}`

func policyOver(part, policies string) string {
	if policies != "" {
		policies = ` "policies": ` + policies + `,`
	}
	return strings.NewReplacer("PART", part, "POLICIES", policies).Replace(policyOverDoc)
}

// resultsByPolicy is results.csv's rows as header → cell, by policy ("" without policies).
func resultsByPolicy(t *testing.T, doc string) map[string]map[string]string {
	t.Helper()
	rows := enginetest.CSVRows(t, enginetest.FileOf(t, enginetest.RunFiles(t, enginetest.Decode(t, doc), 2), experiments.FileResults))
	out := map[string]map[string]string{}
	for _, row := range rows[1:] {
		m := map[string]string{}
		for i, h := range rows[0] {
			m[h] = row[i]
		}
		out[m["policy"]] = m
	}
	return out
}

// A policy gives exactly the fields its document names, even 0: "retries": 0
// over a part with 3 retries runs without retries, and a policy silent on
// timeout_ms keeps the part's timeout. Each policy's point equals the
// config without policies whose part has the behaviour it means.
func TestPolicyOverridesTheFieldsItGives(t *testing.T) {
	const part = `"timeout_ms": 50, "retries": 3, "backoff_ms": 20`
	got := resultsByPolicy(t, policyOver(part, `[{"name": "off", "retries": 0}, {"name": "slower", "backoff_ms": 60}, {"name": "no-timeout", "timeout_ms": 0, "retries": 0}]`))
	cases := []struct{ policy, means string }{
		{"off", `"timeout_ms": 50, "backoff_ms": 20`},
		{"slower", `"timeout_ms": 50, "retries": 3, "backoff_ms": 60`},
		{"no-timeout", `"backoff_ms": 20`},
	}
	for _, c := range cases {
		want := resultsByPolicy(t, policyOver(c.means, ""))[""]
		g := got[c.policy]
		if g == nil || want == nil {
			t.Fatalf("%s: no row (%v)", c.policy, got)
		}
		for h, v := range want {
			if h != "point" && g[h] != v {
				t.Errorf("policy %s: %s = %s, the part with %s gives %s", c.policy, h, g[h], c.means, v)
			}
		}
	}
	// The policy without retries makes one attempt a request; the one that
	// keeps the part's retries makes more.
	if got["off"]["amplification"] != "1.0000" || got["slower"]["amplification"] == "1.0000" {
		t.Errorf("amplification: off %s, slower %s", got["off"]["amplification"], got["slower"]["amplification"])
	}
	// timeout_ms 0 given turns the part's timeout off: nothing is abandoned.
	if got["no-timeout"]["attempts"] != got["no-timeout"]["arrivals"] {
		t.Errorf("no-timeout: %s attempts of %s arrivals", got["no-timeout"]["attempts"], got["no-timeout"]["arrivals"])
	}
}

// A given zero stays in the canonical document (manifest, config_sha256)
// and survives a decode of it; a policy without zero-valued fields writes
// what it always wrote.
func TestPolicyGivenZeroRoundTrips(t *testing.T) {
	cfg := enginetest.Decode(t, policyOver(`"retries": 3`, `[{"name": "off", "retries": 0, "jitter": "none"}, {"name": "on", "timeout_ms": 200}]`))
	doc := cfg.JSON()
	for _, want := range []string{`"name": "off",
      "retries": 0,
      "jitter": "none"
    }`, `"name": "on",
      "timeout_ms": 200
    }`} {
		if !bytes.Contains(doc, []byte(want)) {
			t.Errorf("document lacks %s:\n%s", want, doc)
		}
	}
	again := enginetest.Decode(t, string(doc))
	if !bytes.Equal(again.JSON(), doc) || again.SHA256() != cfg.SHA256() {
		t.Errorf("round trip changed the document:\n%s", again.JSON())
	}
	if p := again.Policies[0]; !p.Gives("retries") || !p.Gives("jitter") || p.Gives("timeout_ms") {
		t.Errorf("policy off gives %v", p.Given)
	}
	if !slices.Equal(again.Policies[1].Given, []string{"timeout_ms"}) {
		t.Errorf("policy on gives %v", again.Policies[1].Given)
	}
	// encoding/json matches keys in any case: so does what a policy gives.
	odd := enginetest.Decode(t, policyOver(`"retries": 3`, `[{"name": "off", "RETRIES": 0}]`))
	if !odd.Policies[0].Gives("retries") || !bytes.Contains(odd.JSON(), []byte(`"retries": 0`)) {
		t.Errorf("RETRIES: 0 is not given: %v", odd.Policies[0].Given)
	}
}

// A series report column picks its point's client policy by name: each
// policy's column is that policy's point's series (released_rps equals
// series.csv's), and without policy the first policy's.
func TestSeriesReportPicksAPolicy(t *testing.T) {
	doc := strings.Replace(policyOver(`"timeout_ms": 50`, `[{"name": "once", "retries": 0}, {"name": "thrice", "retries": 3, "backoff_ms": 20}]`),
		`"limiters"`, `"reports": [{"type": "series", "file": "by-policy.csv", "columns": [
    {"header": "t", "value": "window_start_ms"},
    {"header": "first", "value": "released_rps", "limiter": 0},
    {"header": "once", "value": "released_rps", "limiter": 0, "policy": "once"},
    {"header": "thrice", "value": "released_rps", "limiter": 0, "policy": "thrice"},
    {"header": "offered_thrice", "value": "offered_rps", "policy": "thrice"}]}],
  "limiters"`, 1)
	files := enginetest.RunFiles(t, enginetest.Decode(t, doc), 2)
	rep := enginetest.CSVRows(t, enginetest.FileOf(t, files, "by-policy.csv"))
	series := enginetest.CSVRows(t, enginetest.FileOf(t, files, experiments.FileSeries))
	// series.csv: point, limiter, window_start_ms, offered_rps, released_rps, ...
	byPoint := map[string][][]string{}
	for _, row := range series[1:] {
		byPoint[row[0]] = append(byPoint[row[0]], row)
	}
	if len(byPoint) != 2 || len(rep) < 10 {
		t.Fatalf("%d points in series.csv, %d report rows", len(byPoint), len(rep))
	}
	differ := false
	for k, row := range rep[1:] {
		once, thrice := byPoint["0"][k], byPoint["1"][k]
		if row[1] != once[4] || row[2] != once[4] || row[3] != thrice[4] || row[4] != thrice[3] {
			t.Fatalf("window %d: report %v, policy once %v, thrice %v", k, row, once, thrice)
		}
		differ = differ || row[2] != row[3]
	}
	if !differ {
		t.Error("the two policies' series are the same: the test shows nothing")
	}
	bad := strings.Replace(doc, `"policy": "thrice"}]}]`, `"policy": "twice"}]}]`, 1)
	if _, err := document.DecodeConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), `reports[0].columns[4].policy: "twice" is not a policy: must name one of the policies (once, thrice)`) {
		t.Errorf("an unknown policy: %v", err)
	}
	noPolicies := `{"version": 1, "workload": {"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 10}]},
  "limiters": [{"type": "none"}], "reports": [{"type": "series", "file": "s.csv", "columns": [{"header": "r", "value": "released_rps", "limiter": 0, "policy": "p"}]}]}`
	if _, err := document.DecodeConfig([]byte(noPolicies)); err == nil || !strings.Contains(err.Error(), "reports[0].columns[0].policy: picks a client policy by name, and the config has no policies") {
		t.Errorf("policy without policies: %v", err)
	}
	points := `{"version": 1, "workload": {"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 10}]},
  "limiters": [{"type": "none"}], "policies": [{"name": "p", "retries": 1}], "reports": [{"type": "points", "file": "s.csv", "columns": [{"header": "g", "value": "goodput_rps", "policy": "p"}]}]}`
	if _, err := document.DecodeConfig([]byte(points)); err == nil || !strings.Contains(err.Error(), "reports[0].columns[0]: limiter, swept, server, load and policy pick a point in series reports only") {
		t.Errorf("policy in a points report: %v", err)
	}
}
