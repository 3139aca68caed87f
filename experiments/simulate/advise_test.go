package simulate_test

import (
	"encoding/json"
	"maps"
	"math"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/limiter"
)

// retryAfterConfig runs the limiters (JSON objects) under two client
// policies, one ignoring the gate's Retry-After and one honouring it: a
// Poisson client at 80 rps for 10 s, retrying a refusal up to 3 times
// after 1 ms, against gates of about 100 rps with small bursts, which
// refuse the clumps of a Poisson stream.
func retryAfterConfig(limiters string) string {
	return `{"version":1,"seed":7,
		"workload":{"duration_ms":10000,"parts":[{"type":"poisson","rate_rps":80,"retries":3,"backoff_ms":1}]},
		"server":{"workers":4,"service_ms":5,"deadline_ms":1000},
		"policies":[{"name":"ignore","retry_after":"ignore"},{"name":"honour","retry_after":"honour"}],
		"limiters":[` + limiters + `]}`
}

// TestHonouringRetryAfterWithLibraryGates: behind every gate that gives a
// Retry-After (the library gates, the split buckets, the chain), clients
// that honour it retry when the gate admits again instead of after their
// 1 ms backoff, so a smaller share of their retries is refused and more
// of their requests get through: the client model asks the gate (limiter.Advisor).
func TestHonouringRetryAfterWithLibraryGates(t *testing.T) {
	gates := []string{
		`{"type":"x-time-rate","rate_rps":100,"burst":2}`,
		`{"type":"x-time-rate","name":"x-time-rate reserve","mode":"reserve","rate_rps":100,"burst":2,"max_wait_ms":5}`,
		`{"type":"redis-rate","limit":100,"burst":2}`,
		`{"type":"nginx-limit-req","rate_rps":100,"burst":2,"nodelay":"on"}`,
		`{"type":"envoy-local-ratelimit","max_tokens":5,"tokens_per_fill":5,"fill_interval_ms":50}`,
		`{"type":"envoy-local-ratelimit","name":"envoy atomic","token_bucket":"atomic","max_tokens":5,"tokens_per_fill":5,"fill_interval_ms":50}`,
		`{"type":"guava-smooth-bursty","rate_rps":100,"max_burst_ms":20,"timeout_ms":0}`,
		`{"type":"guava-smooth-warming-up","rate_rps":100,"warmup_ms":100,"timeout_ms":0}`,
		`{"type":"resilience4j","limit_for_period":5,"limit_refresh_period_ms":50,"timeout_ms":0}`,
		`{"type":"per-client-token-bucket","rate_rps":100,"burst":2}`,
		`{"type":"hierarchical-token-bucket","rate_rps":100,"burst":2}`,
		`{"type":"dual-token-bucket","rate_rps":100,"burst":2,"peak_rps":200}`,
		`{"type":"chain","stages":[{"type":"token-bucket","rate_rps":150,"burst":2},{"type":"x-time-rate","rate_rps":100,"burst":2}]}`,
	}
	res := runConfig(t, retryAfterConfig(strings.Join(gates, ",")))
	type pair struct{ ignore, honour *experiments.Point }
	by := map[string]*pair{}
	var order []string
	for i := range res.Points {
		pt := &res.Points[i]
		p := by[pt.Limiter]
		if p == nil {
			p = &pair{}
			by[pt.Limiter] = p
			order = append(order, pt.Limiter)
		}
		if pt.PolicyName == "honour" {
			p.honour = pt
		} else {
			p.ignore = pt
		}
	}
	if len(order) != len(gates) {
		t.Fatalf("%d limiters in the result, want %d", len(order), len(gates))
	}
	for _, name := range order {
		p := by[name]
		ig, ho := p.ignore.Metrics, p.honour.Metrics
		if p.ignore.Metrics.Client == nil || p.honour.Metrics.Client == nil {
			t.Fatalf("%s: no client measures", name)
		}
		if ig.Arrivals != ho.Arrivals {
			t.Fatalf("%s: %d and %d first attempts: the policies should see the same arrivals", name, ig.Arrivals, ho.Arrivals)
		}
		// no timeouts: every admitted retry is served
		igRefused, hoRefused := ig.Client.Retries-ig.Client.RetriesServed, ho.Client.Retries-ho.Client.RetriesServed
		t.Logf("%-26s refused retries: ignore %4d of %4d, honour %4d of %4d; requests through: ignore %4d, honour %4d of %d",
			name, igRefused, ig.Client.Retries, hoRefused, ho.Client.Retries, ig.Client.Succeeded, ho.Client.Succeeded, ig.Arrivals)
		// a share: honouring clients retry more of their requests (the
		// retries that get through are retries the others never make)
		if igShare, hoShare := float64(igRefused)/float64(ig.Client.Retries), float64(hoRefused)/float64(ho.Client.Retries); hoShare >= igShare {
			t.Errorf("%s: honouring Retry-After %.0f%% of the retries were refused, ignoring it %.0f%%: the advice should spare them", name, 100*hoShare, 100*igShare)
		}
		if ho.Client.Succeeded <= ig.Client.Succeeded {
			t.Errorf("%s: honouring Retry-After got %d requests through, ignoring it %d", name, ho.Client.Succeeded, ig.Client.Succeeded)
		}
	}
}

