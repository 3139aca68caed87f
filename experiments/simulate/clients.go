package simulate

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/metrics"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/workload"
)

// The client model: a point whose workload parts have client behaviour
// (workload.Behaviour: timeouts, retries, budgets, throttling) or a closed
// loop (workload.Users) runs here, event by event, because what a client
// does next depends on what happened to its last attempt.
//
// Every attempt is an event of the point's event loop (loop.go),
// run in its (t, sequence) order: t is when it reaches the gate, its
// sequence its creation number. The workload's arrivals are the first
// attempts, numbered up front in list order (their index); a retry, or a
// closed-loop user's next request, is scheduled when the attempt it
// follows is processed, and it never starts at or after the end of the
// arrival window. On the plain server an admitted attempt's fate is known
// at once (plainServer.serve); on a queue see clients_queue.go.
//
// Processing an attempt at t, of a request from client c with behaviour b:
//
//  1. A retry spends the retry budget (b.Budget): over it, the request
//     ends unsent (budget_denied).
//  2. Adaptive throttling (b.ThrottleK): the client refuses the attempt
//     itself with probability max(0, (requests - K·accepts)/(requests+1))
//     over its last throttle_window_ms; a refused attempt ends its
//     request (throttled). Requests are the attempts the client tried,
//     accepts those that got an answer before the client gave up (served,
//     not abandoned), counted at the attempt's time.
//  3. The attempt reaches the gate (attempts; queue depth: the requests
//     in the system at t). Rejected: a retry is offered at t + backoff
//     (not before the gate's Retry-After when the client honours it and
//     the gate can say it, limiter.Advisor).
//  4. Released, it goes to the server. Its client gives up at t +
//     timeout_ms: an attempt that has not started by then is dropped under
//     cancel_on_timeout "drop-unstarted"; otherwise it is served, and its
//     sojourn max(S, round(finish - t)) decides: longer than timeout_ms,
//     it is abandoned (its service is wasted work) and a retry is offered
//     at (t + timeout_ms) + backoff; else within deadline_ms it succeeds,
//     and beyond it the request ends late.
//
// A retry is created only while the request has retries left and its time
// is inside the arrival window. A closed-loop user sends its next request
// think time after its request ended (success or late: at its finish; a
// final failure: when it failed).
//
// Random draws (jitter, throttling, exponential think times) come from
// one PCG stream per point, seeded by the point's seed (a replication's or
// a listed seed; else the config's), in event order.

// attempt is one pending attempt of the client model. A retry copies its
// fields one by one (clientRun.retry, see eventHeap): a new field is
// copied there too.
type attempt struct {
	t    float64 // when it reaches the gate
	prev float64 // the previous wait (decorrelated jitter)
	seq  int64   // creation number: of two attempts at one t the older runs first
	c    int32   // client
	n    int32   // attempt number: 0 the first, k the k-th retry
	part int32   // the part whose behaviour it has
	user bool    // a closed-loop user's request
	// class is the request's class (classes.go): a retry keeps it. Only
	// the model on a queue reads it; it sits in user's padding.
	class uint8
	svc   float64 // the request's service time: its retries do the same work
}

// arrival makes *at (zero) the first attempt of arrival i of the list, which
// takes serviceMS unless the list gives its service time. Field by field:
// see eventHeap.
func (at *attempt) arrival(a *workload.Arrivals, i int, serviceMS float64) {
	c := a.Client[i]
	at.t, at.seq, at.c, at.part = a.T[i], int64(i), c, partOf(a, c)
	at.svc = serviceMS
	if a.ServiceMS != nil {
		at.svc = a.ServiceMS[i]
	}
}

// clientBufs are a worker's reusable state of the client model.
type clientBufs struct {
	heap eventHeap
}

// partFlags are a part's behaviour words, decided once.
type partFlags struct{ budgeted, throttles, honour, timeout bool }

// throttleSlices is how many slices a throttling window is counted in.
const throttleSlices = 10

