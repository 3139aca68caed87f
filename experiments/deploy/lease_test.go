package deploy_test

import (
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/deploy"
	"github.com/ratelab/ratelab/experiments/presets"
)

// A lease-shared point's export says the configuration is the lease
// server's capacity and what the lease's timing costs.
func TestLeaseExportSaysTheServersCapacity(t *testing.T) {
	cfg, err := presets.Config("lease-skew")
	if err != nil {
		t.Fatal(err)
	}
	pt, err := deploy.PointOf(cfg, 2) // lease-fair, refresh 250 ms
	if err != nil {
		t.Fatal(err)
	}
	e, err := deploy.Render("nginx", pt)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(e.Notes, "\n")
	for _, w := range []string{
		"This point runs 3 instances that lease shares of the rate from a lease server (sharing lease, Doorman's FAIR_SHARE, lease_length 5000 ms, refresh_interval 250 ms): rate_rps 60 above is the server's capacity",
		"trails its demand by up to refresh_ms 250",
		"keeps its share leased, unused, for up to lease_ms 5000",
	} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes\n%s\nlack %q", notes, w)
		}
	}
	if strings.Contains(notes, "Under hash balancing a heavy client's requests all reach one instance") {
		t.Errorf("notes\n%s\nsay hash balancing strands a heavy client, which the leases move the share to", notes)
	}
	// nginx's gate takes no lease: the rerun is one gate, and says why.
	if e.Rerun == nil || e.Rerun.Replicated() || !strings.Contains(notes, "The rerun runs one instance of the deployed gate: sharing lease retunes a token bucket's rate") {
		t.Errorf("the rerun %v; notes\n%s", e.Rerun, notes)
	}
}
