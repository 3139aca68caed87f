package simulate_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/metrics"
	"github.com/ratelab/ratelab/experiments/simulate"
	"github.com/ratelab/ratelab/experiments/sweep"
	"github.com/ratelab/ratelab/experiments/workload"
)

// hookLog is what a toy gate heard from the loop, in order: each Offer's
// time and each completion.
type hookLog struct {
	offers      []float64 // time of each Offer, in order
	heard       []limiter.Completion
	heardAfter  []int // offers made before each completion was heard
	admittedAt  []float64
	releasedAt  []float64
	admittedFor []int32
	admittedSeq []int64 // the offer's place among the offers
}

func (h *hookLog) offer(t float64) { h.offers = append(h.offers, t) }

func (h *hookLog) complete(c limiter.Completion) {
	h.heard = append(h.heard, c)
	h.heardAfter = append(h.heardAfter, len(h.offers))
}

func (h *hookLog) admitted(t, release float64, c int32) {
	h.admittedAt = append(h.admittedAt, t)
	h.releasedAt = append(h.releasedAt, release)
	h.admittedFor = append(h.admittedFor, c)
	h.admittedSeq = append(h.admittedSeq, int64(len(h.offers)-1))
}

// inTimeOrder checks that the completions came in time order, each after
// every Offer before its time and before every Offer after it.
func (h *hookLog) inTimeOrder(t *testing.T) {
	t.Helper()
	for i, c := range h.heard {
		if i > 0 && c.DoneMS < h.heard[i-1].DoneMS {
			t.Fatalf("completion %d at %g heard after one at %g", i, c.DoneMS, h.heard[i-1].DoneMS)
		}
		k := h.heardAfter[i]
		if k > 0 && h.offers[k-1] > c.DoneMS {
			t.Fatalf("completion %d at %g heard after an offer at %g", i, c.DoneMS, h.offers[k-1])
		}
		if k < len(h.offers) && h.offers[k] < c.DoneMS {
			t.Fatalf("completion %d at %g heard after the offer at %g", i, c.DoneMS, h.offers[k])
		}
	}
}

// watchingGate observes the completions of the gate it wraps and changes
// nothing: a point run with it measures what it measures without. It
// says the wrapped gate's Retry-After (t when it cannot: the same as no
// advice). fates are the fates the model measured (Switches.Fate).
type watchingGate struct {
	g limiter.Gate
	hookLog
	fates []limiter.Completion
	// fatesOnly: only the completions and fates are kept (heardTheFates);
	// the offers, admissions and what each completion was heard after
	// (inTimeOrder) are not, and the two logs are compared as soon as the
	// next point's gate is made (its point has ended: points run one at a
	// time), the verdict kept and the logs' memory handed to that gate. On
	// a preset's hundreds of thousands of requests a point, growing and
	// keeping every point's logs was most of an equivalence test's CPU.
	fatesOnly bool
	compared  bool
	verdict   string // the first difference ("": none), once compared
}

func (w *watchingGate) NextAdmitMS(t float64, c int32) float64 {
	if a, ok := w.g.(limiter.Advisor); ok {
		return a.NextAdmitMS(t, c)
	}
	return t
}

// watch makes opt run every point's gate behind a watchingGate, each
// hearing its point's completions and fates (points run one at a time:
// opt.Workers 1); it returns the gates made, in order. They keep what
// heardTheFates checks; watchInTime's also what inTimeOrder does.
func watch(opt *sweep.Options) *[]*watchingGate { return watching(opt, true) }

// watchInTime is watch with every offer and admission logged.
func watchInTime(opt *sweep.Options) *[]*watchingGate { return watching(opt, false) }