// retryAfterGates are, for every registered gate type that gives a
// Retry-After (its row's RetryAfter), one limiter per option setting (the
// defaults, then each other choice of each option): the row's example, a
// gate of about 100 rps, with its size parameter (Kind.Size: the burst,
// the queue, the limit) a fiftieth of the example's (whole when the
// parameter is, within its range), so that most refuse the clumps of a
// Poisson stream of 80 rps. The compound chain is a token bucket before
// an x-time-rate. A gate added to the registry is among them with no edit.
func retryAfterGates(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, k := range limiter.Kinds() {
		if k.RetryAfter == "" {
			continue
		}
		if k.Compound() {
			out = append(out, `{"type":"`+string(k.Type)+`","stages":[{"type":"token-bucket","rate_rps":150,"burst":2},{"type":"x-time-rate","rate_rps":100,"burst":2}]}`)
			continue
		}
		params := maps.Clone(k.Example)
		if q, ok := k.Param(k.Size); ok {
			v := params[q.Name] / 50
			if q.Integer {
				v = math.Round(v)
			}
			params[q.Name] = min(max(v, q.Min, 1), q.Max)
		}
		settings := [][2]string{{}}
		for _, o := range k.Options {
			for _, c := range o.Choices[1:] {
				settings = append(settings, [2]string{o.Name, c})
			}
		}
		for _, opt := range settings {
			l := map[string]any{"type": k.Type, "name": string(k.Type)}
			for n, v := range params {
				l[n] = v
			}
			if opt[0] != "" {
				l[opt[0]] = opt[1]
				l["name"] = string(k.Type) + " " + opt[0] + "=" + opt[1]
			}
			b, err := json.Marshal(l)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
	}
	return out
}

// TestHonouringRetryAfterNeverHurts: behind every gate that gives a
// Retry-After (retryAfterGates, from the registry), clients that honour it
// get at least as many requests through as clients that retry after their
// 1 ms backoff, with no larger share of their retries refused.
func TestHonouringRetryAfterNeverHurts(t *testing.T) {
	gates := retryAfterGates(t)
	res := runConfig(t, retryAfterConfig(strings.Join(gates, ",")))
	if len(res.Points) != 2*len(gates) {
		t.Fatalf("%d points, want %d (each gate under two policies)", len(res.Points), 2*len(gates))
	}
	refused := func(c *experiments.ClientMetrics) float64 {
		if c.Retries == 0 {
			return 0
		}
		return float64(c.Retries-c.RetriesServed) / float64(c.Retries)
	}
	for i := 0; i < len(res.Points); i += 2 {
		ig, ho := res.Points[i], res.Points[i+1]
		if ig.PolicyName != "ignore" || ho.PolicyName != "honour" || ig.Limiter != ho.Limiter {
			t.Fatalf("points %d and %d: %s %s and %s %s, want one limiter ignoring then honouring", i, i+1, ig.Limiter, ig.PolicyName, ho.Limiter, ho.PolicyName)
		}
		igc, hoc := ig.Metrics.Client, ho.Metrics.Client
		if igc == nil || hoc == nil {
			t.Fatalf("%s: no client measures", ig.Limiter)
		}
		if hoc.Succeeded < igc.Succeeded || refused(hoc) > refused(igc) {
			t.Errorf("%s: honouring Retry-After got %d requests through with %.0f%% of its retries refused; ignoring it %d with %.0f%%",
				ig.Limiter, hoc.Succeeded, 100*refused(hoc), igc.Succeeded, 100*refused(igc))
		}
	}
}

// TestHonourWithoutRetryAfterIsRefused: retry_after "honour" in a config
// whose only refusing gate is a concurrency limit (it cannot know when the
// server frees a place) changes nothing, and the config is refused at the
// field that asks for it; with a limiter that gives one among them, or
// only gates that never refuse, it is taken.
func TestHonourWithoutRetryAfterIsRefused(t *testing.T) {
	doc := func(limiters string) string {
		return `{"version":1,"seed":1,
			"workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":100,"retries":2,"retry_after":"honour"}]},
			"server":{"workers":1,"service_ms":10,"deadline_ms":200},
			"limiters":[` + limiters + `]}`
	}
	for _, lims := range []string{`{"type":"admission","limit":5}`, `{"type":"admission","limit":5},{"type":"none"}`} {
		_, err := document.DecodeConfig([]byte(doc(lims)))
		if err == nil || !strings.Contains(err.Error(), "workload.parts[0].retry_after") || !strings.Contains(err.Error(), "admission refuses") {
			t.Errorf("%s: %v; want an error at workload.parts[0].retry_after naming admission", lims, err)
		}
	}
	for _, lims := range []string{
		`{"type":"admission","limit":5},{"type":"token-bucket","rate_rps":50,"burst":5}`,
		`{"type":"none"}`, `{"type":"uber-ratelimit","limit":100}`,
	} {
		if _, err := document.DecodeConfig([]byte(doc(lims))); err != nil {
			t.Errorf("honour with %s: %v", lims, err)
		}
	}
	policy := `{"version":1,"seed":1,
		"workload":{"duration_ms":1000,"parts":[{"type":"constant","rate_rps":100}]},
		"server":{"workers":1,"service_ms":10,"deadline_ms":200},
		"policies":[{"name":"a","retries":1},{"name":"b","retries":1,"retry_after":"honour"}],
		"limiters":[{"type":"admission","limit":5}]}`
	if _, err := document.DecodeConfig([]byte(policy)); err == nil || !strings.Contains(err.Error(), "policies[1].retry_after") {
		t.Errorf("a policy honouring Retry-After behind admission: %v", err)
	}
	if _, err := document.DecodeConfig([]byte(doc(`{"type":"admission","limit":5},{"type":"token-bucket","rate_rps":50,"burst":2}`))); err != nil {
		t.Errorf("honour with a token bucket among the limiters: %v", err)
	}
	if k, _ := limiter.Lookup(limiter.TypeAdmission); k.RetryAfter != "" {
		t.Errorf("admission's row says it gives a Retry-After: %q", k.RetryAfter)
	}
}
