package runner

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/storage"
)

// A config's trace part naming one of the lab's trace files runs, reading
// it through the opener; another name is refused at Submit with its field
// path, and nothing is stored.
func TestTraceFiles(t *testing.T) {
	st := newStore(t)
	traces := map[string]string{"day.csv": "t_ms,client\n0,a\n10,b\n10,a\n250,b\n"}
	opened := 0
	r := newRunner(t, st, Options{
		Traces: func(name string) (io.ReadCloser, error) {
			opened++
			return io.NopCloser(strings.NewReader(traces[name])), nil
		},
		TraceNames: func() ([]string, error) { return []string{"day.csv"}, nil },
	})
	r.Start()
	doc := func(name string) *experiments.Config {
		cfg, err := document.DecodeConfig([]byte(`{"version":1,"workload":{"duration_ms":1000,"parts":[{"type":"trace","file":"` + name + `"}]},
			"limiters":[{"type":"token-bucket","rate_rps":10,"burst":[1,2]}]}`))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	if got := r.TraceNames(); len(got) != 1 || got[0] != "day.csv" {
		t.Errorf("TraceNames = %v", got)
	}

	_, err := r.Submit(t.Context(), doc("other.csv"), "x", "")
	var te *TraceError
	if !errors.As(err, &te) || len(te.Errs) != 1 || te.Errs[0].Path != "workload.parts[0].file" || !strings.Contains(err.Error(), `"other.csv" is not one of the lab's trace files`) {
		t.Fatalf("unknown trace: %v", err)
	}
	if runs, n, _ := st.List(t.Context(), 10, 0); n != 0 {
		t.Errorf("a refused config was stored: %v", runs)
	}

	run := runDone(t, r, doc("day.csv"))
	res, err := st.Result(t.Context(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res.Arrivals != 4 || len(res.Clients) != 2 || opened == 0 {
		t.Errorf("%d arrivals from %d clients (opened %d times), want 4 from 2", res.Arrivals, len(res.Clients), opened)
	}

	// without a trace directory every name is refused
	bare := newRunner(t, newStore(t), Options{})
	if _, err := bare.Submit(t.Context(), doc("day.csv"), "x", ""); !errors.As(err, &te) || !strings.Contains(err.Error(), "this lab has no trace files") {
		t.Errorf("no trace directory: %v", err)
	}
}

// An empirical server reading a trace file's service_ms column: the run
// settles its mean from the file, and the stored config is the one the
// engine ran (service_ms the column's mean, 7.5 ms), so the run page, the
// charts' capacity and a rerun describe the same server, not the 10 ms
// the config said before the file was read.
func TestEmpiricalTraceFileStoresItsMean(t *testing.T) {
	st := newStore(t)
	r := newRunner(t, st, Options{
		Traces: func(string) (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader("t_ms,client,service_ms\n0,a,5\n10,b,10\n10,a,5\n250,b,10\n")), nil
		},
		TraceNames: func() ([]string, error) { return []string{"day.csv"}, nil },
	})
	r.Start()
	cfg, err := document.DecodeConfig([]byte(`{"version":1,"workload":{"duration_ms":1000,"parts":[{"type":"trace","file":"day.csv"}]},
		"server":{"service":"empirical"},"limiters":[{"type":"token-bucket","rate_rps":10,"burst":[1,2]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	run := runDone(t, r, cfg)
	got, err := st.Get(t.Context(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := document.DecodeConfig(got.Config)
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Result(t.Context(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Server.ServiceMS != 7.5 || res.Config.Server.ServiceMS != 7.5 {
		t.Fatalf("stored service_ms %g, result's %g; want the column's mean 7.5", stored.Server.ServiceMS, res.Config.Server.ServiceMS)
	}
}

// TestTraceFileOfALoad: a load's trace file the lab does not have is
// refused at the load's part (loads[1].parts[0].file); the path said
// loads[1].workload.parts[0].file, a field no config has.
func TestTraceFileOfALoad(t *testing.T) {
	r := newRunner(t, newStore(t), Options{
		Traces:     func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("t_ms,client\n0,a\n")), nil },
		TraceNames: func() ([]string, error) { return []string{"day.csv"}, nil },
	})
	cfg, err := document.DecodeConfig([]byte(`{"version":1,"workload":{"duration_ms":1000,"parts":[{"type":"trace","file":"day.csv"}]},
		"loads":[{"name":"a","parts":[{"type":"trace","file":"day.csv"}]},{"name":"b","parts":[{"type":"trace","file":"night.csv"}]}],
		"limiters":[{"type":"token-bucket","rate_rps":10,"burst":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Submit(t.Context(), cfg, "x", "")
	var te *TraceError
	if !errors.As(err, &te) || len(te.Errs) != 1 || te.Errs[0].Path != "loads[1].parts[0].file" {
		t.Fatalf("a load's unknown trace: %v", err)
	}
}

// runDone submits cfg as run "day" and waits for it to end done.
func runDone(t *testing.T, r *Runner, cfg *experiments.Config) *storage.Run {
	t.Helper()
	run, err := r.Submit(t.Context(), cfg, "day", "")
	if err != nil {
		t.Fatal(err)
	}
	events, unsubscribe := r.Subscribe(run.ID)
	defer unsubscribe()
	if final, _ := waitFinal(t, events, time.Minute); final.Status != storage.StatusDone {
		t.Fatalf("final %+v", final)
	}
	return run
}
