package experiments_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
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
	rows := csvRows(t, fileOf(t, runFiles(t, decode(t, doc), 2), experiments.FileResults))
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
	cfg := decode(t, policyOver(`"retries": 3`, `[{"name": "off", "retries": 0, "jitter": "none"}, {"name": "on", "timeout_ms": 200}]`))
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
	again := decode(t, string(doc))
	if !bytes.Equal(again.JSON(), doc) || again.SHA256() != cfg.SHA256() {
		t.Errorf("round trip changed the document:\n%s", again.JSON())
	}
	if p := again.Policies[0]; !p.Gives("retries") || !p.Gives("jitter") || p.Gives("timeout_ms") {
		t.Errorf("policy off gives %v", p.Given)
	}
	if !slices.Equal(again.Policies[1].Given, []string{"timeout_ms"}) {
		t.Errorf("policy on gives %v", again.Policies[1].Given)
	}
}
