package workload

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/ratelab/ratelab/experiments/field"
)

// Trace replays "t_ms,client" CSV text as is (see ParseTrace): each line is
// one request at its time from its client (DefaultClient when the line
// names none), all clients in the part's group; sorted by time, ties in
// file order. A request at or after the window's end is an error.
//
// The trace is the config's csv text, or a file named by file: the engine
// opens nothing, the run's TraceOpener (GenerateWith) hands it the file's
// bytes (cmd/lab: lab run --trace FILE, lab serve --traces DIR), which it
// replays in one pass (TraceReplay): a file must be sorted by time.
const Trace PartType = "trace"

var (
	csvField = Field{Name: "csv", Label: "Trace", Input: InputCSV, Line: "t_ms,client[,service_ms]",
		Doc: "one request a line: its time in ms, an optional client name and service time in ms; an optional header, # comments"}
	fileField = Field{Name: "file", Label: "Trace file", Input: InputFile,
		Doc: "instead of csv: a trace file by name (lab run --trace FILE, lab serve --traces DIR), CSV or gzip CSV as csv, sorted by time"}
)

// TraceOpener opens a trace file by its name (a part's file): its bytes,
// decompressed and sorted by time. cmd/lab gives one to the run.
type TraceOpener func(name string) (io.ReadCloser, error)

