package deploy

import (
	"fmt"
	"strings"
)

// importEnvoy reads Envoy's HTTP local rate limit filter
// (envoy.filters.http.local_ratelimit, as envoyFormat writes it, alone or
// inside a whole Envoy config) back as the envoy-local-ratelimit gate of
// current Envoy (token_bucket "atomic", the export's rerun): max_tokens,
// tokens_per_fill (default 1) and fill_interval of its token_bucket, one
// bucket for every request (the key is a constant). Refused by name:
// filter_enabled or filter_enforced below 100% (Envoy then limits a
// share of requests, or only counts), descriptors (a bucket per
// descriptor needs the route's rate_limits actions, which the import does
// not read), and a filter that is not there. A limited request gets 429.
func importEnvoy(text string, _ ImportOptions) (*Imported, error) {
	block, line, err := envoyFilterBlock(text)
	if err != nil {
		return nil, err
	}
	root, err := parseYAMLMaps(block)
	if err != nil {
		return nil, fmt.Errorf("envoy: %w", err)
	}
	tc, ok := root.path("typed_config")
	if !ok {
		return nil, fmt.Errorf("envoy: line %d: the local_ratelimit filter has no typed_config", line)
	}
	at := func(m *yamlMap, key string) int { return line + m.lines[key] - 1 }
	if tc.has("descriptors") {
		return nil, &Unmodelled{Directive: "descriptors", Line: at(tc, "descriptors"),
			Why: "a bucket per descriptor needs the route's rate_limits actions, which the import does not read: remove descriptors to replay the filter's own token_bucket"}
	}
	for _, f := range []string{"filter_enabled", "filter_enforced"} {
		fe, ok := tc.path(f, "default_value")
		if !ok {
			return nil, &Unmodelled{Directive: f, Line: line,
				Why: "without it Envoy applies the filter to 0% of requests (the default): set default_value numerator 100, denominator HUNDRED"}
		}
		num, _ := fe.scalar("numerator")
		den, _ := fe.scalar("denominator")
		if num != "100" || den != "" && den != "HUNDRED" {
			return nil, &Unmodelled{Directive: f, Line: at(tc, f),
				Why: fmt.Sprintf("%s %s/%s: Envoy then applies the limit to a share of requests, chosen at random, which the lab does not model: give 100/HUNDRED", f, num, den)}
		}
	}
	tb, ok := tc.path("token_bucket")
	if !ok {
		return nil, fmt.Errorf("envoy: line %d: no token_bucket", line)
	}
	maxTokens, err := tb.int("max_tokens", 0)
	if err != nil || maxTokens < 1 {
		return nil, fmt.Errorf("envoy: line %d: token_bucket.max_tokens: a whole number of at least 1", at(tb, "max_tokens"))
	}
	perFill, err := tb.int("tokens_per_fill", 1)
	if err != nil || perFill < 1 {
		return nil, fmt.Errorf("envoy: line %d: token_bucket.tokens_per_fill: a whole number of at least 1", at(tb, "tokens_per_fill"))
	}
	fillText, _ := tb.scalar("fill_interval")
	fillNS, err := traefikDuration(fillText) // a proto Duration: "0.1s", "1s"
	if err != nil || fillNS <= 0 {
		return nil, fmt.Errorf("envoy: line %d: token_bucket.fill_interval %q: a duration such as 0.05s", at(tb, "fill_interval"), fillText)
	}
	s := envoyRerun(maxTokens, perFill, nsToMS(fillNS))
	s.Name = "envoy"
	return &Imported{Status: 429, Where: fmt.Sprintf("local_ratelimit filter (line %d)", line),
		Stages: []ImportedStage{{Spec: s, Key: "envoy", Name: "local_ratelimit"}},
		Notes:  []string{"Envoy's local rate limit: one token bucket for every request the filter sees, refilled continuously (current Envoy's atomic bucket)"},
	}, nil
}

// envoyFilterBlock is the local_ratelimit filter's entry of an Envoy
// config as a mapping of its own (dedented), and its first line.
func envoyFilterBlock(text string) (string, int, error) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- "))
		if t != "name: envoy.filters.http.local_ratelimit" {
			continue
		}
		base := strings.Index(l, "name:")
		out := []string{"name: envoy.filters.http.local_ratelimit"}
		for _, next := range lines[i+1:] {
			body := strings.TrimLeft(next, " ")
			if body == "" || body[0] == '#' {
				continue
			}
			if len(next)-len(body) < base {
				break
			}
			out = append(out, next[base:])
		}
		return strings.Join(out, "\n"), i + 1, nil
	}
	return "", 0, fmt.Errorf("envoy: no http filter named envoy.filters.http.local_ratelimit")
}
