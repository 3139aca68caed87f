package simulate_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/server"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// withModels adds server settings, server variants, loads, classes, an
// SLO and the seed lab's rules to a random config.
func withModels(seed uint64, doc []byte) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		panic(err)
	}
	word := func(name string) string {
		o, _ := server.OptionByName(name)
		return o.Choices[rng.IntN(len(o.Choices))].Name
	}
	srv := m["server"].(map[string]any)
	for _, name := range []string{server.OptDiscipline, server.OptDoor, server.OptExpire, server.OptEnd} {
		if rng.IntN(2) == 0 {
			srv[name] = word(name)
		}
	}
	if rng.IntN(3) == 0 {
		srv["bound"] = []int{1, 2, 20, 1000}[rng.IntN(4)]
		if srv[server.OptDoor] == nil || srv[server.OptDoor] == server.DoorOpen {
			srv[server.OptDoor] = server.DoorTailDrop
		}
	}
	if rng.IntN(2) == 0 {
		m["servers"] = []map[string]any{{"name": "a"}, {"name": "b", "door": word(server.OptDoor), "discipline": word(server.OptDiscipline), "expire": word(server.OptExpire)}}
	}
	if rng.IntN(2) == 0 {
		m["loads"] = []map[string]any{{"name": "base"}, {"name": "c", "parts": []map[string]any{{"type": "constant", "rate_rps": []float64{5, 100, 900}[rng.IntN(3)]}}}}
	}
	if rng.IntN(2) == 0 || srv[server.OptDoor] == server.DoorPriority || m["servers"] != nil {
		m["classes"] = []map[string]any{{"name": "gold", "share": 0.2}, {"name": "silver", "share": 0.3}, {"name": "bronze"}}
		m["class_draw"] = map[string]any{"generator": []string{"java-random", "pcg"}[rng.IntN(2)], "seed": rng.Int64N(100) - 50}
		m["slo"] = map[string]any{"class": "gold", "success_pct": 99}
	}
	metrics := m["metrics"].(map[string]any)
	if rng.IntN(2) == 0 {
		metrics["percentiles"] = "hdr-3"
	}
	if rng.IntN(3) == 0 {
		metrics["score_until"] = "end-minus-deadline"
	}
	if rng.IntN(2) == 0 {
		m["output"] = map[string]any{"decimals": "shortest-half-up", "windows": "whole"}
	}
	out, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return out
}

// TestRandomModelsRun: random configs with the seed lab's models run,
// write their files, and account for every request: admitted + rejected =
// arrivals, and every admitted request is on time, late or shed.
func TestRandomModelsRun(t *testing.T) {
	ran := 0
	for seed := range uint64(600) {
		doc := withModels(seed, randomConfig(seed))
		cfg, err := document.DecodeConfig(doc)
		if err != nil {
			continue
		}
		if cfg.Workload.Expected() > 20_000 {
			continue
		}
		res, err := sweep.Run(context.Background(), cfg, sweep.Options{Workers: 1})
		if err != nil {
			t.Fatalf("a valid config failed to run: %v\n%s", err, doc)
		}
		for _, p := range res.Points {
			m := p.Metrics
			if m.Admitted+m.Rejected != m.Arrivals || m.OnTime+m.Late+m.Shed != m.Admitted {
				t.Fatalf("point %d: counts do not add up: %+v\n%s", p.Index, m, doc)
			}
			offered, success := 0, 0
			for _, c := range m.Classes {
				offered += c.Offered
				success += c.Success
				if c.SuccessPct < 0 || c.SuccessPct > 100 {
					t.Fatalf("point %d: class success %g", p.Index, c.SuccessPct)
				}
			}
			if len(m.Classes) > 0 && (offered != m.Arrivals || success != m.OnTime) {
				t.Fatalf("point %d: classes offered %d success %d, arrivals %d on time %d\n%s", p.Index, offered, success, m.Arrivals, m.OnTime, doc)
			}
		}
		if _, err := output.Files(res); err != nil {
			t.Fatalf("outputs: %v\n%s", err, doc)
		}
		ran++
	}
	if ran < 100 {
		t.Fatalf("only %d of 600 random configs were valid and small", ran)
	}
	t.Logf("%d of 600 random configs ran", ran)
}
