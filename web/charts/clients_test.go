package charts

import (
	"math"
	"strings"
	"testing"
)

// The client section: goodput and attempts over time with the trigger
// shaded, amplification per policy and the recovery bars; the old
// recovery section does not show the client model's goodput recovery.
func TestClientSection(t *testing.T) {
	var sec *Group
	for _, g := range presetView(t, "metastable").Groups() {
		switch g.ID {
		case "clients":
			sec = g
		case "recovery":
			t.Error("metastable has the flash-crowd recovery section")
		}
	}
	if sec == nil {
		t.Fatal("metastable run page has no client section")
	}
	if len(sec.Charts) != 4 {
		t.Fatalf("%d charts, want 4", len(sec.Charts))
	}
	if o := sec.Charts[0].Option; !strings.Contains(o, `"markArea"`) || !strings.Contains(o, `"xAxis":10000`) || !strings.Contains(o, `"xAxis":10500`) {
		t.Errorf("goodput chart does not shade the trigger 10000-10500 ms: %.400s", o)
	}
	// Amplification per policy (metastable: no-retry 1, retry 2.95, budget 1.06).
	amp := sec.Charts[2].Option
	for _, want := range []string{"no-retry", "retry", "budget", "2.95"} {
		if !strings.Contains(amp, want) {
			t.Errorf("amplification chart lacks %q", want)
		}
	}
	// Recovery: retry did not recover (no bar), the others did.
	if rec := sec.Charts[3].Option; !strings.Contains(rec, "7700") || !strings.Contains(rec, "18200") {
		t.Errorf("recovery chart lacks 7700 and 18200 ms: %.600s", rec)
	}
	for _, g := range presetView(t, "boundary").Groups() {
		if g.ID == "clients" {
			t.Error("boundary (no client behaviour) has a client section")
		}
	}
}

// TestClientAmplificationEveryPoint: the amplification bars show every
// point of the client model, not only the first lines of the time series
// (collapse has 20 points: its 10 retry points, amplification up to 3.64,
// came after the first 12 and were left out). A bar is named by what
// varies between the points, the rest in the subtitle.
func TestClientAmplificationEveryPoint(t *testing.T) {
	var sec *Group
	for _, g := range presetView(t, "collapse").Groups() {
		if g.ID == "clients" {
			sec = g
		}
	}
	if sec == nil {
		t.Fatal("collapse run page has no client section")
	}
	var amp string
	for _, c := range sec.Charts {
		if c.ID == "chart-clients-amplification" {
			amp = c.Option
		}
	}
	for _, want := range []string{"\"300 · retry\"", "3.642", "bars: workload.parts[0].rate_rps · policy; every one queue-capacity limit=100000"} {
		if !strings.Contains(amp, want) {
			t.Errorf("amplification chart lacks %q: %s", want, amp)
		}
	}
}

// TestSweepLinesSplitByPolicy: the sweep charts draw a policy's points as
// their own line (retry-storm: five policies at one token-bucket setting
// were one line through x = 40; collapse: both policies on one line).
func TestSweepLinesSplitByPolicy(t *testing.T) {
	v := presetView(t, "retry-storm")
	var names []string
	for _, l := range v.Lines {
		names = append(names, l.Name)
		if len(l.Points) != 1 {
			t.Errorf("line %q has %d points, want 1", l.Name, len(l.Points))
		}
	}
	if len(v.Lines) != 5 || !strings.Contains(strings.Join(names, "|"), "throttling") {
		t.Errorf("lines %q, want one per policy", names)
	}
}

// TestClientsOnQueueServersPage: a run of the client model on queue
// servers (retry-storm-shed) shows the client section and the queue
// model's hangover and shedding sections.
func TestClientsOnQueueServersPage(t *testing.T) {
	ids := map[string]bool{}
	for _, g := range presetView(t, "retry-storm-shed").Groups() {
		ids[g.ID] = true
	}
	for _, want := range []string{"clients", "hangover", "shedding"} {
		if !ids[want] {
			t.Errorf("retry-storm-shed's page has no %s section (has %v)", want, ids)
		}
	}
}

// reject_pct, served_late_pct and shed_pct of a client-model point are
// shares of its attempts at the gate (retries included), not of its
// arrivals: the charts drawing them say so, and a sweep without client
// behaviour keeps "arrivals".
func TestClientSharesAreOfAttempts(t *testing.T) {
	v := presetView(t, "retry-storm-shed")
	p := v.Res.Points[0].Metrics
	if got := 100 * float64(p.Late) / float64(p.Client.Attempts); math.Abs(got-p.ServedLatePct) > 1e-9 {
		t.Fatalf("served_late_pct %v is not late/attempts %v: the test's premise moved", p.ServedLatePct, got)
	}
	_, sub, _ := chartOf(t, v, "chart-reject-late")
	if !strings.Contains(sub, "% of attempts") || strings.Contains(sub, "arrivals") {
		t.Errorf("reject and late chart subtitle %q", sub)
	}
	if _, sub, _ := chartOf(t, v, "chart-shed-share"); sub != "of all attempts" {
		t.Errorf("shed share subtitle %q", sub)
	}
	if _, sub, _ := chartOf(t, presetView(t, "load-shedding"), "chart-shed-share"); sub != "of all arrivals" {
		t.Errorf("without client behaviour: shed share subtitle %q", sub)
	}
}

// A client-model run stored before series blob format 4 kept no goodput
// or attempts series: its lines over time say so instead of drawing
// nothing.
func TestClientSeriesNotKeptSaySo(t *testing.T) {
	v := NewView(runPresetAfresh(t, "metastable"), -1)
	for i := range v.Res.Points {
		s := &v.Res.Points[i].Series
		s.Attempts, s.Retries, s.Goodput = nil, nil, nil // as a format 3 blob decodes
	}
	v = NewView(v.Res, -1)
	for _, id := range []string{"chart-clients-goodput", "chart-clients-attempts"} {
		if _, sub, _ := chartOf(t, v, id); !strings.Contains(sub, "not kept by this run") {
			t.Errorf("%s: subtitle %q", id, sub)
		}
	}
	if _, sub, _ := chartOf(t, presetView(t, "metastable"), "chart-clients-goodput"); strings.Contains(sub, "not kept") {
		t.Errorf("a run with its series: subtitle %q", sub)
	}
}
