package limiter_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/server"
)

// event is one arrival of a table test and the expected answer, in the
// style of golang.org/x/time/rate's tests: at t ms from client, the gate
// admits (ok) with the given release time, or rejects.
type event struct {
	t       float64
	client  int32
	ok      bool
	release float64
}

// admit is an event that passes at once; shaped one released later;
// reject one that is refused.
func admit(t float64) event               { return event{t: t, ok: true, release: t} }
func shaped(t, release float64) event     { return event{t: t, ok: true, release: release} }
func reject(t float64) event              { return event{t: t} }
func admitFrom(c int32, t float64) event  { return event{t: t, client: c, ok: true, release: t} }
func rejectFrom(c int32, t float64) event { return event{t: t, client: c} }

// gateCase builds its gate with limiter.New, as the engine does, and
// replays its events; a server (1 worker, 10 ms) is served every release, so
// an admission gate sees a real occupancy.
type gateCase struct {
	name    string
	spec    limiter.Spec
	params  limiter.Params
	weights []float64
	server  server.Spec
	events  []event
}

func (c *gateCase) run(t *testing.T) {
	t.Helper()
	srvSpec := c.server
	srvSpec.Normalize()
	srv := server.New(srvSpec)
	weights := c.weights
	if weights == nil {
		weights = []float64{1}
	}
	spec := c.spec
	spec.Normalize()
	gate, err := limiter.New(&spec, c.params, weights, srv)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range c.events {
		release, ok := gate.Offer(e.t, e.client)
		if ok != e.ok || (ok && release != e.release) {
			t.Fatalf("event %d (t=%g client %d): got ok=%v release=%g, want ok=%v release=%g",
				i, e.t, e.client, ok, release, e.ok, e.release)
		}
		if ok {
			srv.Serve(release)
		}
	}
}

