package web

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/charts"
)

// The page cache: a finished run never changes, so its page is rendered
// once and kept, up to Options.PageCacheBytes in all (least recently used
// pages go first), with a strong ETag (the sha256 of the bytes) that
// answers a revalidation with 304.
//
// An entry is keyed by run id, the point of its time-series charts
// (?point=N, resolved: an out-of-range N is the default's page), the
// format of its deploy section (?format=, a known format's name or "") and the
// engine version that rendered it, and the results table's order and
// filter and the Pareto chart's columns (?sort, dir, feasible, px, py:
// charts.Query, cleaned). It records the state of the run it
// shows (runStamp). A finished run changes only when it, or the run it
// re-ran, is deleted (a re-run then loses its rerun_of link), so a hit is
// served without touching the database while no run has been deleted
// since the entry was last checked (storage.Store.Deletions) and that
// check is less than pageRecheck old (for a run deleted by another
// process); otherwise the run's row is read again (one small row, no
// config) and the page rendered afresh if the state changed. A deleted
// run is a 404 and drops its pages. Pages of queued and running runs, and
// re-run pages whose original has not finished, are never cached.
// Concurrent misses of one key render once.

// pageRecheck is how long a cached page is served without reading its
// run's row again.
const pageRecheck = time.Second

// pageKey names one rendered page.
type pageKey struct {
	id     string
	point  int    // -1: the default point
	format string // the deploy section's format (?format=), "" unless a known one
	// view is the rest of what the address asks (results table order,
	// filter and columns, settings table order and filter, Pareto
	// columns), cleaned; its Point is unused (0).
	view   charts.Query
	engine string
}

// pageEntry is one rendered page.
type pageEntry struct {
	key  pageKey
	body []byte
	etag string
	// gzipped is body gzip-compressed, made once by the first client
	// that takes gzip (gzipOnce); its ETag is gzipETag(etag).
	gzipOnce sync.Once
	gzipped  []byte
	// stamp is the run's state when rendered (runStamp).
	stamp string
	// gen and checked are the store's Deletions and the time when the
	// stamp was last found current (guarded by pageCache.mu).
	gen     uint64
	checked time.Time
	// cacheable is false for a page that may still change.
	cacheable bool
	elem      *list.Element
}

// cost is what an entry counts against the cache's bound: with its gzip
// bytes, a sixth of the page at most (they are made after it is kept).
func (e *pageEntry) cost() int {
	return len(e.body) + len(e.body)/6 + len(e.etag) + len(e.key.id) + len(e.key.view.Cols) + len(e.key.view.SettingsSort) + 256
}

// gzip is the page gzip-compressed, compressed on the first call.
func (e *pageEntry) gzip() []byte {
	e.gzipOnce.Do(func() { e.gzipped = gzipBytes(e.body) })
	return e.gzipped
}

// pageCache is a byte-bounded LRU of rendered pages, safe for concurrent
// use.
type pageCache struct {
	max int // bytes; <= 0: nothing is kept

	mu      sync.Mutex
	size    int
	entries map[pageKey]*pageEntry
	lru     *list.List // of *pageEntry, most recently used first
	flights map[pageKey]*flight

	renders atomic.Int64 // pages rendered by do, for tests
}

// flight is one render that concurrent misses of its key wait for.
type flight struct {
	done chan struct{}
	e    *pageEntry
	err  error
}

func newPageCache(max int) *pageCache {
	return &pageCache{max: max, entries: map[pageKey]*pageEntry{}, lru: list.New(), flights: map[pageKey]*flight{}}
}

// get returns the entry of key, or nil.
func (c *pageCache) get(key pageKey) *pageEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[key]
	if e != nil {
		c.lru.MoveToFront(e.elem)
	}
	return e
}

// fresh returns key's entry when it was found current within pageRecheck
// of now and no run has been deleted since (gen is the store's
// Deletions), else nil.
func (c *pageCache) fresh(key pageKey, gen uint64, now time.Time) *pageEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[key]
	if e == nil || e.gen != gen || now.Sub(e.checked) >= pageRecheck || now.Before(e.checked) {
		return nil
	}
	c.lru.MoveToFront(e.elem)
	return e
}

// confirm records that e's stamp was current at now, under gen.
func (c *pageCache) confirm(e *pageEntry, gen uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.gen, e.checked = gen, now
}

// do renders key's page with render, once for all concurrent callers,
// and keeps it when it is cacheable and fits. A caller whose ctx ends
// stops waiting for another's render.
func (c *pageCache) do(ctx context.Context, key pageKey, render func() (*pageEntry, error)) (*pageEntry, error) {
	c.mu.Lock()
	if f, ok := c.flights[key]; ok {
		c.mu.Unlock()
		select {
		case <-f.done:
			return f.e, f.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &flight{done: make(chan struct{})}
	c.flights[key] = f
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.flights, key)
		if f.err == nil && f.e != nil && f.e.cacheable {
			c.putLocked(f.e)
		}
		c.mu.Unlock()
		close(f.done)
	}()
	c.renders.Add(1)
	f.err = errRenderPanicked // until render returns
	f.e, f.err = render()
	if f.e != nil {
		f.e.key = key
	}
	return f.e, f.err
}

// putLocked adds e, replacing the entry of its key, and evicts the least
// recently used entries past the bound. A page larger than a quarter of
// the bound is not kept.
func (c *pageCache) putLocked(e *pageEntry) {
	if old := c.entries[e.key]; old != nil {
		c.removeLocked(old)
	}
	if e.cost() > c.max/4 {
		return
	}
	e.elem = c.lru.PushFront(e)
	c.entries[e.key] = e
	c.size += e.cost()
	for c.size > c.max {
		c.removeLocked(c.lru.Back().Value.(*pageEntry))
	}
}

func (c *pageCache) removeLocked(e *pageEntry) {
	c.lru.Remove(e.elem)
	delete(c.entries, e.key)
	c.size -= e.cost()
}

// remove drops one entry (if it is still the entry of its key).
func (c *pageCache) remove(e *pageEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries[e.key] == e {
		c.removeLocked(e)
	}
}

// drop removes every page of run id.
func (c *pageCache) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.key.id == id {
			c.removeLocked(e)
		}
	}
}

// usage reports the entries and bytes held, for tests.
func (c *pageCache) usage() (entries, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries), c.size
}

// errRenderPanicked is what waiters of a render that panicked get.
var errRenderPanicked = errors.New("the page render failed")

// etagOf is the strong ETag of a page's bytes.
func etagOf(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// runStamp is the state of a stored run that its page shows. A finished
// run keeps its stamp until it is deleted, or its original is (rerun_of
// becomes empty).
func runStamp(r *storage.Run) string {
	s := strconv.FormatInt(r.CreatedAt.UnixNano(), 36) + "/" + r.Status + "/" + strconv.Itoa(r.PointsDone) + "/" + r.RerunOf
	if r.FinishedAt != nil {
		s += "/" + strconv.FormatInt(r.FinishedAt.UnixNano(), 36)
	}
	return s
}
