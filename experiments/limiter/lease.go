package limiter

import (
	"fmt"
	"maps"
	"math"
	"strings"

	"github.com/ratelab/ratelab/experiments/calculus"
)

// Sharing lease (Doorman, github.com/youtube/doorman at e2b69e1, 2016): a
// server holds the configured capacity (the gate's rate_rps) and leases
// each instance a share of it for lease_ms; every refresh_ms each active
// instance asks again, wanting the rate it was offered over the last
// refresh interval, and the server's algorithm (lease_algorithm) says
// what it gets. Each instance enforces its share as its own token bucket:
// rate = the share, burst = burst × share / rate_rps (at least 1 token
// with a share above 0, none with 0). What the model follows of Doorman:
//
//   - the algorithms of go/server/doorman/algorithm.go, each instance one
//     client of one subclient: fair is FairShare (lines 95-206: an equal
//     share, then the capacity others leave unclaimed in two rounds),
//     proportional is ProportionalShare (213-293: an equal share, then a
//     top-up proportional to the need above it); both never grant more
//     than the capacity not leased to others (available = capacity -
//     SumHas + old.Has), so the leases held never sum above the capacity;
//   - the lease store of store.go: running sums SumHas and SumWants
//     (Assign 153-167, Release 142-151), expired leases cleaned before
//     each grant (Clean 169-181); the store's Map is a Go map, visited in
//     any order: here in instance order, so the float sums are the same
//     at every run;
//   - the refreshes of one round are requests one after another, in
//     instance order, each seeing the grants before it (the server
//     serialises them);
//   - a lease that expires without a refresh (the server down over
//     [outage_start_ms, outage_end_ms), or a failed instance that no
//     longer refreshes) leaves the instance, under lease_expired zero,
//     with nothing (the client's capacity 0.0, go/client/doorman/
//     client.go:340-346), or under safe with the safe capacity of its last
//     response, capacity / the server's clients then (resource.go:91-92,
//     the default; the client's FIXME at 343 says it should use it): safe
//     capacities of instances that last heard different client counts can
//     sum above the capacity, which no lease does;
//   - a failed instance's lease stays in the store until it expires: its
//     share is stranded for up to lease_ms.
//
// Where it departs: the first round is at t = 0, every instance leased
// capacity / instances wanting as much (Doorman's first request has no
// history either); a lease is valid over [grant, grant + lease_ms) (Doorman
// compares with After/Before, so it is still valid at its expiry instant);
// an instance that joins at a scaling event has no lease, and refuses,
// until the next round; the refresh has no RPC time or jitter (Doorman's
// client backs off and retries).
//
// The gate of the settings must be a token bucket (Kind.Leases): a share
// retunes the instance's bucket (leaseRetuner) at the time it is granted.
type leases struct {
	capacityRPS, burst float64
	leaseMS, refreshMS float64
	fair, safe         bool
	downFrom, downTo   float64
	nextRefreshMS      float64
	lastRefreshMS      float64
	buckets            []leaseRetuner
	store              []leaseEntry // the server's store, by instance
	sumHas, sumWants   float64
	count              int
	held               []heldLease // what each instance enforces
	offered            []int       // requests offered since the last round
}

// leaseEntry is a lease in the server's store (Doorman's Lease).
type leaseEntry struct {
	in         bool
	has, wants float64
	expiryMS   float64
}

// heldLease is an instance's side: its share and until when its lease
// holds (+Inf: a fallback, no lease to expire), the safe capacity of its
// last response, and whether it ever had one.
type heldLease struct {
	share    float64
	expiryMS float64
	safe     float64
	leased   bool
}

// leaseRetuner is a gate whose rate and burst a lease sets at t: it
// keeps what it holds (capped by the new burst) and refills at the new
// rate from t. full: the first lease, the bucket starts full.
type leaseRetuner interface {
	Gate
	retune(t, rateRPS, burst float64, full bool)
}

// retune is TokenBucket's lease: refill to t at the old rate, then the new
// rate and burst.
func (b *TokenBucket) retune(t, rateRPS, burst float64, full bool) {
	if full {
		b.tokens = burst
	} else if t > b.lastMS {
		b.tokens = min(b.burst, b.tokens+(t-b.lastMS)*b.refillPerMS)
	}
	b.lastMS = max(b.lastMS, t)
	b.refillPerMS, b.burst = rateRPS/1000, burst
	b.tokens = min(b.tokens, burst)
}

