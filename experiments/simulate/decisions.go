package simulate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/metrics"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
)

// The decision diff: two points (of one sweep, or of two sweeps on the same
// arrivals) replayed side by side, request by request, and every request
// they decide differently. A decision is the gate's: admitted or rejected,
// and when an admitted request is released. Both points' gates see their
// own plain FIFO server (the forward pass), as their sweeps did, so the
// decisions are the ones those sweeps made.

// DecisionEpsMS is the default tolerance of release times: two admitted
// decisions disagree on their release when the times differ by more. 1 µs
// is far below the 1 ms the lab reports delays in and far above the
// rounding of two gates that compute one instant differently.
const DecisionEpsMS = 0.001

// MaxDecisionEpsMS bounds the tolerance a caller may give.
const MaxDecisionEpsMS = 60_000

// DiffSide is one point of a decision diff: a config and the index of one
// of its points (Config.Points).
type DiffSide struct {
	Config *experiments.Config
	Point  int
}

// Disagreement is one request the two points decide differently.
type Disagreement struct {
	Seq    int64   // the request's place in the arrivals, from 0
	TimeMS float64 // its arrival
	Client int32   // its client (an index into Clients)
	// AdmittedA, AdmittedB are the decisions; ReleaseA, ReleaseB the
	// release times of the admitted (NaN when rejected).
	AdmittedA, AdmittedB bool
	ReleaseA, ReleaseB   float64
}

// DiffSummary counts a decision diff's requests.
type DiffSummary struct {
	Arrivals           int64
	AdmittedA          int64
	AdmittedB          int64
	OnlyA, OnlyB       int64 // admitted by one point alone
	ReleaseDiffer      int64 // admitted by both, released more than EpsMS apart
	EpsMS              float64
	WindowMS           float64 // the timeline's window
	PerWindow          []int64 // disagreements per window of arrival time
	Clients            []workload.Client
	LimiterA, LimiterB string // the points' limiter and parameters
}

// Disagreements is how many requests the points decide differently.
func (s *DiffSummary) Disagreements() int64 { return s.OnlyA + s.OnlyB + s.ReleaseDiffer }

// maxDiffWindows bounds the timeline: windows widen (100 ms doubled) until
// the run fits in this many.
const maxDiffWindows = 2000

// CheckDiff says why two points cannot be diffed, or nil: each point must
// exist and run the forward pass (the plain FIFO server, no client
// model) with a gate without hooks (the diff replays Offer alone: a gate
// that observes completions or syncs would decide otherwise than in its
// sweep), and the two must see the same arrivals (the same workload and
// seed; for variants, the same load).
func CheckDiff(a, b DiffSide) error {
	for k, s := range []DiffSide{a, b} {
		name := "a"
		if k == 1 {
			name = "b"
		}
		pts := s.Config.Points()
		if s.Point < 0 || s.Point >= len(pts) {
			return fmt.Errorf("%s: point %d: the sweep has points 0 to %d", name, s.Point, len(pts)-1)
		}
		pt := &pts[s.Point]
		if s.Config.UsesClients(pt.Policy, pt.Load) || s.Config.UsesQueue(pt.Server) {
			return fmt.Errorf("%s: point %d runs the queue or client model (server settings, classes, client behaviour): the decision diff replays the gate before the plain FIFO server only", name, s.Point)
		}
		pc := s.Config.PointConfig(pt)
		if !pc.Server.FixedService() {
			return fmt.Errorf("%s: point %d's server draws its service times (server.service): the decision diff replays the gate before a server of fixed service only", name, s.Point)
		}
		g, err := pointGate(&s.Config.Limiters[pt.LimiterIndex], pt.Params, nil, server.New(pc.Server))
		if err != nil {
			return fmt.Errorf("%s: point %d: %w", name, s.Point, err)
		}
		if err := diffable(g); err != nil {
			return fmt.Errorf("%s: point %d (limiters[%d], %s): %w", name, s.Point, pt.LimiterIndex, pt.Limiter, err)
		}
	}
	wa, wb := arrivalsKey(a), arrivalsKey(b)
	if !bytes.Equal(wa, wb) {
		return fmt.Errorf("the points see different arrivals: %s", firstDifference(wa, wb))
	}
	return nil
}

// diffable says why the decision diff cannot replay gate, or nil: a gate
// with hooks (its parts' included) needs the event loop, which the diff
// does not run.
func diffable(gate limiter.Gate) error {
	h := hooksOf(gate, nil)
	switch {
	case h.observer != nil:
		return fmt.Errorf("the gate learns from completions (limiter.Observer): the decision diff replays Offer alone, without the event loop that tells it them")
	case h.syncer != nil:
		return fmt.Errorf("the gate syncs its instances (limiter.Syncer): the decision diff replays Offer alone, without the event loop that runs its syncs")
	}
	return nil
}

// arrivalsKey is what decides a point's arrivals: its load's workload and
// the seed, as canonical JSON.
func arrivalsKey(s DiffSide) []byte {
	pt := s.Config.Points()[s.Point]
	w, seed := s.Config.PointArrivals(&pt)
	b, _ := json.Marshal(struct {
		Seed     uint64        `json:"seed"`
		Workload workload.Spec `json:"workload"`
	}{seed, w}) // plain data
	return b
}

