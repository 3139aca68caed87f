package web

import (
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/simulate"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/charts"
	"github.com/ratelab/ratelab/web/format"
)

// The decision diff, /diff?a=RUN:POINT&b=RUN:POINT[&eps_ms=]: two points of
// one run, or of two runs on the same arrivals, replayed side by side in
// the engine (experiments.DiffDecisions): how many requests they decide
// differently, when (a timeline), and the first disagreements with time
// and client; /diff.csv streams every disagreement. Both replay the
// arrivals, so both take a place of the heavy-request limit (routes.go).

// diffShown is how many disagreements the page lists (the CSV has all).
const diffShown = 50

// DiffData is the decision diff page.
type DiffData struct {
	A, B     DiffPoint
	Query    string // a=…&b=…[&eps_ms=…], for the CSV link
	Sum      *simulate.DiffSummary
	First    []simulate.Disagreement
	Timeline charts.Chart
}

// DiffPoint is one side: its run and point.
type DiffPoint struct {
	Run   *storage.Run
	Point int
}

// Label is "run:point".
func (p DiffPoint) Label() string { return p.Run.ID + ":" + strconv.Itoa(p.Point) }

// diffQuery is a parsed ?a=&b=&eps_ms=.
type diffQuery struct {
	a, b   [2]string // run id, point
	points [2]int
	eps    float64
}

// parseDiffQuery reads the query; errors say which parameter and why.
func parseDiffQuery(q url.Values) (*diffQuery, error) {
	d := &diffQuery{}
	for k := range q {
		if k != "a" && k != "b" && k != "eps_ms" {
			return nil, fmt.Errorf("unknown parameter %q: the decision diff takes a=RUN:POINT, b=RUN:POINT and eps_ms", format.Clip(k, 40))
		}
	}
	for i, name := range []string{"a", "b"} {
		v := q.Get(name)
		if v == "" {
			return nil, fmt.Errorf("%s: missing: give %s=RUN:POINT (a run id and a point number, as in the run's results table)", name, name)
		}
		id, p, ok := strings.Cut(v, ":")
		n, err := strconv.Atoi(p)
		if !ok || err != nil || n < 0 {
			return nil, fmt.Errorf("%s: %q is not RUN:POINT (a run id, a colon, a point number from 0)", name, format.Clip(v, 60))
		}
		if !storage.ValidID(id) {
			return nil, fmt.Errorf("%s: %q is not a run id", name, format.Clip(id, 40))
		}
		if i == 0 {
			d.a = [2]string{id, p}
		} else {
			d.b = [2]string{id, p}
		}
		d.points[i] = n
	}
	if v := q.Get("eps_ms"); v != "" {
		eps, err := strconv.ParseFloat(v, 64)
		if err != nil || !(eps > 0 && eps <= simulate.MaxDecisionEpsMS) {
			return nil, fmt.Errorf("eps_ms: %q: give the release-time tolerance in ms, above 0 and at most %d (default %g)", format.Clip(v, 20), simulate.MaxDecisionEpsMS, simulate.DecisionEpsMS)
		}
		d.eps = eps
	}
	return d, nil
}

// diffSides loads both runs and checks the points can be diffed; on a
// problem it answers and returns false.
func (s *Server) diffSides(w http.ResponseWriter, r *http.Request) (*diffQuery, [2]DiffPoint, [2]simulate.DiffSide, bool) {
	var pts [2]DiffPoint
	var sides [2]simulate.DiffSide
	q, err := parseDiffQuery(r.URL.Query())
	if err != nil {
		s.errorPage(w, r, http.StatusBadRequest, "Cannot diff decisions", err.Error())
		return nil, pts, sides, false
	}
	for i, id := range []string{q.a[0], q.b[0]} {
		run, err := s.store.Get(r.Context(), id)
		if errors.Is(err, storage.ErrNotFound) {
			s.errorPage(w, r, http.StatusNotFound, "No such run", fmt.Sprintf("There is no run %q to diff (deleted?). Runs are listed at /runs.", id))
			return nil, pts, sides, false
		}
		if err != nil {
			s.internalError(w, r, "read a run", err)
			return nil, pts, sides, false
		}
		cfg, err := document.DecodeConfig(run.Config)
		if err != nil {
			s.errorPage(w, r, http.StatusUnprocessableEntity, "Cannot diff decisions", fmt.Sprintf("Run %s's stored config no longer decodes: %v", id, err))
			return nil, pts, sides, false
		}
		pts[i] = DiffPoint{Run: run, Point: q.points[i]}
		sides[i] = simulate.DiffSide{Config: cfg, Point: q.points[i]}
	}
	if err := simulate.CheckDiff(sides[0], sides[1]); err != nil {
		s.errorPage(w, r, http.StatusUnprocessableEntity, "Cannot diff decisions", "The two points cannot be compared request by request: "+err.Error()+".")
		return nil, pts, sides, false
	}
	return q, pts, sides, true
}

