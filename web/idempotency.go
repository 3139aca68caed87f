package web

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Idempotency-Key (the IETF httpapi draft): a client that may retry a
// POST /api/runs (its 202 lost to a timeout or a closed connection) sends
// a key of its own with it; a retry with the same key and the same
// document answers the run the first one queued, never a second run. The
// document is decoded and validated first, so a bad one gets its 4xx
// whatever the key; a key seen with another document is a 422, a key
// whose first request is still being handled a 409. Keys are kept in
// memory for idempotencyTTL (at most idempotencyMax of them), per client
// (clientID): a lab restarted since forgets them.
const (
	IdempotencyHeader = "Idempotency-Key"
	idempotencyTTL    = 24 * time.Hour
	idempotencyMax    = 10_000
	maxIdempotencyKey = 255
)

type idemEntry struct {
	runID   string // "" while the first request is in flight
	config  string // the config document's sha256
	created time.Time
}

// idempotency remembers the runs keys queued.
type idempotency struct {
	mu   sync.Mutex
	keys map[string]*idemEntry
}

func newIdempotency() *idempotency { return &idempotency{keys: map[string]*idemEntry{}} }

// idempotencyKey reads the request's key: "" without one, or an error
// message for a key that is not 1 to 255 printable ASCII characters.
func idempotencyKey(r *http.Request) (key, msg string) {
	vs := r.Header.Values(IdempotencyHeader)
	if len(vs) == 0 {
		return "", ""
	}
	key = vs[0]
	if len(vs) > 1 || key == "" || len(key) > maxIdempotencyKey {
		return "", fmt.Sprintf("the %s header must be given once, 1 to %d characters", IdempotencyHeader, maxIdempotencyKey)
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return "", fmt.Sprintf("the %s header must be printable ASCII: byte %d is not", IdempotencyHeader, i)
		}
	}
	return key, ""
}

// begin looks the key up for a document: the run a first request queued
// (runID), or a conflict (status 409 in flight, 422 another document), or
// neither, and then the key is held for this request until end.
func (m *idempotency) begin(key, config string, now time.Time) (runID string, status int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.keys[key]; ok && now.Sub(e.created) < idempotencyTTL {
		switch {
		case e.config != config:
			return "", http.StatusUnprocessableEntity
		case e.runID == "":
			return "", http.StatusConflict
		}
		return e.runID, 0
	}
	if len(m.keys) >= idempotencyMax {
		m.evict(now)
	}
	m.keys[key] = &idemEntry{config: config, created: now}
	return "", 0
}

// end records the run a held key queued, or forgets the key when the
// request queued none (runID "": a full queue, a shutdown), so a retry
// tries again.
func (m *idempotency) end(key, runID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if runID == "" {
		delete(m.keys, key)
		return
	}
	if e := m.keys[key]; e != nil {
		e.runID = runID
	}
}

// evict drops expired keys, then the oldest tenth if none expired;
// m.mu is held.
func (m *idempotency) evict(now time.Time) {
	for k, e := range m.keys {
		if now.Sub(e.created) >= idempotencyTTL {
			delete(m.keys, k)
		}
	}
	if len(m.keys) < idempotencyMax*9/10 {
		return
	}
	type aged struct {
		key string
		at  time.Time
	}
	var done []aged
	for k, e := range m.keys {
		if e.runID != "" {
			done = append(done, aged{k, e.created})
		}
	}
	slices.SortFunc(done, func(a, b aged) int { return a.at.Compare(b.at) })
	for _, a := range done[:min(len(done), idempotencyMax/10)] {
		delete(m.keys, a.key)
	}
}
