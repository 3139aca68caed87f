package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadCommandLines is the command line's bad-input table: every input
// the user can fix exits 2 with a message naming the flag or file at
// fault (and not what it must not name); 1 is for internal failures only.
func TestBadCommandLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small := file("small.json", `{"version":1,"seed":1,"workload":{"duration_ms":100,"parts":[{"type":"constant","client":"c","rate_rps":50}]},"limiters":[{"type":"token-bucket","rate_rps":10,"burst":[1,5]}]}`)
	sorted := file("sorted.csv", "t_ms,client\n0,a\n5,b\n10,a\n")
	unsorted := file("unsorted.csv", "t_ms,client\n0,a\n10,b\n5,a\n")
	badTrace := file("bad.csv", "t_ms,client\n0,a\nxx,b\n")
	notDB := file("notdb", "hello, not a database\n")
	first := filepath.Join(dir, "first")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"run", "-q", "--config", small, "--trace", sorted, "--out", first}, &stdout, &stderr); code != 0 {
		t.Fatalf("the first run: exit %d: %s", code, stderr.String())
	}
	manifest := filepath.Join(first, "manifest.json")
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var results string // results.csv's recorded sha256, edited below
	for _, f := range []string{"results.csv"} {
		i := bytes.Index(data, []byte(`"name": "`+f+`"`))
		j := bytes.Index(data[i:], []byte(`"sha256": "`))
		results = string(data[i+j+len(`"sha256": "`) : i+j+len(`"sha256": "`)+64])
	}
	editedSHA := file("edited-sha.json", strings.Replace(string(data), results, strings.Repeat("0", 64), 1))

	cases := []struct {
		name string
		args []string
		msg  string
		not  string // the message must not hold it
	}{
		{"run --workers -1", []string{"run", "--preset", "token-vs-leaky", "--out", dir, "--workers", "-1"}, "--workers -1: give 0 (every core) or a number of points from 1 to 4096", ""},
		{"run --workers 1e9", []string{"run", "--preset", "token-vs-leaky", "--out", dir, "--workers", "1000000000"}, "--workers 1000000000", ""},
		{"serve --engine-workers -5", []string{"serve", "--engine-workers", "-5", "--db", filepath.Join(dir, "x.db")}, "--engine-workers -5", ""},
		{"serve --page-cache-mb huge", []string{"serve", "--page-cache-mb", "999999999999", "--db", filepath.Join(dir, "x.db")}, "--page-cache-mb 999999999999: give 0 (no cache) to 128 MiB, a quarter of --max-memory-mb", ""},
		{"manifest with an edited output sha256", []string{"run", "-q", "--config", editedSHA, "--trace", sorted, "--out", filepath.Join(dir, "o1")}, "results.csv: sha256 " + results + ", the manifest recorded 0000", ""},
		{"re-run with another unsorted trace", []string{"run", "-q", "--config", manifest, "--trace", unsorted, "--out", filepath.Join(dir, "o2")}, "--trace " + unsorted + ": line 4: t_ms 5 is before", `"sorted.csv"`},
		{"backup of a file that is no database", []string{"backup", "--db", notDB, filepath.Join(dir, "b.db")}, "--db " + notDB + ": not an SQLite database", ".partial"},
		{"serve beyond loopback without a token", []string{"serve", "--addr", "0.0.0.0:0", "--db", filepath.Join(dir, "x.db")}, "is not a loopback address: others can reach the lab there, so give it an access token", ""},
		{"serve with a short token", []string{"serve", "--addr", "0.0.0.0:0", "--token", "short", "--db", filepath.Join(dir, "x.db")}, "the access token has 5 characters: give at least 16", ""},
		{"serve with --token and --token-file", []string{"serve", "--token", "0123456789abcdef0", "--token-file", small, "--db", filepath.Join(dir, "x.db")}, "give --token or --token-file, not both", ""},
		{"serve with an empty token file", []string{"serve", "--token-file", file("empty-token", "\n"), "--db", filepath.Join(dir, "x.db")}, "its first line is empty", ""},
		{"serve --submits-per-minute -5", []string{"serve", "--submits-per-minute", "-5", "--db", filepath.Join(dir, "x.db")}, "--submits-per-minute -5", ""},
		{"trace content", []string{"run", "-q", "--config", small, "--trace", badTrace, "--out", filepath.Join(dir, "o3")}, `line 3: t_ms "xx" is not a number`, ""},
		{"unsorted trace", []string{"run", "-q", "--config", small, "--trace", unsorted, "--out", filepath.Join(dir, "o4")}, "the trace must be sorted by time (lab run --sort sorts it)", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), c.args, &stdout, &stderr)
			if code != 2 || !strings.Contains(stderr.String(), c.msg) || c.not != "" && strings.Contains(stderr.String(), c.not) {
				t.Errorf("exit %d, want 2 with %q (without %q): %s", code, c.msg, c.not, stderr.String())
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "b.db")); err == nil {
		t.Error("a backup of no database was written")
	}
}
