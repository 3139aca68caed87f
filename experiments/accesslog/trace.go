package accesslog

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Trace reads a log as the lab's trace format (workload.TraceDecoder's
// "t_ms,client,service_ms" lines), so that an access log is the workload
// of a run (lab run --trace FILE --trace-log-format ...) through the same
// replay path as a trace file: t_ms is the request's start less the first
// request's (Unix ms, so t_ms keeps the log's millisecond), the client the
// line's key under the reader's key Keys[key] (an empty key is the
// trace's default client; ',' in a key reads as ';'), service_ms the
// logged upstream time. At the end, a log with more than maxBadPct percent
// of bad lines is an error (a negative maxBadPct: never).
type Trace struct {
	rd        *Reader
	key       int
	maxBadPct float64
	buf       bytes.Buffer
	origin    float64
	started   bool
	err       error
}

// NewTrace reads rd's requests as trace lines, clients by key Keys[key].
func NewTrace(rd *Reader, key int, maxBadPct float64) *Trace {
	tr := &Trace{rd: rd, key: key, maxBadPct: maxBadPct}
	tr.buf.WriteString("t_ms,client,service_ms\n")
	return tr
}

// Read gives the trace's text.
func (tr *Trace) Read(p []byte) (int, error) {
	for tr.buf.Len() < len(p) && tr.err == nil {
		req, err := tr.rd.Next()
		if err != nil {
			tr.err = err
			if err == io.EOF {
				st := tr.rd.Stats()
				if tr.maxBadPct >= 0 && st.BadPct() > tr.maxBadPct {
					tr.err = fmt.Errorf("%d of %d lines (%.2f%%) of the log are bad, more than %g%% (first: line %d, %s)",
						st.Bad, st.Lines, st.BadPct(), tr.maxBadPct, st.FirstBad[0].Line, st.FirstBad[0].Reason)
				}
			}
			break
		}
		if !tr.started {
			tr.started, tr.origin = true, math.Floor(req.StartMS)
		}
		b := tr.buf.AvailableBuffer()
		b = strconv.AppendFloat(b, req.StartMS-tr.origin, 'f', -1, 64)
		b = append(b, ',')
		for _, c := range []byte(tr.rd.Key(tr.key).Name(req.Keys[tr.key])) {
			if c == ',' {
				c = ';'
			}
			b = append(b, c)
		}
		b = append(b, ',')
		if !math.IsNaN(req.ServiceMS) {
			b = strconv.AppendFloat(b, req.ServiceMS, 'f', -1, 64)
		}
		b = append(b, '\n')
		tr.buf.Write(b)
	}
	if tr.buf.Len() > 0 {
		return tr.buf.Read(p)
	}
	return 0, tr.err
}
