package main

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/workload"
)

// traceText is a multi-client trace in [0, 5000) ms, sorted, with ties.
func traceText(rows int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	b.WriteString("t_ms,client\n")
	t := 0.0
	for i := range rows {
		if r.IntN(4) > 0 {
			t += r.ExpFloat64() * 4999 / float64(rows) / 1.2
		}
		fmt.Fprintf(&b, "%s,c%d\n", strconv.FormatFloat(min(t, 4999), 'f', 3, 64), (i*7+r.IntN(3))%13)
	}
	return b.String()
}

func gzipped(t *testing.T, text string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(text)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func writeTemp(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const traceSweep = `{"version":1,"workload":{"duration_ms":5000,"parts":[%s]},
	"limiters":[{"type":"token-bucket","rate_rps":100,"burst":[5,20]},{"type":"sliding-window-log","limit":[50,100],"window_ms":1000}]}`

// A trace file replays as the same trace given in the config: the same
// results, series and clients files; CSV and gzip CSV give the same bytes.
func TestRunTraceFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	text := traceText(3000, 1)
	csvPath := writeTemp(t, dir, "day.csv", []byte(text))
	gzDir := filepath.Join(dir, "gz")
	os.Mkdir(gzDir, 0o755)
	gzPath := writeTemp(t, gzDir, "day.csv", gzipped(t, text)) // the magic bytes, not the name, say gzip
	inline, _ := json.Marshal(text)
	cfgInline := writeTemp(t, dir, "inline.json", fmt.Appendf(nil, traceSweep, `{"type":"trace","csv":`+string(inline)+`}`))
	cfgFile := writeTemp(t, dir, "file.json", fmt.Appendf(nil, traceSweep, `{"type":"constant","rate_rps":1}`))

	mustRun(t, "run", "-q", "--config", cfgInline, "--out", filepath.Join(dir, "inline"))
	mustRun(t, "run", "-q", "--config", cfgFile, "--trace", csvPath, "--out", filepath.Join(dir, "csv"))
	mustRun(t, "run", "-q", "--config", cfgFile, "--trace", gzPath, "--out", filepath.Join(dir, "gzip"))
	sameDirs(t, filepath.Join(dir, "gzip"), filepath.Join(dir, "csv"))
	in, file := readDir(t, filepath.Join(dir, "inline")), readDir(t, filepath.Join(dir, "csv"))
	for _, name := range []string{"results.csv", "series.csv", "clients.csv"} {
		if len(in[name]) == 0 || !bytes.Equal(in[name], file[name]) {
			t.Errorf("%s: the trace file's differs from the inline trace's", name)
		}
	}
	var m struct {
		Config struct {
			Workload workload.Spec `json:"workload"`
		} `json:"config"`
	}
	if err := json.Unmarshal(file["manifest.json"], &m); err != nil {
		t.Fatal(err)
	}
	if p := m.Config.Workload.Parts; len(p) != 1 || p[0].File != "day.csv" || p[0].Type != workload.Trace {
		t.Errorf("manifest's parts %+v, want the trace file day.csv", p)
	}

	// the manifest's config runs again with the same file
	var whole map[string]json.RawMessage
	json.Unmarshal(file["manifest.json"], &whole)
	again := writeTemp(t, dir, "again.json", whole["config"])
	mustRun(t, "run", "-q", "--config", again, "--trace", gzPath, "--out", filepath.Join(dir, "again"))
	sameDirs(t, filepath.Join(dir, "again"), filepath.Join(dir, "csv"))

	// The manifest records the trace's text by its sha256 (the same for
	// the CSV and the gzip file); run from the manifest, the same text
	// runs, another is refused and nothing is written.
	var ins struct {
		Inputs []struct {
			Name, SHA256 string
			Bytes        int64
		} `json:"inputs"`
	}
	if err := json.Unmarshal(file["manifest.json"], &ins); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(text))
	if len(ins.Inputs) != 1 || ins.Inputs[0].Name != "day.csv" || ins.Inputs[0].SHA256 != hex.EncodeToString(sum[:]) || ins.Inputs[0].Bytes != int64(len(text)) {
		t.Errorf("manifest inputs %+v, want day.csv with the sha256 and length of its text", ins.Inputs)
	}
	manifest := filepath.Join(dir, "csv", "manifest.json")
	mustRun(t, "run", "-q", "--config", manifest, "--trace", gzPath, "--out", filepath.Join(dir, "from-manifest"))
	sameDirs(t, filepath.Join(dir, "from-manifest"), filepath.Join(dir, "csv"))
	other := writeTemp(t, dir, "other.csv", []byte(strings.Replace(text, "c1\n", "c2\n", 1)))
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "-q", "--config", manifest, "--trace", other, "--out", filepath.Join(dir, "other")}, &stdout, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "trace day.csv") || !strings.Contains(stderr.String(), "not the trace this manifest ran") {
		t.Errorf("another trace under the manifest: exit %d, %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "other")); !os.IsNotExist(err) {
		t.Errorf("the refused run wrote %s (%v)", filepath.Join(dir, "other"), err)
	}
}

