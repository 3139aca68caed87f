package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments/field"
)

// Trace replays "t_ms,client" CSV text as is (see ParseTrace): each line is
// one request at its time from its client (DefaultClient when the line
// names none), all clients in the part's group; sorted by time, ties in
// file order. A request at or after the window's end is an error. A third
// column, service_ms, gives the request's own service time, which the
// server's empirical service distribution reads (Arrivals.GivenServiceMS).
const Trace PartType = "trace"

var csvField = Field{Name: "csv", Label: "Trace", Input: InputCSV, Line: "t_ms,client,service_ms",
	Doc: "one request a line: its time in ms, an optional client name and an optional service time in ms (read by the server's empirical service); an optional header, # comments"}

func traceKind() *Kind {
	return &Kind{
		Type:     Trace,
		Label:    "trace replay (CSV)",
		Model:    "the requests of a \"t_ms,client\" CSV trace, replayed as is",
		Fields:   []Field{groupField.with("group of every client of the trace", ""), weightField, csvField},
		Validate: validateTrace,
		Expected: func(p *Part, _ float64) float64 { return float64(countLines(p.CSV)) },
		Generate: generateTrace,
		Describe: func(*Part) string { return "trace replay" },
		DeclareClients: func(g *Generator, p *Part) {
			events, err := ParseTrace(p.CSV)
			if err != nil {
				return // reported by Validate
			}
			for _, e := range events {
				g.Client(traceClient(e), p.Group, p.Weight)
			}
		},
		CountClients: func(p *Part) int {
			events, _ := ParseTrace(p.CSV)
			names := map[string]bool{}
			for _, e := range events {
				names[e.Client] = true
			}
			return len(names)
		},
	}
}

func validateTrace(p *Part, path string, durationMS float64) field.List {
	var errs field.List
	if p.CSV == "" {
		errs.Add(field.Join(path, "csv"), "is empty: give the trace as \"t_ms,client\" lines")
	} else if events, err := ParseTrace(p.CSV); err != nil {
		errs.Add(field.Join(path, "csv"), "%v", err)
	} else if finite(durationMS) && durationMS > 0 {
		for _, e := range events {
			if e.T >= durationMS {
				errs.Add(field.Join(path, "csv"), "line %d: t_ms %g is at or after the end of the run (duration_ms %g)", e.Line, e.T, durationMS)
				break
			}
		}
	}
	return errs
}

// generateTrace emits the trace in file order as one run, then sorts it by
// time (ties keep file order).
func generateTrace(g *Generator, p *Part) error {
	events, err := ParseTrace(p.CSV)
	if err != nil {
		return fmt.Errorf("csv: %w", err)
	}
	w := g.WindowMS()
	g.StartRun()
	for _, e := range events {
		if e.T >= w {
			return fmt.Errorf("csv: line %d: t_ms %g is at or after the end of the run (duration_ms %g)", e.Line, e.T, w)
		}
		c := g.Client(traceClient(e), p.Group, p.Weight)
		if math.IsNaN(e.ServiceMS) {
			g.Emit(e.T, c)
		} else {
			g.EmitService(e.T, c, e.ServiceMS)
		}
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
	T         float64
	Client    string
	ServiceMS float64 // NaN when the line gives none
	Line      int
}

// MaxTraceServiceMS bounds a trace's service times (the server's longest
// service time).
const MaxTraceServiceMS = 3_600_000

// ParseTrace reads "t_ms,client,service_ms" CSV text: an optional header
// line ("t_ms", "t_ms,client" or "t_ms,client,service_ms"), then one
// request a line with its time in ms (>= 0), an optional client name and
// an optional service time in ms (more than 0, at most MaxTraceServiceMS;
// empty or left out: none). Blank lines and lines starting with # are
// skipped. Errors name the line. Events come back in file order.
func ParseTrace(text string) ([]TraceEvent, error) {
	var events []TraceEvent
	line := 0
	for len(text) > 0 {
		var row string
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			row, text = text[:i], text[i+1:]
		} else {
			row, text = text, ""
		}
		line++
		row = strings.TrimSpace(strings.TrimSuffix(row, "\r"))
		if row == "" || row[0] == '#' {
			continue
		}
		tField, rest, hasClient := strings.Cut(row, ",")
		client, sField, hasService := strings.Cut(rest, ",")
		tField = strings.TrimSpace(tField)
		client = strings.TrimSpace(client)
		sField = strings.TrimSpace(sField)
		if len(events) == 0 && isHeader(tField) {
			if tField != "t_ms" || (hasClient && client != "client") || (hasService && sField != "service_ms") {
				return nil, fmt.Errorf("line %d: header must be \"t_ms,client,service_ms\", \"t_ms,client\" or \"t_ms\", got %q", line, clip(row))
			}
			continue
		}
		if strings.Contains(sField, ",") {
			return nil, fmt.Errorf("line %d: expected at most 3 fields \"t_ms,client,service_ms\", got %d", line, strings.Count(row, ",")+1)
		}
		svc := math.NaN()
		if sField != "" {
			v, err := strconv.ParseFloat(sField, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("line %d: service_ms %q is not a number", line, clip(sField))
			}
			if !(v > 0) || v > MaxTraceServiceMS {
				return nil, fmt.Errorf("line %d: service_ms %g must be more than 0 and at most %d", line, v, MaxTraceServiceMS)
			}
			svc = v
		}
		t, err := strconv.ParseFloat(tField, 64)
		if err != nil || math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, fmt.Errorf("line %d: t_ms %q is not a number", line, clip(tField))
		}
		if t < 0 {
			return nil, fmt.Errorf("line %d: t_ms %g is negative", line, t)
		}
		if len(client) > 200 {
			return nil, fmt.Errorf("line %d: client name longer than 200 characters", line)
		}
		if len(events) == MaxTraceEvents {
			return nil, fmt.Errorf("line %d: more than %d requests in the trace", line, MaxTraceEvents)
		}
		events = append(events, TraceEvent{T: t, Client: client, ServiceMS: svc, Line: line})
	}
	if len(events) == 0 {
		return nil, fmt.Errorf("no requests in the trace")
	}
	return events, nil
}

func isHeader(s string) bool {
	return s != "" && (s[0] < '0' || s[0] > '9') && s[0] != '.' && s[0] != '-' && s[0] != '+'
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func countLines(s string) int { return strings.Count(s, "\n") + 1 }

// ServiceColumn pools the service_ms column of the trace parts among parts
// (an invalid trace counts nothing; validation reports it): how many lines
// give one, their sum and their maximum.
func ServiceColumn(parts []Part) (n int, sumMS, maxMS float64) {
	for i := range parts {
		p := &parts[i]
		if p.Type != Trace || p.CSV == "" {
			continue
		}
		events, err := ParseTrace(p.CSV)
		if err != nil {
			continue
		}
		for _, e := range events {
			if !math.IsNaN(e.ServiceMS) {
				n, sumMS, maxMS = n+1, sumMS+e.ServiceMS, max(maxMS, e.ServiceMS)
			}
		}
	}
	return n, sumMS, maxMS
}
