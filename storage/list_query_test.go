package storage

import (
	"errors"
	"slices"
	"testing"
)

// TestListBy: a list sorts by name, status or points either way, keeps
// one status, and finds text in names, ids and limiter labels (LIKE's
// wildcards taken literally).
func TestListBy(t *testing.T) {
	st, _ := openTemp(t)
	ctx := t.Context()
	mk := func(name string, points int, limiters ...string) *Run {
		r := &Run{Name: name, Config: []byte(`{}`), PointsTotal: points, Limiters: limiters}
		if err := st.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	a := mk("alpha", 3, "token-bucket")
	b := mk("beta_1", 10, "leaky-bucket")
	c := mk("gamma", 1, "gcra")
	if err := st.Finish(ctx, b.ID, StatusFailed, "boom"); err != nil {
		t.Fatal(err)
	}
	names := func(q ListQuery) ([]string, int) {
		t.Helper()
		runs, total, err := st.ListBy(ctx, q, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range runs {
			out = append(out, r.Name)
		}
		return out, total
	}
	for _, tc := range []struct {
		q     ListQuery
		want  []string
		total int
	}{
		{ListQuery{}, []string{"gamma", "beta_1", "alpha"}, 3},
		{ListQuery{Sort: "name", Asc: true}, []string{"alpha", "beta_1", "gamma"}, 3},
		{ListQuery{Sort: "points"}, []string{"beta_1", "alpha", "gamma"}, 3},
		{ListQuery{Status: StatusFailed}, []string{"beta_1"}, 1},
		{ListQuery{Query: "BUCKET", Sort: "name", Asc: true}, []string{"alpha", "beta_1"}, 2},
		{ListQuery{Query: "a_1"}, []string{"beta_1"}, 1}, // _ is not a wildcard
		{ListQuery{Query: "%"}, nil, 0},
		{ListQuery{Query: c.ID}, []string{"gamma"}, 1},
	} {
		got, total := names(tc.q)
		if !slices.Equal(got, tc.want) || total != tc.total {
			t.Errorf("%+v: %v (%d), want %v (%d)", tc.q, got, total, tc.want, tc.total)
		}
	}
	_ = a
	for _, q := range []ListQuery{{Sort: "id; DROP TABLE runs"}, {Status: "gone"}} {
		if _, _, err := st.ListBy(ctx, q, 10, 0); !errors.Is(err, ErrBadQuery) {
			t.Errorf("%+v: %v, want ErrBadQuery", q, err)
		}
	}
}
