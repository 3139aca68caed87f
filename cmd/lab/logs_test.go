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
	"time"
)

// lab serve's logs: uploads written and read back (gzip inflated, the
// bytes on disk hashed and counted), trace files by name, and no name
// reaching outside the two directories.
func TestDirLogs(t *testing.T) {
	t.Parallel()
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

// Remove takes uploads only; removeUnread, as lab serve starts, takes the
// uploads no stored run reads once they are an hour old.
func TestDirLogsRemoveUnread(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	traces := filepath.Join(dir, "traces")
	if err := os.Mkdir(traces, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(traces, "day.log"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := &dirLogs{traces: traces, uploads: filepath.Join(dir, "up")}
	if n, err := d.removeUnread(nil, time.Now()); n != 0 || err != nil {
		t.Errorf("no uploads directory yet: %d, %v", n, err)
	}
	upload := func() string {
		name, w, _, err := d.Create("a.log")
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		return name
	}
	read, unread, young := upload(), upload(), upload()
	old := time.Now().Add(-2 * time.Hour)
	for _, name := range []string{read, unread} {
		if err := os.Chtimes(filepath.Join(d.uploads, strings.TrimPrefix(name, uploadPrefix)), old, old); err != nil {
			t.Fatal(err)
		}
	}
	n, err := d.removeUnread(map[string]bool{read: true, "day.log": true}, time.Now())
	if n != 1 || err != nil || d.Exists(unread) || !d.Exists(read) || !d.Exists(young) {
		t.Errorf("removed %d (%v): read %v, unread %v, young %v", n, err, d.Exists(read), d.Exists(unread), d.Exists(young))
	}
	for _, name := range []string{"day.log", "upload/../traces/day.log", "upload/", "../traces/day.log"} {
		if err := d.Remove(name); err != nil {
			t.Errorf("Remove(%q): %v", name, err)
		}
	}
	if !d.Exists("day.log") {
		t.Error("Remove took a --traces file")
	}
	if err := d.Remove(read); err != nil || d.Exists(read) {
		t.Errorf("Remove(%q): %v, still there: %v", read, err, d.Exists(read))
	}
	if err := d.Remove(read); err != nil {
		t.Errorf("Remove of a log already gone: %v", err)
	}
}
