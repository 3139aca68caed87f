package limiter

import (
	"math/rand/v2"
	"slices"

	"github.com/ratelab/ratelab/experiments/cacheline"
)

// InstanceSet is a replicated limiter's gates behind their balancer
// (instances.go): a Replicated gate, which the event loop offers through
// Route and OfferTo. Every instance has its own state.
//
// The balancers, each a deterministic rule of the requests it has seen:
//
//   - round-robin: request k goes to instance k mod N;
//   - random: each request to a uniform instance, drawn from a PCG seeded
//     with balancer_seed (stream 0x62616c616e636572, "balancer");
//   - least-inflight: to the instance with the fewest admitted requests
//     not yet completed (it hears completions: an Observer), ties to the
//     first at or after the instance after the last one chosen (nginx's
//     least_conn breaks ties round robin);
//   - hash: by the client's key on a consistent-hash ring of HashPoints
//     points per instance (splitmix64 of instance and point; a client's
//     key is splitmix64 of its index), the first ring point at or after
//     the key, wrapping: when N changes only the keys of the ring's moved
//     arcs change instance.
type InstanceSet struct {
	_        cacheline.Pad // a sweep's points run side by side (package cacheline)
	gates    []Gate
	balancer string
	next     int // round-robin's next instance; least-inflight's tie start
	rng      *rand.Rand
	inflight []int
	byClient []int32 // hash: each client's instance
	store    *store  // sharing central: the store decides for every instance
	lease    *leases // sharing lease: the lease server (lease.go)
	// active instances take requests: the first active of gates; a
	// scaling event makes them scaleTo at scaleAtMS (+Inf: none).
	active, scaleTo int
	scaleAtMS       float64
	clients         int
	_               cacheline.Pad
}

// HashPoints is the consistent-hash ring's points per instance.
const HashPoints = 64

// startBalancer readies the balancer for clients clients.
func (r *InstanceSet) startBalancer(seed uint64, clients int) {
	switch r.balancer {
	case BalancerRandom:
		r.rng = rand.New(rand.NewPCG(seed, 0x62616c616e636572))
	case BalancerLeastInflight:
		r.inflight = make([]int, len(r.gates))
	case BalancerHash:
		r.byClient = HashRing(r.active, clients)
	}
	r.clients = clients
}

// scale applies the scaling event once its time has come: the balancer
// sends requests to the first scaleTo instances from then on (the hash
// ring rebuilt: consistent hashing moves only the arcs that change).
func (r *InstanceSet) scale(t float64) {
	if t < r.scaleAtMS || r.active == r.scaleTo {
		return
	}
	r.active = r.scaleTo
	if r.byClient != nil {
		r.byClient = HashRing(r.active, r.clients)
	}
}

// HashRing is the instance of each of clients clients on the consistent
// hash ring of n instances.
func HashRing(n, clients int) []int32 {
	type point struct {
		h        uint64
		instance int32
	}
	ring := make([]point, 0, n*HashPoints)
	for i := range n {
		for v := range HashPoints {
			ring = append(ring, point{splitmix64(uint64(i)<<32 | uint64(v) | 1<<63), int32(i)})
		}
	}
	slices.SortFunc(ring, func(a, b point) int {
		switch {
		case a.h < b.h:
			return -1
		case a.h > b.h:
			return 1
		}
		return int(a.instance - b.instance)
	})
	out := make([]int32, clients)
	for c := range out {
		k := splitmix64(uint64(c))
		j, _ := slices.BinarySearchFunc(ring, k, func(p point, k uint64) int {
			switch {
			case p.h < k:
				return -1
			case p.h > k:
				return 1
			}
			return 0
		})
		if j == len(ring) {
			j = 0
		}
		out[c] = ring[j].instance
	}
	return out
}

// splitmix64 is Steele, Lea and Flood's SplitMix64 finalizer of x.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// Instances is the number of instances.
func (r *InstanceSet) Instances() int { return len(r.gates) }

// Route chooses the instance of a request from client at t.
func (r *InstanceSet) Route(t float64, client int32) int {
	r.scale(t)
	n := r.active
	switch r.balancer {
	case BalancerRandom:
		return r.rng.IntN(n)
	case BalancerLeastInflight:
		best := r.next % n
		for k := 1; k < n; k++ {
			if i := (r.next + k) % n; r.inflight[i] < r.inflight[best] {
				best = i
			}
		}
		r.next = best + 1
		return best
	case BalancerHash:
		if int(client) < len(r.byClient) {
			return int(r.byClient[client])
		}
		return int(splitmix64(uint64(client)) % uint64(n))
	}
	i := r.next % n
	r.next = i + 1
	return i
}

// OfferTo lets instance i decide the request.
func (r *InstanceSet) OfferTo(i int, t float64, client int32) (float64, bool) {
	var release float64
	var ok bool
	if r.store != nil {
		release, ok = r.store.offer(t, client)
	} else {
		release, ok = r.gates[i].Offer(t, client)
	}
	if ok && r.inflight != nil {
		r.inflight[i]++
	}
	if r.lease != nil {
		r.lease.offered[i]++
	}
	return release, ok
}

// Offer routes then decides: the gate as a caller outside the loop sees it.
func (r *InstanceSet) Offer(t float64, client int32) (float64, bool) {
	return r.OfferTo(r.Route(t, client), t, client)
}

// State is the instance's admitted requests in flight (least-inflight),
// else 0.
func (r *InstanceSet) State(i int) float64 {
	if r.inflight == nil {
		return 0
	}
	return float64(r.inflight[i])
}

// Gates are the instances' gates (for tests and the sharing models).
func (r *InstanceSet) Gates() []Gate { return r.gates }

// observedInstances are instances behind least-inflight, which hears each
// admitted request's completion (an Observer, so the point runs in the
// event loop).
type observedInstances struct{ *InstanceSet }

// Complete takes a completed request out of its instance's count.
func (o *observedInstances) Complete(c Completion) {
	if i := int(c.Instance); i >= 0 && i < len(o.inflight) && o.inflight[i] > 0 {
		o.inflight[i]--
	}
}
