package web

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/format"
)

// The run list's view, the same for the page (/runs) and GET /api/runs:
// ?q= the query (storage.ParseQuery: comparisons of columns, or plain
// text found in names, ids and limiter labels), ?tag= (repeated: runs
// with every one), ?status=, ?sort= (name, created, status, points, or a
// value column) with ?dir=asc|desc (as a run page's tables; ?order= still
// read), ?cols= the value columns shown (comma-separated or repeated;
// absent: DefaultRunColumns; present and empty: none), ?page=. Links
// keep every one of them.

// DefaultRunColumns are the value columns a list shows when ?cols= is
// absent.
var DefaultRunColumns = []string{"goodput_rps", "reject_pct", "sojourn_p99_ms"}

// ownSorts are the run's own sort keys (storage.ListSorts).
var ownSorts = map[string]bool{"name": true, "created": true, "status": true, "points": true}

// maxRunColumns is the most value columns one list shows.
const maxRunColumns = 30

// RunsView is what a list's address asks for.
type RunsView struct {
	List storage.ListQuery
	// Cols are the value columns shown; ColsGiven: ?cols= was in the
	// address (else the defaults).
	Cols      []string
	ColsGiven bool
	Page      int
}

// runsView reads a list's address; a bad direction, page or column list
// is an error that names the parameter (its path for the API's problem).
func runsView(v url.Values) (RunsView, string, string) {
	view := RunsView{Page: 1, List: storage.ListQuery{Sort: v.Get("sort"), Status: v.Get("status"), Query: v.Get("q")}}
	for _, t := range v["tag"] {
		view.List.Tags = append(view.List.Tags, storage.SplitTags(t)...)
	}
	if p := v.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return view, "page", fmt.Sprintf("?page=%s is not a page: give a whole number from 1 (the newest runs).", format.Clip(p, 20))
		}
		view.Page = n
	}
	dir := v.Get("dir")
	if dir == "" {
		dir = v.Get("order") // the list's old name for it
	}
	switch dir {
	case "", "desc":
	case "asc":
		view.List.Asc = true
	default:
		return view, "dir", "?dir= is asc or desc."
	}
	if raw, ok := v["cols"]; ok {
		view.ColsGiven = true
		for _, c := range raw {
			for _, k := range strings.Split(c, ",") {
				if k = strings.TrimSpace(k); k != "" && !slices.Contains(view.Cols, k) {
					view.Cols = append(view.Cols, k)
				}
			}
		}
		if len(view.Cols) > maxRunColumns {
			return view, "cols", fmt.Sprintf("?cols= names %d columns; at most %d.", len(view.Cols), maxRunColumns)
		}
	} else {
		view.Cols = slices.Clone(DefaultRunColumns)
	}
	return view, "", ""
}

// checkCols keeps the columns some run has values for (known), and says
// which it dropped ("" when none): "?cols= names no column `x` (did you
// mean ...)".
func (view *RunsView) checkCols(known []storage.ValueColumn) string {
	var kept, dropped []string
	for _, c := range view.Cols {
		if slices.ContainsFunc(known, func(k storage.ValueColumn) bool { return k.Key == c }) {
			kept = append(kept, c)
		} else {
			dropped = append(dropped, "`"+format.Clip(c, 40)+"`")
		}
	}
	if !view.ColsGiven {
		view.Cols = kept // the defaults no run has yet are left out quietly
		return ""
	}
	view.Cols = kept
	if len(dropped) == 0 {
		return ""
	}
	return fmt.Sprintf("?cols= names %s, which no run has a value for: left out.", strings.Join(dropped, ", "))
}

// values is the address of the list at page, sorted by sort (asc), with
// the view's query, tags, status and columns.
func (view RunsView) values(page int, sort string, asc bool) url.Values {
	v := url.Values{}
	if view.List.Query != "" {
		v.Set("q", view.List.Query)
	}
	for _, t := range view.List.Tags {
		v.Add("tag", t)
	}
	if view.List.Status != "" {
		v.Set("status", view.List.Status)
	}
	if sort != "" && sort != "created" {
		v.Set("sort", sort)
	}
	if asc {
		v.Set("dir", "asc")
	}
	if view.ColsGiven {
		v.Set("cols", strings.Join(view.Cols, ","))
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	return v
}

func listURL(v url.Values) string {
	if len(v) == 0 {
		return "/runs"
	}
	return "/runs?" + v.Encode()
}

// queryURL is the run list at page with the data's view.
func (d RunsData) queryURL(page int, sort string, asc bool) string {
	return listURL(d.View.values(page, sort, asc))
}

// pageLink is page n of the list with its view.
func (d RunsData) pageLink(n int) string { return d.queryURL(n, d.View.List.Sort, d.View.List.Asc) }

// sortLink sorts by key, the other way when it is the current sort. The
// first click follows the one convention of every sortable table: best
// first for a value column (firstDirOf: highest first for goodput,
// admitted rate, Jain's index, utilization; lowest first for delays,
// shares refused, parameters, text), names A to Z, the newest runs and
// the most points first.
func (d RunsData) sortLink(key string) string {
	cur := d.View.List.Sort
	if cur == "" {
		cur = "created"
	}
	asc := key == "name" || key == "status"
	if _, own := ownSorts[key]; !own {
		asc = firstDirOf(nil, key) == "asc"
	}
	if key == cur {
		asc = !d.View.List.Asc
	}
	return d.queryURL(1, key, asc)
}

// sortMark is the arrow of the current sort's column.
func (d RunsData) sortMark(key string) string {
	cur := d.View.List.Sort
	if cur == "" {
		cur = "created"
	}
	switch {
	case key != cur:
		return ""
	case d.View.List.Asc:
		return " ▲"
	}
	return " ▼"
}

// tagLink is the list filtered by one more tag.
func (d RunsData) tagLink(tag string) string {
	v := d.View.values(1, d.View.List.Sort, d.View.List.Asc)
	if !slices.Contains(d.View.List.Tags, tag) {
		v.Add("tag", tag)
	}
	return listURL(v)
}

// untagLink is the list without one of its tag filters.
func (d RunsData) untagLink(tag string) string {
	v := d.View.values(1, d.View.List.Sort, d.View.List.Asc)
	v.Del("tag")
	for _, t := range d.View.List.Tags {
		if t != tag {
			v.Add("tag", t)
		}
	}
	return listURL(v)
}

// here is the list as shown (a labels form returns to it).
func (d RunsData) here() string { return d.pageLink(d.View.Page) }
