package limiter

import (
	"fmt"

	"github.com/ratelab/ratelab/experiments/cacheline"
)

// NetflixCommit is the commit of Netflix/concurrency-limits whose source the
// netflix-* gates follow (concurrency-limits-core/src/main/java/com/netflix/
// concurrency/limits/...).
const NetflixCommit = "78a74b9878d38c4c048b0304ce12a162ab7b7222"

// netflixLimit is a Limit of Netflix's library (limit/*.java): onSample
// is AbstractLimit.onSample (setLimit(_update(...))), getLimit its limit.
type netflixLimit interface {
	onSample(startNS, rttNS int64, inflight int, didDrop bool)
	getLimit() int
}

// NetflixLimiter is Netflix's SimpleLimiter (limiter/SimpleLimiter.java,
// AbstractLimiter.java) around one of its Limits: a request passes while
// fewer than the limit are in flight (the AdjustableSemaphore holds limit −
// in-flight permits, tryAcquire needs one); its completion calls the
// limit's onSample(startTime, rtt, inflight at acquire, didDrop)
// (AbstractLimiter.createListener: onSuccess or onDropped). The lab's
// "drop" is onDropped: a request that timed out, was shed by the server or
// finished after its deadline (an Outcome other than on time); the RTT is
// from its release to its completion or drop, on a ns clock (the library's
// System.nanoTime). A sample with an RTT of 0 is ignored (onIgnore): Vegas
// throws on it.
type NetflixLimiter struct {
	_      cacheline.Pad // a sweep's points run side by side (package cacheline)
	adm    admissions
	limit  netflixLimit // what the samples go to: the algorithm, or WindowedLimit around it
	algo   netflixLimit // the algorithm, for its estimates
	names  []string
	values func(dst []float64) []float64
	_      cacheline.Pad
}

// Offer admits while fewer than the limit are in flight.
func (n *NetflixLimiter) Offer(t float64, client int32) (float64, bool) {
	if n.adm.inflight >= n.limit.getLimit() {
		return 0, false
	}
	n.adm.admit(t, client)
	return t, true
}

// Complete gives the limit the request's sample.
func (n *NetflixLimiter) Complete(c Completion) {
	inflight := n.adm.complete(c)
	if inflight == 0 {
		return
	}
	start := nanos(c.ReleaseMS)
	rtt := nanos(c.DoneMS) - start
	if rtt <= 0 {
		return
	}
	n.limit.onSample(start, rtt, inflight, c.Outcome != OnTime)
}

// LimitNow is the limit's getLimit().
func (n *NetflixLimiter) LimitNow() int { return n.limit.getLimit() }

// InFlight is the limiter's in-flight count.
func (n *NetflixLimiter) InFlight() int { return n.adm.inflight }

// Estimates are the algorithm's own numbers.
func (n *NetflixLimiter) Estimates(dst []float64) []float64 {
	if n.values == nil {
		return dst
	}
	return n.values(dst)
}

// EstimateNames names them.
func (n *NetflixLimiter) EstimateNames() []string { return n.names }

// The window option of the netflix-* gates: the algorithm alone, or in
// Netflix's WindowedLimit.
const (
	OptionNetflixWindow   = "window"
	NetflixWindowNone     = "none"
	NetflixWindowWindowed = "windowed"
)

var netflixWindowOption = Option{Name: OptionNetflixWindow, Label: "Window", Choices: []string{NetflixWindowNone, NetflixWindowWindowed},
	Doc: "windowed: Netflix's WindowedLimit around the algorithm (1 s windows, at least 10 samples, the mean RTT and the max in flight passed on, RTTs under 100 µs ignored); none: every sample goes to the algorithm"}

// newNetflixLimiter is the SimpleLimiter around algo, in a WindowedLimit
// when the spec says so.
func newNetflixLimiter(s *Spec, algo netflixLimit, names []string, values func([]float64) []float64) (*NetflixLimiter, error) {
	n := &NetflixLimiter{limit: algo, algo: algo, names: names, values: values}
	switch w := s.Option(OptionNetflixWindow); w {
	case "", NetflixWindowNone:
	case NetflixWindowWindowed:
		n.limit = NewNetflixWindowed(algo)
	default:
		return nil, fmt.Errorf("%s: window %q", s.Type, w)
	}
	return n, nil
}
