// Package output writes a sweep's result as files: results.csv (a row per
// point), series.csv (per point, per series window, Config.SeriesWindow), clients.csv (per point,
// per client, when there are several clients), the config's extra reports,
// and manifest.json with every file's sha256. CLI and web both write through
// here, so the same config gives the same bytes wherever it ran.
//
// CSV conventions: comma separated, a header row, "\n" line ends and a final
// newline; counts as plain integers, rates, percentages and delays as %.1f,
// Jain's index as %.4f; rows in point order. A text cell that would start a
// spreadsheet formula (=, +, -, @, tab, carriage return) starts with an
// apostrophe instead, as OWASP recommends against CSV injection.
package output

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/decide"
)

// File is one output: its name and bytes.
type File struct {
	Name string
	Data []byte
	// sum is the hex sha256 of Data when Files computed it ("": not yet).
	sum string
}

// SHA256 is the hex sha256 of the file's bytes (computed once by Files
// for the files it writes).
func (f File) SHA256() string {
	if f.sum != "" {
		return f.sum
	}
	sum := sha256.Sum256(f.Data)
	return hex.EncodeToString(sum[:])
}

// Manifest makes a run reproducible: the engine, the full config (seed
// included) and the hash of every output file. It holds nothing that
// depends on when or where the run happened besides the Go toolchain and
// the source revision of the build.
type Manifest struct {
	EngineVersion string              `json:"engine_version"`
	Config        *experiments.Config `json:"config"`
	Seed          uint64              `json:"seed"`
	Go            GoInfo              `json:"go"`
	Outputs       []Output            `json:"outputs"`
	// ConfigSHA256 is the sha256 of the config's canonical document
	// (experiments.Config.SHA256: the normalized config as Config.JSON
	// prints it), the same for the CLI and the web.
	ConfigSHA256 string `json:"config_sha256"`
	// Source is the source revision the binary was built from.
	Source Source `json:"source"`
	// Partial is set when the sweep was cut short (cancelled or
	// interrupted): the outputs hold its first points_done points.
	Partial *experiments.Partial `json:"partial,omitempty"`
	// Inputs are the trace files the run read, with the sha256 of their
	// CSV text (experiments.Input); lab run --config manifest.json refuses
	// a trace whose text differs.
	Inputs []experiments.Input `json:"inputs,omitempty"`
}

// Source is the version control state of the build, from the binary's
// build info (runtime/debug.ReadBuildInfo: vcs.revision, vcs.modified);
// each is "unknown" when the build recorded none (go test, go run, a
// build outside a repository or with -buildvcs=false).
type Source struct {
	Revision string `json:"revision"`
	// Modified is "true" when the build had uncommitted changes, "false"
	// when not.
	Modified string `json:"modified"`
}

// Unknown is a Source field the build did not record.
const Unknown = "unknown"

// BuildSource reads the build's source revision.
func BuildSource() Source {
	src := Source{Revision: Unknown, Modified: Unknown}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return src
	}
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision" && s.Value != "":
			src.Revision = s.Value
		case s.Key == "vcs.modified" && s.Value != "":
			src.Modified = s.Value
		}
	}
	return src
}

// GoInfo names the toolchain and platform that ran the engine.
type GoInfo struct {
	Version string `json:"version"`
	GOOS    string `json:"goos"`
	GOARCH  string `json:"goarch"`
}

// Output is one file listed in the manifest.
type Output struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Bytes  int    `json:"bytes"`
}

// Files writes every output of res, manifest.json last: the files are
// formatted side by side (series.csv splits its points over the cores too)
// and each hashed once, as it is done.
func Files(res *experiments.Result) ([]File, error) {
	jobs := outputJobs(res)
	made := make([]File, len(jobs))
	keep := make([]bool, len(jobs))
	errs := make([]error, len(jobs))
	forEach(len(jobs), func(i int) {
		var data []byte
		data, keep[i], errs[i] = jobs[i].make()
		made[i] = File{Name: jobs[i].name, Data: data}
		if keep[i] {
			made[i].sum = File{Data: data}.SHA256()
		}
	})
	var files []File
	var outs []Output
	for i, f := range made {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if keep[i] { // not settings.csv without objectives, nor a report a partial result lacks
			files = append(files, f)
			outs = append(outs, Output{Name: f.Name, SHA256: f.SHA256(), Bytes: len(f.Data)})
		}
	}
	data, err := manifestData(res, outs)
	if err != nil {
		return nil, err
	}
	return append(files, File{Name: experiments.FileManifest, Data: data}), nil
}

// Write writes the files Files makes, the same names and bytes in the same
// order, each to the writer open gives for its name (open is called from
// several goroutines at once), and lists them as manifest.json does, the
// manifest last. Unlike Files it never holds series.csv whole: its rows
// (80 MB at the seed model's 9,900 s) are formatted on the cores a piece at
// a time into a few buffers reused as each is hashed and written in order,
// so its memory is touched once per piece, not once per byte of the file.
// On an error the files may be partly written.
func Write(res *experiments.Result, open func(name string) (io.Writer, error)) ([]Output, error) {
	return WriteAhead(res, open, nil)
}

