package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe to read while the server writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServe runs lab serve on a free port and returns its URL and a stop
// function that shuts it down as SIGINT would and returns its error.
func startServe(t *testing.T, db string, flags ...string) (string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	args := append([]string{"--addr", "127.0.0.1:0", "--db", db}, flags...)
	go func() { done <- cmdServe(ctx, args, &stdout, &stderr) }()
	re := regexp.MustCompile(`running at (http://\S+)`)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(stdout.String()); m != nil {
			return m[1], func() error {
				cancel()
				select {
				case err := <-done:
					return err
				case <-time.After(30 * time.Second):
					return context.DeadlineExceeded
				}
			}
		}
		select {
		case err := <-done:
			t.Fatalf("lab serve ended: %v\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("lab serve did not start:\n%s", stderr.String())
		}
	}
}

// TestServeRestart: a sweep posted to the lab is still at its permalink,
// with the same files, after the server stops and starts again.
func TestServeRestart(t *testing.T) {
	t.Parallel()
	if defaultCommand != "serve" {
		t.Fatalf("lab with no command runs %q, want serve", defaultCommand)
	}
	db := filepath.Join(t.TempDir(), "lab.db")
	url, stop := startServe(t, db)
	preset, err := os.ReadFile("../../experiments/presets/token-vs-leaky.json")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url+"/api/runs", "application/json", bytes.NewReader(preset))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusAccepted || loc == "" {
		t.Fatalf("POST /api/runs: %d, Location %q", resp.StatusCode, loc)
	}
	type apiRun struct {
		Status string
		Files  []struct{ Name, SHA256 string }
	}
	get := func(url string) apiRun {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r apiRun
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	var before apiRun
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if before = get(url + loc); before.Status == "done" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run still %s", before.Status)
		}
	}
	if err := stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}

	url, stop = startServe(t, db)
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	after := get(url + loc)
	if after.Status != "done" || len(after.Files) == 0 || len(after.Files) != len(before.Files) {
		t.Fatalf("after restart: %+v", after)
	}
	for i := range after.Files {
		if after.Files[i] != before.Files[i] {
			t.Errorf("file %d changed across the restart: %+v, was %+v", i, after.Files[i], before.Files[i])
		}
	}
	page, err := http.Get(url + strings.Replace(loc, "/api", "", 1))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`id="chart-goodput"`)) {
		t.Errorf("permalink after restart: %d", page.StatusCode)
	}
}

// TestServeHosts: lab serve answers the loopback names on its port and the
// names of --allowed-hosts; another Host (a rebinding name that resolves
// to 127.0.0.1) gets 421. A malformed --allowed-hosts is a usage error.
func TestServeHosts(t *testing.T) {
	t.Parallel()
	url, stop := startServe(t, filepath.Join(t.TempDir(), "lab.db"), "--allowed-hosts", "lab.example.org")
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	port := url[strings.LastIndex(url, ":")+1:]
	for host, want := range map[string]int{
		"localhost:" + port: http.StatusOK, "127.0.0.1:" + port: http.StatusOK, "lab.example.org": http.StatusOK,
		"evil.example:" + port: http.StatusMisdirectedRequest, "localhost:1": http.StatusMisdirectedRequest,
	} {
		req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+port+"/api/types", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
	var stderr syncBuffer
	err := cmdServe(context.Background(), []string{"--addr", "127.0.0.1:0", "--allowed-hosts", "evil example"}, io.Discard, &stderr)
	if _, ok := err.(usageError); !ok || !strings.Contains(err.Error(), "--allowed-hosts") {
		t.Errorf("bad --allowed-hosts: %v", err)
	}
}
