package limiter

// NetflixWindowed is Netflix's WindowedLimit (limit/WindowedLimit.java)
// with its defaults: minWindowTime = maxWindowTime = 1 s, windowSize 10,
// minRttThreshold 100 µs, the AverageSampleWindow
// (limit/window/ImmutableAverageSampleWindow.java). A sample under the
// threshold is ignored (line 135); else it joins the window (min RTT, sum,
// max in flight, count, any drop), and when its end time (start + rtt) is
// past nextUpdateTime (0 at first) the window closes: the next update is
// at end + min(max(2·min RTT, 1 s), 1 s) (line 153), and a window of at
// least 10 samples passes the delegate (start, sum/count (integer
// division), max in flight, any drop) (line 156); a smaller one is
// discarded, not extended.
type NetflixWindowed struct {
	delegate       netflixLimit
	nextUpdateNS   int64
	minRTT, sum    int64
	maxInflight    int
	count          int
	didDrop        bool
	minWindowNS    int64
	maxWindowNS    int64
	windowSize     int
	minThresholdNS int64
}

// NewNetflixWindowed is WindowedLimit.newBuilder().build(delegate).
func NewNetflixWindowed(delegate netflixLimit) *NetflixWindowed {
	w := &NetflixWindowed{delegate: delegate, minWindowNS: 1e9, maxWindowNS: 1e9, windowSize: 10, minThresholdNS: 100_000}
	w.reset()
	return w
}

func (w *NetflixWindowed) reset() {
	w.minRTT, w.sum, w.maxInflight, w.count, w.didDrop = 1<<63-1, 0, 0, 0, false
}

func (w *NetflixWindowed) onSample(startNS, rttNS int64, inflight int, didDrop bool) {
	end := startNS + rttNS
	if rttNS < w.minThresholdNS {
		return
	}
	w.minRTT = min(w.minRTT, rttNS)
	w.sum += rttNS
	w.maxInflight = max(w.maxInflight, inflight)
	w.count++
	w.didDrop = w.didDrop || didDrop
	if end > w.nextUpdateNS {
		minRTT, sum, maxInflight, count, drop := w.minRTT, w.sum, w.maxInflight, w.count, w.didDrop
		w.reset()
		w.nextUpdateNS = end + min(max(minRTT*2, w.minWindowNS), w.maxWindowNS)
		if minRTT < 1<<63-1 && count >= w.windowSize {
			w.delegate.onSample(startNS, sum/int64(count), maxInflight, drop)
		}
	}
}

func (w *NetflixWindowed) getLimit() int { return w.delegate.getLimit() }
