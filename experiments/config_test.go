package experiments_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/limiter/limitertest"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/experiments/workload"
	"github.com/ratelab/ratelab/internal/enginetest"
)

// allTypes is testdata/all-types.json and its point count. For every
// registered gate type the file has no limiter of, and every option
// choice no limiter of its type takes, a limiter at the row's example
// setting is added (named "type option=choice"), so that a gate added to
// the registry runs in every test of the file with no edit here (a
// compound type, which takes stages, must be in the file). The count is
// read off the document: each limiter's lists (a chain's stages' lists)
// multiplied, summed over the limiters.
func allTypes(t testing.TB) (*experiments.Config, []byte, int) {
	t.Helper()
	cfg, data := enginetest.ReadConfig(t, "testdata/all-types.json")
	var doc map[string]json.RawMessage
	var lims []map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(doc["limiters"], &lims); err != nil {
		t.Fatal(err)
	}
	// taken holds "type" and "type option=choice" of every limiter.
	taken := map[string]bool{}
	take := func(l *limiter.Spec) {
		taken[string(l.Type)] = true
		if k := l.Kind(); k != nil {
			for _, o := range k.Options {
				taken[string(l.Type)+" "+o.Name+"="+l.Option(o.Name)] = true
			}
		}
	}
	for i := range cfg.Limiters {
		take(&cfg.Limiters[i])
	}
	takes := func(typ limiter.Type, option, choice string) bool {
		if option == "" {
			return taken[string(typ)]
		}
		return taken[string(typ)+" "+option+"="+choice]
	}
	added := false
	add := func(k *limiter.Kind, option, choice string) {
		l := map[string]any{"type": string(k.Type)}
		spec := limiter.Spec{Type: k.Type}
		for name, v := range k.Example {
			l[name] = v
		}
		if option != "" {
			l[option] = choice
			l["name"] = string(k.Type) + " " + option + "=" + choice
			spec.SetOption(option, choice)
		}
		spec.Normalize() // the other options at their defaults
		take(&spec)
		lims, added = append(lims, l), true
	}
	for _, k := range limiter.Kinds() {
		if !takes(k.Type, "", "") {
			if k.Compound() {
				t.Fatalf("all-types.json has no %q limiter (a type with stages: add one to the file)", k.Type)
			}
			add(k, "", "")
		}
		for _, o := range k.Options {
			for _, c := range o.Choices {
				if !takes(k.Type, o.Name, c) {
					add(k, o.Name, c)
				}
			}
		}
	}
	if added {
		var err error
		if doc["limiters"], err = json.Marshal(lims); err != nil {
			t.Fatal(err)
		}
		if data, err = json.Marshal(doc); err != nil {
			t.Fatal(err)
		}
		if cfg, err = document.DecodeConfig(data); err != nil {
			t.Fatalf("all-types.json with the registry's other types: %v", err)
		}
	}
	lists := func(l map[string]any) int {
		n := 1
		for _, v := range l {
			if vs, ok := v.([]any); ok {
				n *= len(vs)
			}
		}
		return n
	}
	points := 0
	for _, l := range lims {
		n := 1
		if stages, ok := l["stages"].([]any); ok {
			for _, st := range stages {
				n *= lists(st.(map[string]any))
			}
		} else {
			n = lists(l)
		}
		points += n
	}
	return cfg, data, points
}

// TestAllTypesTakesANewGate: a gate type registered alone (limitertest)
// is in the all-types config, at its example setting and under each of
// its options' choices, with its points counted.
func TestAllTypesTakesANewGate(t *testing.T) {
	limitertest.Register(t)
	cfg, _, points := allTypes(t)
	var got []string
	for _, l := range cfg.Limiters {
		if l.Type == limitertest.Type {
			got = append(got, l.Label()+" edge="+l.Option("edge"))
		}
	}
	if len(got) != 2 || len(cfg.Points()) != points {
		t.Errorf("test-spacer limiters %v (want one per edge choice), %d points, counted %d", got, len(cfg.Points()), points)
	}
}