// clientRun is the state of one point of the client model.
type clientRun struct {
	svc       *server.Sampler // users' service times; nil: fixed
	serviceMS float64
	behs      []workload.Behaviour // per part
	flags     []partFlags          // per part
	loops     []*workload.Loop     // per part, nil for open-loop parts
	ends      []float64            // per part: no closed-loop request at or after it
	rng       *rand.Rand
	heap      *eventHeap
	w         float64 // end of the arrival window

	// Retry budgets: per key (a client, or the global key nc), the aligned
	// second and its first attempts and retries.
	budgetSec     []int64
	budgetFirsts  []float64
	budgetRetries []float64
	// Adaptive throttling: per client, throttleSlices slices of requests
	// and accepts, and the slice index of the last update.
	thrReq, thrAcc []int32
	thrAt          []int64

	// Closed-loop requests in flight: the ends of those that started, a
	// min-heap; a request is in flight from its first attempt to its end.
	userEnds                        endTimes
	usersInFlight, usersInFlightMax int

	// The gate side of the point (atGate), which both servers share.
	gate         limiter.Gate
	advisor      limiter.Advisor   // nil: the gate cannot say when it admits again
	occ          limiter.Occupancy // what the attempts find in the system
	spec         *limiter.Spec
	in           *Instruments
	m            *experiments.Metrics
	cm           *experiments.ClientMetrics
	s            *experiments.Series
	clients      []experiments.ClientResult
	fair         *fairWindows
	horizonMS    float64 // a release at or after it is refused (the series' limit)
	lastQuery    float64 // the latest time occ was read at
	lastRelease  float64
	gateMax      float64
	occupancySum int64 // what each attempt found in the system, summed
}

// startGate gives the point's gate side to atGate: the gate in front of
// occ, the run's horizon for releases, and the measures it counts in.
func (r *clientRun) startGate(gate limiter.Gate, occ limiter.Occupancy, spec *limiter.Spec, horizonMS float64, in *Instruments, m *experiments.Metrics, cm *experiments.ClientMetrics, s *experiments.Series, clients []experiments.ClientResult, fair *fairWindows) {
	r.gate, r.occ, r.spec, r.horizonMS = gate, occ, spec, horizonMS
	r.advisor, _ = gate.(limiter.Advisor)
	r.in, r.m, r.cm, r.s, r.clients, r.fair = in, m, cm, s, clients, fair
	r.lastQuery, r.lastRelease, r.gateMax, r.occupancySum = 0, math.Inf(-1), 0, 0
}

// clientSeries is the series of a client-model point: over the run's
// windows, with attempts, retries and goodput.
func clientSeries(durationMS, windowMS float64) experiments.Series {
	windows := int(metrics.WindowCount(durationMS, windowMS))
	return experiments.Series{
		Offered:     make([]int32, windows),
		Rejected:    make([]int32, windows),
		Released:    make([]int32, windows),
		InSystemMax: make([]int32, windows),
		Attempts:    make([]int32, windows),
		Retries:     make([]int32, windows),
		Goodput:     make([]int32, windows),
	}
}

