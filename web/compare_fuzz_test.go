package web

import (
	"net/url"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/storage"
)

// FuzzCompareAndDiffQueries: the compare and decision diff queries never
// panic; what they accept is well formed (run ids, a bounded count,
// points from 0, a tolerance in range).
func FuzzCompareAndDiffQueries(f *testing.F) {
	for _, s := range []string{"runs=aaaaaaaaaaaa,bbbbbbbbbbbb", "runs=a&runs=b", "a=aaaaaaaaaaaa:0&b=aaaaaaaaaaaa:3&eps_ms=0.5", "a=x:y", "runs=,,", "eps_ms=NaN&a=aaaaaaaaaaaa:1&b=aaaaaaaaaaaa:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		if ids, _, err := parseCompareRuns(q); err == nil {
			if len(ids) < 2 || len(ids) > MaxCompareRuns {
				t.Fatalf("%q: %d runs accepted", raw, len(ids))
			}
			for _, id := range ids {
				if !storage.ValidID(id) {
					t.Fatalf("%q: run %q accepted", raw, id)
				}
			}
		} else if err.Error() == "" || strings.TrimSpace(err.Error()) == "" {
			t.Fatal("an empty message")
		}
		if d, err := parseDiffQuery(q); err == nil {
			if !storage.ValidID(d.a[0]) || !storage.ValidID(d.b[0]) || d.points[0] < 0 || d.points[1] < 0 || d.eps < 0 || d.eps > 60000 || d.eps != d.eps {
				t.Fatalf("%q: accepted %+v", raw, d)
			}
		}
	})
}