// --sort replays a shuffled trace as the trace sorted in memory, ties in
// file order; unsorted without --sort is refused at the first line out of
// order.
func TestRunTraceSort(t *testing.T) {
	dir := t.TempDir()
	lines := strings.Split(strings.TrimSuffix(traceText(2000, 2), "\n"), "\n")[1:]
	r := rand.New(rand.NewPCG(3, 4))
	r.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	shuffled := writeTemp(t, dir, "shuffled.csv", gzipped(t, strings.Join(lines, "\n")+"\n"))
	sorted := slices.Clone(lines)
	slices.SortStableFunc(sorted, func(a, b string) int {
		ta, _ := strconv.ParseFloat(strings.Split(a, ",")[0], 64)
		tb, _ := strconv.ParseFloat(strings.Split(b, ",")[0], 64)
		return cmp.Compare(ta, tb)
	})
	sortedPath := writeTemp(t, filepath.Join(dir), "sorted.csv", []byte(strings.Join(sorted, "\n")+"\n"))
	cfg := writeTemp(t, dir, "sweep.json", fmt.Appendf(nil, traceSweep, `{"type":"constant","rate_rps":1}`))

	mustRun(t, "run", "-q", "--config", cfg, "--trace", sortedPath, "--out", filepath.Join(dir, "want"))
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the sort's temp files
	mustRun(t, "run", "-q", "--config", cfg, "--trace", shuffled, "--sort", "--out", filepath.Join(dir, "got"))
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("--sort left %d temp entries", len(left))
	}
	want, got := readDir(t, filepath.Join(dir, "want")), readDir(t, filepath.Join(dir, "got"))
	for _, name := range []string{"results.csv", "series.csv", "clients.csv"} {
		if !bytes.Equal(want[name], got[name]) {
			t.Errorf("%s: --sort differs from the sorted trace", name)
		}
	}

	var stdout, stderr bytes.Buffer
	out := filepath.Join(dir, "refused")
	code := run(context.Background(), []string{"run", "-q", "--config", cfg, "--trace", shuffled, "--out", out}, &stdout, &stderr)
	first := 0
	for i := 1; i < len(lines); i++ {
		a, _ := strconv.ParseFloat(strings.Split(lines[i-1], ",")[0], 64)
		b, _ := strconv.ParseFloat(strings.Split(lines[i], ",")[0], 64)
		if b < a {
			first = i + 1 // the file's line number
			break
		}
	}
	want1 := fmt.Sprintf(`shuffled.csv: line %d: t_ms`, first)
	if code != 2 || !strings.Contains(stderr.String(), want1) || !strings.Contains(stderr.String(), "--sort") {
		t.Errorf("unsorted trace: exit %d, %q; want %q", code, stderr.String(), want1)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("an unsorted trace created %s", out)
	}
}

