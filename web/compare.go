package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/charts"
	"github.com/ratelab/ratelab/web/format"
)

// The compare page, /compare?runs=a,b: the runs' config documents side by
// side, field by field (only the fields that differ), and their measures
// overlaid per swept parameter (web/charts/compare.go). It is a
// permalink: the /runs list's checkboxes send runs=a&runs=b, which
// redirects to the one-parameter form.

// MaxCompareRuns bounds the runs of one comparison (each is a whole
// stored result in memory, and lines beyond a few stop being readable).
const MaxCompareRuns = 6

// maxDiffRows bounds the config diff's rows.
const maxDiffRows = 400

// CompareData is the compare page.
type CompareData struct {
	Runs []*storage.Run
	// Diff is the config fields that differ between the runs, in the
	// first document's order, then the others'; Same counts the fields
	// every run has with the same value.
	Diff      []DiffRow
	Same      int
	Clipped   bool // more than maxDiffRows rows differ
	Groups    []*charts.Group
	NoResults []string // runs without results (not done): config only
	// Answers are the runs' answers side by side (nil when no run has
	// objectives).
	Answers *charts.AnswerCompare
}

// DiffRow is one config path and each run's value there (compact JSON;
// "" where the run's document has no such field).
type DiffRow struct {
	Path   string
	Values []string
}

// parseCompareRuns reads ?runs=: comma-separated run ids, given once or
// repeated. canonical is false when the query is not already the
// one-parameter form (the handler redirects there).
func parseCompareRuns(q url.Values) (ids []string, canonical bool, err error) {
	vals := q["runs"]
	for k := range q {
		if k != "runs" {
			return nil, false, fmt.Errorf("unknown parameter %q: the compare page takes runs=ID,ID,…", format.Clip(k, 40))
		}
	}
	canonical = len(vals) == 1
	for _, v := range vals {
		for _, id := range strings.Split(v, ",") {
			id = strings.TrimSpace(id)
			if id == "" {
				canonical = false
				continue
			}
			if !storage.ValidID(id) {
				return nil, false, fmt.Errorf("runs: %q is not a run id (12 letters a–z and digits 2–7)", format.Clip(id, 40))
			}
			if slices.Contains(ids, id) {
				return nil, false, fmt.Errorf("runs: %s is given twice", id)
			}
			ids = append(ids, id)
			if len(ids) > MaxCompareRuns {
				return nil, false, fmt.Errorf("runs: more than %d runs; compare at most %d at once", MaxCompareRuns, MaxCompareRuns)
			}
		}
	}
	switch len(ids) {
	case 0:
		return nil, false, errors.New("runs: missing: pick two or more runs on the run list (/runs) and press Compare, or give runs=ID,ID")
	case 1:
		return nil, false, fmt.Errorf("runs: only %s: a comparison needs two or more runs (a run's own page is /runs/%s)", ids[0], ids[0])
	}
	return ids, canonical, nil
}

func (s *Server) comparePage(w http.ResponseWriter, r *http.Request) {
	ids, canonical, err := parseCompareRuns(r.URL.Query())
	if err != nil {
		s.errorPage(w, r, http.StatusBadRequest, "Cannot compare", err.Error())
		return
	}
	if !canonical {
		http.Redirect(w, r, "/compare?runs="+strings.Join(ids, ","), http.StatusSeeOther)
		return
	}
	d := &CompareData{}
	var docs [][]byte
	for _, id := range ids {
		run, err := s.store.Get(r.Context(), id)
		if errors.Is(err, storage.ErrNotFound) {
			s.errorPage(w, r, http.StatusNotFound, "No such run", fmt.Sprintf("There is no run %q to compare (deleted?). Runs are listed at /runs.", id))
			return
		}
		if err != nil {
			s.internalError(w, r, "read a run", err)
			return
		}
		d.Runs = append(d.Runs, run)
		docs = append(docs, run.Config)
	}
	d.Diff, d.Same, d.Clipped = configDiff(docs)
	// The runs' results: whole results in memory, a heavy request.
	if !s.heavy.enter(r.Context()) {
		s.overloaded(w, r)
		return
	}
	defer s.heavy.leave()
	var cr []charts.CompareRun
	for _, run := range d.Runs {
		if !storage.HasResults(run.Status) {
			d.NoResults = append(d.NoResults, run.ID)
			continue
		}
		res, err := s.store.Result(r.Context(), run.ID)
		if errors.Is(err, storage.ErrNotFound) {
			d.NoResults = append(d.NoResults, run.ID)
			continue
		}
		if err != nil {
			s.internalError(w, r, "read a run's results", err)
			return
		}
		cr = append(cr, charts.CompareRun{Label: run.ID, Res: res})
	}
	d.Groups = charts.Compare(cr)
	d.Answers = charts.CompareAnswers(cr)
	s.render(w, r, http.StatusOK, ComparePage(d))
}

