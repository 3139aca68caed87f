package web

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/format"
)

// The run list's sort and filter: ?sort=name|created|status|points,
// ?dir=asc|desc (as a run page's tables; ?order= still read), ?status=<a status>, ?q=<text in a name, id or
// limiter>; the pager and the column headers keep them.

// runsQuery reads the list's query from a URL; a bad one is a notice.
func runsQuery(v url.Values) (storage.ListQuery, string) {
	q := storage.ListQuery{Sort: v.Get("sort"), Status: v.Get("status"), Text: strings.TrimSpace(format.Clip(v.Get("q"), 200))}
	dir := v.Get("dir")
	if dir == "" {
		dir = v.Get("order") // the list's old name for it
	}
	switch dir {
	case "", "desc":
	case "asc":
		q.Asc = true
	default:
		return storage.ListQuery{}, "?dir= is asc or desc."
	}
	return q, ""
}

// queryURL is the run list at page with the data's query.
func (d RunsData) queryURL(page int, sort string, asc bool) string {
	v := url.Values{}
	if sort != "" && sort != "created" {
		v.Set("sort", sort)
	}
	if asc {
		v.Set("dir", "asc")
	}
	if d.Query.Status != "" {
		v.Set("status", d.Query.Status)
	}
	if d.Query.Text != "" {
		v.Set("q", d.Query.Text)
	}
	if page > 1 {
		v.Set("page", strconv.Itoa(page))
	}
	if len(v) == 0 {
		return "/runs"
	}
	return "/runs?" + v.Encode()
}

// pageLink is page n of the list with its query.
func (d RunsData) pageLink(n int) string { return d.queryURL(n, d.Query.Sort, d.Query.Asc) }

// sortLink sorts by key: descending first, the other way when it is the
// current sort.
func (d RunsData) sortLink(key string) string {
	cur := d.Query.Sort
	if cur == "" {
		cur = "created"
	}
	asc := key == "name" // names read A to Z first
	if key == cur {
		asc = !d.Query.Asc
	}
	return d.queryURL(1, key, asc)
}

// sortMark is the arrow of the current sort's column.
func (d RunsData) sortMark(key string) string {
	cur := d.Query.Sort
	if cur == "" {
		cur = "created"
	}
	switch {
	case key != cur:
		return ""
	case d.Query.Asc:
		return " ▲"
	}
	return " ▼"
}
