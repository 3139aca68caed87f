package limiter_test

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/ratelab/ratelab/internal/realtools"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// Table tests of the Guava gates, worked from SmoothRateLimiter.java by
// hand: rate 10/s is a stable interval of 100 000 µs.
func TestGuavaSmooth(t *testing.T) {
	t.Parallel()
	bursty := func(timeoutMS float64) limiter.Params {
		return limiter.Params{limiter.ParamRate: 10, limiter.ParamMaxBurstMS: 1000, limiter.ParamTimeoutMS: timeoutMS}
	}
	at := func(t float64, n int) []event { // n arrivals at t that pass at once
		var out []event
		for range n {
			out = append(out, admit(t))
		}
		return out
	}
	runLibCases(t, []libraryCase{
		{
			name: "bursty starts with no stored permits; each fresh permit is charged to the next request",
			typ:  limiter.TypeGuavaSmoothBursty, params: bursty(0),
			events: []event{
				admit(0),     // nextFree 0 <= now: passes, nextFree becomes 100 ms
				reject(50),   // nextFree 100 ms - timeout 0 > now
				reject(99.9), // still before nextFree
				admit(100),   // exactly at nextFree
				admit(250),   // 50 ms idle: 0.5 stored, spent; the fresh half costs 50 ms
				reject(299),  // nextFree 300 ms
				admit(300),
			},
		},
		{
			name: "bursty: after 1 s idle, maxBurstSeconds*rate = 10 stored permits pass back to back, plus one fresh",
			typ:  limiter.TypeGuavaSmoothBursty, params: bursty(0),
			events: append(append([]event{admit(0)}, at(1100, 11)...), reject(1100), reject(1199), admit(1200)),
		},
		{
			name: "bursty with a timeout waits until nextFree, and refuses a wait past the timeout",
			typ:  limiter.TypeGuavaSmoothBursty, params: bursty(250),
			events: append(append([]event{admit(0)}, at(1100, 11)...),
				shaped(1100, 1200), shaped(1100, 1300), reject(1100), // 1400 - 250 > 1100
				shaped(1150, 1400), reject(1150)),
		},
		{
			name: "bursty's clock is whole µs: 0.0009 ms reads as 0",
			typ:  limiter.TypeGuavaSmoothBursty, params: bursty(0),
			events: []event{admit(0.0009), reject(99.9999), admit(100.0001)},
		},
		{
			// warm-up 1 s at 10/s: threshold 5, maxPermits 10, slope
			// 40 000 µs per permit, cold interval 300 ms. The stored permits
			// above the threshold cost 280, 240, 200, 160, 120 ms, the five
			// below 100 ms each: 5 releases in the first second.
			name: "warming up starts cold: the first second passes half the rate",
			typ:  limiter.TypeGuavaSmoothWarmingUp,
			params: limiter.Params{limiter.ParamRate: 10, limiter.ParamWarmupMS: 1000,
				limiter.ParamTimeoutMS: 10_000},
			events: []event{
				admit(0), shaped(0, 280), shaped(0, 520), shaped(0, 720), shaped(0, 880),
				shaped(0, 1000), shaped(0, 1100), shaped(0, 1200), shaped(0, 1300), shaped(0, 1400),
				shaped(0, 1500), shaped(0, 1600),
			},
		},
		{
			name: "warming up with tryAcquire() (timeout 0) passes only when nextFree has come",
			typ:  limiter.TypeGuavaSmoothWarmingUp,
			params: limiter.Params{limiter.ParamRate: 10, limiter.ParamWarmupMS: 1000,
				limiter.ParamTimeoutMS: 0},
			events: []event{admit(0), reject(279), admit(280), reject(519), admit(520)},
		},
	})
}

// Each Guava gate's output stays under its arrival curve and its gate
// delay under the timeout, over random streams.
func TestGuavaStaysUnderItsCurveAndTimeout(t *testing.T) {
	t.Parallel()
	for run := range propertyRuns {
		rng := rand.New(rand.NewPCG(10, uint64(run)))
		s := randomGuavaStream(rng)
		typ, p := s.kind()
		g := libGate(t, typ, p, nil, 1)
		rs := offerAll(t, g, s.times(), nil, nil)
		bound, _ := limiter.GateDelayBoundMS(&limiter.Spec{Type: typ}, p)
		for _, r := range rs {
			if r.release-r.t > bound+1e-9 {
				t.Fatalf("run %d: %s %v held a request %g ms, more than its bound %g", run, typ, p, r.release-r.t, bound)
			}
		}
		checkKindCurve(t, run, typ, p, releaseTimes(rs))
	}
}

// guavaStream is one stream of the differential test: a limiter's settings
// and arrival times in whole nanoseconds.
type guavaStream struct {
	warm          bool
	rate          float64
	maxBurstMS    float64 // bursty
	warmupMicros  int64   // warming up
	timeoutMicros int64
	ns            []int64
}

