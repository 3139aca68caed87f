package accesslog_test

import (
	"bytes"
	"fmt"
	"github.com/ratelab/ratelab/internal/realtools"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/experiments/accesslog"
)

// VegetaModule is the vegeta version whose encoders write the test's
// results.
const VegetaModule = "github.com/tsenart/vegeta/v12@v12.13.0"

// vegetaResult is one result the harness encodes.
type vegetaResult struct {
	ns, zoneS int64
	code      int32
	latencyNS int64
	method    string
	url, err  string
	attack    string
	seq       int
	wantURI   string
}

// TestVegetaResults writes results with vegeta's own encoders
// (VegetaModule's lib.NewCSVEncoder and NewJSONEncoder, built in a
// temporary module from the Go module cache or proxy: the lab's go.mod
// stays clean, testdata/vegeta/main.go.txt) and reads both files back:
// each result's start to the ns (vegeta's timestamp is when the request
// was sent), status, latency as the service time, method and URL as keys;
// an error with commas and quotes (CSV's doubled quotes, JSON's escapes),
// a zone other than UTC, code 0 (a request that got no answer).
func TestVegetaResults(t *testing.T) {
	t.Parallel()
	bin := buildVegetaHarness(t)
	base := time.Date(2026, 12, 1, 18, 14, 20, 0, time.UTC).UnixNano()
	results := []vegetaResult{
		{ns: base + 123_456_789, code: 200, latencyNS: 4_500_000, method: "GET", url: "http://127.0.0.1:8080/api/items?id=1", attack: "smoke", seq: 0, wantURI: "/api/items"},
		{ns: base + 223_456_000, zoneS: 2 * 3600, code: 429, latencyNS: 812_345, method: "POST", url: "https://api.example.com/login", attack: "smoke", seq: 1, wantURI: "/login"},
		{ns: base + 323_000_001, code: 0, latencyNS: 30_000_000_000, method: "GET", url: "http://127.0.0.1:8080/", err: `Get "http://127.0.0.1:8080/": dial tcp 127.0.0.1:8080: connect: connection refused, "again"`, attack: "a,b", seq: 2, wantURI: "/"},
		{ns: base + 1_000_000_000, zoneS: -5 * 3600, code: 503, latencyNS: 1, method: "DELETE", url: "http://h/x/y", attack: "", seq: 3, wantURI: "/x/y"},
	}
	var in strings.Builder
	for _, r := range results {
		fmt.Fprintf(&in, "%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%d\n", r.ns, r.zoneS, r.code, r.latencyNS, r.method, r.url, r.err, r.attack, r.seq)
	}
	dir := t.TempDir()
	csvPath, jsonPath := filepath.Join(dir, "results.csv"), filepath.Join(dir, "results.json")
	cmd := exec.Command(bin, csvPath, jsonPath)
	cmd.Stdin = strings.NewReader(in.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the harness: %v\n%s", err, out)
	}
	for _, enc := range []string{"csv", "json"} {
		path := csvPath
		if enc == "json" {
			path = jsonPath
		}
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		reqs, st, rd := serverRead(t, "vegeta", enc, string(text), "$request_method $uri", "$vegeta_attack", "$vegeta_error")
		if len(reqs) != len(results) || st.Bad != 0 {
			t.Fatalf("%s: %d requests, %+v\n%s", enc, len(reqs), st, text)
		}
		for i, r := range reqs {
			w := results[i]
			wantStart := float64(w.ns/1e6) + float64(w.ns%1e6)/1e6
			if r.StartMS != wantStart || r.Status != w.code || r.ServiceMS != float64(w.latencyNS)/1e6 {
				t.Errorf("%s result %d: start %.6f status %d service %v; want %.6f %d %v", enc, i, r.StartMS, r.Status, r.ServiceMS, wantStart, w.code, float64(w.latencyNS)/1e6)
			}
			for k, want := range []string{w.method + " " + w.wantURI, w.attack, w.err} {
				if got := rd.Key(k).Name(r.Keys[k]); got != want {
					t.Errorf("%s result %d: key %d %q, want %q", enc, i, k, got, want)
				}
			}
		}
		if i := bytes.IndexByte(text, '\n'); i > 0 {
			t.Logf("vegeta's %s: %s", enc, text[:i])
		}
	}
}

// vegetaLines are lines as vegeta v12.13.0's encoders wrote them (the
// harness above): the table test that runs without the module.
func TestVegetaLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ enc, line string }{
		{"csv", `1796148860123456789,200,4500000,0,3,,b2sK,smoke,0,GET,http://127.0.0.1:8080/api/items?id=1,Q29udGVudC1UeXBlOiB0ZXh0L3BsYWluDQo=`},
		{"csv", `1796148860123456789,200,4500000,0,3,"Get ""x"", y",b2sK`},
		{"json", `{"attack":"smoke","seq":0,"code":200,"timestamp":"2026-12-01T20:14:20.123456789+02:00","latency":4500000,"bytes_out":0,"bytes_in":3,"error":"","body":"b2sK","method":"GET","url":"http://127.0.0.1:8080/api/items?id=1","headers":{"Content-Type":["text/plain"],"X-Note":["a \"quoted\", value"]}}`},
	} {
		reqs, st, _ := serverRead(t, "vegeta", tc.enc, tc.line+"\n", "$vegeta_error")
		if len(reqs) != 1 || st.Bad != 0 {
			t.Fatalf("%s %s: %+v %+v", tc.enc, tc.line, reqs, st)
		}
		if r := reqs[0]; r.StartMS != 1796148860123.456789 || r.Status != 200 || r.ServiceMS != 4.5 {
			t.Errorf("%s: %+v", tc.line, r)
		}
	}
	if _, err := accesslog.ServerFormat("vegeta", "gob"); err == nil {
		t.Error("vegeta gob read")
	}
	_, st, _ := serverRead(t, "vegeta", "csv", "1,200\n\"1\",200,3,\"x\"y\n1,2,3,4,5,6,7,8,9,10,11,12,13\n", "")
	if st.Bad != 3 || st.Reasons[accesslog.ReasonColumns] != 3 {
		t.Errorf("bad lines %+v", st)
	}
}

// buildVegetaHarness builds testdata/vegeta/main.go.txt against
// VegetaModule in a temporary module.
func buildVegetaHarness(t *testing.T) string {
	t.Helper()
	main, err := os.ReadFile(filepath.Join("testdata", "vegeta", "main.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return realtools.BuildHarness(t, realtools.Download(t, VegetaModule), "", main)
}