// WriteAhead is Write, with series.csv from ahead (nil: none) when ahead
// wrote the result's file (SeriesAhead); otherwise series.csv is written
// as Write writes it, opened again.
func WriteAhead(res *experiments.Result, open func(name string) (io.Writer, error), ahead *SeriesAhead) ([]Output, error) {
	jobs := outputJobs(res)
	if ahead != nil {
		jobs[seriesJob].write = func(out *Output) (bool, error) {
			o, ok, err := ahead.end(res)
			if err != nil || ok {
				*out = o
				return ok, err
			}
			return jobs[seriesJob].writeTo(open, out)
		}
		// The series reports ahead made beside the points.
		for i := range res.Config.Reports {
			r := &res.Config.Reports[i]
			for j := range jobs {
				if jobs[j].name != r.File || jobs[j].make == nil {
					continue
				}
				make := jobs[j].make
				jobs[j].make = func() ([]byte, bool, error) {
					if data, err, ok := ahead.report(res, i); ok {
						if err != nil {
							return nil, false, fmt.Errorf("report %s: %w", r.File, err)
						}
						return data, true, nil
					}
					return make()
				}
			}
		}
	}
	outs := make([]Output, len(jobs))
	keep := make([]bool, len(jobs))
	errs := make([]error, len(jobs))
	forEach(len(jobs), func(i int) {
		if jobs[i].write != nil {
			keep[i], errs[i] = jobs[i].write(&outs[i])
			return
		}
		keep[i], errs[i] = jobs[i].writeTo(open, &outs[i])
	})
	var kept []Output
	for i := range jobs {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if keep[i] {
			kept = append(kept, outs[i])
		}
	}
	data, err := manifestData(res, kept)
	if err != nil {
		return nil, err
	}
	m := Output{Name: experiments.FileManifest, SHA256: File{Data: data}.SHA256(), Bytes: len(data)}
	w, err := open(m.Name)
	if err == nil {
		_, err = w.Write(data)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	return append(kept, m), nil
}

// outputJob makes one output file: whole (make), or, for a file too large
// to hold, a piece at a time (stream, when set).
type outputJob struct {
	name string
	make func() (data []byte, keep bool, err error)
	// stream writes the file to w a piece at a time, as make would make it.
	stream func(w io.Writer) error
	// write, when set, writes the file in place of writeTo (series.csv
	// written ahead, WriteAhead).
	write func(out *Output) (keep bool, err error)
}

// seriesJob is series.csv's place in outputJobs.
const seriesJob = 1

// writeTo writes the job's file to the writer open gives for it and lists
// it in out; keep is false for a file not written (make's keep).
func (j *outputJob) writeTo(open func(name string) (io.Writer, error), out *Output) (keep bool, err error) {
	var data []byte
	if j.stream == nil {
		if data, keep, err = j.make(); err != nil || !keep {
			return false, err
		}
	}
	w, err := open(j.name)
	if err != nil {
		return false, fmt.Errorf("%s: %w", j.name, err)
	}
	if j.stream == nil {
		*out = Output{Name: j.name, SHA256: File{Data: data}.SHA256(), Bytes: len(data)}
		if _, err := w.Write(data); err != nil {
			return false, fmt.Errorf("%s: %w", j.name, err)
		}
		return true, nil
	}
	sw := newSummingWriter(w)
	defer sw.stop()
	if err := j.stream(sw); err != nil {
		return false, fmt.Errorf("%s: %w", j.name, err)
	}
	*out = Output{Name: j.name, SHA256: sw.Sum(), Bytes: sw.n}
	return true, nil
}

// summingWriter hashes and counts the bytes it passes to w. A Write
// hashes its bytes on a goroutine of the writer's own while it writes them
// to w (series.csv's 80 MB at the Post 3 sweep's 9,900 s: the hash and
// the file's writes each about as long, a piece at a time, and the last
// point's pieces after the sweep), and returns once both are done; Sum
// (or stop, for a file given up) ends the goroutine.
type summingWriter struct {
	w     io.Writer
	h     hash.Hash
	n     int
	piece chan []byte   // to the hashing goroutine; nil: not started
	done  chan struct{} // a piece hashed
}

func newSummingWriter(w io.Writer) *summingWriter { return &summingWriter{w: w, h: sha256.New()} }

func (s *summingWriter) Write(b []byte) (int, error) {
	if s.piece == nil {
		s.piece, s.done = make(chan []byte), make(chan struct{})
		go func() {
			for b := range s.piece {
				s.h.Write(b)
				s.done <- struct{}{}
			}
		}()
	}
	s.piece <- b
	n, err := s.w.Write(b)
	<-s.done // b is the caller's again
	s.n += n
	return n, err
}

// stop ends the hashing goroutine (a Write after it starts another).
func (s *summingWriter) stop() {
	if s.piece != nil {
		close(s.piece)
		s.piece = nil
	}
}

// Sum ends the hashing goroutine and returns the hash of the bytes
// written, in hex.
func (s *summingWriter) Sum() string {
	s.stop()
	return hex.EncodeToString(s.h.Sum(nil))
}

// outputJobs are the files of res but the manifest, in their order.
func outputJobs(res *experiments.Result) []outputJob {
	plain := func(name string, f func(*experiments.Result) []byte) outputJob {
		return outputJob{name: name, make: func() ([]byte, bool, error) { return f(res), true, nil }}
	}
	series := plain(experiments.FileSeries, SeriesCSV)
	series.stream = func(w io.Writer) error { return newSeriesFile(res).writeTo(w) }
	jobs := []outputJob{plain(experiments.FileResults, Results), series,
		{name: experiments.FileSettings, make: func() ([]byte, bool, error) {
			settings := SettingsCSV(res)
			return settings, settings != nil, nil
		}}}
	if len(res.Clients) > 1 {
		jobs = append(jobs, plain(experiments.FileClients, ClientsCSV))
	}
	if res.Config.Replicated() {
		jobs = append(jobs, plain(experiments.FileReplications, ReplicationsCSV))
	}
	for i := range res.Config.Reports {
		r := &res.Config.Reports[i]
		jobs = append(jobs, outputJob{name: r.File, make: func() ([]byte, bool, error) {
			data, err := Report(res, r)
			if err != nil && res.Partial != nil {
				return nil, false, nil // a partial result may lack the points a report picks
			}
			if err != nil {
				return nil, false, fmt.Errorf("report %s: %w", r.File, err)
			}
			return data, true, nil
		}})
	}
	return jobs
}

// manifestData is manifest.json of res listing outs.
func manifestData(res *experiments.Result, outs []Output) ([]byte, error) {
	m := Manifest{
		EngineVersion: experiments.EngineVersion,
		Config:        res.Config,
		Seed:          res.Config.Seed,
		Go:            GoInfo{runtime.Version(), runtime.GOOS, runtime.GOARCH},
		ConfigSHA256:  res.Config.SHA256(),
		Source:        BuildSource(),
		Partial:       res.Partial,
		Inputs:        res.Inputs,
		Outputs:       outs,
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	return append(data, '\n'), nil
}

// csvWriter appends rows under the lab's conventions, printing numbers by
// the config's decimals rule.
type csvWriter struct {
	b   []byte
	col int
	pr  experiments.Printer
}

func newWriter(res *experiments.Result) csvWriter {
	return csvWriter{pr: experiments.PrinterFor(res.Config)}
}

// formulaStart holds the first characters that make a spreadsheet read a
// cell as a formula (OWASP, CSV injection).
const formulaStart = "=+-@\t\r"

// text writes a text cell: one that would start a formula gets a leading
// apostrophe, so a spreadsheet shows it as text (a limiter or client named
// =HYPERLINK(...) or @SUM(...) stays a name); numbers are written by num
// and int and never change.
func (w *csvWriter) text(s string) {
	w.sep()
	if s != "" && strings.IndexByte(formulaStart, s[0]) >= 0 {
		s = "'" + s
	}
	if strings.ContainsAny(s, ",\"\n\r") {
		w.b = append(w.b, '"')
		w.b = append(w.b, strings.ReplaceAll(s, `"`, `""`)...)
		w.b = append(w.b, '"')
		return
	}
	w.b = append(w.b, s...)
}

func (w *csvWriter) num(f experiments.Format, v float64) {
	w.sep()
	w.b = w.pr.Append(w.b, f, v)
}

// count writes a rate of Fixed1 format that is usually a whole number (a
// count times a whole scale): as the printer would, without its work.
func (w *csvWriter) count(v float64) {
	if v >= 0 && v < 1<<53 && v == math.Trunc(v) && !math.Signbit(v) {
		w.sep()
		w.b = strconv.AppendInt(w.b, int64(v), 10)
		w.b = append(w.b, '.', '0')
		return
	}
	w.num(experiments.Fixed1, v)
}

// raw writes a cell already escaped (by text).
func (w *csvWriter) raw(cell []byte) {
	w.sep()
	w.b = append(w.b, cell...)
}

func (w *csvWriter) int(v int) {
	w.sep()
	w.b = strconv.AppendInt(w.b, int64(v), 10)
}

func (w *csvWriter) empty() { w.sep() }

func (w *csvWriter) sep() {
	if w.col > 0 {
		w.b = append(w.b, ',')
	}
	w.col++
}

func (w *csvWriter) end() {
	w.b = append(w.b, '\n')
	w.col = 0
}

func (w *csvWriter) header(names ...string) {
	for _, n := range names {
		w.text(n)
	}
	w.end()
}

func (w *csvWriter) cell(c *experiments.Column, p *experiments.Point) {
	if c.Format == experiments.Text {
		w.text(c.Label(p))
		return
	}
	if v, ok := c.Value(p); ok {
		w.num(c.Format, v)
	} else {
		w.empty()
	}
}

// Results is results.csv: every scalar column, then share_pct_<group> per
// group, then, when the config has objectives, a column per objective
// (Objective.Column: pass_<metric>_<le|ge|lt|gt>_<value>) and meets_all,
// each true or false (see package decide). With replications every
// measured column holds the mean over the runs (counts too, as %.1f) and
// is followed by <column>_ci95, the half-width of its 95% Student-t
// confidence interval (empty below two values); objectives are judged on
// the interval's pessimistic end.
func Results(res *experiments.Result) []byte {
	w := newWriter(res)
	cols := append(experiments.ResultColumns(res.Config), experiments.GroupShareColumns(res.Groups)...)
	ci := res.Config.Replicated()
	var names []string
	for _, c := range cols {
		names = append(names, c.Key)
		if ci && c.Measured {
			names = append(names, c.Key+"_ci95")
		}
	}
	answer := decide.Decide(res)
	if answer != nil {
		for _, o := range answer.Objectives {
			names = append(names, o.Column())
		}
		names = append(names, "meets_all")
	}
	w.header(names...)
	for i := range res.Points {
		p := &res.Points[i]
		for c := range cols {
			col := &cols[c]
			if !ci || !col.Measured {
				w.cell(col, p)
				continue
			}
			f := col.MeanFormat() // a mean of counts has a decimal
			st, ok := p.Stat(col.Key)
			if !ok || st.N == 0 {
				w.empty()
			} else {
				w.num(f, st.Mean)
			}
			if !ok || st.N < 2 {
				w.empty()
			} else {
				w.num(f, st.HalfWidth)
			}
		}
		if answer != nil {
			v := &answer.Verdicts[i]
			for _, c := range v.Checks {
				w.text(strconv.FormatBool(c.Pass))
			}
			w.text(strconv.FormatBool(v.MeetsAll))
		}
		w.end()
	}
	return w.b
}

// ReplicationsCSV is replications.csv, with replications: a row per run,
// point by point and seed by seed, with results.csv's columns (each run's
// own values) and the run's replica and seed after the point.
func ReplicationsCSV(res *experiments.Result) []byte {
	w := newWriter(res)
	cols := append(experiments.ResultColumns(res.Config), experiments.GroupShareColumns(res.Groups)...)
	// A swept seed's column is the run's seed here: the one after replica.
	cols = slices.DeleteFunc(cols[1:], func(c experiments.Column) bool { return c.Key == "seed" })
	names := []string{"point", "replica", "seed"}
	for _, c := range cols {
		names = append(names, c.Key)
	}
	w.header(names...)
	for i := range res.Replicas {
		p := &res.Replicas[i]
		w.int(p.Index)
		w.int(p.Replica)
		w.text(p.Seed)
		for c := range cols {
			w.cell(&cols[c], p)
		}
		w.end()
	}
	return w.b
}

// SeriesCSV is series.csv: per point, per aligned window of the config's
// series width (Config.SeriesWindow, 100 ms by default). A run with client
// model points adds their series (attempts_rps, retries_rps by arrival
// window, goodput_rps by finish window: what the run page draws over
// time), empty at points without them, and a point's rows run on while
// its goodput does. The points' rows
// are formatted in parallel, each point's into its own stretch of one
// buffer sized from an upper bound of its rows' widths, then moved
// together in point order: the same bytes on any number of cores, and the
// file's memory touched once.
func SeriesCSV(res *experiments.Result) []byte {
	sf := newSeriesFile(res)
	offsets := make([]int, len(res.Points)+1)
	offsets[0] = len(sf.header)
	for i := range res.Points {
		offsets[i+1] = offsets[i] + seriesBytesBound(&res.Points[i], len(sf.labels[i]), sf.width, sf.scale, sf.clients)
	}
	buf := make([]byte, offsets[len(res.Points)])
	copy(buf, sf.header)
	parts := make([][]byte, len(res.Points))
	forEach(len(res.Points), func(i int) {
		parts[i] = sf.appendRows(buf[offsets[i]:offsets[i]:offsets[i+1]], i, 0, sf.rows(i)) // in buf, unless the bound was short and append moved it
	})
	n := len(sf.header)
	for i, part := range parts {
		if len(part) > offsets[i+1]-offsets[i] { // cannot happen: the bound held
			out := append([]byte(nil), buf[:n]...)
			for _, rest := range parts[i:] {
				out = append(out, rest...)
			}
			return out
		}
		n += copy(buf[n:], part) // never forward: n <= the part's offset
	}
	return buf[:n:n]
}

// seriesFile is series.csv in parts: its header, and each point's rows
// appended a stretch at a time (appendRows), so that SeriesCSV can format
// the points side by side and Write a file's pieces as they are written.
type seriesFile struct {
	res          *experiments.Result
	pr           experiments.Printer
	clients      bool
	width, scale float64
	header       []byte
	labels       [][]byte // each point's limiter cell, escaped
}

func newSeriesFile(res *experiments.Result) *seriesFile {
	sf := newSeriesFileWith(res, seriesClients(res))
	for i := range res.Points {
		sf.label(i)
	}
	return sf
}

// seriesClients reports whether series.csv has the client columns: when a
// point has the client model's series.
func seriesClients(res *experiments.Result) bool {
	return slices.ContainsFunc(res.Points, func(p experiments.Point) bool { return p.Series.Attempts != nil })
}

// newSeriesFileWith is series.csv of res with the client columns or
// without, its points' labels not made yet (label).
func newSeriesFileWith(res *experiments.Result, clients bool) *seriesFile {
	w := newWriter(res)
	if clients {
		w.header("point", "limiter", "window_start_ms", "offered_rps", "released_rps", "rejected_rps", "in_system_max", "attempts_rps", "retries_rps", "goodput_rps")
	} else {
		w.header("point", "limiter", "window_start_ms", "offered_rps", "released_rps", "rejected_rps", "in_system_max")
	}
	width := res.Config.SeriesWindow()
	return &seriesFile{res: res, pr: w.pr, clients: clients, width: width, scale: 1000.0 / width, header: w.b, labels: make([][]byte, len(res.Points))}
}

// label makes point i's limiter cell.
func (sf *seriesFile) label(i int) {
	lw := csvWriter{pr: sf.pr}
	lw.text(sf.res.Points[i].Limiter)
	sf.labels[i] = lw.b
}

// rows is the number of point i's rows.
func (sf *seriesFile) rows(i int) int { return seriesRows(&sf.res.Points[i].Series, sf.clients) }

// appendRows appends point i's rows from window k0 up to k1 to b.
func (sf *seriesFile) appendRows(b []byte, i, k0, k1 int) []byte {
	p := &sf.res.Points[i]
	s := &p.Series
	scale := sf.scale
	pw := csvWriter{pr: sf.pr, b: b}
	var pre [24]byte
	prefix := strconv.AppendInt(pre[:0], int64(p.Index), 10)
	prefix = append(append(append(prefix, ','), sf.labels[i]...), ',')
	step := uint64(int(sf.width))
	// The cells after window_start_ms of the rows formatted lately, by
	// their counts, in a small direct-mapped table: a row of counts in it
	// copies its cells (the Post 3 sweep's rows at 9,900 s repeat a few
	// kinds over and over: the demand curve's valley and spike).
	var seen [tailSlots]struct {
		counts [4]int32
		n      uint8 // 0: empty
	}
	var tails [tailSlots][tailBytes]byte
	for k := k0; k < k1; k++ {
		// the cells as pw.int, pw.count and pw.raw write them, without
		// their calls: 2 M rows at 9,900 s
		pw.b = append(pw.b, prefix...)
		pw.b = appendDecimal(pw.b, uint64(k)*step)
		counts := [4]int32{experiments.At(s.Offered, k), experiments.At(s.Released, k), experiments.At(s.Rejected, k), experiments.At(s.InSystemMax, k)}
		h := (uint32(counts[0])*0x9e3779b1 ^ uint32(counts[1])*0x85ebca77 ^ uint32(counts[2])*0xc2b2ae3d ^ uint32(counts[3])*0x27d4eb2f) >> (32 - tailSlotBits)
		if e := &seen[h]; e.n > 0 && e.counts == counts {
			pw.b = append(pw.b, tails[h][:e.n]...)
		} else {
			from := len(pw.b)
			pw.b = appendCount(pw.b, &pw, float64(counts[0])*scale)
			pw.b = appendCount(pw.b, &pw, float64(counts[1])*scale)
			pw.b = appendCount(pw.b, &pw, float64(counts[2])*scale)
			pw.b = append(pw.b, ',')
			pw.b = strconv.AppendInt(pw.b, int64(counts[3]), 10)
			if n := len(pw.b) - from; n <= tailBytes {
				copy(tails[h][:], pw.b[from:])
				e.counts, e.n = counts, uint8(n)
			}
		}
		pw.col = 7
		if sf.clients {
			if s.Attempts == nil {
				pw.empty()
				pw.empty()
				pw.empty()
			} else {
				pw.count(float64(experiments.At(s.Attempts, k)) * scale)
				pw.count(float64(experiments.At(s.Retries, k)) * scale)
				pw.count(float64(experiments.At(s.Goodput, k)) * scale)
			}
		}
		pw.end()
	}
	return pw.b
}

// appendRows' table of the rows' cells after window_start_ms: 256 rows of
// up to 40 bytes.
const (
	tailSlotBits = 8
	tailSlots    = 1 << tailSlotBits
	tailBytes    = 40
)

// seriesPieceRows is the rows of a piece of series.csv that Write formats
// at once: about 160 KB, so that the pieces in flight stay in the caches.
const seriesPieceRows = 4096

// writeTo writes series.csv to w a piece of rows at a time
// (streamPieces).
func (sf *seriesFile) writeTo(w io.Writer) error {
	if _, err := w.Write(sf.header); err != nil {
		return err
	}
	return sf.writePoints(w, 0, len(sf.res.Points), nil)
}

// writePoints writes the rows of points i0 up to i1 to w a piece of rows
// at a time (streamPieces, its buffers from bufs).
func (sf *seriesFile) writePoints(w io.Writer, i0, i1 int, bufs *[][]byte) error {
	type piece struct{ point, k0, k1 int }
	var pieces []piece
	for i := i0; i < i1; i++ {
		n := sf.rows(i)
		for k := 0; k < n; k += seriesPieceRows {
			pieces = append(pieces, piece{i, k, min(k+seriesPieceRows, n)})
		}
	}
	return streamPieces(w, len(pieces), func(b []byte, i int) []byte {
		p := pieces[i]
		return sf.appendRows(b, p.point, p.k0, p.k1)
	}, bufs)
}

// streamPieces writes pieces 0 to n-1 to w in order, piece(b, i)
// appending piece i's bytes to b: the pieces are made on up to GOMAXPROCS
// goroutines, at most two a goroutine ahead of the one being written, each
// into a buffer that a piece before it was written from. The buffers come
// from *bufs and go back to it (nil: a call's own), so that calls one
// after another reuse them.
func streamPieces(w io.Writer, n int, piece func(b []byte, i int) []byte, bufs *[][]byte) error {
	if bufs == nil {
		bufs = new([][]byte)
	}
	take := func() []byte {
		if k := len(*bufs); k > 0 {
			b := (*bufs)[k-1]
			*bufs = (*bufs)[:k-1]
			return b
		}
		return nil
	}
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		b := take()
		defer func() { *bufs = append(*bufs, b) }()
		for i := range n {
			b = piece(b[:0], i)
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		return nil
	}
	// A goroutine takes a buffer from free before it takes the next
	// piece's number, and the writer frees it once that piece is written:
	// so at most depth pieces are taken and unwritten, each in its own
	// slot (its number modulo depth), and a send to a slot never waits.
	depth := 2 * workers
	slots := make([]chan []byte, depth)
	free := make(chan []byte, depth)
	for i := range slots {
		slots[i] = make(chan []byte, 1)
		free <- take()
	}
	defer func() { // every buffer is back in free or in a slot
		for range depth {
			select {
			case b := <-free:
				*bufs = append(*bufs, b)
			default:
			}
		}
	}()
	stop := make(chan struct{})
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				var b []byte
				select {
				case b = <-free:
				case <-stop:
					return
				}
				i := int(next.Add(1) - 1)
				if i >= n {
					free <- b // never waits: it came from free
					return
				}
				slots[i%depth] <- piece(b[:0], i)
			}
		}()
	}
	var err error
	for i := range n {
		b := <-slots[i%depth]
		if _, err = w.Write(b); err != nil {
			break
		}
		free <- b
	}
	close(stop)
	wg.Wait()
	return err
}

