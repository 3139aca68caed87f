package simulate_test

import (
	"context"
	"reflect"
	"strconv"
	"testing"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// TestClientRandomnessFollowsThePointSeed: the client model's draws
// (think times, jitter, throttling) come from the point's seed, so a run
// of a replication or of a listed seed is the run of that seed alone. They
// came from the config's first seed: a closed loop's replications were
// copies of one run (an interval of ± 0) and its seed list gave one
// answer per seed.
func TestClientRandomnessFollowsThePointSeed(t *testing.T) {
	doc := func(seed string, reps int) string {
		r := ""
		if reps > 1 {
			r = `"replications":` + strconv.Itoa(reps) + `,`
		}
		return `{"version":1,"seed":` + seed + `,` + r + `"workload":{"duration_ms":3000,"parts":[
			{"type":"users","group":"user","users":20,"think_ms":50,"think":"exponential","timeout_ms":80,"retries":2,"backoff_ms":20,"jitter":"full","throttle_k":2,"throttle_window_ms":1000}]},
			"server":{"workers":1,"service_ms":10,"deadline_ms":200},
			"limiters":[{"type":"token-bucket","rate_rps":60,"burst":5}]}`
	}
	run := func(d string) *experiments.Result {
		cfg, err := document.DecodeConfig([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	alone := map[int]experiments.Metrics{}
	for s := 3; s <= 5; s++ {
		alone[s] = run(doc(strconv.Itoa(s), 1)).Points[0].Metrics
	}
	if reflect.DeepEqual(alone[3], alone[4]) {
		t.Fatal("seeds 3 and 4 alone measure the same: the test cannot tell seeds apart")
	}
	reps := run(doc("3", 3))
	listed := run(doc("[3, 4, 5]", 1))
	for r := 0; r < 3; r++ {
		if got := reps.Replicas[r].Metrics; !reflect.DeepEqual(got, alone[3+r]) {
			t.Errorf("replication %d (seed %d): goodput %v, arrivals %d; seed %d alone: %v, %d", r, 3+r, got.GoodputRPS, got.Arrivals, 3+r, alone[3+r].GoodputRPS, alone[3+r].Arrivals)
		}
		if got := listed.Points[r].Metrics; !reflect.DeepEqual(got, alone[3+r]) {
			t.Errorf("listed seed %d: goodput %v, arrivals %d; alone: %v, %d", 3+r, got.GoodputRPS, got.Arrivals, alone[3+r].GoodputRPS, alone[3+r].Arrivals)
		}
	}
}