// atGate takes attempt at, in series window wi, through its client and
// the gate (steps 1 to 3 of the model): the retry budget, adaptive
// throttling, the counts of attempts, the requests it finds in the system,
// and the gate's decision; refused, it is retried or its request ends. It
// returns when the gate releases it to the server and when its client
// gives up on it (+Inf without a timeout), and ok false when it went no
// further.
func (r *clientRun) atGate(at *attempt, wi int) (release, abandonAt float64, ok bool, err error) {
	t := at.t
	b, fl := &r.behs[at.part], r.flags[at.part]
	m, cm, s := r.m, r.cm, r.s
	if at.n == 0 {
		m.Arrivals++
		s.Offered[wi]++
		r.clients[at.c].Offered++
		if at.user {
			r.userStarts(t)
		}
		if fl.budgeted {
			k := r.budgetKey(b, at.c)
			r.budgetAt(k, t)
			r.budgetFirsts[k]++
		}
	} else if fl.budgeted {
		k := r.budgetKey(b, at.c)
		r.budgetAt(k, t)
		if r.budgetRetries[k]+1 > b.BudgetRatio*r.budgetFirsts[k]+b.BudgetFloorRPS {
			cm.BudgetDenied++
			r.end(at, t)
			return 0, 0, false, nil
		}
		r.budgetRetries[k]++
	}
	if fl.throttles {
		req, acc := r.throttleAt(b, at.c, t)
		if p := (req - b.ThrottleK*acc) / (req + 1); p > 0 && r.rng.Float64() < p {
			r.thrReq[r.throttleSlot(at.c)]++
			cm.Throttled++
			r.end(at, t)
			return 0, 0, false, nil
		}
		r.thrReq[r.throttleSlot(at.c)]++
	}
	cm.Attempts++
	r.clients[at.c].Attempts++
	cm.AttemptsMax = max(cm.AttemptsMax, int(at.n)+1)
	s.Attempts[wi]++
	if at.n > 0 {
		cm.Retries++
		s.Retries[wi]++
	}
	r.lastQuery = max(r.lastQuery, t)
	r.occupancySum += int64(r.occ.InSystem(r.lastQuery))
	release, ok = r.gate.Offer(t, at.c)
	if !ok {
		m.Rejected++
		s.Rejected[wi]++
		notBefore := t
		if r.advisor != nil && fl.honour {
			notBefore = max(t, r.advisor.NextAdmitMS(t, at.c))
		}
		r.retry(at, t, notBefore)
		return 0, 0, false, nil
	}
	if release < r.lastRelease || !(release < r.horizonMS) {
		return 0, 0, false, releaseError(r.spec, release, r.lastRelease, r.w)
	}
	r.lastRelease = release
	m.Admitted++
	r.clients[at.c].Admitted++
	if r.fair.on {
		r.fair.admit(t, int(at.c))
	}
	r.in.gate.Record(release - t)
	r.gateMax = max(r.gateMax, release-t)
	abandonAt = math.Inf(1)
	if fl.timeout {
		abandonAt = t + b.TimeoutMS
	}
	return release, abandonAt, true, nil
}

// userStarts counts a closed-loop request starting at t in flight, after
// those that ended at or before t.
func (r *clientRun) userStarts(t float64) {
	r.usersInFlight -= r.userEnds.popThrough(t)
	r.usersInFlight++
	r.usersInFlightMax = max(r.usersInFlightMax, r.usersInFlight)
}

// userEnded records the end of a closed-loop request at at.
func (r *clientRun) userEnded(at float64) { r.userEnds.push(at) }

// scheduleUser schedules a closed-loop user's request from client c of
// part p at t.
func (r *clientRun) scheduleUser(t float64, c, p int32) {
	svc := r.userService()
	n := r.heap.reserve()
	n.t, n.c, n.part, n.user, n.svc = t, c, p, true, svc
	r.heap.push()
}

// budgetKey is the budget a client's retries spend.
func (r *clientRun) budgetKey(b *workload.Behaviour, c int32) int {
	if b.Budget == workload.BudgetGlobal {
		return len(r.budgetSec) - 1
	}
	return int(c)
}

// budgetAt moves budget k to the aligned second of t.
func (r *clientRun) budgetAt(k int, t float64) {
	if s := int64(math.Floor(t / 1000)); s != r.budgetSec[k] {
		r.budgetSec[k], r.budgetFirsts[k], r.budgetRetries[k] = s, 0, 0
	}
}

// throttleAt moves client c's throttling slices to the slice of t and
// returns the counts over the window.
func (r *clientRun) throttleAt(b *workload.Behaviour, c int32, t float64) (req, acc float64) {
	r.throttleRoll(b, c, t)
	base := int(c) * throttleSlices
	for j := base; j < base+throttleSlices; j++ {
		req += float64(r.thrReq[j])
		acc += float64(r.thrAcc[j])
	}
	return req, acc
}

