package limiter

import (
	"math"
	"testing"
)

// The netflix-* and envoy-adaptive-concurrency gates' tables: each step's
// expected limit is worked by hand from the library's source at the commit
// its file names (NetflixCommit, EnvoyAdaptiveCommit), line by line.

type netflixStep struct {
	rttMS    float64
	inflight int
	drop     bool
	want     int
}

func runNetflix(t *testing.T, name string, l netflixLimit, steps []netflixStep) {
	t.Helper()
	start := int64(0)
	for i, s := range steps {
		start += 1e6
		l.onSample(start, nanos(s.rttMS), s.inflight, s.drop)
		if got := l.getLimit(); got != s.want {
			t.Fatalf("%s step %d (rtt %g ms, inflight %d, drop %v): limit %d, want %d", name, i, s.rttMS, s.inflight, s.drop, got, s.want)
		}
	}
}

// AIMDLimit.java _update, lines 102-112.
func TestNetflixAIMDTable(t *testing.T) {
	t.Parallel()
	runNetflix(t, "defaults", NewNetflixAIMD(20, 20, 200, 0.9, 5000), []netflixStep{
		{10, 10, false, 21},   // l.107: 10·2 >= 20 → 21
		{10, 10, false, 21},   // 20 >= 21 false: hold
		{10, 11, false, 22},   // 22 >= 21 → 22
		{10, 11, true, 20},    // l.106: (int)(22·0.9 = 19.8) = 19, l.111 clamp to min 20
		{5001, 15, false, 20}, // l.105: rtt > timeout: (int)18.0 = 18 → 20
	})
	runNetflix(t, "min 1", NewNetflixAIMD(10, 1, 12, 0.5, 100), []netflixStep{
		{10, 5, false, 11},   // 10 >= 10
		{10, 6, false, 12},   // 12 >= 11
		{10, 6, false, 12},   // 13 clamped to max 12 (l.111)
		{10, 6, true, 6},     // (int)(12·0.5)
		{10, 1, true, 3},     // (int)(6·0.5)
		{10, 1, true, 1},     // (int)1.5 = 1
		{10, 1, true, 1},     // (int)0.5 = 0 → min 1
		{100.5, 1, false, 1}, // rtt 100.5 ms > timeout 100 ms: a drop
		{100, 1, false, 2},   // rtt = timeout is no drop; 2 >= 1
	})
}

// VegasLimit.java _update lines 249-277, updateEstimatedLimit 279-321;
// probe_multiplier 30 puts the first probe past 300 samples.
func TestNetflixVegasTable(t *testing.T) {
	t.Parallel()
	runNetflix(t, "defaults", NewNetflixVegas(20, 1000, 1, 30, 1), []netflixStep{
		{10, 20, false, 20},   // l.266: first sample sets rtt_noload = 10 ms
		{10, 10, false, 26},   // q = ceil(20·0) = 0 <= threshold 1 (l.296): 20 + β 6
		{20, 13, false, 25},   // q = ceil(26·0.5) = 13 > β 6 (l.302): 26 − 1
		{11, 13, false, 25},   // q = ceil(25·(1 − 10/11)) = ceil(2.27) = 3: not < α 3, not > β: hold (l.306)
		{10.5, 13, false, 26}, // q = ceil(25·(1 − 10/10.5)) = ceil(1.19) = 2 < α 3 (l.299): 25 + 1
		{12, 1, true, 25},     // a drop (l.285): 26 − 1
		{12, 12, false, 25},   // 12·2 < 25 (l.288): no update
		{5, 25, false, 25},    // a lower RTT (l.266) only sets rtt_noload = 5 ms
		{10, 25, false, 24},   // q = ceil(25·0.5) = 13 > 6: 25 − 1
	})
	// Smoothing 0.5 and the clamp before it (l.310-311); t = 2 from L = 100.
	runNetflix(t, "smoothing", NewNetflixVegas(100, 105, 0.5, 30, 1), []netflixStep{
		{10, 100, false, 100}, // rtt_noload = 10 ms
		{10, 100, false, 102}, // q = 0 <= t 2: 100 + β 12 = 112, clamped to 105, then 0.5·100 + 0.5·105 = 102.5
		{20, 100, false, 101}, // q = ceil(102.5·0.5) = 52 > β 12: 102.5 − 2 = 100.5 → 0.5·102.5 + 0.5·100.5 = 101.5
	})
	// log10Root is Log10RootIntFunction: max(1, (int)log10(t)).
	for _, c := range [][2]int{{0, 1}, {1, 1}, {9, 1}, {10, 1}, {99, 1}, {100, 2}, {999, 2}, {1000, 3}, {12345, 4}} {
		if got := log10Root(c[0]); got != c[1] {
			t.Errorf("log10Root(%d) = %d, want %d", c[0], got, c[1])
		}
	}
}

