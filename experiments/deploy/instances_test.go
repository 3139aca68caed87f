package deploy_test

import (
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/deploy"
	"github.com/ratelab/ratelab/experiments/presets"
)

// A replicated point's export says what each replica must be configured
// with (the limit / instances), and its rerun runs the point's instances.
func TestReplicatedExportSaysTheConfiguredValue(t *testing.T) {
	cfg, err := presets.Config("hash-skew")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		point  int
		format string
		want   []string
	}{
		{0, "nginx", []string{"This point runs 3 instances (sharing local)", "configure each with rate_rps 6.6667, burst 6 (the limit / instances)"}},
		{2, "nginx", []string{"Under hash balancing a heavy client's requests all reach one instance"}},
	} {
		pt, err := deploy.PointOf(cfg, c.point)
		if err != nil {
			t.Fatal(err)
		}
		e, err := deploy.Render(c.format, pt)
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(e.Notes, "\n")
		for _, w := range c.want {
			if !strings.Contains(notes, w) {
				t.Errorf("point %d as %s: notes\n%s\nlack %q", c.point, c.format, notes, w)
			}
		}
		if e.Rerun != nil && !e.Rerun.Replicated() {
			t.Errorf("point %d as %s: the rerun %v runs one instance", c.point, c.format, e.Rerun)
		}
	}
}

// An async point's export sets the daemons' sync wait and says what no
// setting fixes; one daemon's export is the request alone, exact.
func TestAsyncExportSaysTheSyncWait(t *testing.T) {
	cfg, err := presets.Config("gubernator-sync-wait")
	if err != nil {
		t.Fatal(err)
	}
	pt, err := deploy.PointOf(cfg, 4) // global, sync_wait_ms 100
	if err != nil {
		t.Fatal(err)
	}
	e, err := deploy.Render("gubernator", pt)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(e.Notes, "\n")
	for _, w := range []string{"export GUBER_GLOBAL_SYNC_WAIT=100ms", "export GUBER_GLOBAL_BATCH_LIMIT=1000", `"limit": 100, "duration": 1000, "algorithm": "TOKEN_BUCKET", "behavior": 2`} {
		if !strings.Contains(e.Text, w) {
			t.Errorf("the export\n%s\nlacks %q", e.Text, w)
		}
	}
	for _, w := range []string{"GLOBAL_SYNC_WAIT must be 100 ms", "What no limit setting fixes"} {
		if !strings.Contains(notes, w) {
			t.Errorf("the notes\n%s\nlack %q", notes, w)
		}
	}
	if !e.Exact {
		t.Errorf("the export of the gubernator gate's own point is not exact (rerun %v)", e.Rerun)
	}
	one, err := deploy.PointOf(cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	e, err = deploy.Render("gubernator", one)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(e.Text, "GUBER_GLOBAL") || !strings.Contains(e.Text, `"behavior": 0`) || !e.Exact {
		t.Errorf("one daemon's export (exact %v):\n%s", e.Exact, e.Text)
	}
}