// throttleRoll moves client c's throttling slices to the slice of t,
// emptying those it passes.
func (r *clientRun) throttleRoll(b *workload.Behaviour, c int32, t float64) {
	k := int64(math.Floor(t / (b.ThrottleWindow() / throttleSlices)))
	if at := r.thrAt[c]; k > at {
		base := int(c) * throttleSlices
		for i := int64(1); i <= min(k-at, throttleSlices); i++ {
			j := base + int((at+i)%throttleSlices)
			r.thrReq[j], r.thrAcc[j] = 0, 0
		}
		r.thrAt[c] = k
	}
}

func (r *clientRun) throttleSlot(c int32) int {
	return int(c)*throttleSlices + int(r.thrAt[c]%throttleSlices)
}

// wait is the backoff before retry k of a request (k >= 1) with its
// jitter; prev is the previous wait (decorrelated jitter).
func (r *clientRun) wait(b *workload.Behaviour, k int, prev float64) float64 {
	d := b.BaseBackoffMS(k)
	switch b.Jitter {
	case workload.JitterFull:
		return r.rng.Float64() * d
	case workload.JitterEqual:
		return d/2 + r.rng.Float64()*d/2
	case workload.JitterDecorrelated:
		lo := b.BackoffMS
		hi := 3 * max(prev, lo)
		w := lo + r.rng.Float64()*(hi-lo)
		if b.BackoffMaxMS > 0 {
			w = min(w, b.BackoffMaxMS)
		}
		return w
	}
	return d
}

// think is a closed-loop user's think time.
func (r *clientRun) think(l *workload.Loop) float64 {
	if l.Exponential {
		return r.rng.ExpFloat64() * l.ThinkMS
	}
	return l.ThinkMS
}

// userService is the service time of a closed-loop user's next request.
func (r *clientRun) userService() float64 {
	if r.svc == nil {
		return r.serviceMS
	}
	return r.svc.Next()
}

// end ends the request of attempt a at time at: a closed-loop user thinks,
// then sends its next request.
func (r *clientRun) end(a *attempt, at float64) {
	if !a.user {
		return
	}
	r.userEnded(at)
	l := r.loops[a.part]
	if next := at + r.think(l); next < r.ends[a.part] {
		r.scheduleUser(next, a.c, a.part)
	}
}

// answerOutcome is the outcome of admitted attempt a answered with
// sojourn (step 4 of the model): timed out when its client gave up on it
// already (gaveUp) or the sojourn passes its timeout, else on time within
// deadlineMS, else late. Every model decides an answer by it.
func (r *clientRun) answerOutcome(a *attempt, sojourn, deadlineMS float64, gaveUp bool) limiter.Outcome {
	switch {
	case gaveUp || r.flags[a.part].timeout && sojourn > r.behs[a.part].TimeoutMS:
		return limiter.TimedOut
	case sojourn <= deadlineMS:
		return limiter.OnTime
	}
	return limiter.Late
}

// answered measures admitted attempt a's answer at finish with out
// (answerOutcome) and reacts as its client does, at now: timed out, its
// work is wasted and, unless its client had given up already (gaveUp), it
// is abandoned now and retried after abandonAt; on time, it counts for the
// client's throttle and in the goodput of its finish window (goodput, a
// cursor of the series' windows) and ends its request; late, it counts
// for the throttle and ends its request.
func (r *clientRun) answered(a *attempt, out limiter.Outcome, gaveUp bool, finish, abandonAt, now float64, goodput *metrics.WindowCursor) {
	m, cm := r.m, r.cm
	switch out {
	case limiter.TimedOut:
		m.Late++
		cm.WastedWorkMS += a.svc
		if !gaveUp {
			cm.Abandoned++
			r.retry(a, abandonAt, abandonAt)
		}
	case limiter.OnTime:
		r.accept(a, now)
		m.OnTime++
		fw := int(goodput.Index(finish))
		for fw >= len(r.s.Goodput) {
			r.s.Goodput = append(r.s.Goodput, 0)
		}
		r.s.Goodput[fw]++
		r.end(a, finish)
	default:
		r.accept(a, now)
		m.Late++
		r.end(a, finish)
	}
}

