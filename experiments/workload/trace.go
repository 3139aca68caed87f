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
// file order. A request at or after the window's end is an error.
const Trace PartType = "trace"

var csvField = Field{Name: "csv", Label: "Trace", Input: InputCSV, Line: "t_ms,client",
	Doc: "one request a line: its time in ms and an optional client name; an optional header, # comments"}

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
		g.Emit(e.T, g.Client(traceClient(e), p.Group, p.Weight))
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
	Line   int
}

// ParseTrace reads "t_ms,client" CSV text: an optional header line
// ("t_ms,client" or "t_ms"), then one request a line with its time in ms
// (>= 0) and an optional client name. Blank lines and lines starting with #
// are skipped. Errors name the line. Events come back in file order.
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
		tField, client, hasClient := strings.Cut(row, ",")
		tField = strings.TrimSpace(tField)
		client = strings.TrimSpace(client)
		if len(events) == 0 && isHeader(tField) {
			if tField != "t_ms" || (hasClient && client != "client") {
				return nil, fmt.Errorf("line %d: header must be \"t_ms,client\" or \"t_ms\", got %q", line, row)
			}
			continue
		}
		if strings.Contains(client, ",") {
			return nil, fmt.Errorf("line %d: expected 2 fields \"t_ms,client\", got %d", line, strings.Count(row, ",")+1)
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
		events = append(events, TraceEvent{T: t, Client: client, Line: line})
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
