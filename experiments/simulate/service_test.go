package simulate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/experiments/workload"
	"github.com/ratelab/ratelab/internal/enginetest"
)

// withServiceColumn gives every line of the workload's trace parts a
// service time, the rest of them none.
func withServiceColumn(rng *rand.Rand, w *workload.Spec, meanMS float64) bool {
	any := false
	for i := range w.Parts {
		p := &w.Parts[i]
		if p.Type != workload.Trace {
			continue
		}
		var b strings.Builder
		for _, line := range strings.Split(strings.TrimSuffix(p.CSV, "\n"), "\n") {
			if rng.IntN(5) == 0 {
				fmt.Fprintf(&b, "%s\n", line)
				continue
			}
			fmt.Fprintf(&b, "%s,%g\n", line, math.Round(rng.ExpFloat64()*meanMS*4+1)/4)
			any = true
		}
		p.CSV = b.String()
	}
	return any
}

// TestNoRunExceedsItsServiceBound: with a bounded service distribution
// (bimodal, or the empirical column of a trace) the server's bound uses the
// longest service time, and no run exceeds it; with exponential or
// lognormal service the point says there is no bound.
func TestNoRunExceedsItsServiceBound(t *testing.T) {
	const workloads, perWorkload = 300, 6
	gates := curveGates()
	rng := rand.New(rand.NewPCG(2026, 9))
	checked, unbounded, noBound := 0, 0, 0
	for w := 0; w < workloads; w++ {
		cfg := &experiments.Config{Version: experiments.Version, Seed: rng.Uint64(), Workload: randomWorkload(rng)}
		cfg.Server.Workers = 1 + rng.IntN(3)
		fast := float64(1 + rng.IntN(8))
		switch w % 4 {
		case 0, 1:
			cfg.Server.Service = server.ServiceBimodal
			cfg.Server.ServiceFastMS, cfg.Server.ServiceSlowMS, cfg.Server.ServiceSlowShare = fast, fast*float64(1+rng.IntN(6)), math.Round(rng.Float64()*100)/100
		case 2:
			if !withServiceColumn(rng, &cfg.Workload, fast) {
				cfg.Server.Service = server.ServiceExponential
				cfg.Server.ServiceMS = fast
				break
			}
			cfg.Server.Service = server.ServiceEmpirical
		case 3:
			cfg.Server.Service = server.ServiceLognormal
			cfg.Server.ServiceP50MS, cfg.Server.ServiceP99MS = fast, fast*(1+5*rng.Float64())
		}
		cfg.Normalize()
		capRPS := cfg.Server.RateRPS()
		if mx, ok := cfg.Server.MaxMS(); ok {
			capRPS = float64(cfg.Server.Workers) * 1000 / mx // the bound's rate
		}
		for k := 0; k < perWorkload; k++ {
			l := randomGate(rng, gates[rng.IntN(len(gates))], capRPS)
			l.Name = fmt.Sprintf("g-%d", k)
			cfg.Limiters = append(cfg.Limiters, l)
		}
		giveEveryClientAToken(cfg)
		cfg.Normalize()
		if err := cfg.Validate(); err != nil {
			t.Fatalf("workload %d: %v\n%s", w, err, cfg.JSON())
		}
		res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 1})
		if err != nil {
			t.Fatalf("workload %d: %v", w, err)
		}
		_, bounded := cfg.Server.MaxMS()
		for i := range res.Points {
			p := &res.Points[i]
			b := p.Bounds
			if !bounded {
				if b.Bounded || b.Note != experiments.NoServiceBound {
					t.Fatalf("workload %d point %d (%s service): bounded %v note %q, want %q", w, i, cfg.Server.Service, b.Bounded, b.Note, experiments.NoServiceBound)
				}
				noBound++
				continue
			}
			if !b.Bounded {
				unbounded++
				continue
			}
			checked++
			fail := func(what string, measured, bound float64) {
				if measured > bound+boundTol(bound) {
					t.Fatalf("workload %d point %d (%s %s, server %+v): %s %.9g exceeds its bound %.9g\nconfig: %s",
						w, i, p.Limiter, limiter.FormatParams(p.Type, p.Params), cfg.Server, what, measured, bound, cfg.JSON())
				}
			}
			fail("backlog", float64(b.BacklogMax), b.BacklogBound)
			fail("server sojourn", b.SojournMaxMS, b.SojournBoundMS)
			fail("end-to-end delay", b.EndToEndMaxMS, b.EndToEndBoundMS)
		}
	}
	t.Logf("%d bounded cases checked, %d above the rate (r > R), %d without a service bound", checked, unbounded, noBound)
	if checked < 1000 {
		t.Errorf("only %d bounded cases; the property needs at least 1000", checked)
	}
}