// TestEveryPartAndLimiterType runs the all-types config (allTypes: every
// limiter type under every option choice), which uses every workload part
// type of testdata/all-types.json and both report types, and checks that
// it writes every output with a manifest that hashes them.
func TestEveryPartAndLimiterType(t *testing.T) {
	cfg, _, points := allTypes(t)
	for _, typ := range workload.PartTypes() {
		if k, _ := workload.LookupKind(typ); k.Users != nil {
			continue // a closed loop runs the client model: clients_test.go
		}
		if !slices.ContainsFunc(cfg.Workload.Parts, func(p workload.Part) bool { return p.Type == typ }) {
			t.Errorf("all-types.json has no %q part", typ)
		}
	}

	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Points) != len(cfg.Points()) || len(res.Points) != points {
		t.Fatalf("%d points (the config %d), want %d", len(res.Points), len(cfg.Points()), points)
	}
	for _, p := range res.Points {
		m := p.Metrics
		if m.Arrivals != res.Arrivals || m.Admitted+m.Rejected != m.Arrivals || m.OnTime+m.Late != m.Admitted {
			t.Errorf("point %d (%s): counts do not add up: %+v", p.Index, p.Limiter, m)
		}
		if m.Admitted == 0 {
			t.Errorf("point %d (%s) admitted nothing", p.Index, p.Limiter)
		}
		if len(p.Clients) != len(res.Clients) {
			t.Errorf("point %d: %d client results for %d clients", p.Index, len(p.Clients), len(res.Clients))
		}
		if len(m.GroupSharePct) != len(res.Groups) {
			t.Errorf("point %d: %d group shares for %d groups", p.Index, len(m.GroupSharePct), len(res.Groups))
		}
	}
	wantGroups := []string{"light", "burst", "heavy", "replayed"}
	if !slices.Equal(res.Groups, wantGroups) {
		t.Errorf("groups %v, want %v (order of declaration)", res.Groups, wantGroups)
	}

	files, err := output.Files(res)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
		if len(f.Data) == 0 || f.Data[len(f.Data)-1] != '\n' {
			t.Errorf("%s is empty or lacks a final newline", f.Name)
		}
	}
	want := []string{"results.csv", "series.csv", "clients.csv", "sweep.csv", "shaping.csv", "manifest.json"}
	if !slices.Equal(names, want) {
		t.Fatalf("outputs %v, want %v", names, want)
	}
	var m output.Manifest
	if err := json.Unmarshal(files[len(files)-1].Data, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Outputs) != len(files)-1 {
		t.Fatalf("manifest lists %d outputs, want %d", len(m.Outputs), len(files)-1)
	}
	for i, o := range m.Outputs {
		f := files[i]
		if o.Name != f.Name || o.SHA256 != f.SHA256() || o.Bytes != len(f.Data) {
			t.Errorf("manifest entry %+v does not describe %s (%d bytes, %s)", o, f.Name, len(f.Data), f.SHA256())
		}
	}
	if m.Seed != 42 || m.Config == nil || m.Config.Seed != 42 {
		t.Errorf("manifest seed %d, config %v: want seed 42 in both", m.Seed, m.Config)
	}
	// Every results.csv row has as many cells as the header.
	lines := strings.Split(strings.TrimSuffix(string(files[0].Data), "\n"), "\n")
	if len(lines) != 1+len(res.Points) {
		t.Fatalf("results.csv has %d lines, want %d", len(lines), 1+len(res.Points))
	}
	cells := strings.Count(lines[0], ",")
	for i, l := range lines {
		if strings.Count(l, ",") != cells {
			t.Errorf("results.csv line %d has %d commas, the header %d", i+1, strings.Count(l, ","), cells)
		}
	}
}

// TestSameConfigSameBytes runs the same config with 1 worker, with as many
// workers as points (more goroutines than cores), and under GOMAXPROCS=1,
// and decodes it anew each time: every output byte must be the same.
func TestSameConfigSameBytes(t *testing.T) {
	cfg, data, _ := allTypes(t)
	want := enginetest.RunFiles(t, cfg, 1)
	check := func(what string, got []output.File) {
		t.Helper()
		enginetest.SameFiles(t, what+" against the 1-worker run", got, want)
	}
	cfg2, err := document.DecodeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	check("a second decode, GOMAXPROCS workers", enginetest.RunFiles(t, cfg2, 0))
	check("one worker per point", enginetest.RunFiles(t, cfg, len(cfg.Points())))

	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	check("GOMAXPROCS=1", enginetest.RunFiles(t, cfg, 0))
	check("GOMAXPROCS=1, 8 workers", enginetest.RunFiles(t, cfg, 8))
}