// The probe (l.254-263): after jitter·30·L samples (jitter in [0.5, 1))
// the sample only sets rtt_noload, even to a higher RTT.
func TestNetflixVegasProbe(t *testing.T) {
	t.Parallel()
	v := NewNetflixVegas(20, 1000, 1, 1, 7) // probe after jitter·1·20 in [10, 20) samples
	jitter := v.probeJitter
	v.onSample(0, nanos(10), 20, false) // rtt_noload 10 ms
	n := 1
	for v.rttNoLoad == nanos(10) {
		v.onSample(0, nanos(50), 1, false) // inflight 1: no update, a higher RTT: no rtt_noload
		n++
		if n > 40 {
			t.Fatal("no probe in 40 samples")
		}
	}
	if want := int(math.Ceil(jitter * 20)); n != want || v.rttNoLoad != nanos(50) {
		t.Fatalf("probe at sample %d (rtt_noload %d ns), want sample %d with jitter %g", n, v.rttNoLoad, want, jitter)
	}
}

// Gradient2Limit.java _update lines 278-323 and ExpAvgMeasurement.java
// add (lines 35-45): defaults, queueSize 4.
func TestNetflixGradient2Table(t *testing.T) {
	t.Parallel()
	runNetflix(t, "defaults", NewNetflixGradient2(20, 20, 200, 0.2, 4, 600, 1.5), []netflixStep{
		// long = 10 (mean of 1); g = min(1, 1.5) = 1; new = 20 + 4 = 24; 20·0.8 + 24·0.2 = 20.8
		{10, 10, false, 20},
		// inflight 10 < 20.8/2 (l.298): app limited
		{10, 10, false, 20},
		// 20.8 + 4 = 24.8; 20.8·0.8 + 24.8·0.2 = 21.6
		{10, 11, false, 21},
		// long = (30 + 40)/4 = 17.5; g = 1.5·17.5/40 = 0.65625; new = 21.6·0.65625 + 4 = 18.175;
		// 21.6·0.8 + 18.175·0.2 = 20.915
		{40, 11, false, 20},
		// long = 72/5 = 14.4; 14.4/2 > 2 decays the stored long (l.293), this update uses 14.4: g = 1;
		// 20.915 + 4 = 24.915 → 20.915·0.8 + 24.915·0.2 = 21.715
		{2, 11, false, 21},
	})
	// The clamp after the smoothing (l.309): min 20 holds a falling limit.
	g := NewNetflixGradient2(20, 20, 200, 0.2, 0, 600, 1.5)
	runNetflix(t, "floor", g, []netflixStep{
		{10, 20, false, 20},  // g = 1, new = 20: 20
		{100, 20, false, 20}, // long = 55, g = 0.825: 20·0.8 + 16.5·0.2 = 19.3 → 20
	})
	// Warm-up: a plain mean of the first 10 (the decay of l.294 changes the
	// value, not the sum, so the next warm-up sample undoes it); then
	// v·(1 − 2/601) + x·2/601.
	e := expAvg{window: 600, warmupWindow: 10}
	for i := range 10 {
		e.add(float64(i + 1))
	}
	if e.value != 5.5 {
		t.Fatalf("warm-up mean %g, want 5.5", e.value)
	}
	f := 2.0 / 601
	if got, want := e.add(100), 5.5*(1-f)+100*f; got != want {
		t.Fatalf("first exponential step %g, want %g", got, want)
	}
}