// serviceConfig is a sweep on a server with the given server JSON fields.
func serviceConfig(t *testing.T, serverJSON string) *experiments.Config {
	t.Helper()
	if !strings.Contains(serverJSON, `"workers"`) {
		serverJSON += `, "workers": 2`
	}
	doc := `{"version": 1, "seed": 11,
	  "workload": {"duration_ms": 3000, "parts": [
	    {"type": "poisson", "rate_rps": 180, "client": "p"},
	    {"type": "trace", "csv": "t_ms,client,service_ms\n5,a,4\n7,b,\n9,a,61.5\n1200,b,7\n"}]},
	  "server": {"deadline_ms": 150` + serverJSON + `},
	  "limiters": [{"type": "token-bucket", "rate_rps": [120, 200], "burst": [5, 30]},
	               {"type": "admission", "limit": [4, 12]}]}`
	cfg, err := document.DecodeConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

var serviceServers = map[string]string{
	"exponential": `, "service": "exponential", "service_ms": 9`,
	"lognormal":   `, "service": "lognormal", "service_p50_ms": 6, "service_p99_ms": 60`,
	"bimodal":     `, "service": "bimodal", "service_slow_share": 0.1, "service_fast_ms": 5, "service_slow_ms": 40`,
	"empirical":   `, "service": "empirical"`,
	"lifo":        `, "service": "lognormal", "service_p50_ms": 6, "service_p99_ms": 60, "discipline": "lifo"`,
	"tail-drop":   `, "service": "bimodal", "service_slow_share": 0.2, "service_fast_ms": 5, "service_slow_ms": 40, "door": "tail-drop"`,
	"expire":      `, "service": "exponential", "service_ms": 12, "expire": "at-dequeue", "end": "cut"`,
	"busy-ceil":   `, "workers": 1, "service": "lognormal", "service_p50_ms": 3, "service_p99_ms": 30, "occupancy": "busy-ceil"`,
}

// TestServiceDistributionBytes: every distribution, alone and with the
// queue disciplines that shed, writes the same bytes at every worker count
// and on a second decode; the arrivals (offered series) are the fixed
// server's, so a distribution moves no arrival.
func TestServiceDistributionBytes(t *testing.T) {
	fixed := enginetest.RunFiles(t, serviceConfig(t, ``), 1)
	for name, js := range serviceServers {
		t.Run(name, func(t *testing.T) {
			cfg := serviceConfig(t, js)
			one := enginetest.RunFiles(t, cfg, 1)
			for _, workers := range []int{3, 8} {
				again := enginetest.RunFiles(t, serviceConfig(t, js), workers)
				for i := range one {
					if !bytes.Equal(one[i].Data, again[i].Data) {
						t.Fatalf("%s differs at %d workers", one[i].Name, workers)
					}
				}
			}
			res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
			if err != nil {
				t.Fatal(err)
			}
			base, err := sweep.Run(context.Background(), serviceConfig(t, ``), sweep.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Points[0].Series.Offered, base.Points[0].Series.Offered) {
				t.Fatal("the distribution moved arrivals")
			}
			same := true
			for i := range one {
				same = same && bytes.Equal(one[i].Data, fixed[i].Data)
			}
			if same {
				t.Fatal("the distribution changed nothing")
			}
			for _, p := range res.Points {
				m := p.Metrics
				if m.Admitted+m.Rejected != m.Arrivals || m.Served+m.Shed > m.Admitted {
					t.Fatalf("point %d: %+v does not add up", p.Index, m)
				}
			}
		})
	}
}

// TestServiceEmpiricalNeedsAColumn and the other config-level errors name
// the field.
func TestServiceConfigErrors(t *testing.T) {
	cases := []struct{ doc, path, want string }{
		{`{"version": 1, "workload": {"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 10}]},
		   "server": {"service": "empirical"}, "limiters": [{"type": "none"}]}`, "server.service", "service_ms column"},
		{`{"version": 1, "workload": {"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 10}]},
		   "servers": [{"name": "a"}, {"name": "b", "service": "empirical"}], "limiters": [{"type": "none"}]}`, "servers[1].service", "service_ms column"},
		{`{"version": 1, "workload": {"duration_ms": 1000, "parts": [{"type": "constant", "rate_rps": 10}]},
		   "server": {"service": "lognormal", "service_p50_ms": 20, "service_p99_ms": 10}, "limiters": [{"type": "none"}]}`, "server.service_p99_ms", "at least service_p50_ms"},
		{`{"version": 1, "workload": {"duration_ms": 1000, "parts": [{"type": "trace", "csv": "1,a,x\n"}]},
		   "limiters": [{"type": "none"}]}`, "workload.parts[0].csv", "service_ms \"x\" is not a number"},
	}
	for _, c := range cases {
		_, err := document.DecodeConfig([]byte(c.doc))
		errs := field.Errors(err)
		if !slices.ContainsFunc(errs, func(e field.Error) bool { return e.Path == c.path && strings.Contains(e.Msg, c.want) }) {
			t.Errorf("%s: errors %v, want %s: %s", c.doc, err, c.path, c.want)
		}
	}
}

// TestServiceVariants: servers with other distributions run on the same
// requests; a variant's distribution replaces the base's settings, and its
// service_ms is its mean.
func TestServiceVariants(t *testing.T) {
	doc := `{"version": 1, "seed": 3,
	  "workload": {"duration_ms": 2000, "parts": [{"type": "poisson", "rate_rps": 80}]},
	  "server": {"service": "lognormal", "service_p50_ms": 5, "service_p99_ms": 50},
	  "servers": [{"name": "logn"}, {"name": "fixed", "service": "fixed", "service_ms": 4},
	              {"name": "bimodal", "service": "bimodal", "service_slow_share": 0.5, "service_fast_ms": 2, "service_slow_ms": 6}],
	  "limiters": [{"type": "none"}]}`
	cfg, err := document.DecodeConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.ServerAt(2); s.ServiceMS != 4 || s.ServiceP50MS != 0 {
		t.Fatalf("bimodal variant: %+v, want service_ms 4 (its mean) and no lognormal settings", s)
	}
	if s := cfg.ServerAt(1); s.ServiceMS != 4 || !s.FixedService() {
		t.Fatalf("fixed variant: %+v", s)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if u := res.Points[1].Metrics.UtilizationPct; math.Abs(u-res.Points[2].Metrics.UtilizationPct) > 1e-9 {
		t.Fatalf("utilization %g vs %g: the same mean on the same requests", u, res.Points[2].Metrics.UtilizationPct)
	}
}

// TestServiceClientModel: retries and closed-loop users on a lognormal
// server write the same bytes at every worker count, and differ from the
// fixed server's.
func TestServiceClientModel(t *testing.T) {
	doc := func(srv string) *experiments.Config {
		cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 8,
		  "workload": {"duration_ms": 3000, "parts": [
		    {"type": "poisson", "rate_rps": 150, "client": "p", "timeout_ms": 80, "retries": 2, "backoff_ms": 20},
		    {"type": "users", "users": 5, "think_ms": 30, "group": "u"}]},
		  "server": {"workers": 2` + srv + `},
		  "limiters": [{"type": "token-bucket", "rate_rps": [100, 200], "burst": 10}]}`))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	logn := `, "service": "lognormal", "service_p50_ms": 8, "service_p99_ms": 80`
	one := enginetest.RunFiles(t, doc(logn), 1)
	four := enginetest.RunFiles(t, doc(logn), 4)
	fixed := enginetest.RunFiles(t, doc(`, "service_ms": 10`), 1)
	for i := range one {
		if !bytes.Equal(one[i].Data, four[i].Data) {
			t.Fatalf("%s differs at 4 workers", one[i].Name)
		}
	}
	if bytes.Equal(one[0].Data, fixed[0].Data) {
		t.Fatal("the distribution changed nothing in the client model")
	}
}

// TestServiceSweptAndReplicated: a swept service_ms is each point's mean
// (its draws scale with it), and each replication draws its own service
// times from its own seed.
func TestServiceSweptAndReplicated(t *testing.T) {
	cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 4, "replications": 3,
	  "workload": {"duration_ms": 2000, "parts": [{"type": "poisson", "rate_rps": 30}]},
	  "server": {"workers": 3, "service": "exponential", "service_ms": [5, 40]},
	  "limiters": [{"type": "none"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Points) != 2 {
		t.Fatalf("%d points", len(res.Points))
	}
	lo, hi := res.Points[0].Metrics.Sojourn.P50, res.Points[1].Metrics.Sojourn.P50
	if !(hi > 4*lo) {
		t.Fatalf("sojourn p50 %d at 5 ms and %d at 40 ms: the swept mean does not reach the draws", lo, hi)
	}
	files := enginetest.RunFiles(t, cfg, 1)
	for _, f := range files {
		if f.Name != experiments.FileReplications {
			continue
		}
		rows := strings.Split(strings.TrimSpace(string(f.Data)), "\n")[1:]
		if len(rows) != 6 {
			t.Fatalf("%d replication rows", len(rows))
		}
		seen := map[string]bool{}
		for _, r := range rows {
			cells := strings.Split(r, ",")
			seen[strings.Join(cells[len(cells)-20:], ",")] = true
		}
		if len(seen) != 6 {
			t.Fatalf("replications measure the same: %d distinct rows of 6", len(seen))
		}
	}
}

// TestServiceSweptSettingMovesTheMean: a swept distribution setting (here
// lognormal's p99) gives each point its own mean, which its utilization
// uses.
func TestServiceSweptSettingMovesTheMean(t *testing.T) {
	cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 2,
	  "workload": {"duration_ms": 5000, "parts": [{"type": "poisson", "rate_rps": 20}]},
	  "server": {"workers": 1, "service": "lognormal", "service_p50_ms": 10, "service_p99_ms": [20, 100]},
	  "limiters": [{"type": "none"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := res.Points[0].Metrics, res.Points[1].Metrics
	// The means 10·exp(σ²/2), σ = ln(p99/p50)/z99, on the same admitted requests.
	mean := func(p99 float64) float64 { s := math.Log(p99/10) / 2.3263478740408408; return 10 * math.Exp(s*s/2) }
	if a.Admitted != b.Admitted || math.Abs(b.UtilizationPct/a.UtilizationPct-mean(100)/mean(20)) > 1e-3 {
		t.Fatalf("utilization %g and %g: the swept p99 does not move the mean", a.UtilizationPct, b.UtilizationPct)
	}
}

// TestEmpiricalReadsATraceFile: an empirical server reads the service_ms
// column of a trace file as it reads a trace given in the config: the same
// text as a file (through Options.Traces) or inline gives the same bytes,
// the column's mean and maximum included (the server's bound); a file with
// no column fails the run at server.service, and a config naming a file is
// not refused before the file is read.
func TestEmpiricalReadsATraceFile(t *testing.T) {
	var text strings.Builder
	text.WriteString("t_ms,client,service_ms\n")
	rng := rand.New(rand.NewPCG(5, 6))
	maxMS := 0.0
	for i := range 3000 {
		svc := math.Round(rng.ExpFloat64()*800) / 100
		maxMS = max(maxMS, svc)
		fmt.Fprintf(&text, "%g,c%d,%g\n", float64(i)*3.1, rng.IntN(7), svc)
	}
	const rest = `"server": {"workers": 2, "service": "empirical", "deadline_ms": 60},
	  "limiters": [{"type": "token-bucket", "rate_rps": [200, 300], "burst": 10}]}`
	run := func(part string, traces workload.TraceOpener) ([]output.File, error) {
		cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 2, "workload": {"duration_ms": 10000, "parts": [` + part + `]}, ` + rest))
		if err != nil {
			t.Fatal(err)
		}
		res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 2, Traces: traces})
		if err != nil {
			return nil, err
		}
		if b := res.Points[0].Bounds; b == nil || b.Beta.LatencyMS != maxMS {
			t.Errorf("%s: the server's curve is not the column's longest service time, %g ms: %+v", part[:30], maxMS, b)
		}
		files, err := output.Files(res)
		if err != nil {
			t.Fatal(err)
		}
		return files, nil
	}
	csv, _ := json.Marshal(text.String())
	inline, err := run(`{"type": "trace", "csv": `+string(csv)+`}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	opener := func(body string) workload.TraceOpener {
		return func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	}
	file, err := run(`{"type": "trace", "file": "day.csv"}`, opener(text.String()))
	if err != nil {
		t.Fatal(err)
	}
	for i := range inline {
		if inline[i].Name == "manifest.json" {
			continue // it names the file
		}
		if string(inline[i].Data) != string(file[i].Data) {
			t.Errorf("%s: the trace as a file differs from the trace in the config", inline[i].Name)
		}
	}
	_, err = run(`{"type": "trace", "file": "day.csv"}`, opener("t_ms,client\n1,a\n2,b\n"))
	if errs := field.Errors(err); len(errs) != 1 || errs[0].Path != "server.service" || !strings.Contains(errs[0].Msg, "service_ms column") {
		t.Fatalf("a file without the column: %v, want an error at server.service", err)
	}
}

// TestEmpiricalFileAndInlineTraceRerun: an empirical server reading a
// trace file and a trace in the config runs with the pooled column's mean,
// and the config it ran (the one manifest.json and the store keep) reads
// back as itself and reruns to the same bytes: decoding it gave the
// inline trace's mean alone, so lab run --config manifest.json refused the
// manifest as edited (its config_sha256 no longer matched).
func TestEmpiricalFileAndInlineTraceRerun(t *testing.T) {
	file := "t_ms,client,service_ms\n1,a,2\n5,b,4\n9,a,3\n"
	opener := func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(file)), nil }
	doc := `{"version": 1, "seed": 2, "workload": {"duration_ms": 1000, "parts": [{"type": "trace", "file": "day.csv"},
	  {"type": "trace", "csv": "t_ms,client,service_ms\n2,c,100\n"}]},
	  "server": {"workers": 1, "service": "empirical", "deadline_ms": 200},
	  "limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": 10}]}`
	run := func(data []byte) (*experiments.Result, []output.File) {
		t.Helper()
		cfg, err := document.DecodeConfig(data)
		if err != nil {
			t.Fatal(err)
		}
		res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 1, Traces: opener})
		if err != nil {
			t.Fatal(err)
		}
		files, err := output.Files(res)
		if err != nil {
			t.Fatal(err)
		}
		return res, files
	}
	res, files := run([]byte(doc))
	if got, want := res.Config.Server.ServiceMS, (2+4+3+100)/4.0; got != want {
		t.Fatalf("ran with service_ms %g, want the pooled mean %g", got, want)
	}
	ran := res.Config.JSON()
	again, err := document.DecodeConfig(ran)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.JSON(), ran) {
		t.Fatalf("the config it ran reads back as another:\n%s\nthen\n%s", ran, again.JSON())
	}
	_, rerun := run(ran)
	for i := range files {
		if !bytes.Equal(files[i].Data, rerun[i].Data) {
			t.Errorf("%s differs when rerun from the config it ran", files[i].Name)
		}
	}
}

// TestEmpiricalInlineZerosBesideAFile: a trace in the config whose
// service_ms are all 0 beside a trace file is not refused when the config
// is read: the file's column pools with it (the run checks the two
// together); it was refused ("every value in it is 0") before the file
// was read.
func TestEmpiricalInlineZerosBesideAFile(t *testing.T) {
	cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 2, "workload": {"duration_ms": 1000, "parts": [{"type": "trace", "file": "day.csv"},
	  {"type": "trace", "csv": "t_ms,client,service_ms\n2,c,0\n"}]},
	  "server": {"workers": 1, "service": "empirical", "deadline_ms": 200},
	  "limiters": [{"type": "token-bucket", "rate_rps": 100, "burst": 10}]}`))
	if err != nil {
		t.Fatal(err)
	}
	open := func(body string) workload.TraceOpener {
		return func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 1, Traces: open("t_ms,client,service_ms\n1,a,2\n5,b,4\n")})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Config.Server.ServiceMS; got != 2 {
		t.Errorf("ran with service_ms %g, want the pooled mean 2", got)
	}
	if _, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 1, Traces: open("t_ms,client,service_ms\n1,a,0\n")}); err == nil || !strings.Contains(err.Error(), "every value in it is 0") {
		t.Errorf("a column of zeros in the file and the config ran: %v", err)
	}
}