// configDiff flattens each config document to its leaves by config path
// (limiters[0].burst; a list of plain values is one leaf) and returns the
// paths whose values are not all the same, and how many are.
func configDiff(docs [][]byte) (rows []DiffRow, same int, clipped bool) {
	var order []string
	values := map[string][]string{}
	for k, doc := range docs {
		var v any
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil && err != io.EOF {
			v = map[string]any{"(document)": "does not decode: " + err.Error()}
		}
		flatten("", v, func(path, val string) {
			vs, ok := values[path]
			if !ok {
				order = append(order, path)
				vs = make([]string, len(docs))
				values[path] = vs
			}
			vs[k] = val
		})
	}
	for _, p := range order {
		vs := values[p]
		if allSame(vs) {
			same++
			continue
		}
		if len(rows) == maxDiffRows {
			clipped = true
			continue
		}
		rows = append(rows, DiffRow{Path: p, Values: vs})
	}
	return rows, same, clipped
}

func allSame(vs []string) bool {
	for _, v := range vs[1:] {
		if v != vs[0] {
			return false
		}
	}
	return true
}

// flatten calls leaf for every leaf of a decoded JSON value: objects by
// key (a.b), lists of objects or lists by index (a[0]); a list of plain
// values, an empty object or list and a scalar are one leaf, printed as
// compact JSON (clipped to 200 characters).
func flatten(path string, v any, leaf func(path, val string)) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			break
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			flatten(p, x[k], leaf)
		}
		return
	case []any:
		nested := false
		for _, e := range x {
			switch e.(type) {
			case map[string]any, []any:
				nested = true
			}
		}
		if !nested {
			break
		}
		keys := elementKeys(path, x)
		for i, e := range x {
			flatten(path+"["+keys[i]+"]", e, leaf)
		}
		return
	}
	leaf(path, format.Clip(compactJSON(v), 200))
}

// elementKeys name the elements of a list in config paths: the limiters
// by their name and type (`limiters[tb: token-bucket]`, or the type alone
// for one without a name of its own; a second limiter of the same name
// and type gets " #2"), so two runs with the same limiters in another
// order show no difference; the elements of any other list by index.
func elementKeys(path string, list []any) []string {
	keys := make([]string, len(list))
	seen := map[string]int{}
	for i, e := range list {
		keys[i] = strconv.Itoa(i)
		m, ok := e.(map[string]any)
		if path != "limiters" || !ok {
			continue
		}
		typ, _ := m["type"].(string)
		name, _ := m["name"].(string)
		k := typ
		if name != "" && name != typ {
			k = name + ": " + typ
		}
		seen[k]++
		if n := seen[k]; n > 1 {
			k += " #" + strconv.Itoa(n)
		}
		keys[i] = k
	}
	return keys
}

// compactJSON is v as compact JSON, with <, > and & as they are (a
// diff cell is HTML-escaped by the page, not by the encoder: `<=`, not
// `\u003c=`).
func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%v", v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// compareIDs are the runs' ids.
func compareIDs(runs []*storage.Run) []string {
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids
}
