package storage

import (
	"errors"
	"slices"
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

// The logs replays read: a run's own (LogsOf) and every stored run's
// (LogsRead), whatever its status; a sweep reads none, even one whose
// config says "shadow".
func TestLogsRead(t *testing.T) {
	st := open(t)
	ctx := t.Context()
	create := func(kind, config string) string {
		r := &Run{Config: []byte(config), Kind: kind}
		if err := st.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	a := create(KindShadow, `{"shadow": {"log": "upload/1-a.log", "log_format": "combined"}}`)
	b := create(KindShadow, `{"shadow": {"log": "upload/1-a.log"}}`) // a re-run reads the same log
	c := create(KindShadow, `{"shadow": {"log": "day.log"}}`)
	sweep := create(KindSweep, `{"version": 1, "shadow": {"log": "upload/2-b.log"}}`)
	logs, err := st.LogsOf(ctx, []string{a, b, c, sweep, "no-such-run"})
	if err != nil || !slices.Equal(logs, []string{"day.log", "upload/1-a.log"}) {
		t.Errorf("LogsOf = %q, %v", logs, err)
	}
	read, err := st.LogsRead(ctx)
	if err != nil || len(read) != 2 || !read["upload/1-a.log"] || !read["day.log"] {
		t.Errorf("LogsRead = %v, %v", read, err)
	}
	if err := st.DeleteRuns(ctx, []string{a, c}); err != nil {
		t.Fatal(err)
	}
	if read, err = st.LogsRead(ctx); err != nil || len(read) != 1 || !read["upload/1-a.log"] {
		t.Errorf("after deleting two: LogsRead = %v, %v", read, err)
	}
}