func (s *Server) diffPage(w http.ResponseWriter, r *http.Request) {
	q, pts, sides, ok := s.diffSides(w, r)
	if !ok {
		return
	}
	d := &DiffData{A: pts[0], B: pts[1], Query: r.URL.RawQuery}
	sum, err := simulate.DiffDecisions(r.Context(), sides[0], sides[1], q.eps, func(x *simulate.Disagreement) error {
		if len(d.First) < diffShown {
			d.First = append(d.First, *x)
		}
		return nil
	})
	if err != nil {
		if r.Context().Err() == nil {
			s.errorPage(w, r, http.StatusUnprocessableEntity, "Cannot diff decisions", err.Error())
		}
		return
	}
	d.Sum = sum
	d.Timeline = charts.DiffTimeline(sum)
	s.render(w, r, http.StatusOK, DiffPage(d))
}

// diffCSV streams every disagreement as CSV: seq, time_ms, client, a, b
// (admitted or rejected), release_a_ms, release_b_ms (empty when
// rejected).
func (s *Server) diffCSV(w http.ResponseWriter, r *http.Request) {
	q, pts, sides, ok := s.diffSides(w, r)
	if !ok {
		return
	}
	name := fmt.Sprintf("decisions-%s-%d-vs-%s-%d.csv", pts[0].Run.ID, pts[0].Point, pts[1].Run.ID, pts[1].Point)
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", attachment(name))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	cw := csv.NewWriter(w)
	cw.Write([]string{"seq", "time_ms", "client", "a", "b", "release_a_ms", "release_b_ms"})
	clients, err := sides[0].Clients()
	if err != nil {
		s.log.Warn("decision diff CSV", "err", err)
		return
	}
	row := make([]string, 7)
	_, err = simulate.DiffDecisions(r.Context(), sides[0], sides[1], q.eps, func(x *simulate.Disagreement) error {
		row[0] = strconv.FormatInt(x.Seq, 10)
		row[1] = msText(x.TimeMS)
		row[2] = strconv.Itoa(int(x.Client))
		if int(x.Client) < len(clients) {
			row[2] = csvText(clients[x.Client].Name)
		}
		row[3], row[4] = decided(x.AdmittedA), decided(x.AdmittedB)
		row[5], row[6] = msText(x.ReleaseA), msText(x.ReleaseB)
		return cw.Write(row)
	})
	cw.Flush()
	if err != nil && r.Context().Err() == nil {
		s.log.Warn("decision diff CSV ended early", "a", pts[0].Label(), "b", pts[1].Label(), "err", err)
	}
}

// csvText is a text cell made safe for spreadsheets: one that would
// start a formula gets an apostrophe, as the lab's CSVs do.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func decided(ok bool) string {
	if ok {
		return "admitted"
	}
	return "rejected"
}

// msText prints a time in ms to the µs ("" for NaN: rejected).
func msText(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// clientOf is a disagreement's client name on the page.
func (d *DiffData) clientOf(c int32) string {
	if int(c) < len(d.Sum.Clients) {
		return d.Sum.Clients[c].Name
	}
	return strconv.Itoa(int(c))
}
