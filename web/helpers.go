package web

import (
	"fmt"
	"github.com/a-h/templ"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/charts"
	"github.com/ratelab/ratelab/web/format"
)

// Helpers of the templates.

func engineVersion() string { return experiments.EngineVersion }

func itoa(n int) string { return strconv.Itoa(n) }

func runName(r storage.Run) string {
	if strings.TrimSpace(r.Name) == "" {
		return "(unnamed) " + r.ID
	}
	return r.Name
}

func fmtTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") }

// fmtShortTime is the recent-runs sidebar's time: short enough to fit its
// 380 px beside the name and status.
func fmtShortTime(t time.Time) string { return t.UTC().Format("Jan 2 15:04") }

func progressText(r storage.Run) string {
	if r.Kind == storage.KindShadow {
		return replayShare(r) + " of the log"
	}
	return fmt.Sprintf("%d / %d", r.PointsDone, r.PointsTotal)
}

// replayShare is how much of a replay's log was read: its progress
// counts thousandths of the log's bytes (runner.SubmitShadow), not points.
func replayShare(r storage.Run) string {
	if r.PointsTotal <= 0 {
		return "0%"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(r.PointsDone)/float64(r.PointsTotal))
}

// partialText says how much of a partial run was kept.
func partialText(r storage.Run) string {
	if r.Kind == storage.KindShadow {
		return "partial: " + replayShare(r) + " of the log read"
	}
	return fmt.Sprintf("partial: %d of %d points", r.PointsDone, r.PointsTotal)
}

// storedSize is a run's size in the database ("" before it has results).
func storedSize(r storage.Run) string {
	if r.StoredBytes <= 0 {
		return ""
	}
	return format.Bytes(int(r.StoredBytes))
}

func joinLimiters(ls []string) string { return strings.Join(ls, ", ") }

func runsCount(n int) string {
	switch n {
	case 0:
		return "no runs"
	case 1:
		return "the 1 run"
	}
	return "the " + strconv.Itoa(n) + " runs"
}

func pagesCount(n int) string {
	if n == 1 {
		return "1 page"
	}
	return strconv.Itoa(n) + " pages"
}

// dash shows a missing bound.
func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// boolAttr is a boolean as a data attribute's value.
func boolAttr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// resultsCount is the results table's count of what its filter shows: "12
// of 40 points" with objectives (the filter), else "40 points".
func resultsCount(res *charts.Page) string {
	if res.Table.Objectives {
		return itoa(len(res.Table.Rows)) + " of " + itoa(res.Table.Points) + " points"
	}
	return itoa(res.Table.Points) + " points"
}

// verdictRole is a Deploy verdict's ARIA role: an alert when it warns.
func verdictRole(warn bool) string {
	if warn {
		return "alert"
	}
	return "status"
}

// configLine is the closed config section's line: the workload and the
// server, then the download count.
func configLine(d *RunPageData) string {
	var parts []string
	if s := d.Summary; s != nil {
		for _, kv := range s.Items {
			if kv.Key == "Workload" || kv.Key == "Server" {
				parts = append(parts, kv.Value)
			}
		}
	}
	if n := len(d.Files); n > 0 {
		parts = append(parts, itoa(n)+" files to download")
	}
	return strings.Join(parts, " · ")
}

// chartsLine is a closed chart section's line: how many charts, and their
// titles.
func chartsLine(g *charts.Group) string {
	titles := make([]string, len(g.Charts))
	for i, c := range g.Charts {
		titles[i] = c.Title
	}
	n := "1 chart: "
	if len(g.Charts) != 1 {
		n = itoa(len(g.Charts)) + " charts: "
	}
	return n + strings.Join(titles, " · ")
}

// boundsLine is the closed bounds section's line.
func boundsLine(b *charts.Bounds) string {
	line := itoa(len(b.Rows)) + " points' bounds beside their measurements"
	for _, g := range b.Groups {
		line += " · " + g.Title
	}
	return line
}

// chartHeight is a chart's height as an inline style (the CSP allows style
// attributes): a chart whose legend takes more rows is taller.
func chartHeight(px int) templ.SafeCSS { return templ.SafeCSS("height: " + itoa(px) + "px") }