// TestSeedChangesRandomPartsOnly: another seed draws other Poisson
// arrivals, so the outputs change; the same seed never does.
func TestSeedChangesRandomPartsOnly(t *testing.T) {
	cfg, _ := enginetest.ReadConfig(t, "testdata/all-types.json")
	a, err := workload.Generate(&cfg.Workload, cfg.Seed)
	if err != nil {
		t.Fatal(err)
	}
	b, err := workload.Generate(&cfg.Workload, cfg.Seed)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed gave two different arrival lists")
	}
	c, err := workload.Generate(&cfg.Workload, cfg.Seed+1)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(a.T, c.T) {
		t.Fatal("seeds 42 and 43 gave the same arrival times")
	}
}

// TestConfigRoundTrip: the normalized document decodes to the same config,
// and normalizing is idempotent.
func TestConfigRoundTrip(t *testing.T) {
	cfg, _, _ := allTypes(t)
	again, err := document.DecodeConfig(cfg.JSON())
	if err != nil {
		t.Fatalf("normalized document does not decode: %v\n%s", err, cfg.JSON())
	}
	if !reflect.DeepEqual(cfg, again) {
		t.Fatalf("round trip changed the config:\n%s\n%s", cfg.JSON(), again.JSON())
	}
	if !bytes.Equal(cfg.JSON(), again.JSON()) {
		t.Fatal("round trip changed the document")
	}
}