// WindowedLimit.java onSample lines 132-164: the first sample closes the
// window at once (nextUpdateTime 0) with 1 sample, discarded; the next
// window closes at the first sample ending after end + 1 s, and passes its
// mean (integer division) and max in flight when it holds 10 or more.
func TestNetflixWindowedTable(t *testing.T) {
	t.Parallel()
	rec := &recordLimit{}
	w := NewNetflixWindowed(rec)
	w.onSample(0, 5e6, 3, false) // end 5 ms > 0: closed with 1 sample, discarded; next update 1005 ms
	if len(rec.rtts) != 0 || w.nextUpdateNS != 1005e6 {
		t.Fatalf("after the first sample: %v passed, next update %d", rec.rtts, w.nextUpdateNS)
	}
	w.onSample(10e6, 50_000, 9, false) // 50 µs < 100 µs: ignored
	for i := range 10 {
		w.onSample(int64(100+i)*1e6, int64(3e6+i), 4+i, i == 3)
	}
	if len(rec.rtts) != 0 {
		t.Fatalf("passed before the window closed: %v", rec.rtts)
	}
	w.onSample(1003e6, 3e6, 2, false) // end 1006 ms > 1005 ms: 11 samples
	// sum = 10·3e6 + 45 + 3e6 = 33000045; /11 = 3000004 (integer division)
	if len(rec.rtts) != 1 || rec.rtts[0] != 3000004 || rec.inflight[0] != 13 || !rec.drops[0] {
		t.Fatalf("passed %v %v %v, want [3000004] [13] [true]", rec.rtts, rec.inflight, rec.drops)
	}
	if w.nextUpdateNS != 2006e6 {
		t.Fatalf("next update %d, want 2006 ms", w.nextUpdateNS)
	}
	for i := range 9 { // 9 samples, then one past 2006 ms: 10 in the window
		w.onSample(1100e6, 4e6, 1, false)
		_ = i
	}
	w.onSample(2005e6, 4e6, 1, false)
	if len(rec.rtts) != 2 || rec.rtts[1] != 4e6 {
		t.Fatalf("a window of 10 samples: passed %v", rec.rtts)
	}
	for range 8 {
		w.onSample(3000e6, 4e6, 1, false)
	}
	w.onSample(3100e6, 4e6, 1, false) // end 3104 > 3009: 9 samples: discarded, not extended
	w.onSample(3200e6, 4e6, 1, false)
	if len(rec.rtts) != 2 || w.count != 1 {
		t.Fatalf("a window of 9 samples passed on or was extended: %v, %d in the window", rec.rtts, w.count)
	}
}

type recordLimit struct {
	rtts     []int64
	inflight []int
	drops    []bool
}

func (r *recordLimit) onSample(_, rtt int64, inflight int, drop bool) {
	r.rtts = append(r.rtts, rtt)
	r.inflight = append(r.inflight, inflight)
	r.drops = append(r.drops, drop)
}
func (r *recordLimit) getLimit() int { return 1 }

// The SimpleLimiter passes the in-flight count at the request's acquire,
// itself included (AbstractLimiter.java createListener, lines 159-168).
func TestNetflixLimiterPassesInflightAtAcquire(t *testing.T) {
	t.Parallel()
	rec := &recordLimit{}
	n := &NetflixLimiter{limit: rec, algo: rec}
	rec2 := &countLimit{limit: 3}
	n.limit = rec2
	for i := range 4 {
		_, ok := n.Offer(float64(i), 0)
		if ok != (i < 3) {
			t.Fatalf("offer %d: admitted %v with limit 3", i, ok)
		}
	}
	n.Complete(Completion{Client: 0, ReleaseMS: 1, DoneMS: 5, Outcome: OnTime})
	n.Complete(Completion{Client: 0, ReleaseMS: 0, DoneMS: 6, Outcome: Late})
	if len(rec2.seen) != 2 || rec2.seen[0] != [2]int64{nanos(4), 2} || rec2.seen[1] != [2]int64{nanos(6), 1} || !rec2.drops[1] {
		t.Fatalf("samples %v drops %v", rec2.seen, rec2.drops)
	}
	if n.InFlight() != 1 {
		t.Fatalf("in flight %d, want 1", n.InFlight())
	}
}

type countLimit struct {
	limit int
	seen  [][2]int64
	drops []bool
}

func (c *countLimit) onSample(_, rtt int64, inflight int, drop bool) {
	c.seen = append(c.seen, [2]int64{rtt, int64(inflight)})
	c.drops = append(c.drops, drop)
}
func (c *countLimit) getLimit() int { return c.limit }

