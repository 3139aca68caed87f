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
