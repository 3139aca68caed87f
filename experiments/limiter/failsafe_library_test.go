package limiter_test

import (
	"container/heap"
	"fmt"
	"github.com/ratelab/ratelab/internal/realtools"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// TestFailsafeAdaptiveIsTheLibrary runs failsafe-go's adaptive limiter
// itself (limiter.FailsafeModule, from the Go module cache, downloaded when
// missing) on a simulated clock beside the lab's gate, request by request:
// the same admissions and, after every completion, the same limit. The
// module is copied into a temporary directory with a test-only file that
// sets the permits' clock and start times and the first update time (as
// the package's own tests do: testdata/failsafe/sim.go.txt), and a harness
// (testdata/failsafe/main.go.txt) built against the copy with a replace:
// nothing of the library is committed and the lab's go.mod stays clean.
// Queueing (which draws rand.Float64()) is left out, as in the gate.
func TestFailsafeAdaptiveIsTheLibrary(t *testing.T) {
	t.Parallel()
	bin := buildFailsafeHarness(t)
	cases := []struct {
		name string
		cfg  limiter.FailsafeAdaptiveConfig
		rps  float64
		n    int
	}{
		{"defaults", limiter.FailsafeAdaptiveConfig{MinLimit: 1, MaxLimit: 200, InitialLimit: 20, MaxLimitFactor: 5, RecentWindowMinMS: 1000,
			RecentWindowMaxMS: 30_000, RecentWindowMinSamples: 50, RecentQuantile: 0.9, BaselineWindowAge: 10, CorrelationWindowSize: 50}, 900, 60_000},
		{"fast windows", limiter.FailsafeAdaptiveConfig{MinLimit: 2, MaxLimit: 120, InitialLimit: 10, MaxLimitFactor: 3, RecentWindowMinMS: 5,
			RecentWindowMaxMS: 200, RecentWindowMinSamples: 8, RecentQuantile: 0.75, BaselineWindowAge: 4, CorrelationWindowSize: 12}, 1500, 40_000},
	}
	for _, c := range cases {
		events, want := failsafeEvents(c.cfg, c.rps, c.n, 11)
		args := []string{}
		for _, v := range []float64{float64(c.cfg.MinLimit), float64(c.cfg.MaxLimit), float64(c.cfg.InitialLimit), c.cfg.MaxLimitFactor,
			c.cfg.RecentWindowMinMS * 1e6, c.cfg.RecentWindowMaxMS * 1e6, float64(c.cfg.RecentWindowMinSamples), c.cfg.RecentQuantile,
			float64(c.cfg.BaselineWindowAge), float64(c.cfg.CorrelationWindowSize)} {
			args = append(args, strconv.FormatFloat(v, 'f', -1, 64))
		}
		cmd := exec.Command(bin, args...)
		cmd.Stdin = strings.NewReader(events)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: the harness: %v", c.name, err)
		}
		got := strings.Fields(string(out))
		if len(got) != len(want) {
			t.Fatalf("%s: the library answered %d events, the gate %d", c.name, len(got), len(want))
		}
		lines := strings.Split(events, "\n")
		changes := 0
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: event %d (%s): the library says %s, the gate %s", c.name, i, lines[i], got[i], want[i])
			}
			if i > 0 && lines[i][0] == 'c' && got[i] != got[i-1] {
				changes++
			}
		}
		if changes < 20 {
			t.Fatalf("%s: the limit moved only %d times: the check says little", c.name, changes)
		}
	}
}

// failsafeEvents runs the lab's gate on n Poisson arrivals at rps against
// a server whose RTT grows with the requests in flight (10 ms below 30,
// then 0.5 ms more per request, ±20%, 5% of them shed), and returns the
// events as the harness reads them with the gate's answers.
func failsafeEvents(cfg limiter.FailsafeAdaptiveConfig, rps float64, n int, seed uint64) (string, []string) {
	g := limiter.NewFailsafeAdaptive(cfg)
	rng := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	var answers []string
	pending := &completionHeap{}
	permits := 0
	t := 0.0
	for i := 0; i < n || pending.Len() > 0; {
		next := math.Inf(1)
		if i < n {
			next = t + rng.ExpFloat64()*1000/rps
		}
		if pending.Len() > 0 && (*pending)[0].c.DoneMS <= next {
			p := heap.Pop(pending).(pendingCompletion)
			g.Complete(p.c)
			dropped := 0
			if p.c.Outcome == limiter.Dropped {
				dropped = 1
			}
			fmt.Fprintf(&b, "c %d %d %d\n", p.permit, nanosOf(p.c.DoneMS), dropped)
			answers = append(answers, strconv.Itoa(g.LimitNow()))
			continue
		}
		t = next
		i++
		_, ok := g.Offer(t, 0)
		fmt.Fprintf(&b, "o %d\n", nanosOf(t))
		if !ok {
			answers = append(answers, "0")
			continue
		}
		answers = append(answers, "1")
		rtt := 10 + 0.5*math.Max(0, float64(g.InFlight()-30))
		rtt *= 0.8 + 0.4*rng.Float64()
		out := limiter.OnTime
		if rng.Float64() < 0.05 {
			out = limiter.Dropped
		}
		heap.Push(pending, pendingCompletion{limiter.Completion{ReleaseMS: t, DoneMS: t + rtt, Outcome: out}, permits})
		permits++
	}
	return strings.TrimSuffix(b.String(), "\n"), answers
}

func nanosOf(ms float64) int64 { return int64(math.Round(ms * 1e6)) }

type pendingCompletion struct {
	c      limiter.Completion
	permit int
}

type completionHeap []pendingCompletion

func (h completionHeap) Len() int { return len(h) }
func (h completionHeap) Less(i, j int) bool {
	if h[i].c.DoneMS != h[j].c.DoneMS {
		return h[i].c.DoneMS < h[j].c.DoneMS
	}
	return h[i].permit < h[j].permit
}
func (h completionHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *completionHeap) Push(x any)   { *h = append(*h, x.(pendingCompletion)) }
func (h *completionHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// buildFailsafeHarness copies the module into a temporary directory, adds
// the sim file, and builds the harness against the copy; it skips the
// test when the module can be neither found nor downloaded.
func buildFailsafeHarness(t *testing.T) string {
	t.Helper()
	m := realtools.Download(t, limiter.FailsafeModule)
	lib := filepath.Join(t.TempDir(), "failsafe")
	m.CopyTo(t, lib)
	sim, err := os.ReadFile(filepath.Join("testdata", "failsafe", "sim.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lib, "adaptivelimiter", "ratelab_sim.go"), sim, 0o644); err != nil {
		t.Fatal(err)
	}
	main, err := os.ReadFile(filepath.Join("testdata", "failsafe", "main.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return realtools.BuildHarness(t, m, lib, main)
}
