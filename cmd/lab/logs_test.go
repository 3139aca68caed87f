package main

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lab serve's logs: uploads written and read back (gzip inflated, the
// bytes on disk hashed and counted), trace files by name, and no name
// reaching outside the two directories.
func TestDirLogs(t *testing.T) {
	dir := t.TempDir()
	traces := filepath.Join(dir, "traces")
	if err := os.Mkdir(traces, 0o755); err != nil {
		t.Fatal(err)
	}
	d := &dirLogs{traces: traces, uploads: filepath.Join(dir, "up")}
	name, w, abort, err := d.Create("../My Access.log.gz")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(name, "upload/") || !strings.HasSuffix(name, "-My_Access.log.gz") {
		t.Errorf("upload name %q", name)
	}
	zw := gzip.NewWriter(w)
	zw.Write([]byte("line 1\nline 2\n"))
	zw.Close()
	w.Close()
	raw, _ := os.ReadFile(filepath.Join(d.uploads, strings.TrimPrefix(name, "upload/")))
	if !d.Exists(name) {
		t.Fatal("the upload does not exist")
	}
	lf, err := d.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(lf)
	lf.Close()
	sum := sha256.Sum256(raw)
	if in := lf.Input(); err != nil || string(text) != "line 1\nline 2\n" || lf.Size != int64(len(raw)) || lf.Position() != int64(len(raw)) ||
		in.SHA256 != hex.EncodeToString(sum[:]) || in.Bytes != int64(len(raw)) || in.Name != name {
		t.Errorf("read %q, %v; size %d position %d; input %+v", text, err, lf.Size, lf.Position(), lf.Input())
	}
	abort()
	if d.Exists(name) {
		t.Error("abort left the upload")
	}
	if err := os.WriteFile(filepath.Join(traces, "day.log"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !d.Exists("day.log") {
		t.Error("a trace file by name")
	}
	for _, bad := range []string{"", "../traces/day.log", "upload/../traces/day.log", "upload/", "/etc/passwd", ".hidden"} {
		if d.Exists(bad) {
			t.Errorf("%q exists", bad)
		}
		if _, err := d.Open(bad); err == nil {
			t.Errorf("%q opened", bad)
		}
	}
}
