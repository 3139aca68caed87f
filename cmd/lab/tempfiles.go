package main

// The lab's temp files: a run's trace spill (the rows of each trace file,
// parsed once: workload.SpilledTraces) and --sort's chunks live in $TMPDIR
// under one prefix, tempPrefix, followed by the process id, so a lab that
// starts removes what a lab that was killed left behind (removeStaleTemp):
// an entry whose process is gone.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ratelab/ratelab/experiments/workload"
)

// tempPrefix begins the name of every temp file or directory of the lab:
// lab-tmp-<pid>-<what>-<random>.
const tempPrefix = "lab-tmp-"

// tempPattern is the os.MkdirTemp pattern of this process's temp entry
// holding what.
func tempPattern(what string) string {
	return tempPrefix + strconv.Itoa(os.Getpid()) + "-" + what + "-"
}

// removeStaleTemp removes, from dir, the lab's temp entries whose process
// is no longer running: a lab killed with SIGKILL, or a crash, leaves its
// spill or its sort's chunks behind, hundreds of MB of a day's trace. The
// folders of older labs' sorts (lab-sort-<pid>-*, lab-sort-<digits>) go
// the same way, the latter when a day old. It returns the names it
// removed; errors are ignored (another lab may be removing them too).
func removeStaleTemp(dir string) (removed []string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		pid, ok := tempPID(e.Name())
		if !ok || pid == os.Getpid() || processRunning(pid) {
			continue
		}
		if pid == 0 { // lab-sort-<digits>: no pid in the name
			if info, err := e.Info(); err != nil || time.Since(info.ModTime()) < 24*time.Hour {
				continue
			}
		}
		if os.RemoveAll(filepath.Join(dir, e.Name())) == nil {
			removed = append(removed, e.Name())
		}
	}
	return removed
}

// tempPID is the process id a temp entry's name gives: 0, true for an
// older lab's sort folder without one (lab-sort-<digits>).
func tempPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, tempPrefix)
	if !ok {
		if rest, ok = strings.CutPrefix(name, "lab-sort-"); !ok {
			return 0, false
		}
		if _, err := strconv.Atoi(rest); err == nil {
			return 0, true
		}
	}
	digits, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	return pid, err == nil && pid > 0
}

// processRunning says whether process pid exists (signal 0 reaches it or
// is refused for permission).
func processRunning(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

// fileSpill is a run's trace spill (workload.Spill): a temp directory with
// one file per trace, removed by remove.
type fileSpill struct {
	parent string
	mu     sync.Mutex
	dir    string
	files  map[string]string
}

var _ workload.Spill = (*fileSpill)(nil)

func newFileSpill(parent string) *fileSpill {
	return &fileSpill{parent: parent, files: map[string]string{}}
}

func (s *fileSpill) Create(name string) (io.WriteCloser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir == "" {
		dir, err := os.MkdirTemp(s.parent, tempPattern("spill"))
		if err != nil {
			return nil, err
		}
		s.dir = dir
	}
	path := filepath.Join(s.dir, fmt.Sprintf("trace-%d", len(s.files)))
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	s.files[name] = path
	return f, nil
}

func (s *fileSpill) Open(name string) (io.ReadCloser, error) {
	s.mu.Lock()
	path, ok := s.files[name]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("no spill of trace %q", name)
	}
	return os.Open(path)
}

// remove deletes the spill's files.
func (s *fileSpill) remove() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir != "" {
		os.RemoveAll(s.dir)
		s.dir, s.files = "", map[string]string{}
	}
}

// readAhead reads r in its own goroutine, up to readAheadBlocks blocks
// ahead of the reader: decompression on one core, parsing on the other.
type readAhead struct {
	full   chan []byte
	free   chan []byte
	errc   chan error
	stop   chan struct{}
	once   sync.Once
	block  []byte // the block being read, whole
	cur    []byte // what is left of it
	err    error
	source io.Closer
}

const (
	readAheadBlock  = 1 << 20
	readAheadBlocks = 4
)

func newReadAhead(r io.Reader, source io.Closer) *readAhead {
	a := &readAhead{full: make(chan []byte, readAheadBlocks), free: make(chan []byte, readAheadBlocks),
		errc: make(chan error, 1), stop: make(chan struct{}), source: source}
	for range readAheadBlocks {
		a.free <- make([]byte, readAheadBlock)
	}
	go func() {
		defer close(a.full)
		for {
			var b []byte
			select {
			case b = <-a.free:
			case <-a.stop:
				return
			}
			n, err := io.ReadFull(r, b)
			if n > 0 {
				select {
				case a.full <- b[:n]:
				case <-a.stop:
					return
				}
			}
			if err == io.ErrUnexpectedEOF {
				err = io.EOF
			}
			if err != nil {
				a.errc <- err
				return
			}
		}
	}()
	return a
}

func (a *readAhead) Read(p []byte) (int, error) {
	if len(a.cur) == 0 {
		if a.err != nil {
			return 0, a.err
		}
		b, ok := <-a.full
		if !ok {
			a.err = <-a.errc
			return 0, a.err
		}
		a.block, a.cur = b, b
	}
	n := copy(p, a.cur)
	a.cur = a.cur[n:]
	if len(a.cur) == 0 {
		a.free <- a.block[:cap(a.block)]
		a.block = nil
	}
	return n, nil
}

// Close stops the goroutine and closes the source.
func (a *readAhead) Close() error {
	a.once.Do(func() { close(a.stop) })
	return a.source.Close()
}