// seriesBytesBound is at least the bytes of a point's series.csv rows:
// each cell at the width of the largest value its column takes.
func seriesBytesBound(p *experiments.Point, label int, width, scale float64, clients bool) int {
	s := &p.Series
	windows := seriesRows(s, clients)
	largest := func(xs []int32) int {
		m := int32(0)
		for _, x := range xs {
			m = max(m, x)
		}
		// a rate of one decimal: its whole digits (one more for
		// rounding up), the point and the decimal
		return digits(int(float64(m)*scale)+1) + 2
	}
	inSystem := int32(0)
	for _, x := range s.InSystemMax {
		inSystem = max(inSystem, x)
	}
	row := digits(p.Index) + label + digits(windows*int(width)) +
		largest(s.Offered) + largest(s.Released) + largest(s.Rejected) + digits(int(inSystem)) + 7 // 6 commas, a newline
	if clients {
		row += largest(s.Attempts) + largest(s.Retries) + largest(s.Goodput) + 3 // 3 commas
	}
	return windows * row
}

// seriesRows is the number of a point's series.csv rows: its windows, and
// with the client columns as long as its goodput runs.
func seriesRows(s *experiments.Series, clients bool) int {
	if clients {
		return max(s.Windows(), len(s.Goodput))
	}
	return s.Windows()
}