func (s *guavaStream) kind() (limiter.Type, limiter.Params) {
	p := limiter.Params{limiter.ParamRate: s.rate, limiter.ParamTimeoutMS: float64(s.timeoutMicros) / 1000}
	if s.warm {
		p[limiter.ParamWarmupMS] = float64(s.warmupMicros) / 1000
		return limiter.TypeGuavaSmoothWarmingUp, p
	}
	p[limiter.ParamMaxBurstMS] = s.maxBurstMS
	return limiter.TypeGuavaSmoothBursty, p
}

func (s *guavaStream) times() []float64 {
	ts := make([]float64, len(s.ns))
	for i, n := range s.ns {
		ts[i] = float64(n) / 1e6
	}
	return ts
}

// randomGuavaStream draws settings (whole and odd rates, short and long
// warm-ups and timeouts, tryAcquire() and an effectively endless wait) and
// 30 to 300 arrivals: ties, bursts after idle spells that fill or cool the
// limiter, steady traffic near the rate, and nanosecond jitter.
func randomGuavaStream(rng *rand.Rand) guavaStream {
	s := guavaStream{warm: rng.IntN(2) == 0}
	switch rng.IntN(4) {
	case 0:
		s.rate = float64(1 + rng.IntN(1000))
	case 1:
		s.rate = []float64{3, 7, 0.5, 300, 333, 1e5, 0.001 * float64(1+rng.IntN(1000))}[rng.IntN(7)]
	default:
		s.rate = 0.2 + rng.Float64()*20_000
	}
	switch rng.IntN(4) {
	case 0:
		s.maxBurstMS = 1000 // RateLimiter.create
	case 1:
		s.maxBurstMS = 0
	default:
		s.maxBurstMS = float64(rng.IntN(5_000_000)) / 1000
	}
	s.warmupMicros = 1 + rng.Int64N(3_000_000)
	if rng.IntN(5) == 0 {
		s.warmupMicros = 1 + rng.Int64N(1000)
	}
	switch rng.IntN(4) {
	case 0:
		s.timeoutMicros = 0
	case 1:
		s.timeoutMicros = limiter.MaxWindowMS * 1000
	default:
		s.timeoutMicros = rng.Int64N(2_000_000)
	}
	intervalNS := 1e9 / s.rate
	n := 30 + rng.IntN(270)
	s.ns = make([]int64, n)
	var at int64
	for i := range s.ns {
		switch r := rng.IntN(20); {
		case i > 0 && r < 4: // a tie
		case r < 6: // an idle spell: stored permits accrue, a warm limiter cools
			at += int64(rng.Float64() * 4e9)
		case r < 8: // nanosecond jitter
			at += rng.Int64N(3000)
		default: // near the rate, slower or faster
			at += int64(rng.ExpFloat64() * intervalNS * (0.1 + 2*rng.Float64()))
		}
		if down := at - at%1000; rng.IntN(3) == 0 && (i == 0 || down >= s.ns[i-1]) {
			at = down // on a whole µs
		}
		s.ns[i] = at
	}
	return s
}

// guavaJar is Debian's libguava-java jar, or RATELAB_GUAVA_JAR.
func guavaJar() string {
	if j := os.Getenv("RATELAB_GUAVA_JAR"); j != "" {
		return j
	}
	return "/usr/share/java/guava.jar"
}

// guavaDriver is the driver's classes, compiled once per test binary for
// both Guava differentials (javac costs more CPU than either test's JVM);
// TestMain removes the directory.
var guavaDriver struct {
	once    sync.Once
	classes string
	err     error
}

// guavaDriverClasses compiles the driver against jar the first time it is
// called and returns the directory of its classes.
func guavaDriverClasses(javac, jar string) (string, error) {
	guavaDriver.once.Do(func() {
		dir, err := os.MkdirTemp("", "ratelab-guava-driver-")
		if err != nil {
			guavaDriver.err = err
			return
		}
		guavaDriver.classes = dir
		src := filepath.Join("testdata", "guava", "com", "google", "common", "util", "concurrent", "RateLabGuavaDriver.java")
		if out, err := exec.Command(javac, "-nowarn", "-cp", jar, "-d", dir, src).CombinedOutput(); err != nil {
			guavaDriver.err = fmt.Errorf("javac: %v\n%s", err, out)
		}
	})
	return guavaDriver.classes, guavaDriver.err
}

