package runner

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/shadow"
	"github.com/ratelab/ratelab/storage"
)

// memLogs are logs in memory: a name's text, or an endless log that
// says when it has given its first lines (endless).
type memLogs struct {
	text    map[string]string
	reached chan struct{}
}

func (m *memLogs) Exists(name string) bool { _, ok := m.text[name]; return ok || name == "endless" }

func (m *memLogs) Create(string) (string, io.WriteCloser, func(), error) {
	return "", nil, nil, fmt.Errorf("no uploads")
}

func (m *memLogs) Remove(string) error { return nil } // no uploads to remove

func (m *memLogs) Open(name string) (*LogFile, error) {
	var pos atomic.Int64
	var rd io.Reader
	size := int64(len(m.text[name]))
	if name == "endless" {
		rd, size = &endless{reached: m.reached}, 2<<20 // the first 2 MiB: its progress
	} else {
		rd = strings.NewReader(m.text[name])
	}
	counted := readFunc(func(p []byte) (int, error) { n, err := rd.Read(p); pos.Add(int64(n)); return n, err })
	return &LogFile{ReadCloser: io.NopCloser(counted), Size: size, Position: pos.Load,
		Input: func() experiments.Input { return experiments.Input{Name: name, SHA256: "test", Bytes: pos.Load()} }}, nil
}

type readFunc func([]byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }

// endless gives lines 10 ms apart forever, closing reached after 20 000.
type endless struct {
	n       int
	buf     bytes.Buffer
	reached chan struct{}
}

func (e *endless) Read(p []byte) (int, error) {
	for e.buf.Len() < len(p) {
		fmt.Fprintf(&e.buf, "10.0.0.%d %.3f 0.000 200 0.005\n", e.n%3, 1796148840+float64(e.n)*0.01)
		e.n++
		if e.n == 20000 {
			close(e.reached)
		}
	}
	return e.buf.Read(p)
}

const testShadowConf = "limit_req_zone $binary_remote_addr zone=perip:1m rate=20r/s;\nlimit_req zone=perip burst=2 nodelay;\n"

func shadowSpec(log string) *shadow.Spec {
	sp := &shadow.Spec{Log: log, LogFormat: "$remote_addr $msec $request_time $status $upstream_response_time", Config: testShadowConf}
	sp.Normalize()
	return sp
}

func TestShadowRunStoresItsFiles(t *testing.T) {
	var log strings.Builder
	for i := range 300 {
		fmt.Fprintf(&log, "10.0.0.%d %.3f 0.000 200 0.005\n", i%2, 1796148840+float64(i)*0.02)
	}
	st := newStore(t)
	r := newRunner(t, st, Options{Logs: &memLogs{text: map[string]string{"a.log": log.String(), "bad.log": "garbage\n" + log.String()[:200]}}})
	r.Start()
	if _, err := r.SubmitShadow(t.Context(), shadowSpec("nope.log"), "", ""); err == nil || !strings.Contains(err.Error(), `log: "nope.log" is not one of the lab's logs`) {
		t.Errorf("a missing log: %v", err)
	}
	run, err := r.SubmitShadow(t.Context(), shadowSpec("a.log"), "replay", "")
	if err != nil {
		t.Fatal(err)
	}
	events, unsubscribe := r.Subscribe(run.ID)
	defer unsubscribe()
	if final, _ := waitFinal(t, events, time.Minute); final.Status != storage.StatusDone || final.Done != ShadowTotal {
		t.Fatalf("final %+v", final)
	}
	files, err := st.Files(t.Context(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	if strings.Join(names, " ") != "shadow.csv shadow-timeline.csv shadow-whatif.csv shadow-summary.txt shadow.json manifest.json" {
		t.Errorf("files %v", names)
	}
	f, err := st.File(t.Context(), run.ID, shadow.ViewFile)
	if err != nil {
		t.Fatal(err)
	}
	v, err := shadow.DecodeView(f.Data)
	if err != nil || v.Requests != 300 || v.Limited == 0 || v.Recommended < 0 || len(v.Top) != 2 {
		t.Errorf("%v %+v", err, v)
	}
	got, _ := st.Get(t.Context(), run.ID)
	if got.Kind != storage.KindShadow {
		t.Errorf("kind %q", got.Kind)
	}

	// Too many bad lines: failed, nothing stored, the bad line named.
	run, err = r.SubmitShadow(t.Context(), shadowSpec("bad.log"), "", "")
	if err != nil {
		t.Fatal(err)
	}
	events, unsubscribe2 := r.Subscribe(run.ID)
	defer unsubscribe2()
	if final, _ := waitFinal(t, events, time.Minute); final.Status != storage.StatusFailed || !strings.Contains(final.Error, "line 1: does not match the log format: garbage") {
		t.Fatalf("final %+v", final)
	}
	if files, _ := st.Files(t.Context(), run.ID); len(files) != 0 {
		t.Errorf("a refused log stored %d files", len(files))
	}
}

// Cancel keeps what was read: the run ends partial with its files.
func TestShadowCancelKeepsWhatWasRead(t *testing.T) {
	st := newStore(t)
	logs := &memLogs{reached: make(chan struct{})}
	r := newRunner(t, st, Options{Logs: logs})
	r.Start()
	run, err := r.SubmitShadow(t.Context(), shadowSpec("endless"), "", "")
	if err != nil {
		t.Fatal(err)
	}
	events, unsubscribe := r.Subscribe(run.ID)
	defer unsubscribe()
	select {
	case <-logs.reached:
	case <-time.After(time.Minute):
		t.Fatal("the log was not read")
	}
	// Progress while reading: the share of the log's bytes read.
	for deadline := time.After(30 * time.Second); ; {
		var ev Event
		select {
		case ev = <-events:
		case <-deadline:
			t.Fatal("no progress while reading")
		}
		if ev.Status == storage.StatusRunning && ev.Done > 0 && ev.Total == ShadowTotal {
			break
		}
	}
	r.Cancel(run.ID)
	final, _ := waitFinal(t, events, time.Minute)
	if final.Status != storage.StatusPartial || !strings.HasPrefix(final.Error, "cancelled by request after ") {
		t.Fatalf("final %+v", final)
	}
	f, err := st.File(t.Context(), run.ID, shadow.ViewFile)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := shadow.DecodeView(f.Data); err != nil || !v.Stopped || v.Requests < 10000 {
		t.Errorf("%v %+v", err, v)
	}
}

// A queued replay a stopped lab left comes back queued and runs.
func TestQueuedReplayComesBack(t *testing.T) {
	st := newStore(t)
	logs := &memLogs{text: map[string]string{"a.log": "10.0.0.1 1796148840.000 0.000 200 -\n"}}
	first := New(st, Options{Workers: 1, Queue: 4, Logger: testLogger(t), Logs: logs}) // never started
	run, err := first.SubmitShadow(t.Context(), shadowSpec("a.log"), "", "")
	if err != nil {
		t.Fatal(err)
	}
	second := newRunner(t, st, Options{Logs: logs})
	if n, err := second.Requeue(t.Context()); err != nil || n != 1 {
		t.Fatalf("Requeue: %d, %v", n, err)
	}
	second.Start()
	waitStored(t, st, run.ID, func(r *storage.Run) bool { return r.Status == storage.StatusDone })
}