// accept counts an answer (served, not abandoned) for the throttle of
// attempt a's client at now.
func (r *clientRun) accept(a *attempt, now float64) {
	if r.flags[a.part].throttles {
		r.throttleRoll(&r.behs[a.part], a.c, now)
		r.thrAcc[r.throttleSlot(a.c)]++
	}
}

// droppedUnstarted is admitted attempt a (released at release by
// instance inst) dropped before it started, its client giving up at
// abandonAt (cancel_on_timeout "drop-unstarted", decided at admission):
// abandoned, dropped, told to the gate as timed out, and retried.
func (r *clientRun) droppedUnstarted(a *attempt, inst int32, release, abandonAt float64, done *completions, fate func(limiter.Completion)) {
	r.cm.Abandoned++
	r.cm.Dropped++
	if done != nil {
		done.add(completionOf(a, inst, release, abandonAt, limiter.TimedOut))
	}
	noteFate(fate, a, inst, release, abandonAt, limiter.TimedOut)
	r.retry(a, abandonAt, abandonAt)
}

// retry offers a retry of attempt a, which failed at failAt; the gate
// said it would admit again at notBefore (failAt when it cannot say or the
// client does not listen). Without retries left, or past the window, the
// request ends at failAt.
func (r *clientRun) retry(a *attempt, failAt, notBefore float64) {
	b := &r.behs[a.part]
	if int(a.n) < b.Retries {
		d := r.wait(b, int(a.n)+1, a.prev)
		u := max(failAt+d, notBefore)
		if u < r.w {
			// Field by field (eventHeap: no copy of fields just stored).
			next := r.heap.reserve()
			next.t, next.prev, next.c, next.n, next.part = u, d, a.c, a.n+1, a.part
			next.user, next.class, next.svc = a.user, a.class, a.svc
			r.heap.push()
			return
		}
	}
	r.end(a, failAt)
}

// newClientRun starts the client model's state of one point: its
// behaviours, budgets, throttles, and the closed loops' first requests
// (scheduled on the worker's heap), on the plain server or a queue.
func newClientRun(cfg *experiments.Config, a *workload.Arrivals, pt *experiments.Point, in *Instruments) (*clientRun, int, error) {
	if in.clients == nil {
		in.clients = new(clientBufs)
	}
	w := &cfg.Workload
	durationMS := w.DurationMS
	nc := len(a.Clients)
	r := &clientRun{
		behs:  cfg.Behaviours(w, pt.Policy),
		loops: make([]*workload.Loop, len(w.Parts)),
		ends:  make([]float64, len(w.Parts)),
		rng:   rand.New(rand.NewPCG(pointSeed(cfg, pt), 0x636c69656e7473)), // "clients": the point's seed (a replication's, a listed one)
		heap:  &in.clients.heap,
		w:     durationMS,
		// Users' requests, made as the run goes, draw their service times
		// in the order they are made, on a stream of their own.
		svc:       cfg.Server.Sampler(pointSeed(cfg, pt), server.ServiceStream+1, a.GivenServiceMS),
		serviceMS: cfg.Server.ServiceMS,
	}
	r.heap.reset(int64(len(a.T))) // the list's arrivals are numbered first
	budgets, throttles := false, false
	r.flags = make([]partFlags, len(r.behs))
	for i := range r.behs {
		b := &r.behs[i]
		r.flags[i] = partFlags{b.Budgeted(), b.Throttles(), b.RetryAfter == workload.RetryAfterHonour, b.TimeoutMS > 0}
		budgets = budgets || r.flags[i].budgeted
		throttles = throttles || r.flags[i].throttles
	}
	if budgets {
		r.budgetSec = make([]int64, nc+1)
		for k := range r.budgetSec {
			r.budgetSec[k] = -1
		}
		r.budgetFirsts, r.budgetRetries = make([]float64, nc+1), make([]float64, nc+1)
	}
	if throttles {
		r.thrReq, r.thrAcc, r.thrAt = make([]int32, nc*throttleSlices), make([]int32, nc*throttleSlices), make([]int64, nc)
	}
	// Closed loops: each user's first request.
	totalUsers := 0
	for p := range w.Parts {
		k := w.Parts[p].Kind()
		if k == nil || k.Users == nil {
			continue
		}
		l := k.Users(&w.Parts[p])
		r.loops[p] = l
		r.ends[p] = durationMS
		if l.EndMS >= 0 {
			r.ends[p] = min(l.EndMS, durationMS)
		}
		u := 0
		for c := range a.Clients {
			if partOf(a, int32(c)) != int32(p) {
				continue
			}
			first := l.StartMS + float64(u)*l.ThinkMS/float64(l.Users)
			if l.Exponential {
				first = l.StartMS + r.rng.ExpFloat64()*l.ThinkMS
			}
			if first < r.ends[p] {
				r.scheduleUser(first, int32(c), int32(p))
			}
			u++
		}
		if u != l.Users {
			return nil, 0, fmt.Errorf("workload.parts[%d]: %d of its %d users are clients another part declared first: give the users their own group", p, l.Users-u, l.Users)
		}
		totalUsers += u
	}

	return r, totalUsers, nil
}