// firstDifference names the first top-level field of two arrivals keys
// that differs ("seed 1 and 7", or the workload's).
func firstDifference(a, b []byte) string {
	var ka, kb struct {
		Seed     uint64          `json:"seed"`
		Workload json.RawMessage `json:"workload"`
	}
	json.Unmarshal(a, &ka) // written by arrivalsKey
	json.Unmarshal(b, &kb)
	if ka.Seed != kb.Seed {
		return fmt.Sprintf("seed %d and %d (the same workload with another seed draws other arrivals)", ka.Seed, kb.Seed)
	}
	return "their workloads differ (" + clipText(string(ka.Workload), 200) + " and " + clipText(string(kb.Workload), 200) + ")"
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// DiffDecisions replays both points over their arrivals (streamed, never
// held whole) and calls each for every request they decide differently,
// in arrival order; it returns the counts. epsMS is the release
// tolerance (0 < epsMS: DecisionEpsMS when 0). Work is the arrivals,
// twice; the caller bounds it (the arrivals of a valid config are at most
// MaxArrivals). Both sides must pass CheckDiff.
func DiffDecisions(ctx context.Context, a, b DiffSide, epsMS float64, each func(*Disagreement) error) (*DiffSummary, error) {
	if err := CheckDiff(a, b); err != nil {
		return nil, err
	}
	if epsMS == 0 {
		epsMS = DecisionEpsMS
	}
	if !(epsMS > 0 && epsMS <= MaxDecisionEpsMS) {
		return nil, fmt.Errorf("eps_ms %g: give a tolerance above 0 and at most %d ms", epsMS, MaxDecisionEpsMS)
	}
	pa, pb := a.Config.Points()[a.Point], b.Config.Points()[b.Point]
	w, seed := a.Config.PointArrivals(&pa)
	st, err := workload.Open(&w, seed)
	if err != nil {
		return nil, fmt.Errorf("arrivals: %w", err)
	}
	gate := func(s DiffSide, pt *experiments.Point) (limiter.Gate, *server.Server, error) {
		pc := s.Config.PointConfig(pt)
		srv := server.New(pc.Server)
		g, err := pointGate(&s.Config.Limiters[pt.LimiterIndex], pt.Params, st.Clients, srv)
		return g, srv, err
	}
	ga, sa, err := gate(a, &pa)
	if err == nil {
		err = diffable(ga)
	}
	if err != nil {
		return nil, fmt.Errorf("a: %w", err)
	}
	gb, sb, err := gate(b, &pb)
	if err == nil {
		err = diffable(gb)
	}
	if err != nil {
		return nil, fmt.Errorf("b: %w", err)
	}
	sum := &DiffSummary{EpsMS: epsMS, Clients: st.Clients,
		LimiterA: pa.Limiter + " " + limiter.FormatParams(pa.Type, pa.Params),
		LimiterB: pb.Limiter + " " + limiter.FormatParams(pb.Type, pb.Params)}
	sum.WindowMS = experiments.SeriesWindowMS
	for metrics.WindowCount(w.DurationMS, sum.WindowMS) > maxDiffWindows {
		sum.WindowMS *= 2
	}
	sum.PerWindow = make([]int64, int(metrics.WindowCount(w.DurationMS, sum.WindowMS)))
	const batch = 1 << 14
	ts, cs := make([]float64, batch), make([]int32, batch)
	var d Disagreement
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := st.Read(ts, cs)
		for i := range n {
			t, c := ts[i], cs[i]
			ra, oka := ga.Offer(t, c)
			if oka {
				sa.Serve(ra)
				sum.AdmittedA++
			}
			rb, okb := gb.Offer(t, c)
			if okb {
				sb.Serve(rb)
				sum.AdmittedB++
			}
			seq := sum.Arrivals
			sum.Arrivals++
			switch {
			case oka && !okb:
				sum.OnlyA++
			case okb && !oka:
				sum.OnlyB++
			case oka && okb && math.Abs(ra-rb) > epsMS:
				sum.ReleaseDiffer++
			default:
				continue
			}
			if wi := int(metrics.WindowIndex(t, sum.WindowMS)); wi < len(sum.PerWindow) {
				sum.PerWindow[wi]++
			}
			if each != nil {
				d = Disagreement{Seq: seq, TimeMS: t, Client: c, AdmittedA: oka, AdmittedB: okb, ReleaseA: math.NaN(), ReleaseB: math.NaN()}
				if oka {
					d.ReleaseA = ra
				}
				if okb {
					d.ReleaseB = rb
				}
				if err := each(&d); err != nil {
					return nil, err
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("arrivals: %w", err)
		}
		if n == 0 {
			return sum, nil
		}
	}
}

// Clients are the clients of the side's arrivals (known before the first
// arrival: no replay).
func (s DiffSide) Clients() ([]workload.Client, error) {
	pt := s.Config.Points()[s.Point]
	w, seed := s.Config.PointArrivals(&pt)
	st, err := workload.Open(&w, seed)
	if err != nil {
		return nil, fmt.Errorf("arrivals: %w", err)
	}
	return st.Clients, nil
}
