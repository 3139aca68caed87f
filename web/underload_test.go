package web

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratelab/ratelab/runner"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/form"
)

// Load of TestUnderLoad: so many clients for so long, each sending one
// request after another.
const (
	loadClients  = 200
	loadDuration = 3 * time.Second
)

// TestUnderLoad runs the lab on a real server on 127.0.0.1 (Host checked
// as lab serve does) with 200 clients at once for a few seconds: pages,
// downloads, event streams, API reads, API and form submissions. No
// answer is a 5xx; every submission is accepted (and then finishes) or
// refused with 429 and Retry-After; every download is the stored file;
// the runs stored before are unchanged after.
func TestUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds of 200 clients")
	}
	ctx := context.Background()
	st, err := storage.Open(ctx, filepath.Join(t.TempDir(), "lab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rn := runner.New(st, runner.Options{Workers: 2, Queue: 8, Logger: log, EngineWorkers: 1})
	rn.Start()
	defer func() {
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := rn.Shutdown(sctx); err != nil {
			t.Errorf("runner shutdown: %v", err)
		}
	}()
	done := make(chan struct{})
	defer close(done)
	ts := httptest.NewUnstartedServer(nil)
	// 200 clients from one address: the stream caps (TestStreamCaps) sized for them.
	ts.Config.Handler = New(st, rn, Options{Logger: log, Done: done, Listen: ts.Listener.Addr().String(), StreamsPerClient: loadClients, StreamsTotal: loadClients})
	ts.Start()
	defer ts.Close()

	client := &http.Client{
		// An event stream lasts until its run ends, behind the queue: 20 s
		// in all at load average 18, so a bound of minutes.
		Timeout:   3 * time.Minute,
		Transport: &http.Transport{MaxIdleConnsPerHost: loadClients, MaxConnsPerHost: 0, IdleConnTimeout: time.Minute},
		// A form post answers 303: its Location is checked, not followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()

	// The runs there before the load, and what they hold.
	var seeded []string
	for i := range 3 {
		doc := strings.Replace(goodDoc, `"seed":1`, fmt.Sprintf(`"seed":%d,"name":"seed %d"`, i+1, i), 1)
		resp, err := client.Post(ts.URL+"/api/runs", "application/json", strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("seed run: %d", resp.StatusCode)
		}
		seeded = append(seeded, strings.TrimPrefix(resp.Header.Get("Location"), "/api/runs/"))
	}
	snapshot := func() map[string]any {
		out := map[string]any{}
		for _, id := range seeded {
			run := waitFinal(t, st, id, 60*time.Second)
			files, err := st.Files(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			out[id] = []any{*run, files}
		}
		return out
	}
	before := snapshot()
	sums := map[string]string{} // the results.csv sha256 of each seeded run
	for _, id := range seeded {
		f, err := st.File(ctx, id, "results.csv")
		if err != nil {
			t.Fatal(err)
		}
		sums[id] = f.SHA256
	}

	formDoc := formValuesOf(form.Default()).Encode()
	var mu sync.Mutex
	counts := map[string]int{}
	var failures []string
	var accepted []string
	record := func(r loadResult, id string) {
		mu.Lock()
		defer mu.Unlock()
		counts[fmt.Sprintf("%s %d", r.what, r.status)]++
		if r.err != "" && len(failures) < 20 {
			failures = append(failures, r.what+": "+r.err)
		}
		if id != "" {
			accepted = append(accepted, id)
		}
	}
	get := func(path string) (*http.Response, error) { return client.Get(ts.URL + path) }
	actions := []func(rng *rand.Rand) (loadResult, string){
		func(*rand.Rand) (loadResult, string) { return page(get, "home", "/") },
		func(*rand.Rand) (loadResult, string) { return page(get, "runs", "/runs") },
		func(rng *rand.Rand) (loadResult, string) {
			return page(get, "run page", "/runs/"+seeded[rng.IntN(len(seeded))])
		},
		func(rng *rand.Rand) (loadResult, string) {
			return page(get, "api run", "/api/runs/"+seeded[rng.IntN(len(seeded))])
		},
		func(rng *rand.Rand) (loadResult, string) { // a download, byte for byte
			id := seeded[rng.IntN(len(seeded))]
			resp, err := get("/runs/" + id + "/files/results.csv")
			if err != nil {
				return loadResult{"download", 0, err.Error()}, ""
			}
			defer resp.Body.Close()
			h := sha256.New()
			_, err = io.Copy(h, resp.Body)
			r := loadResult{"download", resp.StatusCode, ""}
			if sum := hex.EncodeToString(h.Sum(nil)); err != nil || resp.StatusCode != http.StatusOK || sum != sums[id] {
				r.err = fmt.Sprintf("status %d, sha256 %s, want %s (%v)", resp.StatusCode, sum, sums[id], err)
			}
			return r, ""
		},
		func(rng *rand.Rand) (loadResult, string) { // an event stream to its end
			id := seeded[rng.IntN(len(seeded))]
			mu.Lock()
			if len(accepted) > 0 && rng.IntN(2) == 0 {
				id = accepted[rng.IntN(len(accepted))]
			}
			mu.Unlock()
			resp, err := get("/runs/" + id + "/events")
			if err != nil {
				return loadResult{"events", 0, err.Error()}, ""
			}
			defer resp.Body.Close()
			r := loadResult{"events", resp.StatusCode, ""}
			final := false
			for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
				if line := sc.Text(); strings.HasPrefix(line, "data: ") && (strings.Contains(line, `"status":"done"`) || strings.Contains(line, `"status":"failed"`)) {
					final = true
				}
			}
			if resp.StatusCode != http.StatusOK || !final {
				r.err = fmt.Sprintf("status %d, final status seen %v", resp.StatusCode, final)
			}
			return r, ""
		},
		func(rng *rand.Rand) (loadResult, string) { // a submission through the API
			doc := strings.Replace(goodDoc, `"seed":1`, fmt.Sprintf(`"seed":%d`, rng.IntN(1000)), 1)
			resp, err := client.Post(ts.URL+"/api/runs", "application/json", strings.NewReader(doc))
			return submitted("api submit", resp, err, "/api/runs/")
		},
		func(*rand.Rand) (loadResult, string) { // a submission through the form
			resp, err := client.Post(ts.URL+"/runs", "application/x-www-form-urlencoded", strings.NewReader(formDoc))
			return submitted("form submit", resp, err, "/runs/")
		},
	}
	start := time.Now()
	var wg sync.WaitGroup
	for c := range loadClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 13))
			for time.Since(start) < loadDuration {
				r, id := actions[rng.IntN(len(actions))](rng)
				record(r, id)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d clients for %v: %v", loadClients, time.Since(start).Round(time.Millisecond), counts)
	for _, f := range failures {
		t.Error(f)
	}
	for k, n := range counts {
		if strings.HasSuffix(k, " 0") || strings.Contains(k, " 5") {
			t.Errorf("%d answers %s", n, k)
		}
	}
	if counts["api submit 202"]+counts["form submit 303"] == 0 || counts["api submit 429"]+counts["form submit 429"] == 0 {
		t.Errorf("the load should both fill the queue and get sweeps in: %v", counts)
	}
	// Every accepted sweep finishes.
	for _, id := range accepted {
		if run := waitFinal(t, st, id, 120*time.Second); run.Status != storage.StatusDone {
			t.Errorf("accepted run %s ended %s: %s", id, run.Status, run.Error)
		}
	}
	if after := snapshot(); !reflect.DeepEqual(before, after) {
		t.Errorf("stored runs changed under load:\n%v\n%v", before, after)
	}
}

// loadResult is one request of the load: what it was, its status (0 when
// it failed), and what was wrong with it.
type loadResult struct {
	what   string
	status int
	err    string
}

// page GETs a page and expects 200.
func page(get func(string) (*http.Response, error), what, path string) (loadResult, string) {
	resp, err := get(path)
	if err != nil {
		return loadResult{what, 0, err.Error()}, ""
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	r := loadResult{what, resp.StatusCode, ""}
	if err != nil || resp.StatusCode != http.StatusOK {
		r.err = fmt.Sprintf("%s: status %d (%v)", path, resp.StatusCode, err)
	}
	return r, ""
}

// submitted checks the answer to a submission: accepted (202 or 303 to the
// run) or 429 with Retry-After; it returns the accepted run's id.
func submitted(what string, resp *http.Response, err error, prefix string) (loadResult, string) {
	if err != nil {
		return loadResult{what, 0, err.Error()}, ""
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	r := loadResult{what, resp.StatusCode, ""}
	switch resp.StatusCode {
	case http.StatusAccepted, http.StatusSeeOther:
		loc, _ := url.PathUnescape(resp.Header.Get("Location"))
		id, ok := strings.CutPrefix(loc, prefix)
		if !ok || !storage.ValidID(id) {
			r.err = "Location " + loc
			return r, ""
		}
		return r, id
	case http.StatusTooManyRequests:
		if resp.Header.Get("Retry-After") == "" {
			r.err = "429 without Retry-After"
		}
	default:
		r.err = fmt.Sprintf("status %d", resp.StatusCode)
	}
	return r, ""
}

// waitFinal polls the store until a run reaches a final status.
func waitFinal(t *testing.T, st *storage.Store, id string, limit time.Duration) *storage.Run {
	t.Helper()
	run, err := pollFinal(st, id, limit)
	if err != nil {
		t.Fatal(err)
	}
	return run
}
