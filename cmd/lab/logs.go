package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/workload"
	"github.com/ratelab/ratelab/runner"
)

// uploadPrefix starts an uploaded log's name (runner.Logs): the rest is
// its file's name in the uploads directory.
const uploadPrefix = "upload/"

// dirLogs are lab serve's logs for shadow replays (runner.Logs): the
// --traces directory's files by their names, and uploads, written to
// the --uploads directory and named upload/<random>-<the upload's name>.
type dirLogs struct {
	traces  string // "" without --traces
	uploads string
}

func (d *dirLogs) path(name string) (string, bool) {
	if rest, ok := strings.CutPrefix(name, uploadPrefix); ok {
		return filepath.Join(d.uploads, rest), workload.ValidTraceName(rest)
	}
	if d.traces == "" {
		return "", false
	}
	return filepath.Join(d.traces, name), workload.ValidTraceName(name)
}

func (d *dirLogs) Exists(name string) bool {
	path, ok := d.path(name)
	if !ok {
		return false
	}
	st, err := os.Lstat(path)
	return err == nil && st.Mode().IsRegular()
}

func (d *dirLogs) Open(name string) (*runner.LogFile, error) {
	path, ok := d.path(name)
	if !ok || !d.Exists(name) {
		return nil, fmt.Errorf("no log %q", name)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	c := &countingReader{r: f, h: sha256.New()}
	rc, err := openTraceReader(c, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &runner.LogFile{ReadCloser: rc, Size: st.Size(), Position: c.n.Load, Input: func() experiments.Input {
		return experiments.Input{Name: name, SHA256: hex.EncodeToString(c.h.Sum(nil)), Bytes: c.n.Load()}
	}}, nil
}

// countingReader counts and hashes the bytes read through it (the
// counter read from another goroutine: the progress).
type countingReader struct {
	r io.Reader
	h hash.Hash
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	c.n.Add(int64(n))
	return n, err
}

func (d *dirLogs) Create(base string) (string, io.WriteCloser, func(), error) {
	if err := os.MkdirAll(d.uploads, 0o755); err != nil {
		return "", nil, nil, err
	}
	clean := strings.Map(func(r rune) rune {
		if r == '.' || r < 128 && workload.ValidTraceName(string(r)) {
			return r
		}
		return '_'
	}, filepath.Base(base))
	clean = strings.TrimLeft(clean, ".")
	if len(clean) > 100 {
		clean = clean[len(clean)-100:]
	}
	if clean == "" {
		clean = "log"
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	file := hex.EncodeToString(rnd[:]) + "-" + clean
	path := filepath.Join(d.uploads, file)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", nil, nil, err
	}
	return uploadPrefix + file, f, func() { f.Close(); os.Remove(path) }, nil
}

func (d *dirLogs) Remove(name string) error {
	rest, ok := strings.CutPrefix(name, uploadPrefix)
	if !ok || !workload.ValidTraceName(rest) {
		return nil // not an upload: the user's file stays
	}
	if err := os.Remove(filepath.Join(d.uploads, rest)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove upload %s: %w", rest, err)
	}
	return nil
}

// uploadGrace: an upload this young may be one a run is about to be
// stored for (by another lab on the same database), so removeUnread
// leaves it.
const uploadGrace = time.Hour

// removeUnread removes the uploads older than uploadGrace that no stored
// run reads (read: storage.Store.LogsRead), as lab serve starts: the
// uploads of runs deleted before deleting removed them, and of forms
// whose run was never stored (a crash between the two). It returns how
// many it removed.
func (d *dirLogs) removeUnread(read map[string]bool, now time.Time) (int, error) {
	entries, err := os.ReadDir(d.uploads)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read uploads: %w", err)
	}
	n := 0
	for _, e := range entries {
		if !e.Type().IsRegular() || read[uploadPrefix+e.Name()] {
			continue
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < uploadGrace {
			continue
		}
		if err := d.Remove(uploadPrefix + e.Name()); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
