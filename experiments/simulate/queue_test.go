package simulate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"

	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/simulate"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// TestQueueModelIsTheForwardPass runs every preset and the test configs
// through the queue model with their plain servers and compares every
// measurement with the forward pass: the event loop, run one release at a
// time, is the same server. It runs the queue model twice: on its fast
// path (one source, no hooks) and with a gate that observes (the loop
// makes the queue's picks, completions are events), which hears exactly
// the fates the model measures.
func TestQueueModelIsTheForwardPass(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../presets/*.json")
	if len(files) == 0 {
		t.Fatal("no presets in ../presets")
	}
	files = append(files, "../testdata/all-types.json", "../testdata/service-distributions.json")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := document.DecodeConfig(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if cfg.AnyQueue() || cfg.Server.Option(server.OptOccupancy) != server.OccupancyCount {
			continue // the seed's in-system formula is the forward pass's only
		}
		if cfg.AnyClients() {
			continue // the client model runs its own loop (clients_test.go)
		}
		if shaped(cfg) {
			continue // a knee or degrade events: the plain server's only (server/shape.go)
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			var watched *[]*watchingGate
			run := func(queue, watching bool) *experiments.Result {
				opt := sweep.Options{Workers: 1}
				if queue {
					opt.Simulate.Model = simulate.SwitchQueueForAll
				}
				if watching {
					watched = watch(&opt)
				}
				res, err := sweep.Run(context.Background(), cfg, opt)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			want := forwardPassOf(t, f, cfg)
			for _, watching := range []bool{false, true} {
				got := run(true, watching)
				for i := range want.Points {
					w, g := &want.Points[i], &got.Points[i]
					if gm := g.Metrics; gm.Served != w.Metrics.Admitted || gm.Shed != 0 {
						t.Errorf("point %d: served %d shed %d, want %d and 0", i, gm.Served, gm.Shed, w.Metrics.Admitted)
					}
					samePointOnTheQueue(t, i, w, g)
				}
			}
			for i, g := range *watched {
				g.heardTheFates(t, i)
			}
		})
	}
}

// forwardPasses holds each config file's sweep by the forward pass (the
// default model, one worker), which TestQueueModelIsTheForwardPass and
// TestForwardPassIsTheLoop both compare with: run once per file. A result
// is read only.
var forwardPasses sync.Map // file name -> *forwardPass

type forwardPass struct {
	once sync.Once
	res  *experiments.Result
	err  error
}

// forwardPassOf is the sweep of cfg (read from file) by the forward pass.
func forwardPassOf(t *testing.T, file string, cfg *experiments.Config) *experiments.Result {
	t.Helper()
	v, _ := forwardPasses.LoadOrStore(file, new(forwardPass))
	fp := v.(*forwardPass)
	fp.once.Do(func() { fp.res, fp.err = sweep.Run(context.Background(), cfg, sweep.Options{Workers: 1}) })
	if fp.err != nil {
		t.Fatal(fp.err)
	}
	return fp.res
}

// samePointOnTheQueue checks that point g, run on the queue model, measured
// what w did: the metrics but the queue model's own (served, shed, wasted),
// the series but the p99 per finish window, the bounds, the clients,
// Jain's series and the output curve.
func samePointOnTheQueue(t *testing.T, i int, w, g *experiments.Point) {
	t.Helper()
	gm := g.Metrics
	gm.Served, gm.Shed, gm.ShedPct, gm.ShedWait, gm.WastedPct = 0, 0, 0, nil, 0
	if a, b := jsonOf(t, w.Metrics), jsonOf(t, gm); !bytes.Equal(a, b) {
		t.Errorf("point %d (%s): metrics\n%s\nqueue model\n%s", i, w.Limiter, a, b)
	}
	gs := g.Series
	gs.SojournP99 = nil
	if a, b := jsonOf(t, w.Series), jsonOf(t, gs); !bytes.Equal(a, b) {
		t.Errorf("point %d (%s): series differ", i, w.Limiter)
	}
	for _, x := range []struct {
		name string
		a, b any
	}{{"bounds", w.Bounds, g.Bounds}, {"clients", w.Clients, g.Clients}, {"jain", w.JainSeries, g.JainSeries}, {"curve", w.OutputCurve, g.OutputCurve}} {
		if a, b := jsonOf(t, x.a), jsonOf(t, x.b); !bytes.Equal(a, b) {
			t.Errorf("point %d (%s): %s\n%s\nqueue model\n%s", i, w.Limiter, x.name, a, b)
		}
	}
}

func jsonOf(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestForwardPassIsTheLoop runs every preset and the test configs with the
// forward pass's points in the event loop, one arrival at a time
// (modelPlain, as a gate with hooks runs), without hooks and with a gate
// that observes (completions scheduled in the heap), and compares every
// byte of every point with the forward pass's own loop; the gate hears
// exactly the fates the model measures.
func TestForwardPassIsTheLoop(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../presets/*.json")
	if len(files) == 0 {
		t.Fatal("no presets in ../presets")
	}
	files = append(files, "../testdata/all-types.json", "../testdata/service-distributions.json")
	ran := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := document.DecodeConfig(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if cfg.Workload.DurationMS > 600_000 {
			continue // long runs: the short ones cover the step
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			want := forwardPassOf(t, f, cfg)
			for _, watching := range []bool{false, true} {
				opt := sweep.Options{Workers: 1}
				opt.Simulate.Model = simulate.SwitchForwardInLoop
				var watched *[]*watchingGate
				if watching {
					watched = watch(&opt)
				}
				got, err := sweep.Run(context.Background(), cfg, opt)
				if err != nil {
					t.Fatal(err)
				}
				if a, b := jsonOf(t, want), jsonOf(t, got); !bytes.Equal(a, b) {
					t.Fatalf("in the loop (watched: %v), the sweep measures\n%.2000s\nwant\n%.2000s", watching, b, a)
				}
				if watching {
					for i, g := range *watched {
						g.heardTheFates(t, i)
					}
				}
			}
			ran++
		})
	}
	if ran < 10 {
		t.Fatalf("%d configs compared", ran)
	}
}

// shaped reports whether a server of cfg has a knee or degrade events.
func shaped(cfg *experiments.Config) bool {
	for si := range cfg.ServerCount() {
		if s := cfg.ServerAt(si); s.Shaped() {
			return true
		}
	}
	return false
}