func watching(opt *sweep.Options, fatesOnly bool) *[]*watchingGate {
	gates := new([]*watchingGate)
	opt.Simulate.Gate = func(g limiter.Gate, _ limiter.Occupancy) limiter.Gate {
		w := &watchingGate{g: g, fatesOnly: fatesOnly}
		if n := len(*gates); fatesOnly && n > 0 {
			prev := (*gates)[n-1]
			prev.verdict, prev.compared = prev.compare(), true
			w.heard, w.fates = prev.heard[:0], prev.fates[:0]
			prev.heard, prev.fates = nil, nil
		}
		*gates = append(*gates, w)
		if r, ok := g.(limiter.Replicated); ok {
			return &watchingInstances{w, r}
		}
		return w
	}
	opt.Simulate.Fate = func(f limiter.Completion) {
		w := (*gates)[len(*gates)-1]
		w.fates = append(w.fates, f)
	}
	return gates
}

// heardTheFates checks that the gate heard, as completions, exactly the
// fates the model measured: the same requests (Seq, client, instance),
// times (arrival, release, done) and outcomes. It sorts both logs, by
// time then Seq: check anything about the order before.
func (w *watchingGate) heardTheFates(t *testing.T, point int) {
	t.Helper()
	verdict := w.verdict
	if !w.compared {
		verdict = w.compare()
	}
	if verdict != "" {
		t.Fatalf("point %d: %s", point, verdict)
	}
}

// compare is heardTheFates' check: the first difference, "" for none.
func (w *watchingGate) compare() string {
	order := func(a, b limiter.Completion) int {
		return cmp.Or(cmp.Compare(a.DoneMS, b.DoneMS), cmp.Compare(a.Seq, b.Seq))
	}
	heard, fates := w.heard, w.fates
	slices.SortFunc(heard, order)
	slices.SortFunc(fates, order)
	if len(heard) != len(fates) {
		return fmt.Sprintf("heard %d completions, the model measured %d fates", len(heard), len(fates))
	}
	for i := range heard {
		if heard[i] != fates[i] {
			return fmt.Sprintf("completion %d heard %+v, the model measured %+v", i, heard[i], fates[i])
		}
	}
	return ""
}

func (w *watchingGate) Offer(t float64, c int32) (float64, bool) {
	if w.fatesOnly {
		return w.g.Offer(t, c)
	}
	w.offer(t)
	release, ok := w.g.Offer(t, c)
	if ok {
		w.admitted(t, release, c)
	}
	return release, ok
}

// Complete records c; the wrapped gate's own hooks hear it through Parts.
func (w *watchingGate) Complete(c limiter.Completion) {
	if w.fatesOnly {
		w.heard = append(w.heard, c)
		return
	}
	w.complete(c)
}

// Parts is the watched gate: its own hooks run as without the watcher.
func (w *watchingGate) Parts() []limiter.Gate { return []limiter.Gate{w.g} }

// watchingInstances watches a replicated gate and stays one: the loop
// routes through it (Route, OfferTo) to the watched gate's instances.
type watchingInstances struct {
	*watchingGate
	r limiter.Replicated
}

func (w *watchingInstances) Instances() int                    { return w.r.Instances() }
func (w *watchingInstances) Route(t float64, client int32) int { return w.r.Route(t, client) }
func (w *watchingInstances) State(i int) float64               { return w.r.State(i) }

func (w *watchingInstances) StoreDown() (int, int, bool) {
	if s, ok := w.r.(limiter.StoreReporter); ok {
		return s.StoreDown()
	}
	return 0, 0, false
}

func (w *watchingInstances) OfferTo(i int, t float64, c int32) (float64, bool) {
	if w.fatesOnly {
		return w.r.OfferTo(i, t, c)
	}
	w.offer(t)
	release, ok := w.r.OfferTo(i, t, c)
	if ok {
		w.admitted(t, release, c)
	}
	return release, ok
}

// learningGate is a toy adaptive concurrency limit: it admits while fewer
// than limit of its requests are in the system, and lowers the limit by
// one (to 1 at least) after every completion that was not on time.
type learningGate struct {
	limit, inFlight, lowest int
	hookLog
}

func (g *learningGate) Offer(t float64, c int32) (float64, bool) {
	g.offer(t)
	if g.inFlight >= g.limit {
		return 0, false
	}
	g.inFlight++
	g.admitted(t, t, c)
	return t, true
}

