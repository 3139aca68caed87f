package simulate_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/limiter"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// tieGate is a scripted gate that writes down, in order, every call the
// loop makes of it: each offer, each completion it observes and each sync.
// It rejects the clients in reject, delays the release of the clients in
// delayMS, and syncs every syncMS (0: never) until syncUntilMS.
type tieGate struct {
	reject      map[int32]bool
	delayMS     map[int32]float64
	syncMS      float64
	syncUntilMS float64
	next        float64
	log         []string
}

func (g *tieGate) Offer(t float64, c int32) (float64, bool) {
	g.log = append(g.log, fmt.Sprintf("offer %g c%d", t, c))
	if g.reject[c] {
		return 0, false
	}
	return t + g.delayMS[c], true
}

func (g *tieGate) Complete(c limiter.Completion) {
	g.log = append(g.log, fmt.Sprintf("done %g c%d %s", c.DoneMS, c.Client, c.Outcome))
}

func (g *tieGate) NextSyncMS() float64 {
	if g.syncMS == 0 || g.next > g.syncUntilMS {
		return math.Inf(1)
	}
	return g.next
}

func (g *tieGate) Sync(t float64) {
	g.log = append(g.log, fmt.Sprintf("sync %g", t))
	g.next = t + g.syncMS
}

// TestTieRule pins the loop's one tie rule (loop.go) with exact ties, each
// case a point whose events meet at the same time and the exact order the
// gate hears them in:
//
//   - the list's arrival at t before a retry scheduled at t;
//   - the list's arrival at t before a completion or a sync at t (in
//     every model of the loop), and heap events at t by sequence;
//   - a release at t before the queue's pick at t (the released request
//     enters first and, lifo, is the one picked);
//   - the pick at t before a timeout at t (the request picked at its
//     timeout has started: its client gives up on a served request),
//     so before a release at t made after that timeout (loop.go's
//     counter-example to a fixed place of picks among the kinds);
//   - the end of a cut window before an event exactly at it (a request
//     whose timeout is the end is shed by the cut, not dropped by its
//     client).
func TestTieRule(t *testing.T) {
	t.Parallel()
	one := func(client string, atMS float64, extra string) string {
		return fmt.Sprintf(`{"type": "constant", "client": %q, "rate_rps": 1, "start_ms": %g, "end_ms": %g%s}`, client, atMS, atMS+1, extra)
	}
	paced := `{"type": "constant", "client": "a", "rate_rps": 100, "end_ms": 30%s}`
	cases := []struct {
		name, doc string
		gate      tieGate
		want      []string
	}{{
		// a at 0, 10, 20; b at 0 and 20, rejected, retrying 10 ms later:
		// b's retry at 10 comes after a's arrival at 10. The retry at 30
		// is past the window and never sent.
		name: "arrival before retry",
		doc: `"workload": {"duration_ms": 30, "parts": [` + fmt.Sprintf(paced, "") + `,
		  {"type": "constant", "client": "b", "rate_rps": 50, "end_ms": 30, "retries": 1, "backoff_ms": 10, "timeout_ms": 1000}]},
		  "server": {"workers": 1, "service_ms": 1, "deadline_ms": 100}`,
		gate: tieGate{reject: map[int32]bool{1: true}},
		want: []string{"offer 0 c0", "offer 0 c1", "done 1 c0 on-time",
			"offer 10 c0", "offer 10 c1", "done 11 c0 on-time",
			"offer 20 c0", "offer 20 c1", "done 21 c0 on-time"},
	}, {
		// One worker of 10 ms behind arrivals every 10 ms: each completion
		// and each sync at t after the arrival at t; the sync at t (made
		// first) before the completion at t.
		name: "forward: arrival before completion and sync",
		doc: `"workload": {"duration_ms": 30, "parts": [` + fmt.Sprintf(paced, "") + `]},
		  "server": {"workers": 1, "service_ms": 10, "deadline_ms": 100}`,
		gate: tieGate{syncMS: 10, syncUntilMS: 20},
		want: arrivalsBeforeHooks(false),
	}, {
		name: "queue: arrival before completion and sync",
		doc: `"workload": {"duration_ms": 30, "parts": [` + fmt.Sprintf(paced, "") + `]},
		  "server": {"workers": 1, "service_ms": 10, "deadline_ms": 100, "discipline": "lifo"}`,
		gate: tieGate{syncMS: 10, syncUntilMS: 20},
		want: arrivalsBeforeHooks(true),
	}, {
		name: "clients: arrival before completion and sync",
		doc: `"workload": {"duration_ms": 30, "parts": [` + fmt.Sprintf(paced, `, "timeout_ms": 1000`) + `]},
		  "server": {"workers": 1, "service_ms": 10, "deadline_ms": 100}`,
		gate: tieGate{syncMS: 10, syncUntilMS: 20},
		want: arrivalsBeforeHooks(false),
	}, {
		name: "clients on a queue at admission: arrival before completion and sync",
		doc: `"workload": {"duration_ms": 30, "parts": [` + fmt.Sprintf(paced, `, "timeout_ms": 1000`) + `]},
		  "server": {"workers": 1, "service_ms": 10, "deadline_ms": 100, "door": "tail-drop", "bound": 100}`,
		gate: tieGate{syncMS: 10, syncUntilMS: 20},
		want: arrivalsBeforeHooks(false),
	}, {
		name: "clients on a queue by events: arrival before completion and sync",
		doc: `"workload": {"duration_ms": 30, "parts": [` + fmt.Sprintf(paced, `, "timeout_ms": 1000`) + `]},
		  "server": {"workers": 1, "service_ms": 10, "deadline_ms": 100, "discipline": "lifo"}`,
		gate: tieGate{syncMS: 10, syncUntilMS: 20},
		want: arrivalsBeforeHooks(true),
	}, {
		// a is served 0-10; d waits from 2; c, at 5, is released at 10,
		// the time of the pick: released first, it is the newest, and the
		// lifo pick at 10 takes it (d waits until 20).
		name: "release before pick",
		doc: `"workload": {"duration_ms": 40, "parts": [` + one("a", 0, "") + `, ` + one("d", 2, "") + `, ` + one("c", 5, `, "timeout_ms": 1000`) + `]},
		  "server": {"workers": 1, "service_ms": 10, "deadline_ms": 100, "discipline": "lifo"}`,
		gate: tieGate{delayMS: map[int32]float64{2: 5}},
		want: []string{"offer 0 c0", "offer 2 c1", "offer 5 c2", "done 10 c0 on-time", "done 20 c2 on-time", "done 30 c1 on-time"},
	}, {
		// b's client gives up at 10, the time of the pick: the pick comes
		// first and starts b, so its client abandons a served request
		// (timed out when its answer comes at 20), not one dropped
		// unstarted at 10.
		name: "pick before timeout",
		doc: `"workload": {"duration_ms": 40, "parts": [` + one("a", 0, "") + `, ` + one("b", 1, `, "timeout_ms": 9`) + `]},
		  "server": {"workers": 1, "service_ms": 10, "deadline_ms": 100, "discipline": "lifo", "cancel_on_timeout": "drop-unstarted"}`,
		want: []string{"offer 0 c0", "offer 1 c1", "done 10 c0 on-time", "done 20 c1 timed-out"},
	}, {
		// The counter-example in loop.go: at 10, b's timeout (made at 1)
		// and c's release (made at 5, after it) are pending and the worker
		// frees. The pick comes before the timeout that came first, so
		// before c's release too: it starts b (abandoned, served, timed
		// out at 20); then c enters, and waits for the pick at 20. Picks
		// after every event at their time would drop b unstarted and
		// serve c at 10; a kind order release < pick < timeout would
		// let c in first, and lifo would pick c.
		name: "pick before a timeout, so before a later release",
		doc: `"workload": {"duration_ms": 40, "parts": [` + one("a", 0, "") + `, ` + one("b", 1, `, "timeout_ms": 9`) + `, ` + one("c", 5, `, "timeout_ms": 1000`) + `]},
		  "server": {"workers": 1, "service_ms": 10, "deadline_ms": 100, "discipline": "lifo", "cancel_on_timeout": "drop-unstarted"}`,
		gate: tieGate{delayMS: map[int32]float64{2: 5}},
		want: []string{"offer 0 c0", "offer 1 c1", "offer 5 c2", "done 10 c0 on-time", "done 20 c1 timed-out", "done 30 c2 on-time"},
	}, {
		// The window is cut at 20; b waits (x, newer, took the worker at
		// 10) and its client gives up at 20: the cut comes first and
		// sheds it (dropped), before its timeout.
		name: "end cut before an event at the end",
		doc: `"workload": {"duration_ms": 20, "parts": [` + one("a", 0, "") + `, ` + one("b", 0.5, `, "timeout_ms": 19.5`) + `, ` + one("x", 2, "") + `]},
		  "server": {"workers": 1, "service_ms": 10, "deadline_ms": 100, "discipline": "lifo", "cancel_on_timeout": "drop-unstarted", "end": "cut"}`,
		want: []string{"offer 0 c0", "offer 0.5 c1", "offer 2 c2", "done 10 c0 on-time", "done 20 c2 on-time", "done 20 c1 dropped"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := document.DecodeConfig([]byte(`{"version": 1, "seed": 1, ` + tc.doc + `, "limiters": [{"type": "none"}]}`))
			if err != nil {
				t.Fatal(err)
			}
			var gates []*tieGate
			opt := sweep.Options{Workers: 1}
			opt.Simulate.Gate = func(limiter.Gate, limiter.Occupancy) limiter.Gate {
				g := tc.gate
				g.next = g.syncMS
				gates = append(gates, &g)
				return &g
			}
			if _, err := sweep.Run(context.Background(), cfg, opt); err != nil {
				t.Fatal(err)
			}
			if got := gates[0].log; strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("the gate heard\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

// arrivalsBeforeHooks is what a gate admitting arrivals at 0, 10 and 20
// to one worker of 10 ms, syncing every 10 ms, hears: at 10 and 20 the
// arrival first, then the completion and the sync in the order they were
// scheduled. The sync at 10 was scheduled at the start, before every
// completion; the sync at 20 at the sync at 10, after the completion at
// 20 where the model knows it at its admission (the arrival at 10), before
// it where the loop makes the queue's picks (the pick at 10 comes after
// the sync at 10: an event at its time is taken before the pick).
func arrivalsBeforeHooks(picksByLoop bool) []string {
	at20 := []string{"done 20 c0 on-time", "sync 20"}
	if picksByLoop {
		at20[0], at20[1] = at20[1], at20[0]
	}
	return append(append([]string{"offer 0 c0", "offer 10 c0", "sync 10", "done 10 c0 on-time", "offer 20 c0"}, at20...), "done 30 c0 on-time")
}