// clientTally is what a client model's loop counted beside Metrics and
// ClientMetrics.
type clientTally struct {
	busyMS, serverSojournMaxMS float64
	rel                        *releaseTally
	users                      int
}

// clientTotals completes the client model's metrics of a point from its
// counts, on the plain server or a queue.
func clientTotals(cfg *experiments.Config, r *clientRun, m *experiments.Metrics, cm *experiments.ClientMetrics, in *Instruments, t clientTally) {
	durationMS := cfg.Workload.DurationMS
	busyMS, occupancySum := t.busyMS, r.occupancySum
	seconds := durationMS / 1000
	measureCommon(m, in, seconds, t.rel, t.serverSojournMaxMS)
	if cm.Attempts > 0 {
		m.RejectPct = 100.0 * float64(m.Rejected) / float64(cm.Attempts)
		m.ServedLatePct = 100.0 * float64(m.Late) / float64(cm.Attempts)
	}
	m.UtilizationPct = math.Min(100, 100*busyMS/(durationMS*float64(cfg.Server.Workers)))

	cm.Succeeded = m.OnTime
	cm.AttemptsRPS = float64(cm.Attempts) / seconds
	// The goodput a server that refuses the excess at once would give:
	// min(level, capacity), the measured rate where the load has no level.
	level := m.OfferedRPS
	if v := levelRPS(cfg); v != nil {
		level = *v
	}
	cm.IdealGoodputRPS = min(level, cfg.Server.RateRPS())
	cm.UsersInFlightMax = r.usersInFlightMax
	cm.Users = t.users
	if m.Arrivals > 0 {
		cm.Amplification = float64(cm.Attempts) / float64(m.Arrivals)
		cm.SuccessPct = 100 * float64(cm.Succeeded) / float64(m.Arrivals)
	}
	if cm.Attempts > 0 {
		cm.RetrySharePct = 100 * float64(cm.Retries) / float64(cm.Attempts)
		cm.FailedAttemptsPct = 100 * float64(cm.Attempts-cm.Succeeded) / float64(cm.Attempts)
		cm.QueueDepthMean = float64(occupancySum) / float64(cm.Attempts)
	}
	if cm.Served > 0 {
		cm.RetryShareServerPct = 100 * float64(cm.RetriesServed) / float64(cm.Served)
	}
	if busyMS > 0 {
		cm.WastedWorkPct = 100 * (cm.WastedWorkMS / busyMS) // the share first: at most 1, so at most 100 (100·w/w can round past it)
	}
	m.Client = cm
}

// partOf is the part whose behaviour client c's requests have: the part
// that declared it first (the first part for a trace read from disk).
func partOf(a *workload.Arrivals, c int32) int32 {
	if a.ClientPart == nil {
		return 0
	}
	return a.ClientPart[c]
}