// Lease sharing's parameters and options.
const (
	SharingLease         = "lease"
	ParamLeaseMS         = "lease_ms"
	ParamRefreshMS       = "refresh_ms"
	OptionLeaseAlgorithm = "lease_algorithm"
	OptionLeaseExpired   = "lease_expired"
	LeaseProportional    = "proportional"
	LeaseFair            = "fair"
	LeaseExpiredZero     = "zero"
	LeaseExpiredSafe     = "safe"
)

// leaseParams are the replica parameters of sharing lease.
func leaseParams() []Param {
	return []Param{
		{Name: ParamLeaseMS, Admits: AdmitsNone, Label: "Lease", Unit: "ms", Min: 1, Max: MaxWindowMS, Default: 5000,
			Doc: "sharing lease: how long a granted share holds without a refresh (Doorman's lease_length; typically 300 s)"},
		{Name: ParamRefreshMS, Admits: AdmitsNone, Label: "Refresh", Unit: "ms", Min: 1, Max: MaxWindowMS, Default: 1000,
			Doc: "sharing lease: every instance asks for its share again this often (Doorman's refresh_interval; typically 5 s)"},
	}
}

// leaseOptions are the replica options of sharing lease.
func leaseOptions() []Option {
	return []Option{
		{Name: OptionLeaseAlgorithm, Label: "Lease algorithm", Choices: []string{LeaseProportional, LeaseFair},
			Doc: "sharing lease: Doorman's PROPORTIONAL_SHARE (an equal share, then a top-up proportional to the need above it) or FAIR_SHARE (max-min fair)"},
		{Name: OptionLeaseExpired, Label: "Lease expired", Choices: []string{LeaseExpiredZero, LeaseExpiredSafe},
			Doc: "sharing lease: what an instance enforces once its lease expires unrefreshed: nothing (Doorman's client) or the safe capacity, capacity / clients, of its last response"},
	}
}

// newLeases starts the lease server of a lease-shared point: the n
// instances at t = 0 hold capacity / n each, their buckets full.
func newLeases(buckets []leaseRetuner, n int, p Params, fair, safe bool) *leases {
	l := &leases{capacityRPS: p.Get(ParamRate), burst: p.Get(ParamBurst), leaseMS: p.Get(ParamLeaseMS), refreshMS: p.Get(ParamRefreshMS),
		fair: fair, safe: safe, downFrom: p.Get(ParamOutageStart), downTo: p.Get(ParamOutageEnd),
		buckets: buckets, store: make([]leaseEntry, len(buckets)), held: make([]heldLease, len(buckets)), offered: make([]int, len(buckets))}
	for i := range l.held {
		l.held[i].expiryMS = math.Inf(1)
	}
	for i := range n {
		l.assign(i, 0, l.capacityRPS/float64(n), l.capacityRPS/float64(n))
	}
	for i := range n {
		l.grant(i, 0)
	}
	l.nextRefreshMS = l.refreshMS
	return l
}

// assign is the store's Assign (store.go:153-167), one subclient.
func (l *leases) assign(i int, t, has, wants float64) {
	e := &l.store[i]
	if !e.in {
		l.count++
	}
	l.sumHas += has - e.has
	l.sumWants += wants - e.wants
	e.in, e.has, e.wants, e.expiryMS = true, has, wants, t+l.leaseMS
}

// release is the store's Release (store.go:142-151).
func (l *leases) release(i int) {
	e := &l.store[i]
	if !e.in {
		return
	}
	l.sumWants -= e.wants
	l.sumHas -= e.has
	l.count--
	*e = leaseEntry{}
}

// clean releases the leases expired at t (Clean, store.go:169-181).
func (l *leases) clean(t float64) {
	for i := range l.store {
		if l.store[i].in && t >= l.store[i].expiryMS {
			l.release(i)
		}
	}
}

// grant hands instance i the lease the store holds for it: its bucket
// retuned at t, and the safe capacity of the response (resource.go:91-92).
func (l *leases) grant(i int, t float64) {
	e := &l.store[i]
	h := &l.held[i]
	full := !h.leased
	h.share, h.expiryMS, h.leased = e.has, e.expiryMS, true
	h.safe = l.capacityRPS / float64(max(l.count, 1))
	l.setShare(i, t, e.has, full)
}