// digits is the length of n >= 0 in decimal.
func digits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// appendDecimal appends v in decimal, four digits at a time from a table,
// each four stored at once (series.csv's 2 M rows at 9,900 s print five
// numbers each, most below 10,000).
func appendDecimal(b []byte, v uint64) []byte {
	l := len(b)
	if cap(b)-l < 24 {
		return strconv.AppendUint(b, v, 10)
	}
	if v >= 10_000 {
		b = appendDecimal(b, v/10_000)
		l = len(b)
		binary.LittleEndian.PutUint32(b[l:l+4], fourDigits[v%10_000])
		return b[:l+4]
	}
	n := 4
	switch {
	case v < 10:
		n = 1
	case v < 100:
		n = 2
	case v < 1000:
		n = 3
	}
	// The last n of the four digits, moved to the front (little-endian:
	// the first digit is the lowest byte).
	binary.LittleEndian.PutUint32(b[l:l+4], fourDigits[v]>>(8*(4-n)))
	return b[:l+n]
}

// fourDigits holds 0 to 9999 as four decimal digits each, zeros leading,
// the bytes of a little-endian uint32.
var fourDigits = func() (t [10_000]uint32) {
	for v := range t {
		t[v] = binary.LittleEndian.Uint32([]byte{byte('0' + v/1000), byte('0' + v/100%10), byte('0' + v/10%10), byte('0' + v%10)})
	}
	return t
}()

