package deploy

import (
	"fmt"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// leaseNotes say what a lease-shared point (limiter.SharingLease,
// Doorman's leases) means for a deployment: the configuration above is
// the lease server's capacity, not any replica's; the replicas' limits
// move with their leases, which no static configuration of these
// libraries does; and what the lease's timing costs, which no value of
// the limit fixes.
func leaseNotes(spec *limiter.Spec, p limiter.Params, n int) []string {
	algorithm := "PROPORTIONAL_SHARE"
	if spec.Option(limiter.OptionLeaseAlgorithm) == limiter.LeaseFair {
		algorithm = "FAIR_SHARE"
	}
	refresh, lease := num(p.Get(limiter.ParamRefreshMS)), num(p.Get(limiter.ParamLeaseMS))
	out := []string{
		fmt.Sprintf("This point runs %d instances that lease shares of the rate from a lease server (sharing lease, Doorman's %s, lease_length %s ms, refresh_interval %s ms): rate_rps %s above is the server's capacity, not a replica's. Each replica's bucket takes the rate of its lease and burst × its share of the rate; a static configuration of the text above on every replica is sharing local, %d times the limit.",
			n, algorithm, lease, refresh, num(p.Get(limiter.ParamRate)), n),
		fmt.Sprintf("What no setting of the limit fixes: a replica's share trails its demand by up to refresh_ms %s (what it was offered over the last refresh), so a client whose traffic moves to another replica is refused there until the next refresh; a replica that fails keeps its share leased, unused, for up to lease_ms %s.", refresh, lease),
	}
	fallback := "enforce nothing (Doorman's client: capacity 0), refusing every request"
	if spec.Option(limiter.OptionLeaseExpired) == limiter.LeaseExpiredSafe {
		fallback = "fall back to the safe capacity of their last response (capacity / the server's clients then), which can sum above the capacity"
	}
	if p.Get(limiter.ParamOutageEnd) > p.Get(limiter.ParamOutageStart) {
		out = append(out, fmt.Sprintf("While the lease server is down (outage_start_ms %s to outage_end_ms %s) the replicas keep their leases for lease_ms, then %s.",
			num(p.Get(limiter.ParamOutageStart)), num(p.Get(limiter.ParamOutageEnd)), fallback))
	}
	return out
}
