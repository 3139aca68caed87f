package simulate

import (
	"slices"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/metrics"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
)

// queueBufs are a worker's reusable instruments of the queue model.
type queueBufs struct {
	shedWait     metrics.Histogram
	classSojourn []*metrics.Histogram
	finish       []int32  // sojourns of the requests finishing in one window
	finishes     []uint64 // variable service: window<<32 | sojourn of every finish
}

// queueRun measures one point of the queue model: the server reports each
// request's outcome to it (server.Sink).
type queueRun struct {
	a          *workload.Arrivals
	classes    []uint8
	in         *Instruments
	s          *experiments.Series
	m          *experiments.Metrics
	scoreEnd   float64 // requests that arrived after it are not measured
	serviceMS  float64
	deadlineMS float64
	durationMS float64
	windowMS   float64 // the series'

	bufs    *queueBufs
	classOK []int

	served, shed        int
	serverSojournMax    float64
	endToEndMax         float64
	variable            bool // service times vary: finishes come out of order
	finishWindow        int  // window of the buffered finishes (bufs.finish)
	maxFinishWindows    int
	lastFinish          float64
	finishOrderViolated bool

	// The gate side (arrive), without clients.
	gate          limiter.Gate
	spec          *limiter.Spec
	srv           *server.Queue
	horizonMS     float64
	lastRelease   float64
	gateMax       float64
	arrivals      int // measured (scored) arrivals
	clients       []experiments.ClientResult
	fair          *fairWindows
	rel           *releaseTally
	arrivalWindow metrics.WindowCursor     // the series window of the arrivals, which come in order
	done          *completions             // nil: the gate does not observe
	fate          func(limiter.Completion) // a test's fate log (Switches.Fate)
	hooks         *gateHooks
	admittedAt    []admission // with done or a fate log: each arrival's release and instance, by its index
}

// startBufs readies the worker's queue-model instruments for a point and,
// with classes, the histograms and series of its nclass classes (over
// windows); it returns the count of each class's successes, to fill.
func (r *queueRun) startBufs(in *Instruments, classes bool, nclass, windows int) []int {
	if in.queue == nil {
		in.queue = new(queueBufs)
	}
	r.bufs = in.queue
	r.bufs.shedWait.Reset()
	r.bufs.finish = r.bufs.finish[:0]
	r.bufs.finishes = r.bufs.finishes[:0]
	if !classes {
		return nil
	}
	for len(r.bufs.classSojourn) < nclass {
		r.bufs.classSojourn = append(r.bufs.classSojourn, new(metrics.Histogram))
	}
	for k := range nclass {
		r.bufs.classSojourn[k].Reset()
	}
	r.s.Classes = make([]experiments.ClassSeries, nclass)
	for k := range r.s.Classes {
		r.s.Classes[k] = experiments.ClassSeries{Offered: make([]int32, windows), Success: make([]int32, windows)}
	}
	return make([]int, nclass)
}

func (r *queueRun) scored(id int32) bool { return r.a.T[id] <= r.scoreEnd }

// Served measures a request served from start to finish.
func (r *queueRun) Served(id int32, release, start, finish float64) {
	t := r.a.T[id]
	r.finishAt(t, finish)
	svc := r.serviceMS
	if r.a.ServiceMS != nil {
		svc = r.a.ServiceMS[id]
	}
	sojourn := max(svc, metrics.RoundHalfUp(finish-t))
	onTime := sojourn <= r.deadlineMS
	if r.done != nil {
		r.done.add(r.completion(id, finish, outcome(onTime)))
	}
	if r.fate != nil {
		r.fate(limiter.Completion{Seq: int64(id), Client: r.a.Client[id], Instance: r.admittedAt[id].instance, ArrivalMS: r.a.T[id], ReleaseMS: release, DoneMS: finish, Outcome: outcome(sojourn <= r.deadlineMS)})
	}
	if !r.scored(id) {
		return
	}
	r.served++
	r.in.wait.Record(start - release)
	r.in.sojourn.Record(sojourn)
	if onTime {
		r.m.OnTime++
	} else {
		r.m.Late++
	}
	if d := finish - release; d > r.serverSojournMax {
		r.serverSojournMax = d
	}
	if c := r.a.Client[id]; finish-release > r.clients[c].SojournMaxMS {
		r.clients[c].SojournMaxMS = finish - release
	}
	r.endToEndMax = max(r.endToEndMax, finish-t)
	if r.classes != nil {
		k := r.classes[id]
		r.bufs.classSojourn[k].Record(sojourn)
		if onTime {
			r.classOK[k]++
			r.s.Classes[k].Success[int(metrics.WindowIndex(t, r.windowMS))]++
		}
	}
}

// Shed measures a request the server shed at at.
func (r *queueRun) Shed(id int32, at float64, _ server.Why) {
	if r.done != nil {
		r.done.add(r.completion(id, at, limiter.Dropped))
	}
	if r.fate != nil {
		r.fate(limiter.Completion{Seq: int64(id), Client: r.a.Client[id], Instance: r.admittedAt[id].instance, ArrivalMS: r.a.T[id], ReleaseMS: r.admittedAt[id].releaseMS, DoneMS: at, Outcome: limiter.Dropped})
	}
	if !r.scored(id) {
		return
	}
	r.shed++
	r.bufs.shedWait.Record(float64(metrics.ClampMS(at - r.a.T[id])))
}

