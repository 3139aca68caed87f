package lists

import (
	"encoding/json"
	"reflect"
	"testing"
)

type section struct {
	Name  string   `json:"name,omitempty"`
	Rate  float64  `json:"rate_rps,omitempty"`
	Count int      `json:"count"`
	End   *float64 `json:"end_ms,omitempty"`
	Lists Lists    `json:"-"`
}

func sweepable(key string) bool { return key == "rate_rps" || key == "count" || key == "end_ms" }

func TestSplitMarshalSet(t *testing.T) {
	raw := []byte(`{"name": "a", "rate_rps": [0, 5, 10], "count": [3], "end_ms": [100, 200]}`)
	out, ls, errs := Split(raw, "p", sweepable)
	if errs != nil {
		t.Fatal(errs)
	}
	var s section
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatal(err)
	}
	if s.Rate != 0 || s.Count != 3 || *s.End != 100 || len(ls) != 2 || ls.Count() != 6 {
		t.Fatalf("%+v %v", s, ls)
	}
	plain, _ := json.Marshal(s)
	b, err := Marshal(s, plain, ls)
	if err != nil {
		t.Fatal(err)
	}
	// rate_rps 0 was left out of plain; its list is written in its place.
	if want := `{"name":"a","rate_rps":[0,5,10],"count":3,"end_ms":[100,200]}`; string(b) != want {
		t.Errorf("Marshal = %s, want %s", b, want)
	}
	if !Set(&s, "end_ms", 7) || *s.End != 7 || !Set(&s, "count", 4) || s.Count != 4 || Set(&s, "name", 1) || Set(&s, "nope", 1) {
		t.Errorf("Set: %+v", s)
	}
}

func TestSplitErrors(t *testing.T) {
	for _, raw := range []string{`{"rate_rps": []}`, `{"rate_rps": ["x"]}`, `{"rate_rps": [1, {}]}`} {
		if _, _, errs := Split([]byte(raw), "p", sweepable); len(errs) != 1 || errs[0].Path != "p.rate_rps" {
			t.Errorf("%s: %v", raw, errs)
		}
	}
	// A list in a key that takes none is left for the strict decoder.
	out, ls, errs := Split([]byte(`{"name": ["a"]}`), "p", sweepable)
	if errs != nil || ls != nil || string(out) != `{"name": ["a"]}` {
		t.Errorf("%s %v %v", out, ls, errs)
	}
}

func FuzzSplit(f *testing.F) {
	f.Add([]byte(`{"rate_rps": [1, 2], "count": 3}`))
	f.Add([]byte(`{"rate_rps": [[1]], "end_ms": [1e308, -0]}`))
	f.Add([]byte(`[1, 2]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, ls, errs := Split(raw, "p", sweepable)
		if errs != nil {
			return
		}
		// Splitting again finds no list left.
		if again, more, errs := Split(out, "p", sweepable); len(ls) > 0 && (errs != nil || more != nil || !reflect.DeepEqual(again, out)) {
			t.Fatalf("second split of %s: %s %v %v", out, again, more, errs)
		}
		for key, xs := range ls {
			if !sweepable(key) || len(xs) < 2 || len(xs) > MaxValues {
				t.Fatalf("list %s %v", key, xs)
			}
		}
	})
}