// runGuavaDriver runs the streams through Guava's own RateLimiter (the
// jar Debian ships, driven on a fake stopwatch by
// testdata/guava/.../RateLabGuavaDriver.java in one JVM) and returns its
// answers, a line per stream: per arrival the wait in µs, or -1 refused.
func runGuavaDriver(t *testing.T, streams []guavaStream) []byte {
	t.Helper()
	javac, err1 := exec.LookPath("javac")
	java, err2 := exec.LookPath("java")
	if err1 != nil || err2 != nil {
		realtools.Missing(t, "no java/javac on PATH (apt-get install default-jdk-headless)")
	}
	jar := guavaJar()
	if _, err := os.Stat(jar); err != nil {
		realtools.Missing(t, fmt.Sprintf("no Guava jar at %s (apt-get install libguava-java)", jar))
	}
	classes, err := guavaDriverClasses(javac, jar)
	if err != nil {
		t.Fatal(err)
	}

	var in bytes.Buffer
	for _, s := range streams {
		rate := strconv.FormatFloat(s.rate, 'g', -1, 64)
		if s.warm {
			fmt.Fprintf(&in, "warming %s %d %d %d\n", rate, s.warmupMicros, s.timeoutMicros, len(s.ns))
		} else {
			// the gate's maxBurstSeconds is max_burst_ms/1000; give Java that double
			fmt.Fprintf(&in, "bursty %s %s %d %d\n", rate, strconv.FormatFloat(s.maxBurstMS/1000, 'g', -1, 64), s.timeoutMicros, len(s.ns))
		}
		for j, n := range s.ns {
			if j > 0 {
				in.WriteByte(' ')
			}
			in.WriteString(strconv.FormatInt(n, 10))
		}
		in.WriteByte('\n')
	}
	cmd := exec.Command(java, "-cp", jar+string(os.PathListSeparator)+classes, "com.google.common.util.concurrent.RateLabGuavaDriver")
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java driver: %v\n%s", err, stderr.Bytes())
	}

	return out
}

// TestGuavaMatchesTheRealJar is the differential test: guavaStreams seeded
// random streams through the gates and through Guava's own RateLimiter
// (the jar Debian ships, driven on a fake stopwatch by
// testdata/guava/.../RateLabGuavaDriver.java in one JVM); every decision and
// every wait, to the microsecond, must agree.
func TestGuavaMatchesTheRealJar(t *testing.T) {
	t.Parallel()
	const guavaStreams = 2000
	streams := make([]guavaStream, guavaStreams)
	for i := range streams {
		streams[i] = randomGuavaStream(rand.New(rand.NewPCG(11, uint64(i))))
	}
	out := runGuavaDriver(t, streams)

	lines := bufio.NewScanner(bytes.NewReader(out))
	lines.Buffer(make([]byte, 1<<20), 1<<24)
	decisions, waited, refused := 0, 0, 0
	for i := range streams {
		if !lines.Scan() {
			t.Fatalf("the driver answered %d of %d streams", i, len(streams))
		}
		fields := strings.Fields(lines.Text())
		s := &streams[i]
		typ, p := s.kind()
		g := libGate(t, typ, p, nil, 1)
		if len(fields) != len(s.ns) {
			t.Fatalf("stream %d: %d answers for %d arrivals", i, len(fields), len(s.ns))
		}
		for j, ts := range s.times() {
			wait, err := strconv.ParseInt(fields[j], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			release, ok := g.Offer(ts, 0)
			want := ts
			if wait > 0 {
				want = ts + float64(wait)/1000
			}
			if ok != (wait >= 0) || (ok && release != want) {
				t.Fatalf("stream %d (%s %v), arrival %d at %d ns: gate ok=%v release=%.6f ms; Guava %s (wait %d µs, release %.6f ms)",
					i, typ, p, j, s.ns[j], ok, release, map[bool]string{true: "admits", false: "refuses"}[wait >= 0], wait, want)
			}
			decisions++
			switch {
			case wait < 0:
				refused++
			case wait > 0:
				waited++
			}
		}
	}
	t.Logf("%d streams, %d decisions identical to Guava %s: %d admitted at once, %d waited, %d refused",
		len(streams), decisions, guavaJar(), decisions-waited-refused, waited, refused)
	if waited == 0 || refused == 0 || waited+refused == decisions {
		t.Errorf("the streams should admit at once, wait and refuse (waited %d, refused %d of %d)", waited, refused, decisions)
	}
}

// A warm-up of 0, which Guava takes and then admits everything with, is
// refused with Guava's reason; timeout_ms has no default (tryAcquire() is 0).
func TestGuavaSettings(t *testing.T) {
	t.Parallel()
	s := limiter.Spec{Type: limiter.TypeGuavaSmoothWarmingUp, Params: map[string]limiter.Values{
		limiter.ParamRate: {10}, limiter.ParamWarmupMS: {0}}}
	s.Normalize()
	errs := s.Validate("limiters[1]")
	if len(errs) != 2 || errs[0].Path != "limiters[1].warmup_ms" || !strings.Contains(errs[0].Msg, "Guava takes a warm-up of 0") ||
		errs[1].Path != "limiters[1].timeout_ms" {
		t.Errorf("warm-up 0 and no timeout: %v", errs)
	}
	b := limiter.Spec{Type: limiter.TypeGuavaSmoothBursty, Params: map[string]limiter.Values{
		limiter.ParamRate: {250_000}, limiter.ParamTimeoutMS: {0}}}
	b.Normalize()
	if errs := b.Validate("l"); len(errs) != 1 || errs[0].Path != "l.rate_rps" {
		t.Errorf("rate 250000: %v", errs)
	}
	if got := b.ValuesOf(limiter.ParamMaxBurstMS); len(got) != 1 || got[0] != 1000 {
		t.Errorf("max_burst_ms defaults to %v, want RateLimiter.create's 1 s", got)
	}
}