// admission is what the gate decided of an admitted request: its release
// and (a replicated gate) its instance.
type admission struct {
	releaseMS float64
	instance  int32
}

// completion is arrival id's completion at doneMS with out (a gate that
// observes).
func (r *queueRun) completion(id int32, doneMS float64, out limiter.Outcome) limiter.Completion {
	return limiter.Completion{Seq: int64(id), Client: r.a.Client[id], Instance: r.admittedAt[id].instance,
		ArrivalMS: r.a.T[id], ReleaseMS: r.admittedAt[id].releaseMS, DoneMS: doneMS, Outcome: out}
}

// finishAt buffers a served request that arrived at t and finished at
// finish for the p99 of its finish window (SojournP99): all of them, the
// hangover is the server's, whoever sent the work. (For 100 ms windows the
// exact index is the seed's trunc(finish / 100.0).) With variable service
// finishes overtake each other: they are kept and sorted at the end
// (sortFinishes).
func (r *queueRun) finishAt(t, finish float64) {
	if finish < r.lastFinish && !r.variable {
		r.finishOrderViolated = true
	}
	r.lastFinish = finish
	if w := int(metrics.WindowIndex(finish, r.windowMS)); w < r.maxFinishWindows {
		switch {
		case r.variable:
			r.bufs.finishes = append(r.bufs.finishes, uint64(w)<<32|uint64(metrics.ClampMS(finish-t)))
		default:
			if w != r.finishWindow {
				r.flushFinishes()
				r.finishWindow = w
			}
			r.bufs.finish = append(r.bufs.finish, metrics.ClampMS(finish-t))
		}
	}
}

// sortFinishes writes the p99 of every window from the kept finishes
// (variable service).
func (r *queueRun) sortFinishes() {
	keys := r.bufs.finishes
	slices.Sort(keys)
	for i := 0; i < len(keys); {
		w := int(keys[i] >> 32)
		buf := r.bufs.finish[:0]
		for ; i < len(keys) && int(keys[i]>>32) == w; i++ {
			buf = append(buf, int32(uint32(keys[i])))
		}
		r.bufs.finish, r.finishWindow = buf, w
		r.flushFinishes()
	}
	r.bufs.finishes = keys[:0]
}

// flushFinishes writes the p99 of the buffered window.
func (r *queueRun) flushFinishes() {
	buf := r.bufs.finish
	if len(buf) == 0 {
		return
	}
	for len(r.s.SojournP99) <= r.finishWindow {
		r.s.SojournP99 = append(r.s.SojournP99, 0)
	}
	slices.Sort(buf)
	r.s.SojournP99[r.finishWindow] = metrics.RankValue(buf, 99)
	r.bufs.finish = buf[:0]
}

// arrive takes arrival i of the list through the gate into the queue
// (the queue model's step of the event loop). Under the scoring rule
// "end-minus-deadline" only the arrivals at or before duration - deadline
// are measured; the others still load the gate and the server.
func (r *queueRun) arrive(i int) error {
	a, s, in := r.a, r.s, r.in
	t := a.T[i]
	scored := t <= r.scoreEnd
	c := a.Client[i]
	w := int(r.arrivalWindow.Index(t))
	s.Offered[w]++
	if scored {
		r.arrivals++
		r.clients[c].Offered++
		if r.classes != nil {
			s.Classes[r.classes[i]].Offered[w]++
		}
	}
	release, ok := r.gate.Offer(t, c)
	if !ok {
		s.Rejected[w]++
		return nil
	}
	if release < r.lastRelease || !(release < r.horizonMS) {
		return releaseError(r.spec, release, r.lastRelease, r.durationMS)
	}
	r.lastRelease = release
	if r.admittedAt != nil {
		r.admittedAt[i] = admission{releaseMS: release, instance: r.hooks.instance()}
	}
	if scored {
		r.clients[c].Admitted++
		in.gate.Record(release - t)
		r.gateMax = max(r.gateMax, release-t)
	}
	if r.fair.on && scored {
		r.fair.admit(t, int(c))
	}
	var class uint8
	if r.classes != nil {
		class = r.classes[i]
	}
	svc := r.serviceMS
	if a.ServiceMS != nil {
		svc = a.ServiceMS[i]
	}
	r.srv.OfferFor(int32(i), class, t, release, svc)
	r.rel.add(s, in, release, r.srv.InSystem(release))
	return nil
}

// classMetrics measures every class of a point from its series (offered
// per window), its successes and its sojourn histograms, and whether the
// point meets the SLO (the queue model and the client model on a queue).
func classMetrics(c *experiments.Config, m *experiments.Metrics, s *experiments.Series, classOK []int, sojourn []*metrics.Histogram, seconds float64) {
	nclass := len(c.Classes)
	m.Classes = make([]experiments.ClassMetrics, nclass)
	for k := range m.Classes {
		cm := &m.Classes[k]
		for _, x := range s.Classes[k].Offered {
			cm.Offered += int(x)
		}
		cm.Success = classOK[k]
		cm.OfferedRPS = float64(cm.Offered) / seconds
		cm.SuccessPct = 100
		if cm.Offered > 0 {
			cm.SuccessPct = 100.0 * float64(cm.Success) / float64(cm.Offered)
		}
		cm.Sojourn = delays(sojourn[k])
	}
	if c.SLO != nil {
		met := m.Classes[c.ClassIndex(c.SLO.Class)].SuccessPct >= c.SLO.SuccessPct
		m.SLOMet = &met
	}
}
