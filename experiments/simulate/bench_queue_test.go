package simulate_test

import (
	"strings"
	"testing"
)

// BenchmarkQueueModelScaled is the scaled Post 3 model (1 170 301 arrivals)
// behind a token bucket of burst 20, through the queue model (server.Queue)
// with each of Post 4's disciplines and Post 5's bounded system with two
// classes, reported per request as BenchmarkSeedScaled is.
func BenchmarkQueueModelScaled(b *testing.B) {
	for _, c := range []struct{ name, server, extra string }{
		{"fifo-cut", `"end": "cut"`, ""},
		{"tail-drop", `"door": "tail-drop", "end": "cut"`, ""},
		{"expire", `"expire": "at-dequeue", "end": "cut"`, ""},
		{"lifo", `"discipline": "lifo", "end": "cut"`, ""},
		{"priority-classes", `"door": "priority", "expire": "at-dequeue", "end": "cut"`,
			`, "classes": [{"name": "critical", "share": 0.25}, {"name": "background"}], "metrics": {"score_until": "end-minus-deadline"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			doc := scaledPost3(10_000_000, `{"type": "token-bucket", "rate_rps": 100, "burst": 20}`)
			doc = strings.Replace(doc, `"deadline_ms": 200}`, `"deadline_ms": 200, `+c.server+`}`, 1)
			doc = strings.TrimSuffix(strings.TrimSpace(doc), "}") + c.extra + "}"
			benchConfig(b, doc)
		})
	}
}
