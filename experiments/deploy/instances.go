package deploy

import (
	"fmt"
	"maps"
	"math"
	"strings"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// replicaNotes say what a replicated point's export means for the
// configured value (limiter.Spec.Replicated: instances behind a
// balancer): the text above is one instance's configuration, and what the
// N instances let through depends on how they share it. Nil for a point
// of one gate.
func replicaNotes(spec *limiter.Spec, p limiter.Params) []string {
	if !spec.Replicated() {
		return nil
	}
	k := spec.Kind()
	n := max(int(p.Get(limiter.ParamInstances)), 1)
	each, _ := limiter.Divide(k, p, n)
	var divided []string
	for _, q := range k.Params {
		if v, ok := p[q.Name]; ok && each[q.Name] != v {
			divided = append(divided, q.Name+" "+num(math.Round(each[q.Name]*1e4)/1e4))
		}
	}
	perInstance := strings.Join(divided, ", ")
	balancer := spec.Option(limiter.OptionBalancer)
	even := "round-robin spreads requests evenly"
	if balancer != limiter.BalancerRoundRobin {
		even = fmt.Sprintf("the balancer (%s) spreads requests evenly, which it does only on average", balancer)
	}
	var out []string
	switch spec.Option(limiter.OptionSharing) {
	case limiter.SharingLocal:
		out = append(out, fmt.Sprintf("This point runs %d instances (sharing local): every instance enforces the configuration above on what its balancer sends it, so together they admit up to %d times the limit. For the limit above across %d replicas, configure each with %s (the limit / instances): exact only while %s and the replica count stays put; a scale to N' instances makes the effective limit N'/%d of the wanted one again.",
			n, n, n, perInstance, even, n))
	case limiter.SharingDivided:
		out = append(out, fmt.Sprintf("This point runs %d instances, each enforcing the limit / %d (sharing divided): deploy each replica with %s, not the values above; the %d together keep the limit only while %s.",
			n, n, perInstance, n, even))
	case limiter.SharingCentral:
		out = append(out, fmt.Sprintf("This point runs %d instances that ask one shared store for every decision (sharing central, a round trip of store_rtt_ms %s): the configuration above is the store's limit (Envoy's global rate limit service, redis_rate on one Redis), not a per-replica one; the store's round trip is in every request's latency.",
			n, num(p.Get(limiter.ParamStoreRTT))))
		if p.Get(limiter.ParamOutageEnd) > p.Get(limiter.ParamOutageStart) {
			out = append(out, fmt.Sprintf("While the store is down (outage_start_ms %s to outage_end_ms %s) the instances %s: no setting of the limit changes what passes then; only the failure mode does (Envoy's failure_mode_deny, redis_rate's caller on an error).",
				num(p.Get(limiter.ParamOutageStart)), num(p.Get(limiter.ParamOutageEnd)), map[bool]string{true: "admit everything (store_down fail-open)", false: "refuse everything (store_down fail-closed)"}[spec.Option(limiter.OptionStoreDown) == limiter.StoreDownFailOpen]))
		}
	case limiter.SharingLease:
		out = append(out, leaseNotes(spec, p, n)...)
	case limiter.SharingAsync:
		out = append(out, fmt.Sprintf("This point runs %d Gubernator daemons with Behavior GLOBAL (sharing async): the limit above is the key's, configured alike on every request (it is not divided), and GLOBAL_SYNC_WAIT must be %s ms (GUBER_GLOBAL_SYNC_WAIT=%sms) and GUBER_GLOBAL_BATCH_LIMIT %s on every daemon for the point's numbers.",
			n, num(p.Get(limiter.ParamSyncWait)), num(p.Get(limiter.ParamSyncWait)), num(p.Get(limiter.ParamBatchLimit))),
			"What no limit setting fixes: each daemon answers from its cached copy, which the owner refreshes only every sync wait, so between refreshes the daemons admit past the limit (more the longer the wait and the more daemons; a daemon whose copy expired opens a window of its own). A shorter GlobalSyncWait narrows it at a send and a broadcast per interval; the exact choice is to leave GLOBAL off, so the owner decides every request, at a round trip each.")
	}
	if balancer == limiter.BalancerHash && spec.Option(limiter.OptionSharing) != limiter.SharingCentral && spec.Option(limiter.OptionSharing) != limiter.SharingLease && spec.Option(limiter.OptionSharing) != limiter.SharingAsync {
		out = append(out, "Under hash balancing a heavy client's requests all reach one instance, which refuses at its own limit while the others idle: no per-instance setting fixes that; only a shared (central) limit does.")
	}
	if balancer == limiter.BalancerRandom {
		out = append(out, "balancer_seed "+num(p.Get(limiter.ParamBalancerSeed))+" seeds the lab's random balancer; a real balancer draws its own.")
	}
	return out
}

// onePoint is spec with its replica parameters at the point's values (a
// rerun runs the point's instances, not the spec's whole sweep of them).
func onePoint(spec *limiter.Spec, p limiter.Params) *limiter.Spec {
	out := *spec
	out.Params = map[string]limiter.Values{}
	for _, q := range limiter.ReplicaParams() {
		if v, ok := p[q.Name]; ok {
			out.Params[q.Name] = limiter.Values{v}
		}
	}
	return &out
}

// rerunReplicas runs the rerun as the point's instances when the deployed
// gate can (it releases at the arrival), else as one gate, said in a note.
func rerunReplicas(rerun, point *limiter.Spec) []string {
	with := *rerun
	with.Params, with.Options = maps.Clone(rerun.Params), maps.Clone(rerun.Options)
	with.WithReplicasOf(point)
	with.Normalize()
	if errs := with.Validate("rerun"); len(errs) > 0 {
		return []string{"The rerun runs one instance of the deployed gate: " + errs[0].Msg + "."}
	}
	*rerun = with
	return nil
}
