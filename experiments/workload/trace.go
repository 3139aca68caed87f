package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

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