// setShare retunes instance i's bucket to share.
func (l *leases) setShare(i int, t, share float64, full bool) {
	burst := 0.0
	if share > 0 && l.capacityRPS > 0 {
		burst = max(l.burst*share/l.capacityRPS, 1)
	}
	l.buckets[i].retune(t, share, burst, full)
}

// request is one instance's refresh: the algorithm's lease for wants.
func (l *leases) request(i int, t, wants float64) {
	l.clean(t)
	var has float64
	if l.fair {
		has = l.fairShare(i, wants)
	} else {
		has = l.proportionalShare(i, wants)
	}
	l.assign(i, t, has, wants)
	l.grant(i, t)
}

// fairShare is FairShare (algorithm.go:95-206) for client i of one
// subclient wanting wants.
func (l *leases) fairShare(i int, wants float64) float64 {
	old := l.store[i]
	oldSub := 0
	if old.in {
		oldSub = 1
	}
	count := l.count - oldSub + 1
	available := l.capacityRPS - l.sumHas + old.has
	equalShare := l.capacityRPS / float64(count)
	deservedShare := equalShare
	if wants <= deservedShare {
		return min(wants, available)
	}
	extra, wantExtra := 0.0, 1
	for j := range l.store {
		e := l.store[j]
		if j == i || !e.in {
			continue
		}
		if e.wants < equalShare {
			extra += equalShare - e.wants
		} else if e.wants > equalShare {
			wantExtra++
		}
	}
	deservedExtra := extra / float64(wantExtra)
	if wants < deservedShare+deservedExtra {
		return min(wants, available)
	}
	extraExtra, wantExtraExtra := 0.0, 1
	for j := range l.store {
		e := l.store[j]
		if j == i || !e.in || !(e.wants > equalShare) {
			continue // the wantExtraClients of the first round
		}
		if e.wants < deservedExtra+deservedShare {
			extraExtra += deservedExtra + deservedShare - e.wants
		} else if e.wants > deservedExtra+deservedShare {
			wantExtraExtra++
		}
	}
	deservedExtraExtra := extraExtra / float64(wantExtraExtra)
	return min(deservedShare+deservedExtra+deservedExtraExtra, available)
}

// proportionalShare is ProportionalShare (algorithm.go:213-293) for
// client i of one subclient wanting wants.
func (l *leases) proportionalShare(i int, wants float64) float64 {
	old := l.store[i]
	count := l.count
	if !old.in {
		count++
	}
	equalShare := l.capacityRPS / float64(count)
	unused := l.capacityRPS - l.sumHas + old.has
	if l.sumWants <= l.capacityRPS || wants <= equalShare {
		return min(wants, unused)
	}
	extraCapacity, extraNeed := 0.0, 0.0
	for j := range l.store {
		e := l.store[j]
		if !e.in {
			continue
		}
		w := e.wants
		if j == i {
			w = wants
		}
		if w < equalShare {
			extraCapacity += equalShare - w
		} else {
			extraNeed += w - equalShare
		}
	}
	gets := equalShare + (wants-equalShare)*(extraCapacity/extraNeed)
	return min(gets, unused)
}

// down reports whether the lease server is down at t.
func (l *leases) down(t float64) bool { return t >= l.downFrom && t < l.downTo }

// NextSyncMS is the next refresh round or the next lease to expire.
func (l *leases) nextSyncMS() float64 {
	next := l.nextRefreshMS
	for i := range l.held {
		next = min(next, l.held[i].expiryMS)
	}
	return next
}

// sync expires the instances' leases due at t (their fallback), then, at
// a refresh time with the server up, runs a round for the active
// instances in order, each wanting the rate it was offered since the
// last round.
func (l *leases) sync(t float64, active int) {
	for i := range l.held {
		if h := &l.held[i]; t >= h.expiryMS {
			share := 0.0
			if l.safe {
				share = h.safe
			}
			h.share, h.expiryMS = share, math.Inf(1)
			l.setShare(i, t, share, false)
		}
	}
	if t < l.nextRefreshMS {
		return
	}
	l.nextRefreshMS += l.refreshMS
	if l.down(t) {
		return
	}
	elapsedS := (t - l.lastRefreshMS) / 1000
	for i := range min(active, len(l.held)) {
		l.request(i, t, float64(l.offered[i])/elapsedS)
	}
	clear(l.offered)
	l.lastRefreshMS = t
}