// appendCount appends ',' and a Fixed1 rate as csvWriter.count prints it
// (a whole number as "n.0").
func appendCount(b []byte, w *csvWriter, v float64) []byte {
	if v >= 0 && v < 1<<53 && v == math.Trunc(v) && !math.Signbit(v) {
		b = appendDecimal(append(b, ','), uint64(v))
		return append(b, '.', '0')
	}
	return w.pr.Append(append(b, ','), experiments.Fixed1, v)
}

// forEach calls f(0..n-1) on up to GOMAXPROCS goroutines.
func forEach(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// ClientsCSV is clients.csv: per point, per client. A run with client
// behaviour (the client model) also gives each client's attempts at the
// gate after offered (its requests: first attempts), since admitted counts
// admitted attempts, retries included. A run with per-flow bounds (a
// per-client or hierarchical token bucket before a FIFO server) also gives
// each client's longest time at the server beside its own bound
// (experiments.FlowBound): sojourn_max_ms, fifo_bound_ms, fifo_theta_ms,
// blind_bound_ms, fifo_tightness (measured / FIFO bound) and flow_note,
// empty where a point has none.
func ClientsCSV(res *experiments.Result) []byte {
	w := newWriter(res)
	attempts := slices.ContainsFunc(res.Points, func(p experiments.Point) bool { return p.Metrics.Client != nil })
	flows := slices.ContainsFunc(res.Points, func(p experiments.Point) bool {
		return slices.ContainsFunc(p.Clients, func(c experiments.ClientResult) bool { return c.Flow != nil })
	})
	head := []string{"point", "limiter", "client", "group", "offered", "admitted", "admitted_rps", "share_pct"}
	if attempts {
		head = slices.Insert(head, 5, "attempts")
	}
	if flows {
		head = append(head, "sojourn_max_ms", "fifo_bound_ms", "fifo_theta_ms", "blind_bound_ms", "fifo_tightness", "flow_note")
	}
	w.header(head...)
	names := 0
	for _, c := range res.Clients {
		names += len(c.Name) + len(c.Group)
	}
	rows := 0
	for i := range res.Points {
		rows += len(res.Points[i].Clients)
	}
	if len(res.Clients) > 0 && len(res.Points) > 0 { // a shard may hold no point
		w.b = slices.Grow(w.b, rows*(names/len(res.Clients)+len(res.Points[0].Limiter)+clientRowBytes))
	}
	for i := range res.Points {
		p := &res.Points[i]
		for c, cl := range p.Clients {
			w.int(p.Index)
			w.text(p.Limiter)
			w.text(res.Clients[c].Name)
			w.text(res.Clients[c].Group)
			w.int(cl.Offered)
			if attempts {
				if p.Metrics.Client != nil {
					w.int(cl.Attempts)
				} else {
					w.int(cl.Offered) // without client behaviour every arrival is one attempt
				}
			}
			w.int(cl.Admitted)
			w.num(experiments.Fixed1, cl.AdmittedRPS)
			share := 0.0
			if p.Metrics.Admitted > 0 {
				share = 100 * float64(cl.Admitted) / float64(p.Metrics.Admitted)
			}
			w.num(experiments.Fixed1, share)
			if flows {
				flowCells(&w, &cl)
			}
			w.end()
		}
	}
	return w.b
}

// flowCells are a client's per-flow columns (see ClientsCSV).
func flowCells(w *csvWriter, cl *experiments.ClientResult) {
	f := cl.Flow
	if f == nil {
		for range 6 {
			w.empty()
		}
		return
	}
	w.num(experiments.Fixed1, cl.SojournMaxMS)
	if f.Note != "" {
		for range 4 {
			w.empty()
		}
		w.text(f.Note)
		return
	}
	w.num(experiments.Fixed1, f.FIFOBoundMS)
	w.num(experiments.Fixed1, f.ThetaMS)
	if f.BlindBoundMS > 0 {
		w.num(experiments.Fixed1, f.BlindBoundMS)
	} else {
		w.empty()
	}
	w.num(experiments.Fixed4, experiments.Tightness(cl.SojournMaxMS, f.FIFOBoundMS))
	w.empty()
}

// clientRowBytes is about the bytes of a clients.csv row besides the
// names.
const clientRowBytes = 40

// Report writes one of the config's extra CSV files.
func Report(res *experiments.Result, r *experiments.Report) ([]byte, error) {
	w := newWriter(res)
	for _, c := range r.Columns {
		w.text(c.Header)
	}
	w.end()
	rowStart := len(w.b)
	switch r.Type {
	case experiments.ReportPoints:
		cols := make([]*experiments.Column, len(r.Columns))
		for j, c := range r.Columns {
			if c.Value != "swept" && c.Value != experiments.SweptOrLimiter {
				if cols[j] = experiments.PointColumn(res.Config, c.Value, c.Class); cols[j] == nil {
					return nil, fmt.Errorf("column %s: no value %q", c.Header, c.Value)
				}
			}
		}
		swept := experiments.SweptColumn()
		for i := range res.Points {
			p := &res.Points[i]
			if !r.Select.Keeps(p) {
				continue
			}
			for j, c := range r.Columns {
				switch {
				case cols[j] != nil && c.Places != nil && cols[j].Format != experiments.Text:
					if v, ok := cols[j].Value(p); ok {
						w.sep()
						w.b = w.pr.AppendPlaces(w.b, v, *c.Places)
					} else {
						w.empty()
					}
				case cols[j] != nil:
					w.cell(cols[j], p)
				case c.Value == experiments.SweptOrLimiter && p.Swept == "": // a limiter without parameters (none)
					w.text(p.Limiter)
				default: // swept: empty for a limiter without parameters
					if v, ok := swept.Value(p); ok {
						w.num(experiments.FormatFor(p.Swept), v)
					} else {
						w.empty()
					}
				}
			}
			w.end()
		}
	case experiments.ReportSeries:
		pts := make([]*experiments.Point, len(r.Columns))
		classes := make([]int, len(r.Columns))
		for j, c := range r.Columns {
			classes[j] = res.Config.ClassIndex(c.Class)
			pi := max(0, res.Config.PolicyIndex(c.Policy)) // "" is the first
			if c.Limiter == nil {
				if c.Value == "offered_rps" && (c.Load != nil || c.Policy != "") {
					pts[j] = findPoint(res, -1, nil, c.Server, c.Load, pi)
				}
				continue
			}
			pts[j] = findPoint(res, *c.Limiter, c.Swept, c.Server, c.Load, pi)
			if pts[j] == nil {
				return nil, fmt.Errorf("column %s: no such point", c.Header)
			}
		}
		windows := seriesWindows(res.Config)
		width := res.Config.SeriesWindow()
		scale := 1000.0 / width
		for k := range windows {
			if k == 1 { // room for the rest, at the first row's width and the largest window_start_ms's
				row := len(w.b) - rowStart + digits(windows*int(width))
				w.b = slices.Grow(w.b, (windows-1)*row)
			}
			for j, c := range r.Columns {
				switch c.Value {
				case "window_start_ms":
					w.int(k * int(width))
				case "offered_rps":
					p := &res.Points[0]
					if pts[j] != nil {
						p = pts[j]
					}
					w.count(float64(experiments.At(p.Series.Offered, k)) * scale)
				case "released_rps":
					w.count(float64(experiments.At(pts[j].Series.Released, k)) * scale)
				case "rejected_rps":
					w.count(float64(experiments.At(pts[j].Series.Rejected, k)) * scale)
				case "in_system_max":
					w.int(int(experiments.At(pts[j].Series.InSystemMax, k)))
				case "sojourn_p99_ms":
					w.num(experiments.Fixed1, float64(experiments.At(pts[j].Series.SojournP99, k)))
				case "class_offered_rps", "class_success_pct":
					var cs experiments.ClassSeries
					if all := pts[j].Series.Classes; classes[j] >= 0 && classes[j] < len(all) {
						cs = all[classes[j]]
					}
					if c.Value == "class_offered_rps" {
						w.count(float64(experiments.At(cs.Offered, k)) * scale)
					} else {
						w.num(experiments.Fixed1, cs.SuccessPct(k))
					}
				}
			}
			w.end()
		}
	default:
		return nil, fmt.Errorf("unknown report type %q", r.Type)
	}
	return w.b, nil
}

// findPoint is the point of limiter li (any when li < 0) whose swept value
// is swept (or its only point when swept is nil), on server si and load lo
// (the first when nil), under client policy pi.
func findPoint(res *experiments.Result, li int, swept *float64, si, lo *int, pi int) *experiments.Point {
	at := func(x *int) int {
		if x == nil {
			return 0
		}
		return *x
	}
	for i := range res.Points {
		p := &res.Points[i]
		if (li < 0 || p.LimiterIndex == li) && (swept == nil || p.SweptValue() == *swept) && p.Server == at(si) && p.Load == at(lo) && p.Policy == pi {
			return p
		}
	}
	return nil
}

// seriesWindows is the number of rows of a series report: the 100 ms
// windows of the scoring window [0, E), a partial last one included
// (output.windows "cover") or not ("whole").
func seriesWindows(cfg *experiments.Config) int {
	end := cfg.ScoreEndMS(cfg.ServerAt(0).DeadlineMS)
	width := cfg.SeriesWindow()
	windows := int(end / width)
	if cfg.Rule("output.windows") == experiments.WindowsCover && float64(windows)*width < end {
		windows++
	}
	return max(windows, 0)
}
