package deploy

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// importTraefik reads a rateLimit middleware of Traefik's dynamic
// configuration (the file provider's YAML, as traefikFormat writes it)
// back as Traefik's limiter: the x-time-rate-per-key gate, one
// golang.org/x/time/rate limiter per source (pkg/middlewares/ratelimiter):
// rate = average / period (period 0 is 1 s), burst below 1 is 1, reserve
// mode with max_wait_ms = maxDelay (1/(2 × int(rate)) s, 500 ms below
// 1/s), idle_s = Traefik's ttl (2 s at rates of 1/s and more, else
// 1 + int(1/rate)). The source is the key: sourceCriterion requestHost
// $host, requestHeaderName X-Name $http_x_name, and ipStrategy without
// depth or excludedIPs (Traefik's default) $remote_addr. Refused by name:
// ipStrategy depth or excludedIPs (read from X-Forwarded-For, which a log
// rarely keeps), average 0 (Traefik then limits nothing), and a redis
// section (Traefik's distributed limiter).
//
// The export writes one middleware with requestHost and offers as its
// rerun the x-time-rate gate of its one source; the import of that text is
// that limiter per source (TestImportInvertsExport compares the one
// source's limiter: rate, burst, mode and max wait).
func importTraefik(text string, opt ImportOptions) (*Imported, error) {
	root, err := parseYAMLMaps(text)
	if err != nil {
		return nil, err
	}
	mws, ok := root.path("http", "middlewares")
	if !ok {
		return nil, fmt.Errorf("traefik: no http.middlewares")
	}
	var names []string
	for _, name := range mws.keys {
		if _, ok := mws.child(name).path("rateLimit"); ok {
			names = append(names, name)
		}
	}
	switch {
	case len(names) == 0:
		return nil, fmt.Errorf("traefik: no middleware with rateLimit under http.middlewares")
	case opt.Location != "":
		found := false
		for _, n := range names {
			if n == opt.Location {
				found, names = true, []string{n}
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("traefik: no rateLimit middleware %q (it has %s)", opt.Location, strings.Join(names, ", "))
		}
	case len(names) > 1:
		return nil, fmt.Errorf("traefik: %d rateLimit middlewares (%s): pick one (lab shadow --location NAME)", len(names), strings.Join(names, ", "))
	}
	name := names[0]
	rl, _ := mws.child(name).path("rateLimit")
	line := func(key string) int { return rl.lines[key] }
	for _, key := range rl.keys {
		switch key {
		case "average", "period", "burst", "sourceCriterion":
		case "redis":
			return nil, &Unmodelled{Directive: "rateLimit.redis", Line: line(key),
				Why: "Traefik's distributed limiter keeps its buckets in Redis (its own Lua token bucket), which the lab does not model: remove redis to replay the in-memory limiter"}
		default:
			return nil, fmt.Errorf("traefik: line %d: rateLimit.%s: not a rateLimit option (average, period, burst, sourceCriterion)", line(key), key)
		}
	}
	average, err := rl.int("average", 0)
	if err != nil {
		return nil, err
	}
	if average <= 0 {
		return nil, &Unmodelled{Directive: "rateLimit.average", Line: line("average"),
			Why: "average 0 (or none) makes Traefik limit nothing (x/time/rate's zero Limit reserves with no delay): nothing to replay"}
	}
	burst, err := rl.int("burst", 1)
	if err != nil {
		return nil, err
	}
	burst = max(burst, 1)
	periodNS := int64(1e9)
	if v, ok := rl.scalar("period"); ok {
		if periodNS, err = traefikDuration(v); err != nil || periodNS < 0 {
			return nil, fmt.Errorf("traefik: line %d: rateLimit.period %q: a duration (1s, 1m, 500ms) or whole seconds", line("period"), v)
		}
		if periodNS == 0 {
			periodNS = 1e9
		}
	}
	rtl := float64(average*int64(1e9)) / float64(periodNS)
	ttl := int64(1)
	if rtl >= 1 {
		ttl++
	} else {
		ttl += int64(1 / rtl)
	}
	key := "$remote_addr"
	if sc, ok := rl.path("sourceCriterion"); ok {
		switch {
		case sc.has("requestHeaderName"):
			h, _ := sc.scalar("requestHeaderName")
			key = "$http_" + strings.ReplaceAll(strings.ToLower(h), "-", "_")
		case sc.has("requestHost") && sc.bool("requestHost"):
			key = "$host"
		case sc.has("ipStrategy"):
			ip, _ := sc.path("ipStrategy")
			for _, k := range ip.keys {
				if k == "depth" || k == "excludedIPs" || k == "ipv6Subnet" {
					return nil, &Unmodelled{Directive: "sourceCriterion.ipStrategy." + k, Line: ip.lines[k],
						Why: "Traefik then takes the source from X-Forwarded-For, which the lab reads only as a logged field: give the key with lab shadow --key, or remove it to key by the client address"}
				}
			}
		}
	}
	s := spec(limiter.TypeXTimeRatePerKey, limiter.Params{limiter.ParamRate: rtl, limiter.ParamBurst: float64(burst),
		limiter.ParamMaxWait: nsToMS(traefikMaxDelayNS(rtl)), limiter.ParamIdle: float64(ttl)},
		map[string]string{limiter.OptionXTimeRateMode: limiter.XTimeRateReserve})
	s.Name = name
	return &Imported{Status: 429, Where: "middleware " + name,
		Stages: []ImportedStage{{Spec: s, Key: key, Name: name}},
		Notes:  []string{fmt.Sprintf("Traefik keeps one x/time/rate limiter per source (%s), forgotten after %d s idle; requests wait up to maxDelay %s, else 429", key, ttl, msText(traefikMaxDelayNS(rtl)))},
	}, nil
}

// traefikDuration reads Traefik's types.Duration: a Go duration ("1s",
// "1m30s", "500ms") or a whole number of seconds.
func traefikDuration(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n * 1e9, nil
	}
	units := map[string]float64{"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}
	var total float64
	rest := s
	if rest == "" {
		return 0, fmt.Errorf("empty")
	}
	for rest != "" {
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		j := i
		for j < len(rest) && !(rest[j] >= '0' && rest[j] <= '9' || rest[j] == '.') {
			j++
		}
		v, err := strconv.ParseFloat(rest[:i], 64)
		u, ok := units[rest[i:j]]
		if err != nil || !ok {
			return 0, fmt.Errorf("bad duration %q", s)
		}
		total += v * u
		rest = rest[j:]
	}
	return int64(total), nil
}

// yamlMap is a block mapping of YAML: keys in order, scalars or nested
// mappings (a sequence is kept as its items' text).
type yamlMap struct {
	keys     []string
	scalars  map[string]string
	children map[string]*yamlMap
	lines    map[string]int
}

func newYAMLMap() *yamlMap {
	return &yamlMap{scalars: map[string]string{}, children: map[string]*yamlMap{}, lines: map[string]int{}}
}

func (m *yamlMap) child(key string) *yamlMap {
	if m == nil {
		return nil
	}
	return m.children[key]
}

func (m *yamlMap) path(keys ...string) (*yamlMap, bool) {
	for _, k := range keys {
		m = m.child(k)
		if m == nil {
			return nil, false
		}
	}
	return m, true
}

func (m *yamlMap) has(key string) bool {
	_, s := m.scalars[key]
	_, c := m.children[key]
	return s || c
}

func (m *yamlMap) scalar(key string) (string, bool) {
	v, ok := m.scalars[key]
	return v, ok
}

func (m *yamlMap) bool(key string) bool {
	v := m.scalars[key]
	return v == "true" || v == "True" || v == "yes"
}

func (m *yamlMap) int(key string, def int64) (int64, error) {
	v, ok := m.scalars[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("traefik: line %d: %s %q: a whole number", m.lines[key], key, v)
	}
	return n, nil
}

// parseYAMLMaps reads the block mappings of a YAML document ("key: value",
// nesting by indentation, # comments, quoted scalars; a sequence's "- "
// items are joined into its key's scalar). Flow collections and anchors
// are not read.
func parseYAMLMaps(text string) (*yamlMap, error) {
	root := newYAMLMap()
	type level struct {
		indent int
		m      *yamlMap
	}
	stack := []level{{-1, root}}
	var lastKey string
	var lastMap *yamlMap
	for n, raw := range strings.Split(text, "\n") {
		line := strings.TrimRight(raw, " \t\r")
		if i := strings.Index(line, " #"); i >= 0 && !strings.ContainsAny(line[:i], `"'`) {
			line = line[:i]
		}
		trimmed := strings.TrimLeft(line, " ")
		if trimmed == "" || trimmed[0] == '#' || trimmed == "---" {
			continue
		}
		if strings.Contains(line[:len(line)-len(trimmed)], "\t") {
			return nil, fmt.Errorf("yaml: line %d: a tab in the indentation", n+1)
		}
		indent := len(line) - len(trimmed)
		if strings.HasPrefix(trimmed, "- ") || trimmed == "-" {
			if lastMap == nil {
				return nil, fmt.Errorf("yaml: line %d: a sequence item outside a mapping", n+1)
			}
			item := strings.TrimSpace(strings.TrimPrefix(trimmed, "-"))
			if prev := lastMap.scalars[lastKey]; prev != "" {
				item = prev + "," + item
			}
			lastMap.scalars[lastKey] = unquoteYAML(item)
			delete(lastMap.children, lastKey)
			continue
		}
		for len(stack) > 1 && indent <= stack[len(stack)-1].indent {
			stack = stack[:len(stack)-1]
		}
		key, value, ok := strings.Cut(trimmed, ":")
		if !ok || key == "" {
			return nil, fmt.Errorf("yaml: line %d: expected \"key: value\"", n+1)
		}
		key = unquoteYAML(strings.TrimSpace(key))
		value = strings.TrimSpace(value)
		m := stack[len(stack)-1].m
		if m.has(key) {
			return nil, fmt.Errorf("yaml: line %d: key %q twice", n+1, key)
		}
		m.keys = append(m.keys, key)
		m.lines[key] = n + 1
		lastKey, lastMap = key, m
		if value == "" {
			c := newYAMLMap()
			m.children[key] = c
			stack = append(stack, level{indent, c})
			continue
		}
		if value[0] == '{' || value[0] == '[' || value[0] == '&' || value[0] == '*' {
			return nil, fmt.Errorf("yaml: line %d: flow collections and anchors are not read: write %q as a block", n+1, key)
		}
		m.scalars[key] = unquoteYAML(value)
	}
	return root, nil
}

func unquoteYAML(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		if s[0] == '"' {
			if u, err := strconv.Unquote(s); err == nil {
				return u
			}
		}
		return s[1 : len(s)-1]
	}
	return s
}