// Shares are what each instance enforces now (req/s) and the sum of the
// leases the server's store holds (for tests and the measures).
func (l *leases) shares() ([]float64, float64) {
	out := make([]float64, len(l.held))
	for i := range l.held {
		out[i] = l.held[i].share
	}
	return out, l.sumHas
}

// leasedInstances are instances under sharing lease: a Syncer (the
// rounds and expiries are events of the loop) and an Observer for
// least-inflight (observedInstances' Complete, a no-op otherwise).
type leasedInstances struct{ observedInstances }

// NextSyncMS is the lease server's next event.
func (g *leasedInstances) NextSyncMS() float64 { return g.lease.nextSyncMS() }

// Sync runs the lease server's events due at t.
func (g *leasedInstances) Sync(t float64) {
	g.scale(t)
	g.lease.sync(t, g.active)
}

// Shares are what each instance enforces now (req/s) and the sum of the
// leases the server holds.
func (g *leasedInstances) Shares() ([]float64, float64) { return g.lease.shares() }

// leaseTypeList names the gate types that run under sharing lease.
func leaseTypeList() string {
	var out []string
	for _, k := range Kinds() {
		if k.Leases {
			out = append(out, string(k.Type))
		}
	}
	return strings.Join(out, ", ")
}

// newLeased builds the instances of a lease-shared point: each a gate of
// the settings, which its leases retune, behind the balancer.
func newLeased(s *Spec, k *Kind, p Params, env Env, r *InstanceSet) (Gate, error) {
	n := len(r.gates)
	total := max(n, int(p.Get(ParamScaleTo)))
	buckets := make([]leaseRetuner, total)
	r.gates = r.gates[:0]
	for i := range total {
		g, err := k.New(s, p, env)
		if err != nil {
			return nil, err
		}
		b, ok := g.(leaseRetuner)
		if !ok {
			return nil, fmt.Errorf("%s: sharing lease: %s's gate takes no lease", s.Label(), k.Type)
		}
		b.retune(0, 0, 0, false) // no lease yet
		buckets[i] = b
		r.gates = append(r.gates, g)
	}
	r.active, r.scaleAtMS, r.scaleTo = n, math.Inf(1), n
	if to := int(p.Get(ParamScaleTo)); to > 0 && to != n {
		r.scaleAtMS, r.scaleTo = p.Get(ParamScaleAt), to
	}
	r.lease = newLeases(buckets, n, p, s.Options[OptionLeaseAlgorithm] == LeaseFair, s.Options[OptionLeaseExpired] == LeaseExpiredSafe)
	r.startBalancer(uint64(p.Get(ParamBalancerSeed)), len(env.Weights))
	return &leasedInstances{observedInstances{r}}, nil
}

// leaseCurve bounds what lease-shared instances release: their shares
// never sum above the rate, so their buckets refill at most at the rate
// together, and each bucket holds burst × its share / rate or at least 1
// token, so together at most burst + instances tokens (n, the most at
// once); instances that join at a scaling event start full at their
// first lease, tokens from nothing, at most burst + the newcomers more:
// the gate's curve with that burst (fallback safe capacities aside, which
// may sum above the rate: no curve then).
func leaseCurve(s *Spec, k *Kind, p Params, n float64) (calculus.Curve, bool) {
	if s.Options[OptionLeaseExpired] == LeaseExpiredSafe {
		return calculus.Curve{}, false
	}
	q := maps.Clone(p)
	q[ParamBurst] = p[ParamBurst] + n
	if to, from := p.Get(ParamScaleTo), p.Get(ParamInstances); to > from {
		q[ParamBurst] += p[ParamBurst] + to - from
	}
	return k.Curve(q), true
}

// State is an instance's share (req/s), or its admitted requests in flight
// under least-inflight.
func (g *leasedInstances) State(i int) float64 {
	if g.inflight != nil {
		return float64(g.inflight[i])
	}
	return g.lease.held[i].share
}
