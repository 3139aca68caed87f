package presets_test

import (
	"testing"

	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/presets"
)

// presetOutputs pins every output but manifest.json (which names the Go
// toolchain) of the presets that existed before the seed presets, as the
// engine wrote them at EngineVersion 1.0.2: the seed lab's models and rules
// are options, and a config that does not name them writes the same bytes.
// A change that moves one of these is a change of the engine's numbers:
// bump EngineVersion and update the table. The five fairness presets'
// results.csv and series.csv changed by their configs (issue 11): their
// server has 200 workers of 10 ms, not one, so it never queues (the paper
// models no backend); their clients.csv (admission) did not. The presets
// that carry objectives (issue 22) have results.csv's pass and meets_all
// columns after these: their numbers are pinned without them.
var presetOutputs = map[string]string{
	"boundary/results.csv":                    "e5b1c43eaef30c840111cdf654d0ef635f954affd8acac365d11767978e1253e",
	"boundary/series.csv":                     "9ae9f428427affafbef826c087a3ed29e0dd98c024524867f42f23eb71220977",
	"boundary/clients.csv":                    "9327b5ea16edd4866ee9d97ae552bd2c4c8f5e7b8b2d550867a9b6304576a4b1",
	"delay-budget/results.csv":                "ac68adc35a7df9e92dfaa02c565048aa62c49a2171dc4b09caca6f650a54115b",
	"delay-budget/series.csv":                 "a73244dd4a208b0f4fbb5742c01b8dd34a730092716bed357eed05a905ddf10f",
	"delay-budget/clients.csv":                "0864e8a68424aa473f4be2d49d605f8ba1dea4def0a1798a9add12d1b2995f70",
	"flash-crowd/results.csv":                 "9093be2881fe1df6a19be3f380eb12ba12797f888f64e3325490cba38610a223",
	"flash-crowd/series.csv":                  "3640e6cf7ba7d2f9050cc74a5c4a79f3347215dea93a056021b5df8608091fb4",
	"flash-crowd/clients.csv":                 "e07c005128f4a2085338646e24138c36134e867a27747a57f5d8d35d1340f35c",
	"guava-warming-up-half-rate/results.csv":  "096ae0ac34182c7cb5d970400986b2eb8b5dfad098f164a837a507f8b6913ae1",
	"guava-warming-up-half-rate/series.csv":   "aef445751aa0d2401a39debb3e62b09afd798eb9b2d72627cde826246ea26689",
	"heterogeneous/results.csv":               "ec52bb4a7d5ef25af80f9c783400bcac715a941a1f9b7a455e5f12ca8d15dc80",
	"heterogeneous/series.csv":                "8e75796a0733be81be6b61f856fc2e0d0418e365270a1373af9151b4c37cf4a7",
	"heterogeneous/clients.csv":               "468c8ea0af6a35fdb35a2d883a45f4cb56914a28d87ebf144b928ea8b54242e1",
	"nginx-burst-503/results.csv":             "7cf9ea680a4308e2264e1fb1c7378e92663cbf1c1250b5df3867946d55f88332",
	"nginx-burst-503/series.csv":              "1c39622a2443b47588ae84fd5b266638545af6e98cfcb70b20b6a13c1bcf64c4",
	"poisson-100/results.csv":                 "dd9406370666f4809deb8c4c8c37658727f441fc815935ecf4acf712976fb0f5",
	"poisson-100/series.csv":                  "cd5d64e7c06511d1ee678fbb3fb51df8ea04a1509aa4d04ce9c5231ac1ec4b37",
	"poisson-100/clients.csv":                 "91b2cc122f623263e59e97a2c5fbd5050a9eb308b10e736fea3517899b2b5a2d",
	"poisson-120/results.csv":                 "f891a0a49f4a8d81f905d6f473e720810a88c9fdac7d6ed73fd73ac603ced187",
	"poisson-120/series.csv":                  "e268365cd970a95165f9e0fdb4b0f4b87a278c99a7bbf5abeb519e8223c6d81c",
	"poisson-120/clients.csv":                 "6d7afb28adb3320ecbb505acc8a8ba56571232e91bb72af9af88faf260812492",
	"poisson-80/results.csv":                  "208a06aed67a8471ec5b56069a0bb039c2efe6483beb25ccb1b7f10482f3c2fd",
	"poisson-80/series.csv":                   "edc58d8e7155598b99cd56ca2854bfe3060e96ab1263e22e7b7051f51bf3d9bc",
	"poisson-80/clients.csv":                  "2ab012f8390be114c397cd17500f8f6240ebf4fa3d04b71437415eefae0b2968",
	"redis-rate-rounding/results.csv":         "67d9202028b5dadaa19a3523a838ea109a9396e1e8d03dce14b40d1112e549cd",
	"redis-rate-rounding/series.csv":          "be1688797b02d7306d796ac09e38002b3349166e0c8d9deee0368e9dad5d39d0",
	"synchronized/results.csv":                "3b3d97305a4d7f4397ded6ea8aa76cbd8393a6604f85fbd5acb183441b5d390b",
	"synchronized/series.csv":                 "d10577ec269559b0f4afd0c51467df86f877c5d9111a654b21d505cbabdf15fa",
	"synchronized/clients.csv":                "3bc850db755b2eb64d5e954ff69da426b3f062489f9ffe022f0e71272fe8b076",
	"token-vs-leaky/results.csv":              "a0b4d69d0161e2903c2f90ae158ff8e90edc3ed5d0aec3367a427ec7ce060d30",
	"token-vs-leaky/series.csv":               "80776545e7338e94fc9badd96628e55f50681ccedfd67e1ce73fe1e8e1bdcaa5",
	"token-vs-leaky/bp-post3-burst-sweep.csv": "d29c75e9eaa020ba6192686883d30a6366ab7640534847a20d55e339072987c6",
	"token-vs-leaky/bp-post3-shaping.csv":     "80841498be4d0e0a48076599602ed624b18d23e45dcbd6e880ebd580b7471543",
	"underloaded/results.csv":                 "fbc4d596767ab132d998f5eb3d8a5d744ee888a15b32e9435e001c45edf3f955",
	"underloaded/series.csv":                  "5661f4bd7057b9851533cb159e74d75d121562de9319e6b9572b1fa13deef947",
	"underloaded/clients.csv":                 "836faa2913bb7e3661adc244422cf7538710a8423b38222a743f61a1cdd985e8",
	"weighted-tiers/results.csv":              "14b708cf5dd2e0ff61abb089e9fc348b9995a9264e0a2500c4659132991c6b3a",
	"weighted-tiers/series.csv":               "5602419f3d26f08cdf973b2c4b9686f9688781947585ec333fcfad7aab655746",
	"weighted-tiers/clients.csv":              "52ee6ed47f32a2ad75138fc68d31a9750c08da789b054a7e21d4dcbf84e801ae",
	"x-time-rate-burst/results.csv":           "675ad210f6a9a05dbeadde0f71924e45537d10c152775d00757a7e9ecec1d7ce",
	"x-time-rate-burst/series.csv":            "0e7be391d8b3fd9988daaa943c54a669236545f5e550aebef025dfc35719d4a3",
}

func TestPresetOutputsUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	found := 0
	for _, p := range presets.All() {
		res, out := runSeedPreset(t, p.Name, 0)
		if len(res.Config.Objectives) > 0 {
			plain, cfg := *res, *res.Config
			cfg.Objectives, cfg.Decision = nil, nil
			plain.Config = &cfg
			out["results.csv"] = output.Results(&plain)
		}
		for name, data := range out {
			want, ok := presetOutputs[p.Name+"/"+name]
			if !ok {
				continue
			}
			found++
			if got := (output.File{Data: data}).SHA256(); got != want {
				t.Errorf("%s/%s: sha256 %s, want %s", p.Name, name, got, want)
			}
		}
	}
	if found != len(presetOutputs) {
		t.Errorf("checked %d of the %d pinned files", found, len(presetOutputs))
	}
}
