package storage

import (
	"errors"
	"testing"

	"github.com/ratelab/ratelab/experiments/output"
)

// A shadow run keeps its kind and stores its files alone, done or partial.
func TestCompleteFiles(t *testing.T) {
	st := open(t)
	ctx := t.Context()
	for _, partial := range []bool{false, true} {
		r := &Run{Name: "replay", Config: []byte(`{"shadow": {}}`), Kind: KindShadow, PointsTotal: 1000}
		if err := st.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		files := []output.File{{Name: "shadow.csv", Data: []byte("key\n")}, {Name: "manifest.json", Data: []byte("{}\n")}}
		if err := st.CompleteFiles(ctx, r.ID, partial, "why", 400, 1000, files); err != nil {
			t.Fatal(err)
		}
		got, err := st.Head(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := StatusDone
		if partial {
			want = StatusPartial
		}
		if got.Kind != KindShadow || got.Status != want || got.PointsDone != 400 || got.FinishedAt == nil || got.StoredBytes == 0 {
			t.Errorf("%+v", got)
		}
		f, err := st.File(ctx, r.ID, "shadow.csv")
		if err != nil || string(f.Data) != "key\n" {
			t.Errorf("%v %+v", err, f)
		}
		if err := st.CompleteFiles(ctx, r.ID, false, "", 1, 1, files); !errors.Is(err, ErrFinished) {
			t.Errorf("twice: %v", err)
		}
	}
	r := &Run{Config: []byte(`{}`)}
	if err := st.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Get(ctx, r.ID); got.Kind != KindSweep {
		t.Errorf("a sweep's kind: %q", got.Kind)
	}
}