// The external sort: tiny chunks and fan-in force several merge passes; the
// result is the stable sort by time, and its temp files are gone after.
func TestSortTraceExternal(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	var b strings.Builder
	type row struct {
		t    float64
		rest string
	}
	var rows []row
	b.WriteString("# comment\nt_ms,client,service_ms\n")
	for i := range 5000 {
		tm := float64(r.IntN(800)) / 4
		rest := "c" + strconv.Itoa(i)
		line := strconv.FormatFloat(tm, 'g', -1, 64) + "," + rest
		if i%3 == 0 {
			rest += ",2.5"
			line += ", 2.5"
		}
		b.WriteString(line + "\n")
		rows = append(rows, row{tm, rest})
	}
	slices.SortStableFunc(rows, func(a, b row) int { return cmp.Compare(a.t, b.t) })
	var want strings.Builder
	for _, r := range rows {
		want.WriteString(strconv.FormatFloat(r.t, 'g', -1, 64) + "," + r.rest + "\n")
	}
	tmp := t.TempDir()
	for _, c := range []struct{ chunk, fanIn int }{{1 << 30, 128}, {2000, 3}, {500, 2}} {
		rc, err := sortTrace(context.Background(), strings.NewReader(b.String()), tmp, c.chunk, c.fanIn)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		if err := rc.Close(); err != nil {
			t.Fatal(err)
		}
		if string(got) != want.String() {
			t.Errorf("chunk %d, fan-in %d: not the stable sort", c.chunk, c.fanIn)
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("chunk %d: %d temp entries left", c.chunk, len(left))
		}
	}
	if _, err := sortTrace(context.Background(), strings.NewReader("1,a\n2,b\nx,c\n"), tmp, 10, 2); err == nil || err.Error() != `line 3: t_ms "x" is not a number` {
		t.Errorf("bad line while sorting: %v", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("a failed sort left %d temp entries", len(left))
	}
}

// Bad input: an error naming the file given and the line, exit status 2,
// nothing in the output directory.
func TestRunTraceBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := traceText(500, 7)
	whole := gzipped(t, good)
	cases := []struct {
		name, file string
		data       []byte
		want       string
	}{
		{"non-numeric", "a.csv", []byte("t_ms,client\n1,a\nabc,b\n"), `a.csv: line 3: t_ms "abc" is not a number`},
		{"negative", "b.csv", []byte("1,a\n-5,b\n"), "b.csv: line 2: t_ms -5 is negative"},
		{"long line", "c.csv", []byte("1,a\n2," + strings.Repeat("y", 1<<20) + "\n"), "c.csv: line 2: longer than 1048576 bytes (1 MB)"},
		{"truncated gzip", "d.csv.gz", whole[:len(whole)*2/3], "d.csv.gz: line "},
		{"not gzip after all", "e.csv.gz", append([]byte{0x1f, 0x8b}, "garbage"...), "e.csv.gz: gzip:"},
		{"missing", "", nil, "trace " + filepath.Join(dir, "missing.csv") + ": "},
	}
	cfg := writeTemp(t, dir, "sweep.json", fmt.Appendf(nil, traceSweep, `{"type":"constant","rate_rps":1}`))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "missing.csv")
			if c.file != "" {
				path = writeTemp(t, dir, c.file, c.data)
			}
			for _, sort := range []bool{false, true} {
				out := filepath.Join(dir, "out-"+strings.ReplaceAll(c.name, " ", "-"))
				args := []string{"run", "-q", "--config", cfg, "--trace", path, "--out", out}
				if sort {
					args = append(args, "--sort")
				}
				var stdout, stderr bytes.Buffer
				code := run(context.Background(), args, &stdout, &stderr)
				if code != 2 || !strings.Contains(stderr.String(), c.want) {
					t.Errorf("sort %v: exit %d, %q; want 2 and %q", sort, code, stderr.String(), c.want)
				}
				if c.name == "truncated gzip" && !strings.Contains(stderr.String(), "the gzip stream is truncated") {
					t.Errorf("sort %v: %q does not say the gzip stream is truncated", sort, stderr.String())
				}
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Errorf("sort %v: bad input created %s", sort, out)
				}
			}
		})
	}
}