func TestGates(t *testing.T) {
	t.Parallel()
	cases := []gateCase{
		{
			name: "none admits everything at once",
			spec: limiter.Spec{Type: limiter.TypeNone},
			events: []event{
				admit(0), admit(0), admit(0), admit(0.5), admit(1e6),
			},
		},
		{
			// 500 rps is 0.5 token/ms: every sum below is exact in binary.
			name:   "token bucket starts full, refills continuously, rejects below one token",
			spec:   limiter.Spec{Type: limiter.TypeTokenBucket},
			params: limiter.Params{limiter.ParamRate: 500, limiter.ParamBurst: 2},
			events: []event{
				admit(0), admit(0), // the full bucket: 2 tokens
				reject(0),   // empty
				reject(1),   // 0.5 token
				admit(2),    // 0.5 + 0.5 = 1 token: exactly enough
				reject(2),   // empty again
				reject(3.5), // 0.75
				admit(4),    // 1.0
				admit(100),  // capped at 2, not 48
				admit(100),  //
				reject(100), // so the third is refused
			},
		},
		{
			name:   "token bucket with burst 1 paces at the rate, policing without delay",
			spec:   limiter.Spec{Type: limiter.TypeTokenBucket},
			params: limiter.Params{limiter.ParamRate: 125, limiter.ParamBurst: 1}, // 0.125 token/ms, 8 ms a token
			events: []event{
				admit(0), reject(4), reject(7.875), admit(8), reject(15), admit(16), admit(1000),
			},
		},
		{
			// 100 rps: one release every 10 ms; queue 2 holds the one about
			// to leave and one more.
			name:   "leaky bucket paces releases and rejects a full queue",
			spec:   limiter.Spec{Type: limiter.TypeLeakyBucket},
			params: limiter.Params{limiter.ParamRate: 100, limiter.ParamQueue: 2},
			events: []event{
				admit(0),         // idle: released at once, next slot 10
				shaped(0, 10),    // one pending ahead (ceil(10/10) = 1 < 2)
				reject(0),        // two pending ahead
				reject(5),        // ceil(15/10) = 2 pending
				shaped(10.5, 20), // ceil(9.5/10) = 1 pending
				shaped(20, 30),   // ceil(0/10)... next is 30 > 20: 1 pending
				reject(20),       // 2 pending
				admit(100),       // idle again
				shaped(100, 110), //
			},
		},
		{
			name:   "leaky bucket with queue 1 never delays",
			spec:   limiter.Spec{Type: limiter.TypeLeakyBucket},
			params: limiter.Params{limiter.ParamRate: 100, limiter.ParamQueue: 1},
			events: []event{
				admit(0), reject(0), reject(9.5), admit(10), admit(25), reject(34), admit(35),
			},
		},
		{
			// one worker, 10 ms service: in-system = ceil((busyUntil - t)/10).
			name:   "admission counts waiting and in-service requests at the server",
			spec:   limiter.Spec{Type: limiter.TypeAdmission},
			params: limiter.Params{limiter.ParamLimit: 2},
			events: []event{
				admit(0),  // in service until 10
				admit(0),  // waits, finishes at 20
				reject(0), // 2 in the system
				reject(9), // still 2
				admit(10), // the first finished at 10: 1 left; finishes at 30
				reject(10),
				admit(20), // 1 left (finishing at 30); finishes at 40
				admit(40), // empty
			},
		},
		{
			name:   "admission with 2 workers",
			spec:   limiter.Spec{Type: limiter.TypeAdmission},
			params: limiter.Params{limiter.ParamLimit: 3},
			server: server.Spec{Workers: 2, ServiceMS: 10},
			events: []event{
				admit(0), admit(0), // both in service until 10
				admit(0),   // waits until 10, finishes 20
				reject(5),  // 3 in the system
				admit(10),  // 1 left: starts at 10, finishes 20
				admit(10),  // 2 left: waits until 20, finishes 30
				reject(10), // 3
				admit(20),  // only the one finishing at 30 left
			},
		},
		{
			name:   "fixed window counts per aligned window and resets at boundaries",
			spec:   limiter.Spec{Type: limiter.TypeFixedWindow},
			params: limiter.Params{limiter.ParamLimit: 2, limiter.ParamWindow: 100},
			events: []event{
				admit(0), admit(50), reject(99.999),
				admit(100), admit(100), reject(199.5), // 4 admitted within 100.5 ms: the 2N edge
				admit(350), admit(351), reject(351), reject(399.9),
				admit(400),
			},
		},
		{
			name:   "sliding window counter weighs the previous window by its overlap",
			spec:   limiter.Spec{Type: limiter.TypeSlidingCounter},
			params: limiter.Params{limiter.ParamLimit: 2, limiter.ParamWindow: 100},
			events: []event{
				admit(0), admit(10), reject(50), // 2 in the current window
				reject(100), // prev 2 * (1 - 0) + 0 = 2
				admit(150),  // 2 * 0.5 + 0 = 1 < 2
				admit(175),  // 2 * 0.25 + 1 = 1.5 < 2
				reject(180), // 2 * 0.2 + 2 = 2.4
				admit(250),  // window 1 (150, 175) becomes prev: 2 * 0.5 + 0 = 1
				admit(260),  // 2 * 0.4 + 1 = 1.8 < 2
				reject(270), // 2 * 0.3 + 2 = 2.6
			},
		},
		{
			name:   "sliding window counter forgets after an idle window",
			spec:   limiter.Spec{Type: limiter.TypeSlidingCounter},
			params: limiter.Params{limiter.ParamLimit: 2, limiter.ParamWindow: 100},
			events: []event{
				admit(0), admit(1), reject(2),
				admit(250), admit(250), reject(250), // window 1 was empty: prev = 0
				admit(375),  // 2 * 0.25 + 0 = 0.5
				admit(376),  // 2 * 0.24 + 1 = 1.48
				reject(377), // 2 * 0.23 + 2 = 2.46
			},
		},
		{
			name:   "sliding window log is exact over (t - window, t]",
			spec:   limiter.Spec{Type: limiter.TypeSlidingLog},
			params: limiter.Params{limiter.ParamLimit: 2, limiter.ParamWindow: 100},
			events: []event{
				admit(0), admit(10), reject(99.999),
				admit(100),  // the admission at 0 is out of (0, 100]
				reject(105), // 10 and 100 are in (5, 105]
				admit(110),  // 10 left the window
				reject(199), // 100 and 110
				admit(200), admit(500), admit(500), reject(599.5),
			},
		},
		{
			// 1000 rps and burst 4 over 2 clients: 0.5 token/ms and 2 tokens each.
			name:    "per-client token bucket, equal shares",
			spec:    limiter.Spec{Type: limiter.TypePerClient},
			params:  limiter.Params{limiter.ParamRate: 1000, limiter.ParamBurst: 4},
			weights: []float64{5, 1}, // ignored: equal shares
			events: []event{
				admitFrom(0, 0), admitFrom(0, 0), rejectFrom(0, 0),
				admitFrom(1, 0), admitFrom(1, 0), rejectFrom(1, 0), // client 0 did not use client 1's tokens
				rejectFrom(0, 1), admitFrom(0, 2), // 0.5 then 1 token
				rejectFrom(1, 1), admitFrom(1, 2),
			},
		},
		{
			// weights 3:1 of 1000 rps and burst 8: client 0 gets 750 rps
			// (0.75 token/ms) and 6 tokens, client 1 250 rps (0.25/ms) and 2.
			name:    "per-client token bucket, weighted shares",
			spec:    limiter.Spec{Type: limiter.TypePerClient, Options: map[string]string{"shares": limiter.SharesWeighted}},
			params:  limiter.Params{limiter.ParamRate: 1000, limiter.ParamBurst: 8},
			weights: []float64{3, 1},
			events: []event{
				admitFrom(1, 0), admitFrom(1, 0), rejectFrom(1, 0),
				admitFrom(0, 0), admitFrom(0, 0), admitFrom(0, 0), admitFrom(0, 0), admitFrom(0, 0), admitFrom(0, 0),
				rejectFrom(0, 0),
				rejectFrom(1, 2), admitFrom(1, 4), // 0.5, then 1 token
				admitFrom(0, 4), admitFrom(0, 4), admitFrom(0, 4), rejectFrom(0, 4), // 3 tokens refilled
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}

// Every built-in row passes the checks Register makes of a new one: a
// shared parameter name has one unit and one whole-or-real kind, options
// have choices, defaults lie in range.
func TestBuiltinRowsAgree(t *testing.T) {
	t.Parallel()
	if err := limiter.CheckRows(); err != nil {
		t.Fatal(err)
	}
	bad := &limiter.Kind{Type: "bad-burst", New: func(*limiter.Spec, limiter.Params, limiter.Env) (limiter.Gate, error) { return limiter.None{}, nil },
		Params: []limiter.Param{{Name: limiter.ParamBurst, Admits: limiter.AdmitsLarger, Unit: "ms", Min: 1, Max: 10}}}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "parameter burst is requests") {
			t.Errorf("a burst in ms was registered (%v)", r)
		}
	}()
	limiter.Register(bad)
}

// Every parameter says which way admits more: a larger burst, rate,
// limit or queue; a longer window or refresh period admits less; a row
// without the direction is refused, and a shared name keeps one.
func TestParamsAdmit(t *testing.T) {
	t.Parallel()
	want := map[string]limiter.Admits{
		limiter.ParamRate: limiter.AdmitsLarger, limiter.ParamBurst: limiter.AdmitsLarger, limiter.ParamQueue: limiter.AdmitsLarger,
		limiter.ParamLimit: limiter.AdmitsLarger, limiter.ParamWindow: limiter.AdmitsSmaller,
		limiter.ParamLimitRefreshPeriodMS: limiter.AdmitsSmaller, limiter.ParamFillIntervalMS: limiter.AdmitsSmaller,
		limiter.ParamPeriod: limiter.AdmitsSmaller, limiter.ParamLimitForPeriod: limiter.AdmitsLarger,
	}
	for _, p := range limiter.AllParams() {
		if w, ok := want[p.Name]; ok && p.Admits != w {
			t.Errorf("%s admits more when %s, want %s", p.Name, p.Admits, w)
		}
	}
	window, _ := limiter.ParamByName(limiter.ParamWindow)
	burst, _ := limiter.ParamByName(limiter.ParamBurst)
	if window.Permissive(500, 1000) != 1 || burst.Permissive(5, 10) != -1 || burst.Permissive(5, 5) != 0 {
		t.Error("Permissive")
	}
	none := limiter.Param{Name: "x", Admits: limiter.AdmitsNone}
	if none.Permissive(1, 2) != 0 {
		t.Error("a parameter without a direction compares")
	}
	for _, c := range []struct {
		p    limiter.Param
		want string
	}{
		{limiter.Param{Name: "undirected", Unit: "ms", Min: 1, Max: 10}, `parameter undirected: Admits must be`},
		{limiter.Param{Name: limiter.ParamWindow, Unit: "ms", Min: 1, Max: 10, Admits: limiter.AdmitsLarger}, "parameter window_ms admits more when smaller"},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), c.want) {
					t.Errorf("%s: registered (%v)", c.p.Name, r)
				}
			}()
			limiter.Register(&limiter.Kind{Type: "bad-admits", Params: []limiter.Param{c.p},
				New: func(*limiter.Spec, limiter.Params, limiter.Env) (limiter.Gate, error) { return limiter.None{}, nil }})
		}()
	}
}