// TestBadConfigsNameTheField: each bad document is refused with an error
// at the path of the field at fault.
func TestBadConfigsNameTheField(t *testing.T) {
	cases := []struct {
		name, doc, path, msg string
	}{
		{"not JSON", `{"version": 1,`, "", "not valid JSON"},
		{"trailing data", enginetest.Base + `{}`, "", "after the JSON value"},
		{"empty", ``, "", "empty"},
		{"wrong version", enginetest.Edit(`"version": 1`, `"version": 2`), "version", "must be 1"},
		{"unknown top-level field", enginetest.Edit(`"seed": 1`, `"seed": 1, "sede": 2`), "sede", "not a known field"},
		{"wrong type", enginetest.Edit(`"seed": 1`, `"seed": "one"`), "seed", "must be a whole number from 0 to 18446744073709551615, not a string"},
		{"negative seed", enginetest.Edit(`"seed": 1`, `"seed": -1`), "seed", "must be a whole number from 0 to 18446744073709551615, not -1"},
		{"no workload", enginetest.Edit(`"workload": {"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 100}]},`, ``), "workload", "is required"},
		{"unknown workload field", enginetest.Edit(`"duration_ms": 1000`, `"duration_ms": 1000, "length": 5`), "workload.length", "not a known field"},
		{"zero duration", enginetest.Edit(`"duration_ms": 1000`, `"duration_ms": 0`), "workload.duration_ms", "more than 0"},
		{"no parts", enginetest.Edit(`"parts": [{"type": "constant", "rate_rps": 100}]`, `"parts": []`), "workload.parts", "at least one part"},
		{"unknown part type", enginetest.Edit(`"type": "constant"`, `"type": "sawtooth"`), "workload.parts[0].type", `unknown part type "sawtooth"`},
		{"part without type", enginetest.Edit(`{"type": "constant", "rate_rps": 100}`, `{"rate_rps": 100}`), "workload.parts[0].type", "is required"},
		{"field of another part type", enginetest.Edit(`"rate_rps": 100}]`, `"rate_rps": 100, "segments": []}]`), "workload.parts[0].segments", `not a field of a "constant" part`},
		{"part rate zero", enginetest.Edit(`"type": "constant", "rate_rps": 100`, `"type": "constant", "rate_rps": 0`), "workload.parts[0].rate_rps", "more than 0"},
		{"part rate wrong type", enginetest.Edit(`"type": "constant", "rate_rps": 100`, `"type": "constant", "rate_rps": "fast"`), "workload.parts[0].rate_rps", "must be a number"},
		{"end before start", enginetest.Edit(`"type": "constant", "rate_rps": 100`, `"type": "constant", "rate_rps": 100, "start_ms": 500, "end_ms": 100`), "workload.parts[0].end_ms", "before start_ms"},
		{"clients without group", enginetest.Edit(`{"type": "constant", "rate_rps": 100}`, `{"type": "clients", "clients": 3, "rate_rps": 100}`), "workload.parts[0].group", "is required"},
		{"bad arrival process", enginetest.Edit(`{"type": "constant", "rate_rps": 100}`, `{"type": "clients", "group": "g", "clients": 3, "rate_rps": 100, "arrival": "bursty"}`), "workload.parts[0].arrival", "must be"},
		{"burst count zero", enginetest.Edit(`{"type": "constant", "rate_rps": 100}`, `{"type": "bursts", "bursts": [{"at_ms": 0, "count": 0}]}`), "workload.parts[0].bursts[0].count", "between 1 and"},
		{"flash crowd ramp too long", enginetest.Edit(`{"type": "constant", "rate_rps": 100}`, `{"type": "flash-crowd", "base_rps": 10, "multiplier": 5, "start_ms": 100, "duration_ms": 100, "ramp_ms": 80}`), "workload.parts[0].ramp_ms", "half of duration_ms"},
		{"trace with a bad line", enginetest.Edit(`{"type": "constant", "rate_rps": 100}`, `{"type": "trace", "csv": "t_ms,client\n1,a\nsoon,b\n"}`), "workload.parts[0].csv", "line 3"},
		{"trace past the end", enginetest.Edit(`{"type": "constant", "rate_rps": 100}`, `{"type": "trace", "csv": "1,a\n1000,b\n"}`), "workload.parts[0].csv", "line 2: t_ms 1000 is at or after the end"},
		{"two users parts in one group", enginetest.Edit(`{"type": "constant", "rate_rps": 100}`, `{"type": "users", "users": 3, "think_ms": 100}, {"type": "users", "users": 5, "think_ms": 10}`), "workload.parts[1].group", `its users user-1..5 include "user-1", a client of workload.parts[0]`},
		{"clients after users named as the users", enginetest.Edit(`{"type": "constant", "rate_rps": 100}`, `{"type": "users", "users": 2, "think_ms": 100}, {"type": "clients", "group": "user", "clients": 3, "rate_rps": 1}`), "workload.parts[1]", `its client "user-1" is a user of workload.parts[0]: give the users a group of their own`},
		{"a trace after users naming a user", enginetest.Edit(`{"type": "constant", "rate_rps": 100}`, `{"type": "users", "users": 2, "think_ms": 100}, {"type": "trace", "csv": "t_ms,client\n5,user-2\n"}`), "workload.parts[1]", `its client "user-2" is a user of workload.parts[0]`},
		{"users of a load named as its other part's clients", enginetest.Edit(`"seed": 1`, `"seed": 1, "loads": [{"name": "a", "parts": [{"type": "users", "users": 3, "think_ms": 100}, {"type": "users", "users": 2, "think_ms": 100}]}]`), "loads[0].parts[1].group", `its users user-1..2 include "user-1", a client of loads[0].parts[0]: give the users a group of their own`},
		{"users named as another part's clients", enginetest.Edit(`{"type": "constant", "rate_rps": 100}`, `{"type": "clients", "group": "web", "clients": 4, "rate_rps": 10}, {"type": "users", "group": "web", "users": 2, "think_ms": 100}`), "workload.parts[1].group", `"web-1", a client of workload.parts[0]: give the users a group of their own`},
		{"demand curve segment", enginetest.Edit(`{"type": "constant", "rate_rps": 100}`, `{"type": "demand-curve", "segments": [{"rate_rps": 10, "duration_ms": 0}]}`), "workload.parts[0].segments[0].duration_ms", "more than 0"},
		{"server workers", enginetest.Edit(`"limiters"`, `"server": {"workers": -1}, "limiters"`), "server.workers", "between 1 and"},
		{"server unknown field", enginetest.Edit(`"limiters"`, `"server": {"threads": 2}, "limiters"`), "server.threads", "not a known field"},
		{"metrics window", enginetest.Edit(`"limiters"`, `"metrics": {"rolling_window_ms": -5}, "limiters"`), "metrics.rolling_window_ms", "more than 0"},
		{"no limiters", enginetest.Edit(`"limiters": [`, `"limiterz": [`), "limiterz", "not a known field"},
		{"empty limiters", `{"version": 1, "workload": {"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 100}]}, "limiters": []}`, "limiters", "at least one limiter"},
		{"unknown limiter", enginetest.Edit(`"type": "token-bucket"`, `"type": "token-bukket"`), "limiters[0].type", `unknown limiter "token-bukket"`},
		{"burst 0", enginetest.Edit(`"queue": 10`, `"queue": 10, "burst": 0`), "limiters[1].burst", "is not a parameter of leaky-bucket"},
		{"burst zero", enginetest.Edit(`"burst": 10`, `"burst": 0`), "limiters[0].burst", "must be at least 1"},
		{"queue zero", enginetest.Edit(`"queue": 10`, `"queue": 0`), "limiters[1].queue", "must be at least 1"},
		{"fractional burst", enginetest.Edit(`"burst": 10`, `"burst": 2.5`), "limiters[0].burst", "whole number"},
		{"one bad value of a list", enginetest.Edit(`"burst": 10`, `"burst": [1, 2, -4]`), "limiters[0].burst[2]", "must be at least 1"},
		{"missing rate", enginetest.Edit(`"rate_rps": 100, "burst": 10`, `"burst": 10`), "limiters[0].rate_rps", "is required"},
		{"rate not a number", enginetest.Edit(`"rate_rps": 100, "burst": 10`, `"rate_rps": "lots", "burst": 10`), "limiters[0].rate_rps", "number or a list of numbers"},
		{"shares on a token bucket", enginetest.Edit(`"burst": 10`, `"burst": 10, "shares": "equal"`), "limiters[0].shares", "is not a parameter of token-bucket"},
		{"bad shares", enginetest.Edit(`{"type": "token-bucket", "rate_rps": 100, "burst": 10}`, `{"type": "per-client-token-bucket", "rate_rps": 100, "burst": 10, "shares": "fair"}`), "limiters[0].shares", "must be"},
		{"per-client burst below one token a client", strings.Replace(enginetest.Edit(`{"type": "constant", "rate_rps": 100}]`, `{"type": "clients", "group": "g", "clients": 50, "rate_rps": 1}]`), `{"type": "token-bucket", "rate_rps": 100, "burst": 10}`, `{"type": "per-client-token-bucket", "rate_rps": 100, "burst": [100, 20]}`, 1), "limiters[0].burst[1]", "20 split over 50 clients (equal shares) leaves a client 0.4 tokens"},
		{"tiny rate", enginetest.Edit(`"rate_rps": 100, "burst": 10`, `"rate_rps": 0.0001, "burst": 10`), "limiters[0].rate_rps", "between 0.001 and"},
		{"window on a token bucket", enginetest.Edit(`"burst": 10`, `"burst": 10, "window_ms": 1000`), "limiters[0].window_ms", "is not a parameter of token-bucket"},
		{"duplicate names", enginetest.Edit(`"type": "leaky-bucket"`, `"type": "leaky-bucket", "name": "token-bucket"`), "limiters[1].name", `also called "token-bucket"`},
		{"too many values", enginetest.Edit(`"burst": 10`, `"burst": [`+strings.Repeat("1, ", 1000)+`1]`), "limiters[0].burst", "at most 1000 values"},
		{"too many points in all", enginetest.Edit(`"rate_rps": 100, "burst": 10`, `"rate_rps": [`+strings.Repeat("100, ", 100)+`100], "burst": [`+strings.Repeat("1, ", 100)+`1]`), "limiters[0].rate_rps", "the sweep is too large: token-bucket: rate_rps 101 × burst 101 + leaky-bucket 1 = 10202 points; the limit is 10000 points"},
		{"too many points at each list", enginetest.Edit(`"rate_rps": 100, "burst": 10`, `"rate_rps": [`+strings.Repeat("100, ", 100)+`100], "burst": [`+strings.Repeat("1, ", 100)+`1]`), "limiters[0].burst", "token-bucket: rate_rps 101 × burst 101 + leaky-bucket 1 = 10202 points"},
		{"too many runs at replications", strings.Replace(enginetest.Edit(`"rate_rps": 100, "burst": 10`, `"rate_rps": 100, "burst": [`+strings.Repeat("1, ", 99)+`1]`), `"seed": 1`, `"seed": 1, "replications": 100`, 1), "replications", "token-bucket: burst 100 + leaky-bucket 1 = 101 points × replications 100 = 10100 runs; the limit is 10000 runs"},
		{"too many decisions", enginetest.Edit(`"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 100}]`, `"duration_ms": 86400000, "parts": [{"type": "constant", "rate_rps": 1000000}]`), "workload.duration_ms", "is more than 100000000000 decisions"},
		{"too many arrivals for the queue model", strings.Replace(enginetest.Edit(`"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 100}]`, `"duration_ms": 86400000, "parts": [{"type": "constant", "rate_rps": 1000}]`), `"limiters"`, `"server": {"discipline": "lifo"}, "limiters"`, 1), "workload", "the limit is 20000000"},
		{"leaky bucket releasing long after the run", enginetest.Edit(`"rate_rps": 100, "queue": 10`, `"rate_rps": 0.001, "queue": 2000`), "limiters[1].rate_rps", "after the run ends"},
		{"many short segments", strings.Replace(enginetest.Edit(`"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 100}]`, `"duration_ms": 86400000, "parts": [{"type": "demand-curve", "segments": [{"rate_rps": 1, "duration_ms": 0.5}, {"rate_rps": 1, "duration_ms": 0.5}]}]`), `"limiters"`, `"server": {"discipline": "lifo"}, "limiters"`, 1), "workload", "the limit is 20000000"},
		{"fairness windows of a multi-client run", enginetest.Edit(`"parts": [{"type": "constant", "rate_rps": 100}]}`, `"parts": [{"type": "clients", "group": "g", "clients": 2, "rate_rps": 1}]}, "metrics": {"fairness_window_ms": 0.000001}`), "metrics.fairness_window_ms", "fairness windows"},
		{"fairness windows times many clients", enginetest.Edit(`"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 100}]}`, `"duration_ms": 86400000, "parts": [{"type": "clients", "group": "g", "clients": 100000, "rate_rps": 0.001}]}, "metrics": {"fairness_window_ms": 100}`), "metrics.fairness_window_ms", "clients is more than"},
		{"per-client results of many points", strings.Replace(enginetest.Edit(`"parts": [{"type": "constant", "rate_rps": 100}]}`, `"parts": [{"type": "clients", "group": "g", "clients": 100000, "rate_rps": 0.001}]}`), `"burst": 10`, `"burst": [`+strings.Repeat("1, ", 19)+`1]`, 1), "limiters", "21 points × 100000 clients"},
		{"a part that starts after the end", strings.Replace(enginetest.Edit(`"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 100}]`, `"duration_ms": 20000000, "parts": [{"type": "constant", "rate_rps": 1000000}, {"type": "clients", "group": "late", "clients": 1000, "rate_rps": 1000, "start_ms": 86400000}]`), `"limiters"`, `"server": {"discipline": "lifo"}, "limiters"`, 1), "workload.parts[1].start_ms", "must be before the end of the arrival window"},
		{"clients in all", enginetest.Edit(`"parts": [{"type": "constant", "rate_rps": 100}]`, `"parts": [{"type": "clients", "group": "a", "clients": 60000, "rate_rps": 0.001}, {"type": "clients", "group": "b", "clients": 60000, "rate_rps": 0.001}]`), "workload.parts", "declare more than 100000 clients in all"},
		{"many short segments at rate 0", enginetest.Edit(`"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 100}]`, `"duration_ms": 86400000, "parts": [{"type": "demand-curve", "segments": [`+strings.Repeat(`{"rate_rps": 0, "duration_ms": 0.0011}, `, 999)+`{"rate_rps": 0, "duration_ms": 0.0011}]}]`), "workload.parts[0].segments", "segment starts over the run; the limit is 200000000"},
		{"flash crowd drawing at its peak all day", enginetest.Edit(`"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 100}]`, `"duration_ms": 86400000, "parts": [{"type": "flash-crowd", "base_rps": 230, "multiplier": 1000, "start_ms": 1000, "duration_ms": 1}]`), "workload.parts[0].multiplier", "candidate arrivals at the peak rate over the run; the limit is 500000000"},
		{"report with a bad column", enginetest.Edit(`"seed": 1`, `"seed": 1, "reports": [{"type": "points", "file": "x.csv", "columns": [{"header": "g", "value": "goodput"}]}]`), "reports[0].columns[0].value", `unknown column "goodput"`},
		{"report over a standard output", enginetest.Edit(`"seed": 1`, `"seed": 1, "reports": [{"type": "points", "file": "results.csv", "columns": [{"header": "g", "value": "goodput_rps"}]}]`), "reports[0].file", "already an output"},
		{"series report without a point", enginetest.Edit(`"seed": 1`, `"seed": 1, "reports": [{"type": "series", "file": "s.csv", "columns": [{"header": "r", "value": "released_rps"}]}]`), "reports[0].columns[0].limiter", "index of a limiter"},
		{"series report with a swept value not swept", enginetest.Edit(`"seed": 1`, `"seed": 1, "reports": [{"type": "series", "file": "s.csv", "columns": [{"header": "r", "value": "released_rps", "limiter": 0, "swept": 7}]}]`), "reports[0].columns[0].swept", "7 is not a value of token-bucket.burst (its values: 10): report s.csv draws the point where it is 7; give it one of the values, or remove the report"},
		{"series report with a swept value of several points", strings.Replace(enginetest.Edit(`"rate_rps": 100, "burst": 10`, `"rate_rps": [100, 200], "burst": [10, 20]`), `"seed": 1`, `"seed": 1, "reports": [{"type": "series", "file": "s.csv", "columns": [{"header": "r", "value": "released_rps", "limiter": 0, "swept": 10}]}]`, 1), "reports[0].columns[0].swept", "burst = 10 picks 2 points"},
		{"policy field of the wrong type", enginetest.Edit(`"seed": 1`, `"seed": 1, "policies": [{"name": "p", "retries": "x"}]`), "policies[0].retries", "must be a whole number"},
		{"part behaviour field of the wrong type", enginetest.Edit(`"type": "constant", "rate_rps": 100`, `"type": "constant", "rate_rps": 100, "retries": "x"`), "workload.parts[0].retries", "must be a whole number"},
		{"servers field of the wrong type", enginetest.Edit(`"seed": 1`, `"seed": 1, "servers": [{"workers": "x"}]`), "servers[0].workers", "must be a whole number"},
		{"swept part behaviour every policy gives", strings.Replace(enginetest.Edit(`"type": "constant", "rate_rps": 100`, `"type": "constant", "rate_rps": 100, "retries": [1, 2]`), `"seed": 1`, `"seed": 1, "policies": [{"name": "no-retry", "timeout_ms": 200, "retries": 0}, {"name": "retry", "retries": 3}]`, 1), "workload.parts[0].retries", "every policy gives retries"},
		{"policy field null then wrong", enginetest.Edit(`"seed": 1`, `"seed": 1, "policies": [{"name": "p", "retries": null, "backoff_ms": "x"}]`), "policies[0].backoff_ms", "must be a number"},
		{"policy unknown field", enginetest.Edit(`"seed": 1`, `"seed": 1, "policies": [{"name": "p", "retry": 3}]`), "policies[0].retry", "is not a known field"},
		{"report file name", enginetest.Edit(`"seed": 1`, `"seed": 1, "reports": [{"type": "points", "file": "../x.csv", "columns": [{"header": "g", "value": "goodput_rps"}]}]`), "reports[0].file", "file name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := document.DecodeConfig([]byte(c.doc))
			if err == nil {
				t.Fatalf("accepted:\n%s", cfg.JSON())
			}
			errs := field.Errors(err)
			if len(errs) == 0 {
				t.Fatalf("error %q is not a field.List", err)
			}
			for _, e := range errs {
				if e.Path == c.path && strings.Contains(e.Msg, c.msg) {
					return
				}
			}
			t.Fatalf("got %q, want an error at %q containing %q", err, c.path, c.msg)
		})
	}
}