// gradient_controller.cc at EnvoyAdaptiveCommit.
func TestEnvoyAdaptiveTable(t *testing.T) {
	t.Parallel()
	e := NewEnvoyAdaptive(EnvoyAdaptiveConfig{MinRTTCalcIntervalMS: 5000, ConcurrencyUpdateIntervalMS: 100, JitterPct: 0,
		MaxConcurrencyLimit: 100, RequestCount: 3, SampleAggregatePercentile: 50, MinConcurrency: 2, BufferPct: 25})
	offer := func(at float64, want bool) {
		t.Helper()
		if _, ok := e.Offer(at, 0); ok != want {
			t.Fatalf("offer at %g: admitted %v, want %v (limit %d, in flight %d)", at, ok, want, e.limit, e.adm.inflight)
		}
	}
	done := func(release, at float64, o Outcome) {
		t.Helper()
		e.Complete(Completion{ReleaseMS: release, DoneMS: at, Outcome: o})
	}
	sync := func(at float64, limit uint32) {
		t.Helper()
		if n := e.NextSyncMS(); n > at {
			t.Fatalf("next sync at %g, after the timer at %g", n, at)
		}
		e.Sync(at)
		if e.limit != limit {
			t.Fatalf("after the timer at %g: limit %d, want %d", at, e.limit, limit)
		}
	}
	// Constructed in a minRTT window (l. 70, 84-103): limit = min_concurrency 2.
	offer(0, true)
	offer(0, true)
	offer(0, false) // l. 206: 2 outstanding, not < 2
	done(0, 10, OnTime)
	done(0, 12, TimedOut) // cancelLatencySample: counted out, no sample
	offer(12, true)
	offer(12, true)
	done(12, 20, Late)      // 8000 µs
	done(12, 21.5, Dropped) // 9500 µs: a shed request is answered: a sample
	// 3 samples at 21.5: p50 of 8000, 9500, 10000 µs = 9500 → minRTT 9.5 ms (l. 106-124)
	if e.minRTTNS != 9_500_000 || e.inWindow() || e.limit != 2 {
		t.Fatalf("minRTT %d ns, in window %v, limit %d", e.minRTTNS, e.inWindow(), e.limit)
	}
	// updateMinRTT re-arms the sample timer at 21.5 + 100 (l. 123) and the next window at 21.5 + 5000.
	offer(40, true)
	offer(41, true)
	done(40, 48, OnTime) // 8000 µs
	done(41, 47, OnTime) // 6000 µs: p50 = 7000 µs
	// l. 161-179: g = 9.5·1.25/7 = 1.6964; L = 2·g = 3.3929; + sqrt = 1.842 → (uint32)5.235 = 5
	sync(121.5, 5)
	for range 5 {
		offer(140, true)
	}
	offer(140, false)
	for i := range 5 {
		done(140, 140+20+float64(i), OnTime) // 20000 … 24000 µs: p50 22000
	}
	// g = 11.875/22 = 0.5398; L = 5·g = 2.699; + 1.643 → 4
	sync(221.5, 4)
	sync(321.5, 4) // no samples: no update (l. 139)
	// One 100 ms sample a window: g = max(0.5, 0.11875) = 0.5.
	// 4 → 2 + 1.41 = 3; 3 → 1.5 + 1.22 = 2; then 2 → 1 + 1 = 2 five times (l. 238-257):
	// the fifth in a row at min_concurrency starts a minRTT window at once.
	for i, want := range []uint32{3, 2, 2, 2, 2, 2, 2} {
		at := 320 + float64(i)*100
		offer(at, true)
		done(at, at+100, OnTime)
		sync(at+101.5, want)
		if inWindow := i == 6; e.inWindow() != inWindow {
			t.Fatalf("update %d: in a minRTT window %v, want %v (consecutive %d)", i, e.inWindow(), inWindow, e.consecutive)
		}
	}
	if e.epochNS != nanos(1021.5) || e.deferred != 2 {
		t.Fatalf("window epoch %d, deferred %d", e.epochNS, e.deferred)
	}
	// In the window the sample timer stops (l. 59-64): it fires once, disarmed.
	sync(1121.5, 2)
	// The trigger re-armed the minRTT timer at once (enableTimer(0) replaces
	// the one at 5021.5), so no timer is left until the window ends.
	if !math.IsInf(e.minRTTTimerMS, 1) || !math.IsInf(e.sampleTimerMS, 1) {
		t.Fatalf("timers at %g and %g, want none", e.minRTTTimerMS, e.sampleTimerMS)
	}
	// A request sent before the window opened gives no sample (l. 217-220).
	offer(1100, true)
	offer(1100, true)
	done(1100, 1130, OnTime)
	if len(e.samplesUS) != 1 {
		t.Fatalf("%d samples, want 1 (the one sent before the epoch left out)", len(e.samplesUS))
	}
}

// applyJitter (l. 126-134): interval + rand % ceil(interval·jitter).
func TestEnvoyAdaptiveJitter(t *testing.T) {
	t.Parallel()
	e := NewEnvoyAdaptive(EnvoyAdaptiveConfig{MinRTTCalcIntervalMS: 1000, ConcurrencyUpdateIntervalMS: 100, JitterPct: 15,
		MaxConcurrencyLimit: 100, RequestCount: 1, SampleAggregatePercentile: 50, MinConcurrency: 2, BufferPct: 25, Seed: 3})
	for range 200 {
		j := e.applyJitter(1000)
		if j < 1000 || j >= 1150 || j != math.Trunc(j) {
			t.Fatalf("jittered interval %g, want a whole ms in [1000, 1150)", j)
		}
	}
	// A NaN gradient (0/0) clamps to 2 as std::min/std::max do.
	e.limit, e.minRTTNS, e.sampleRTTNS = 10, 0, 0
	if got := e.calculateNewLimit(); got != 24 { // 10·2 = 20 + 4.47 → 24
		t.Fatalf("limit from a 0/0 gradient %d, want 24", got)
	}
}