func (g *learningGate) Complete(c limiter.Completion) {
	g.complete(c)
	g.inFlight--
	if c.Outcome != limiter.OnTime {
		g.limit = max(1, g.limit-1)
	}
	g.lowest = min(g.lowest, g.limit)
}

// TestObserverLearnsFromCompletions: a toy concurrency gate that learns
// from completions, in front of one FIFO worker of fixed service (the
// forward pass's model, run by the loop because the gate observes), hears
// exactly the completions of the requests it admitted, at the finish a
// FIFO worker gives them, with their outcome, in time order between its
// offers; and what it learns shows in the measures.
func TestObserverLearnsFromCompletions(t *testing.T) {
	t.Parallel()
	cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 3,
  "workload": {"duration_ms": 4000, "parts": [{"type": "poisson", "rate_rps": 400}]},
  "server": {"workers": 1, "service_ms": 4, "deadline_ms": 30},
  "limiters": [{"type": "none"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var gates []*learningGate
	opt := sweep.Options{Workers: 1}
	opt.Simulate.Gate = func(limiter.Gate, limiter.Occupancy) limiter.Gate {
		g := &learningGate{limit: 40, lowest: 40}
		gates = append(gates, g)
		return g
	}
	res, err := sweep.Run(context.Background(), cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	// Streamed in batches of 97 arrivals (as the sweep feeds a load too
	// large to hold), the completions wait for theirs.
	streamed := cfg.Points()[0]
	arrivals, err := workload.Generate(&cfg.Workload, cfg.Seed)
	if err != nil {
		t.Fatal(err)
	}
	f, err := simulate.NewForwardPass(context.Background(), cfg, &streamed, arrivals.Clients, len(arrivals.Groups), &opt.Simulate)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < arrivals.Len(); i += 97 {
		e := min(i+97, arrivals.Len())
		if err := f.Feed(arrivals.T[i:e], arrivals.Client[i:e]); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Finish(); err != nil {
		t.Fatal(err)
	}
	if a, b := jsonOf(t, res.Points[0].Metrics), jsonOf(t, streamed.Metrics); !bytes.Equal(a, b) || !slices.Equal(gates[0].heard, gates[1].heard) {
		t.Fatalf("streamed, the point measures\n%s\nin memory\n%s", b, a)
	}
	g, m := gates[0], res.Points[0].Metrics
	if len(g.heard) != m.Admitted || len(g.admittedAt) != m.Admitted {
		t.Fatalf("heard %d completions of %d admitted (%d by the gate)", len(g.heard), m.Admitted, len(g.admittedAt))
	}
	g.inTimeOrder(t)
	// The completions a FIFO worker of 4 ms gives the admitted requests.
	want := make([]limiter.Completion, len(g.admittedAt))
	free := 0.0
	onTime := 0
	for i, a := range g.admittedAt {
		finish := max(g.releasedAt[i], free) + 4
		free = finish
		out := limiter.Late
		if max(4, metrics.RoundMS(finish-a)) <= 30 {
			out = limiter.OnTime
			onTime++
		}
		want[i] = limiter.Completion{Seq: g.admittedSeq[i], Client: g.admittedFor[i], ArrivalMS: a, ReleaseMS: g.releasedAt[i], DoneMS: finish, Outcome: out}
	}
	if !slices.Equal(g.heard, want) {
		for i := range want {
			if g.heard[i] != want[i] {
				t.Fatalf("completion %d: heard %+v, want %+v", i, g.heard[i], want[i])
			}
		}
	}
	if onTime != m.OnTime || len(want)-onTime != m.Late {
		t.Errorf("%d on time, %d late heard; the point measured %d and %d", onTime, len(want)-onTime, m.OnTime, m.Late)
	}
	if g.lowest >= 40 || m.Rejected == 0 {
		t.Errorf("the gate learned nothing: lowest limit %d, %d rejected", g.lowest, m.Rejected)
	}
}

// TestObservingChangesNothing: a gate that observes completions and
// changes nothing measures, on every model of the loop (the forward
// pass's, the queue model, the client model on the plain server, on a
// queue at admission and by events), what the gate measures without the
// hook, and hears one completion per admitted request, in time order,
// with outcomes that add up to the point's measures.
func TestObservingChangesNothing(t *testing.T) {
	t.Parallel()
	docs := map[string]string{
		"forward": `{"version": 1, "seed": 5,
  "workload": {"duration_ms": 3000, "parts": [{"type": "poisson", "rate_rps": 300}, {"type": "poisson", "client": "b", "rate_rps": 100}]},
  "server": {"workers": 2, "service_ms": 8, "deadline_ms": 40},
  "limiters": [{"type": "token-bucket", "rate_rps": 220, "burst": [1, 20]}]}`,
		"queue-late": `{"version": 1, "seed": 5,
  "workload": {"duration_ms": 3000, "parts": [{"type": "poisson", "rate_rps": 400}]},
  "server": {"workers": 2, "service_ms": 8, "deadline_ms": 25, "discipline": "lifo", "door": "tail-drop", "bound": 20, "end": "cut"},
  "limiters": [{"type": "token-bucket", "rate_rps": 300, "burst": [1, 20]}]}`,
		"clients-events-late": `{"version": 1, "seed": 5,
  "workload": {"duration_ms": 3000, "parts": [{"type": "poisson", "rate_rps": 300, "timeout_ms": 60, "retries": 2, "backoff_ms": 20}]},
  "server": {"workers": 2, "service_ms": 8, "deadline_ms": 25, "discipline": "lifo", "door": "tail-drop", "bound": 10, "cancel_on_timeout": "drop-unstarted", "end": "cut"},
  "limiters": [{"type": "token-bucket", "rate_rps": 260, "burst": [1, 20]}]}`,
		"clients-queue-late": `{"version": 1, "seed": 5,
  "workload": {"duration_ms": 3000, "parts": [{"type": "poisson", "rate_rps": 300, "timeout_ms": 30, "retries": 2, "backoff_ms": 20}]},
  "server": {"workers": 2, "service_ms": 8, "deadline_ms": 25, "door": "tail-drop", "bound": 10, "cancel_on_timeout": "drop-unstarted", "end": "cut"},
  "limiters": [{"type": "token-bucket", "rate_rps": 260, "burst": [1, 20]}]}`,
		"queue": `{"version": 1, "seed": 5,
  "workload": {"duration_ms": 3000, "parts": [{"type": "poisson", "rate_rps": 400}]},
  "server": {"workers": 2, "service_ms": 8, "deadline_ms": 40, "discipline": "lifo", "door": "tail-drop", "bound": 20, "expire": "at-dequeue", "end": "cut"},
  "limiters": [{"type": "token-bucket", "rate_rps": 300, "burst": [1, 20]}]}`,
		"clients": `{"version": 1, "seed": 5,
  "workload": {"duration_ms": 3000, "parts": [{"type": "poisson", "rate_rps": 300, "timeout_ms": 30, "retries": 2, "backoff_ms": 20, "jitter": "full"}]},
  "server": {"workers": 2, "service_ms": 8, "deadline_ms": 40, "cancel_on_timeout": "drop-unstarted"},
  "limiters": [{"type": "token-bucket", "rate_rps": 260, "burst": [1, 20]}]}`,
		"clients-queue": `{"version": 1, "seed": 5,
  "workload": {"duration_ms": 3000, "parts": [{"type": "poisson", "rate_rps": 300, "timeout_ms": 30, "retries": 2, "backoff_ms": 20}]},
  "server": {"workers": 2, "service_ms": 8, "deadline_ms": 40, "door": "tail-drop", "bound": 10, "expire": "at-dequeue"},
  "limiters": [{"type": "token-bucket", "rate_rps": 260, "burst": [1, 20]}]}`,
		"clients-events": `{"version": 1, "seed": 5,
  "workload": {"duration_ms": 3000, "parts": [{"type": "poisson", "rate_rps": 300, "timeout_ms": 30, "retries": 2, "backoff_ms": 20}]},
  "server": {"workers": 2, "service_ms": 8, "deadline_ms": 40, "discipline": "lifo", "door": "tail-drop", "bound": 10, "cancel_on_timeout": "drop-unstarted", "end": "cut"},
  "limiters": [{"type": "token-bucket", "rate_rps": 260, "burst": [1, 20]}]}`,
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			cfg, err := document.DecodeConfig([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			want, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			opt := sweep.Options{Workers: 1}
			watched := watchInTime(&opt)
			got, err := sweep.Run(context.Background(), cfg, opt)
			if err != nil {
				t.Fatal(err)
			}
			if a, b := jsonOf(t, want), jsonOf(t, got); !bytes.Equal(a, b) {
				t.Fatalf("observed, the sweep measures\n%s\nwant\n%s", clipJSON(b), clipJSON(a))
			}
			var total [4]int
			for i, g := range *watched {
				m := got.Points[i].Metrics
				if len(g.heard) != m.Admitted || m.Admitted == 0 {
					t.Fatalf("point %d: heard %d completions of %d admitted", i, len(g.heard), m.Admitted)
				}
				g.inTimeOrder(t)
				g.heardTheFates(t, i)
				var n [4]int
				for _, c := range g.heard {
					n[c.Outcome]++
					if !(c.LatencyMS() >= 0) {
						t.Fatalf("point %d: %+v", i, c)
					}
				}
				if n[limiter.OnTime] != m.OnTime {
					t.Errorf("point %d: %d on time heard, %d measured", i, n[limiter.OnTime], m.OnTime)
				}
				if c := m.Client; c != nil && n[limiter.TimedOut] < c.Dropped {
					t.Errorf("point %d: %d timed out heard, %d dropped", i, n[limiter.TimedOut], c.Dropped)
				}
				if m.Shed > 0 && n[limiter.Dropped] == 0 {
					t.Errorf("point %d: %d shed, none heard dropped", i, m.Shed)
				}
				if m.Client == nil && m.ShedWait == nil && n[limiter.Late] != m.Late {
					t.Errorf("point %d: %d late heard, %d measured", i, n[limiter.Late], m.Late)
				}
				for k := range n {
					total[k] += n[k]
				}
			}
			if strings.HasSuffix(name, "-late") && (total[limiter.Late] == 0 || total[limiter.Dropped] == 0) {
				t.Errorf("%d late, %d dropped heard: the config is meant to give both", total[limiter.Late], total[limiter.Dropped])
			}
		})
	}
}

func clipJSON(b []byte) []byte { return b[:min(len(b), 2000)] }

// shardedGate is a toy replicated gate: instances each admit while their
// own count of the current second, plus what the others had counted at
// the last sync (every syncMS: the model of a shared store that lags),
// stays under limit; the balancer sends client c's requests to instance
// c % n. It logs its offers and syncs.
type shardedGate struct {
	limit        int
	syncMS       float64
	nextSync     float64
	counts, seen []int // per instance: its count this second, and the others' at the last sync
	second       int64
	syncs        []float64
	offers       []float64
	syncedBefore []int // offers made before each sync
}

func newShardedGate(n, limit int, syncMS float64) *shardedGate {
	return &shardedGate{limit: limit, syncMS: syncMS, nextSync: syncMS, counts: make([]int, n), seen: make([]int, n)}
}

func (g *shardedGate) Instances() int                    { return len(g.counts) }
func (g *shardedGate) Route(_ float64, client int32) int { return int(client) % len(g.counts) }
func (g *shardedGate) State(i int) float64               { return float64(g.counts[i]) }

func (g *shardedGate) Offer(t float64, client int32) (float64, bool) {
	return g.OfferTo(g.Route(t, client), t, client)
}

func (g *shardedGate) OfferTo(i int, t float64, _ int32) (float64, bool) {
	g.offers = append(g.offers, t)
	if s := int64(math.Floor(t / 1000)); s != g.second {
		g.second = s
		clear(g.counts)
		clear(g.seen)
	}
	if g.counts[i]+g.seen[i] >= g.limit {
		return 0, false
	}
	g.counts[i]++
	return t, true
}

func (g *shardedGate) NextSyncMS() float64 { return g.nextSync }

func (g *shardedGate) Sync(t float64) {
	g.syncs = append(g.syncs, t)
	g.syncedBefore = append(g.syncedBefore, len(g.offers))
	total := 0
	for _, c := range g.counts {
		total += c
	}
	for i, c := range g.counts {
		g.seen[i] = total - c
	}
	g.nextSync = t + g.syncMS
}

// observedShards is a shardedGate that observes completions too: each
// completion's Instance must be the one its client's requests go to.
type observedShards struct {
	*shardedGate
	heard []limiter.Completion
}

func (g *observedShards) Complete(c limiter.Completion) { g.heard = append(g.heard, c) }

// TestReplicatedGateBehindABalancer: the loop hosts a toy gate of three
// instances behind a balancer, sharing their counts at a sync every 250
// ms, on every model (the forward pass's, the queue model, the client
// model on the plain server and on a queue at admission and by events):
// each instance's decisions and state are filed (Metrics.Instances) and
// add up to the gate's decisions and to the point's counts of the same
// thing (Admitted; under client behaviour Offered adds up to the
// attempts, retries included); every completion names the instance that
// admitted it; every sync runs at its time between the offers before and
// after it; and the shared state changes the decisions (without syncs the
// instances admit more).
func TestReplicatedGateBehindABalancer(t *testing.T) {
	t.Parallel()
	retries := `, "timeout_ms": 50, "retries": 1, "backoff_ms": 10`
	for _, c := range []struct{ name, behaviour, server string }{
		{"forward", "", ""},
		{"queue", "", `, "discipline": "lifo"`},
		{"clients", retries, ""},
		{"clients-queue", retries, `, "door": "tail-drop", "bound": 50`},
		{"clients-events", retries, `, "discipline": "lifo"`},
	} {
		cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 9,
  "workload": {"duration_ms": 3000, "parts": [{"type": "clients", "group": "c", "clients": 6, "rate_rps": 50, "arrival": "poisson"` + c.behaviour + `}]},
  "server": {"workers": 4, "service_ms": 2, "deadline_ms": 100` + c.server + `},
  "limiters": [{"type": "none"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		run := func(syncMS float64) (*observedShards, experiments.Metrics) {
			var gates []*observedShards
			opt := sweep.Options{Workers: 1}
			opt.Simulate.Gate = func(limiter.Gate, limiter.Occupancy) limiter.Gate {
				g := &observedShards{shardedGate: newShardedGate(3, 60, syncMS)}
				gates = append(gates, g)
				return g
			}
			res, err := sweep.Run(context.Background(), cfg, opt)
			if err != nil {
				t.Fatal(err)
			}
			return gates[0], res.Points[0].Metrics
		}
		g, m := run(250)
		if len(m.Instances) != 3 {
			t.Fatalf("%s: %d instances filed, want 3", c.name, len(m.Instances))
		}
		offered, admitted := 0, 0
		for i, in := range m.Instances {
			offered += in.Offered
			admitted += in.Admitted
			if in.State != float64(g.counts[i]) || in.Offered == 0 {
				t.Errorf("%s: instance %d: %+v, its count %d", c.name, i, in, g.counts[i])
			}
		}
		if offered != len(g.offers) || admitted != m.Admitted || admitted != len(g.heard) {
			t.Errorf("%s: instances offered %d admitted %d; the gate saw %d offers, the point admitted %d, %d completions", c.name, offered, admitted, len(g.offers), m.Admitted, len(g.heard))
		}
		if cm := m.Client; cm != nil && offered != cm.Attempts {
			t.Errorf("%s: instances offered %d, the point's attempts %d", c.name, offered, cm.Attempts)
		}
		if cm := m.Client; cm == nil && offered != m.Arrivals {
			t.Errorf("%s: instances offered %d, the point's arrivals %d", c.name, offered, m.Arrivals)
		}
		for _, d := range g.heard {
			if int(d.Instance) != g.Route(0, d.Client) {
				t.Fatalf("%s: %+v: client %d's requests go to instance %d", c.name, d, d.Client, g.Route(0, d.Client))
			}
		}
		// Syncs go on past the run's 3000 ms while events are left (here
		// the completions of the last requests).
		if len(g.syncs) < 12 || g.syncs[len(g.syncs)-1] > 3250 {
			t.Fatalf("%s: synced at %v, want every 250 ms to 3000 or 3250", c.name, g.syncs)
		}
		for k, s := range g.syncs {
			if s != float64(250*(k+1)) {
				t.Fatalf("%s: synced at %v, want every 250 ms", c.name, g.syncs)
			}
			j := g.syncedBefore[k]
			if j > 0 && g.offers[j-1] > s || j < len(g.offers) && g.offers[j] < s {
				t.Fatalf("%s: the sync at %g ran between offers %d and %d", c.name, s, j-1, j)
			}
		}
		_, alone := run(math.Inf(1))
		if !(alone.Admitted > m.Admitted) {
			t.Errorf("%s: unsynced instances admitted %d, synced %d: the shared state changed nothing", c.name, alone.Admitted, m.Admitted)
		}
	}
}

// nanSyncGate admits everything and names its next sync by next (NaN
// first, or after its first sync).
type nanSyncGate struct{ first, next float64 }

func (g *nanSyncGate) Offer(t float64, _ int32) (float64, bool) { return t, true }
func (g *nanSyncGate) NextSyncMS() float64                      { return g.first }
func (g *nanSyncGate) Sync(float64)                             { g.first = g.next }

// TestSyncAtNaNIsAnError: a gate whose next sync is NaN, first or after a
// sync, is an error of the point, not a silent end of its syncs, on the
// forward pass's model and the client model.
func TestSyncAtNaNIsAnError(t *testing.T) {
	t.Parallel()
	for _, behaviour := range []string{"", `, "timeout_ms": 50`} {
		cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 9,
  "workload": {"duration_ms": 1000, "parts": [{"type": "poisson", "rate_rps": 50` + behaviour + `}]},
  "server": {"workers": 1, "service_ms": 2, "deadline_ms": 100},
  "limiters": [{"type": "none"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range []nanSyncGate{{first: math.NaN()}, {first: 100, next: math.NaN()}} {
			opt := sweep.Options{Workers: 1}
			opt.Simulate.Gate = func(limiter.Gate, limiter.Occupancy) limiter.Gate { return &g }
			if _, err := sweep.Run(context.Background(), cfg, opt); err == nil || !strings.Contains(err.Error(), "sync") {
				t.Errorf("%q, first sync %g then %g: error %v, want one about its sync", behaviour, g.first, g.next, err)
			}
		}
	}
}

// periodicSyncGate admits everything, at once but an offer at or after
// holdFromMS (released at releaseMS), and syncs every periodMS from
// periodMS on, logging its syncs.
type periodicSyncGate struct {
	periodMS, next        float64
	holdFromMS, releaseMS float64
	syncs                 []float64
}

func (g *periodicSyncGate) Offer(t float64, _ int32) (float64, bool) {
	if t >= g.holdFromMS {
		return g.releaseMS, true
	}
	return t, true
}

func (g *periodicSyncGate) NextSyncMS() float64 { return g.next }
func (g *periodicSyncGate) Sync(t float64) {
	g.syncs = append(g.syncs, t)
	g.next = t + g.periodMS
}

// TestSyncsEndAfterTheLastRealEvent pins the last sync of a syncing gate
// on the queue model (the loop makes its picks and its end cut, loop.go):
// a sync schedules the next one only while an event that will run is
// left (pointLoop.eventsLeft), so the last sync is the first at or after
// the last real event, by the tie rule. Neither the end cut still pending
// nor a stale pick is such an event: counting either keeps the syncs
// going to the end cut or to the stale pick's time.
//
// One worker, service_ms 20, arrivals of a constant client (times exact:
// integers) in a run that ends with a cut (1000 ms but where said).
//
//   - "cut pending": arrivals at 0, 10, … 40 (100 rps) wait for the
//     worker: the loop picks them at 0, 20, 40, 60 and 80 (pick events),
//     and the pick at 80 is the last real event. The cut at 1000 is then
//     all the heap holds. Syncs every 30: at 30, 60 and 90 (nothing left
//     but the cut): the last is 90. Every 20: the sync at 80 comes before
//     the pick at 80 (a pick is after every event at its time), so it
//     sees the pick and schedules 100, the last. Counting the cut, the
//     syncs go on to 1020 and 1000 (the cut at 1000 runs before a sync at
//     1000, key 0, which then finds the heap empty).
//   - "waiting at the cut": arrivals at 990, 991, … 999 (1000 rps): the
//     first is served from 990 to 1010, the others wait (no pick stands:
//     the next would be after the cut) and the cut at 1000 sheds them
//     (Shed 9); it is the last real event. Every 50: the sync at 1000
//     runs after the cut (key 0) and is the last; every 335 (syncs at
//     335, 670, 1005), the sync at 1005 is the last.
//   - "stale pick": in a run of 100 ms, arrivals at 0, 5 and 10 (200
//     rps); the gate holds the one at 10 to 150. The first is picked at
//     0 (served to 20), the second waits and the pick event stands at 20.
//     The third's offer at 10 (its arrival's turn, released at 150: the
//     queue makes its own picks to 150, the one at 20 included) is shed
//     at the end (released after the window, Shed 1): no pick is left,
//     and the event at 20 is stale. The last real event is the arrival at
//     10; the heap holds the stale pick at 20 and the cut at 100. Every
//     15: the sync at 15 is the last; counting the stale pick, 30 (the
//     heap holds only the cut then); counting the cut, 105.
func TestSyncsEndAfterTheLastRealEvent(t *testing.T) {
	t.Parallel()
	inf := math.Inf(1)
	for _, c := range []struct {
		name                                string
		durationMS, rateRPS, startMS, endMS float64
		holdFromMS, releaseMS               float64
		periodMS, lastMS                    float64
		shed                                int
	}{
		{"cut pending", 1000, 100, 0, 50, inf, 0, 30, 90, 0},
		{"cut pending, sync at the last pick", 1000, 100, 0, 50, inf, 0, 20, 100, 0},
		{"waiting at the cut, sync at the cut", 1000, 1000, 990, 1000, inf, 0, 50, 1000, 9},
		{"waiting at the cut", 1000, 1000, 990, 1000, inf, 0, 335, 1005, 9},
		{"stale pick", 100, 200, 0, 15, 10, 150, 15, 15, 1},
	} {
		cfg, err := document.DecodeConfig([]byte(fmt.Sprintf(`{"version": 1, "seed": 1,
  "workload": {"duration_ms": %g, "parts": [{"type": "constant", "rate_rps": %g, "start_ms": %g, "end_ms": %g}]},
  "server": {"workers": 1, "service_ms": 20, "deadline_ms": 1000, "end": "cut"},
  "limiters": [{"type": "none"}]}`, c.durationMS, c.rateRPS, c.startMS, c.endMS)))
		if err != nil {
			t.Fatal(err)
		}
		g := &periodicSyncGate{periodMS: c.periodMS, next: c.periodMS, holdFromMS: c.holdFromMS, releaseMS: c.releaseMS}
		opt := sweep.Options{Workers: 1}
		opt.Simulate.Gate = func(limiter.Gate, limiter.Occupancy) limiter.Gate { return g }
		res, err := sweep.Run(context.Background(), cfg, opt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if m := res.Points[0].Metrics; m.Shed != c.shed {
			t.Errorf("%s: shed %d, want %d (not the scenario described)", c.name, m.Shed, c.shed)
		}
		n := int(c.lastMS / c.periodMS)
		if len(g.syncs) != n || g.syncs[n-1] != c.lastMS {
			t.Errorf("%s: synced at %v, want every %g ms to %g", c.name, g.syncs, c.periodMS, c.lastMS)
		}
	}
}