// The traces directory serves valid names of regular files inside it, and
// nothing else.
func TestDirTraceOpener(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTemp(t, dir, "day-1.csv.gz", gzipped(t, "0,a\n"))
	writeTemp(t, dir, "plain.csv", []byte("0,a\n"))
	writeTemp(t, dir, ".hidden.csv", []byte("0,a\n"))
	writeTemp(t, dir, "with space.csv", []byte("0,a\n"))
	os.Mkdir(filepath.Join(dir, "sub.csv"), 0o755)
	outside := writeTemp(t, t.TempDir(), "secret.csv", []byte("0,secret\n"))
	if err := os.Symlink(outside, filepath.Join(dir, "link.csv")); err != nil {
		t.Fatal(err)
	}
	names, err := listTraces(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"day-1.csv.gz", "plain.csv"}; !slices.Equal(names, want) {
		t.Errorf("listTraces = %v, want %v", names, want)
	}
	open := dirTraceOpener(dir)
	for _, name := range names {
		rc, err := open(name)
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		if string(data) != "0,a\n" {
			t.Errorf("%s reads %q", name, data)
		}
	}
	for _, name := range []string{"../" + filepath.Base(outside), "/etc/passwd", "..", ".hidden.csv", "sub.csv", "link.csv", "with space.csv", "nope.csv", "a/../plain.csv", ""} {
		if rc, err := open(name); err == nil {
			rc.Close()
			t.Errorf("opened %q", name)
		}
	}
}

// TestSortCancelled: a sort checks for cancellation while it reads and
// merges (Ctrl-C and SIGTERM cancel lab run's context) and removes its
// files; a lab at start removes the sort folders of labs no longer
// running, and only those.
func TestSortCancelled(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	var b strings.Builder
	for i := range 3 * sortCheckRows {
		fmt.Fprintf(&b, "%d,c%d\n", (i*7919)%100000, i%13)
	}
	for _, chunk := range []int{1 << 30, 64 << 10} { // while reading; while merging
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := sortTrace(ctx, strings.NewReader(b.String()), tmp, chunk, 2); !errors.Is(err, context.Canceled) {
			t.Errorf("chunk %d: a cancelled sort: %v, want context.Canceled", chunk, err)
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("chunk %d: a cancelled sort left %d entries", chunk, len(left))
		}
	}

	// Stale folders: a dead pid's go, a live one's and other names stay.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true command:", err)
	}
	mk := func(name string) string {
		p := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Join(p, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(p, "x", "chunk-0.csv"), []byte("1,a\n"), 0o644)
		return p
	}
	stale := mk(fmt.Sprintf("%s%d-sort-123", tempPrefix, dead.Process.Pid))
	staleOlder := mk(fmt.Sprintf("lab-sort-%d-123", dead.Process.Pid)) // an older lab's name for it
	mine := mk(fmt.Sprintf("%s%d-sort-456", tempPrefix, os.Getpid()))
	live := mk(fmt.Sprintf("%s%d-spill-789", tempPrefix, os.Getppid()))
	recentOld := mk("lab-sort-99887766")
	other := mk("lab-sorted-notes")
	removed := removeStaleTemp(tmp)
	if want := []string{filepath.Base(staleOlder), filepath.Base(stale)}; !slices.Equal(removed, want) {
		t.Errorf("removed %v, want only %v", removed, want)
	}
	for _, p := range []string{mine, live, recentOld, other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed", filepath.Base(p))
		}
	}
}
