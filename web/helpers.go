package web

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/storage"
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
	return fmt.Sprintf("%d / %d", r.PointsDone, r.PointsTotal)
}

func joinLimiters(ls []string) string { return strings.Join(ls, ", ") }

func pageURL(page int) string { return "/runs?page=" + strconv.Itoa(page) }

// dash shows a missing bound.
func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
