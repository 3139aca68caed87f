package limiter_test

import (
	"bytes"
	"encoding/json"
	"github.com/ratelab/ratelab/internal/realtools"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// gubernatorModule is the library the async model and the gubernator
// gate are checked against.
const gubernatorModule = "github.com/gubernator-io/gubernator/v2@v2.13.0"

// gubernatorScenario is one run of the differential: daemons instances
// behind round robin, one key, arrivals at whole ms.
type gubernatorScenario struct {
	Name       string     `json:"-"`
	Daemons    int        `json:"daemons"`
	SyncWaitMS int64      `json:"sync_wait_ms"`
	BatchLimit int        `json:"batch_limit"`
	Leaky      bool       `json:"leaky"`
	Drain      bool       `json:"drain"`
	Limit      int64      `json:"limit"`
	DurationMS int64      `json:"duration_ms"`
	Arrivals   [][2]int64 `json:"arrivals"` // [ms, daemon]
	// Want is what the cluster admits with daemon 0 owning the key, as
	// measured with the harness.
	Want int `json:"-"`
}

// gubernatorScenarios are the differential's runs: the (3
// daemons, token bucket 10 per s for 3 s, 30/s and 100/s offered, sync
// 100 ms and 1 ms; 2 daemons of limit 1, gubernator #208, at 30/s), leaky
// buckets, DRAIN_OVER_LIMIT on the clients' requests and a batch limit of
// 1. One gate of limit 10 per s would admit 30 in 3 s, of limit 1 3.
// What GLOBAL admits depends on which daemon owns the key (with owner 1
// or 2 the 100/s run admits 46 or 36, not 55): the harness numbers the
// daemons from the key's owner.
func gubernatorScenarios() []gubernatorScenario {
	rr := func(daemons int, rps, seconds int64) [][2]int64 {
		var out [][2]int64
		for k := int64(0); k < rps*seconds; k++ {
			out = append(out, [2]int64{k * 1000 / rps, k % int64(daemons)})
		}
		return out
	}
	return []gubernatorScenario{
		{Name: "30/s sync 100", Daemons: 3, SyncWaitMS: 100, BatchLimit: 1000, Limit: 10, DurationMS: 1000, Arrivals: rr(3, 30, 3), Want: 36},
		{Name: "30/s sync 1", Daemons: 3, SyncWaitMS: 1, BatchLimit: 1000, Limit: 10, DurationMS: 1000, Arrivals: rr(3, 30, 3), Want: 30},
		{Name: "100/s sync 100", Daemons: 3, SyncWaitMS: 100, BatchLimit: 1000, Limit: 10, DurationMS: 1000, Arrivals: rr(3, 100, 3), Want: 55},
		{Name: "#208 limit 1", Daemons: 2, SyncWaitMS: 100, BatchLimit: 1000, Limit: 1, DurationMS: 1000, Arrivals: rr(2, 30, 3), Want: 6},
		{Name: "leaky 30/s sync 100", Daemons: 3, SyncWaitMS: 100, BatchLimit: 1000, Leaky: true, Limit: 10, DurationMS: 1000, Arrivals: rr(3, 30, 3), Want: 42},
		{Name: "leaky 100/s sync 50", Daemons: 3, SyncWaitMS: 50, BatchLimit: 1000, Leaky: true, Limit: 10, DurationMS: 1000, Arrivals: rr(3, 100, 3), Want: 38},
		{Name: "drain 100/s sync 100", Daemons: 3, SyncWaitMS: 100, BatchLimit: 1000, Drain: true, Limit: 10, DurationMS: 1000, Arrivals: rr(3, 100, 3), Want: 55},
		{Name: "batch 1 30/s", Daemons: 3, SyncWaitMS: 100, BatchLimit: 1, Limit: 10, DurationMS: 1000, Arrivals: rr(3, 30, 3), Want: 30},
	}
}

// gubernatorModel runs a scenario through the async model (the spec's
// gate, as a run builds it) with the key's owner given, and returns its
// decisions.
func gubernatorModel(t *testing.T, sc gubernatorScenario, owner int) []int {
	t.Helper()
	algorithm, drain := limiter.GubernatorTokenBucket, limiter.GubernatorDrainNo
	if sc.Leaky {
		algorithm = limiter.GubernatorLeakyBucket
	}
	if sc.Drain {
		drain = limiter.GubernatorDrainYes
	}
	s := &limiter.Spec{Type: limiter.TypeGubernator}
	s.SetValues(limiter.ParamLimit, limiter.Values{float64(sc.Limit)})
	s.SetValues(limiter.ParamDuration, limiter.Values{float64(sc.DurationMS)})
	s.SetOption(limiter.OptionGubernatorAlgorithm, algorithm)
	s.SetOption(limiter.OptionDrainOverLimit, drain)
	s.SetValues(limiter.ParamInstances, limiter.Values{float64(sc.Daemons)})
	s.SetOption(limiter.OptionBalancer, limiter.BalancerRoundRobin)
	s.SetOption(limiter.OptionSharing, limiter.SharingAsync)
	s.SetValues(limiter.ParamSyncWait, limiter.Values{float64(sc.SyncWaitMS)})
	s.SetValues(limiter.ParamBatchLimit, limiter.Values{float64(sc.BatchLimit)})
	s.SetValues(limiter.ParamOwner, limiter.Values{float64(owner)})
	s.Normalize()
	if errs := s.Validate("limiter"); len(errs) > 0 {
		t.Fatalf("%s: %v", sc.Name, errs)
	}
	g, err := limiter.New(s, s.Points()[0], []float64{1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := g.(limiter.Replicated)
	out := make([]int, len(sc.Arrivals))
	for k, a := range sc.Arrivals {
		i := r.Route(float64(a[0]), 0)
		if i != int(a[1]) {
			t.Fatalf("%s: round robin sent request %d to instance %d, the scenario to daemon %d", sc.Name, k, i, a[1])
		}
		if _, ok := r.OfferTo(i, float64(a[0]), 0); ok {
			out[k] = 1
		}
	}
	return out
}

// TestAsyncIsGubernator runs Gubernator v2.13.0 itself (from the Go module
// cache, downloaded when missing) as a cluster of daemons in one process
// on a frozen holster clock, and the async model beside it, request by
// request: the same decision for every request of every scenario, and the
// admissions Want states. The
// module is copied into a temporary directory and patched there
// (testdata/gubernator/sim.go.txt and the hooks gubernatorPatches names)
// so the GLOBAL hit sends and the owner's broadcasts run on the holster
// clock, one at a time in due order, instead of real sleeps; the harness
// (testdata/gubernator/main.go.txt) is built against the copy with a
// replace and -tags holster_test_mode: nothing of the library is
// committed and the lab's go.mod stays clean. The owner of the key is
// the real cluster's (cluster.FindOwningDaemon): the harness numbers the
// daemons from it, and the model's owner_instance is 0.
func TestAsyncIsGubernator(t *testing.T) {
	t.Parallel()
	bin := buildGubernatorHarness(t)
	scenarios := gubernatorScenarios()
	in, err := json.Marshal(scenarios)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the harness: %v\n%s", err, tail(stderr.String(), 4000))
	}
	var got []struct {
		Owner    int   `json:"owner"`
		Admitted []int `json:"admitted"`
	}
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(scenarios) {
		t.Fatalf("the harness printed %q (%v)", out, err)
	}
	for k, sc := range scenarios {
		lib := got[k]
		if lib.Owner < 0 || len(lib.Admitted) != len(sc.Arrivals) {
			t.Fatalf("%s: the harness answered owner %d and %d decisions for %d arrivals", sc.Name, lib.Owner, len(lib.Admitted), len(sc.Arrivals))
		}
		if lib.Owner != 0 {
			t.Fatalf("%s: the key's owner is daemon %d, not 0", sc.Name, lib.Owner)
		}
		model := gubernatorModel(t, sc, lib.Owner)
		n := 0
		for j := range model {
			if model[j] != lib.Admitted[j] {
				t.Errorf("%s (owner %d): request %d at %d ms to daemon %d: Gubernator says %d, the model %d", sc.Name, lib.Owner, j, sc.Arrivals[j][0], sc.Arrivals[j][1], lib.Admitted[j], model[j])
				break
			}
			n += lib.Admitted[j]
		}
		if n != sc.Want {
			t.Errorf("%s: Gubernator admitted %d of %d, the test says %d", sc.Name, n, len(sc.Arrivals), sc.Want)
		}
	}
}

// TestAsyncAdmits checks the model's admissions in the differential's
// scenarios against what the real cluster admitted (TestAsyncIsGubernator
// measures them), without the library: one gate of the same limit admits
// 30 (limit 10 per s) or 3 (limit 1) in the 3 s.
func TestAsyncAdmits(t *testing.T) {
	t.Parallel()
	for _, sc := range gubernatorScenarios() {
		n := 0
		for _, v := range gubernatorModel(t, sc, 0) {
			n += v
		}
		if n != sc.Want {
			t.Errorf("%s: the model admits %d, Gubernator %d", sc.Name, n, sc.Want)
		}
	}
}

// gubernatorPatches hook the library's interval.go and global.go to
// sim.go.txt: each old text must occur exactly as often as given.
var gubernatorPatches = []struct {
	file, old, new string
	count          int
}{
	{"interval.go", "type Interval struct {", "type Interval struct {\n\tratelab ratelabInterval", 1},
	{"interval.go", "func (i *Interval) run(d clock.Duration) {", "func (i *Interval) run(d clock.Duration) {\n\tif ratelabRun(i, d) {\n\t\treturn\n\t}", 1},
	{"interval.go", "func (i *Interval) Stop() {", "func (i *Interval) Stop() {\n\tratelabStop(i)", 1},
	{"interval.go", "func (i *Interval) Next() {", "func (i *Interval) Next() {\n\tif ratelabNext(i) {\n\t\treturn\n\t}", 1},
	{"global.go", "var interval = NewInterval(gm.conf.GlobalSyncWait)", "var interval = NewInterval(gm.conf.GlobalSyncWait)\n\tratelabCount(interval)", 2},
	{"global.go", "gm.hitsQueue <- r", "ratelabBusy.Add(1)\n\t\tgm.hitsQueue <- r", 1},
	{"global.go", "gm.broadcastQueue <- req", "ratelabBusy.Add(1)\n\t\tgm.broadcastQueue <- req", 1},
	{"global.go", "case r := <-gm.hitsQueue:", "case r := <-gm.hitsQueue:\n\t\t\tdefer ratelabBusy.Add(-1)", 1},
	{"global.go", "case update := <-gm.broadcastQueue:", "case update := <-gm.broadcastQueue:\n\t\t\tdefer ratelabBusy.Add(-1)", 1},
	{"global.go", "case <-interval.C:", "case <-interval.C:\n\t\t\tdefer ratelabBusy.Add(-1)", 2},
}

// buildGubernatorHarness copies the module into a temporary directory,
// patches it, and builds the harness against the copy; it skips the test
// when the module can be neither found nor downloaded.
func buildGubernatorHarness(t *testing.T) string {
	t.Helper()
	m := realtools.Download(t, gubernatorModule)
	lib := filepath.Join(t.TempDir(), "gubernator")
	m.CopyTo(t, lib)
	for _, p := range gubernatorPatches {
		path := filepath.Join(lib, p.file)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(src), p.old); n != p.count {
			t.Fatalf("patching %s: %q occurs %d times, not %d: not v2.13.0's source", p.file, p.old, n, p.count)
		}
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(src), p.old, p.new)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sim, err := os.ReadFile(filepath.Join("testdata", "gubernator", "sim.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lib, "ratelab_sim.go"), sim, 0o644); err != nil {
		t.Fatal(err)
	}
	main, err := os.ReadFile(filepath.Join("testdata", "gubernator", "main.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return realtools.BuildHarness(t, m, lib, main, "holster_test_mode")
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