// ValidTraceName says whether name can name a trace file: 1 to 200 letters,
// digits, '.', '_' and '-', not starting with '.': no path, no parent.
func ValidTraceName(name string) bool {
	if name == "" || len(name) > 200 || name[0] == '.' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func traceKind() *Kind {
	return &Kind{
		Type:     Trace,
		Label:    "trace replay (CSV)",
		Model:    "the requests of a \"t_ms,client\" CSV trace, replayed as is",
		Fields:   []Field{groupField.with("group of every client of the trace", ""), weightField, csvField, fileField},
		Validate: validateTrace,
		Expected: func(p *Part, _ float64) float64 {
			if p.File != "" {
				return 0 // unknown until read; the reader counts (MaxTraceEvents)
			}
			return float64(countLines(p.CSV))
		},
		Generate: generateTrace,
		Runs:     traceRuns,
		Describe: func(*Part) string { return "trace replay" },
		DeclareClients: func(g *Generator, p *Part) {
			if p.File != "" {
				return // named as the file is read
			}
			_ = eachTraceEvent(p.CSV, func(e TraceEvent) error { // an error is reported by Validate
				g.Client(traceClient(e), p.Group, p.Weight)
				return nil
			})
		},
		CountClients: func(p *Part) int {
			if p.File != "" {
				return 0 // bounded as the file is read (MaxClients)
			}
			names := map[string]bool{}
			if eachTraceEvent(p.CSV, func(e TraceEvent) error {
				names[e.Client] = true
				return nil
			}) != nil {
				return 0
			}
			return len(names)
		},
	}
}

func validateTrace(p *Part, path string, durationMS float64) field.List {
	var errs field.List
	switch {
	case p.File != "" && p.CSV != "":
		errs.Add(field.Join(path, "file"), "give the trace as csv or as file, not both")
	case p.File != "":
		if !ValidTraceName(p.File) {
			errs.Add(field.Join(path, "file"), "%q is not a trace name: 1 to 200 letters, digits, '.', '_' or '-', not starting with '.'", clip(p.File))
		}
		return errs
	}
	if p.CSV == "" {
		errs.Add(field.Join(path, "csv"), "is empty: give the trace as \"t_ms,client\" lines (or a trace file as file)")
	} else {
		// Read as a stream, never held as events: a 10 MB trace is a
		// million lines.
		var late *TraceEvent
		err := eachTraceEvent(p.CSV, func(e TraceEvent) error {
			if late == nil && finite(durationMS) && durationMS > 0 && e.T >= durationMS {
				late = &e
			}
			return nil
		})
		switch {
		case err != nil:
			errs.Add(field.Join(path, "csv"), "%v", err)
		case late != nil:
			errs.Add(field.Join(path, "csv"), "line %d: t_ms %g is at or after the end of the run (duration_ms %g)", late.Line, late.T, durationMS)
		}
	}
	return errs
}

// generateTrace emits the trace in file order as one run, then sorts it by
// time (ties keep file order).
func generateTrace(g *Generator, p *Part) error {
	if p.File != "" {
		return g.traceFile(p)
	}
	// The text is checked whole first (Validate's order of errors), then
	// emitted a line at a time: the generator's arrays are the only copy.
	if err := eachTraceEvent(p.CSV, func(TraceEvent) error { return nil }); err != nil {
		return fmt.Errorf("csv: %w", err)
	}
	w := g.WindowMS()
	g.StartRun()
	err := eachTraceEvent(p.CSV, func(e TraceEvent) error {
		if e.T >= w {
			return fmt.Errorf("line %d: t_ms %g is at or after the end of the run (duration_ms %g)", e.Line, e.T, w)
		}
		c := g.Client(traceClient(e), p.Group, p.Weight)
		if math.IsNaN(e.ServiceMS) {
			g.Emit(e.T, c)
		} else {
			g.EmitService(e.T, c, e.ServiceMS) // read by the empirical service (Arrivals.GivenServiceMS)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("csv: %w", err)
	}
	g.SortRun()
	return nil
}

// traceClient is the client an event names, DefaultClient when none.
func traceClient(e TraceEvent) string {
	if e.Client == "" {
		return DefaultClient
	}
	return e.Client
}

// MaxTraceEvents bounds a replayed trace.
const MaxTraceEvents = 20_000_000

// TraceEvent is one line of a replayed trace.
type TraceEvent struct {
	T      float64
	Client string
	// ServiceMS is the service time the line gives, NaN when none.
	ServiceMS float64
	Line      int
}

// ParseTrace reads a trace given as text (the format is TraceDecoder's:
// an optional header, one request a line with its time in ms, an optional
// client name and an optional service time). Events come back in file
// order.
func ParseTrace(text string) ([]TraceEvent, error) {
	var events []TraceEvent
	err := eachTraceEvent(text, func(e TraceEvent) error {
		events = append(events, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return events, nil
}

// eachTraceEvent calls fn with each event of a trace given as text, in file
// order, without holding them (ParseTrace's errors, and fn's): what the
// engine does with an inline trace, so a trace of a million lines costs
// its text and what fn keeps, not a million events.
func eachTraceEvent(text string, fn func(e TraceEvent) error) error {
	d := NewTraceDecoder(strings.NewReader(text))
	n := 0
	for {
		row, err := d.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if n == MaxTraceEvents {
			return fmt.Errorf("line %d: more than %d requests in the trace", row.Line, MaxTraceEvents)
		}
		n++
		if err := fn(TraceEvent{T: row.T, Client: string(row.Client), ServiceMS: row.ServiceMS, Line: row.Line}); err != nil {
			return err
		}
	}
	if n == 0 {
		return fmt.Errorf("no requests in the trace")
	}
	return nil
}

func isHeader(s []byte) bool {
	return len(s) > 0 && (s[0] < '0' || s[0] > '9') && s[0] != '.' && s[0] != '-' && s[0] != '+'
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func countLines(s string) int { return strings.Count(s, "\n") + 1 }

// FileError is what went wrong with a trace part's file: a line that does
// not parse, a file out of order or that cannot be opened. The command
// line reports it as an input the user can fix (exit status 2), naming the
// file it was given.
type FileError struct {
	File string // the part's file name
	Err  error
}

func (e *FileError) Error() string { return fmt.Sprintf("trace file %q: %v", e.File, e.Err) }
func (e *FileError) Unwrap() error { return e.Err }

var errNoTraceFiles = errors.New("this lab reads no trace files (lab run --trace FILE, lab serve --traces DIR)")

// traceFile replays the part's trace file, opened by the run's opener, in
// one pass and as one run: the file must be sorted.
func (g *Generator) traceFile(p *Part) error {
	if g.open == nil {
		return &FileError{File: p.File, Err: errNoTraceFiles}
	}
	var ids []int32 // the replay's client index → the generator's
	g.StartRun()
	return replayFile(p, g.WindowMS(), g.open, func(r *TraceReplay, t float64, c int32) {
		for int(c) >= len(ids) {
			cl := r.Clients()[len(ids)]
			ids = append(ids, g.Client(cl.Name, cl.Group, cl.Weight))
		}
		if svc := r.ServiceMS(); math.IsNaN(svc) {
			g.Emit(t, ids[c])
		} else {
			g.EmitService(t, ids[c], svc) // read by the empirical service (Arrivals.GivenServiceMS)
		}
	})
}

// replayFile reads trace file part p through open in one pass, calling
// each with every arrival before windowMS (the replay says its clients
// and its service time), at most MaxTraceEvents of them.
func replayFile(p *Part, windowMS float64, open TraceOpener, each func(r *TraceReplay, t float64, c int32)) (err error) {
	rc, err := open(p.File)
	if err != nil {
		return &FileError{File: p.File, Err: err}
	}
	defer func() {
		if cerr := rc.Close(); cerr != nil && err == nil {
			err = &FileError{File: p.File, Err: cerr}
		}
	}()
	r := NewTraceReplay(rc, windowMS, p.Group, p.Weight)
	for n := 0; ; n++ {
		t, c, ok := r.Next()
		if !ok {
			break
		}
		if n == MaxTraceEvents {
			return &FileError{File: p.File, Err: fmt.Errorf("line %d: more than %d requests in the trace", r.lastLine, MaxTraceEvents)}
		}
		each(r, t, c)
	}
	if err := r.Err(); err != nil {
		return &FileError{File: p.File, Err: err}
	}
	return nil
}

// traceRuns streams the part: a trace in the config is generated whole
// (bounded by the form's limits) into one run; a trace file is read twice,
// first to check it and name its clients in order of first appearance (a
// stream knows its clients before its first arrival), then as the run,
// one line at a time, so its length is bounded by the run's work budget,
// not by memory. An error comes back as a run that fails (Run.Err).
func traceRuns(g *Generator, p *Part) []Run {
	if p.File == "" {
		g.t, g.c, g.runs = nil, nil, nil
		if err := generateTrace(g, p); err != nil {
			return []Run{failedRun{err}}
		}
		return []Run{SliceRun(g.t, g.c)}
	}
	fail := func(err error) []Run { return []Run{failedRun{&FileError{File: p.File, Err: err}}} }
	if g.open == nil {
		return []Run{failedRun{&FileError{File: p.File, Err: errNoTraceFiles}}}
	}
	rc, err := g.open(p.File)
	if err != nil {
		return fail(err)
	}
	// A spill knows what the check would find when its rows pass every
	// check (the second pass checks them again as it streams).
	var clients []Client
	var count int64
	checked := false
	if sr, ok := rc.(*SpillReader); ok && sr.sum != nil {
		clients, count, checked = sr.sum.replayed(g.WindowMS(), p.Group, p.Weight)
	}
	if !checked {
		check := NewTraceReplay(rc, g.WindowMS(), p.Group, p.Weight)
		for {
			if _, _, ok := check.Next(); !ok {
				break
			}
		}
		if err := check.Err(); err != nil {
			rc.Close()
			return fail(err)
		}
		clients, count = check.Clients(), check.Count()
	}
	rc.Close()
	ids := make([]int32, len(clients))
	for i, cl := range clients {
		ids[i] = g.Client(cl.Name, cl.Group, cl.Weight)
	}
	if rc, err = g.open(p.File); err != nil {
		return fail(err)
	}
	return []Run{&fileRun{name: p.File, rc: rc, r: NewTraceReplay(rc, g.WindowMS(), p.Group, p.Weight), ids: ids, want: count}}
}

// fileRun is a trace file's second pass, its clients named by the first.
type fileRun struct {
	name string
	rc   io.ReadCloser
	r    *TraceReplay
	ids  []int32
	want int64
	err  error
}

func (f *fileRun) Next() (float64, int32, bool) {
	if f.err != nil || f.rc == nil {
		return 0, 0, false
	}
	t, c, ok := f.r.Next()
	switch {
	case ok && int(c) < len(f.ids):
		return t, f.ids[c], true
	case ok:
		f.err = &FileError{File: f.name, Err: fmt.Errorf("line %d: a client the first pass did not see: the file changed while read", f.r.lastLine)}
	case f.r.Err() != nil:
		f.err = &FileError{File: f.name, Err: f.r.Err()}
	case f.r.Count() != f.want:
		f.err = &FileError{File: f.name, Err: fmt.Errorf("%d requests, the first pass read %d: the file changed while read", f.r.Count(), f.want)}
	}
	if err := f.rc.Close(); err != nil && f.err == nil {
		f.err = &FileError{File: f.name, Err: err}
	}
	f.rc = nil
	return 0, 0, false
}

func (f *fileRun) Err() error { return f.err }

// Len is how many requests the first pass read.
func (f *fileRun) Len() int64 { return f.want }

// failedRun is a run that fails at once.
type failedRun struct{ err error }

func (e failedRun) Next() (float64, int32, bool) { return 0, 0, false }
func (e failedRun) Err() error                   { return e.err }

// ServiceColumnWith pools the service_ms column of the trace parts among
// parts (an invalid trace given as csv counts nothing: validation reports
// it): how many lines give one, their sum and their maximum. A trace file
// is read through traces in file order (the order a trace given as csv is
// summed in, so the same text gives the same sums either way) up to
// windowMS; with traces nil the files are skipped.
func ServiceColumnWith(parts []Part, windowMS float64, traces TraceOpener) (n int, sumMS, maxMS float64, err error) {
	add := func(v float64) {
		if !math.IsNaN(v) {
			n, sumMS, maxMS = n+1, sumMS+v, max(maxMS, v)
		}
	}
	for i := range parts {
		p := &parts[i]
		if p.Type != Trace {
			continue
		}
		if p.File != "" {
			if traces == nil {
				continue
			}
			if err := replayFile(p, windowMS, traces, func(r *TraceReplay, _ float64, _ int32) { add(r.ServiceMS()) }); err != nil {
				return 0, 0, 0, err
			}
			continue
		}
		_ = eachTraceEvent(p.CSV, func(e TraceEvent) error { // an error is reported by Validate
			add(e.ServiceMS)
			return nil
		})
	}
	return n, sumMS, maxMS, nil
}
