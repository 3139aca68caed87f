package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHostAllowList: on a loopback address only localhost, 127.0.0.1 and
// [::1] with the lab's port are served (and the address itself); names
// from --allowed-hosts are served on any port, or on theirs; everything
// else gets 421.
func TestHostAllowList(t *testing.T) {
	t.Parallel()
	extra, err := ParseHosts(" Lab.Example.org , 192.0.2.7:8443,[2001:db8::1]")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		listen string
		host   string
		ok     bool
	}{
		{"127.0.0.1:8080", "localhost:8080", true},
		{"127.0.0.1:8080", "LOCALHOST:8080", true},
		{"127.0.0.1:8080", "127.0.0.1:8080", true},
		{"127.0.0.1:8080", "[::1]:8080", true},
		{"127.0.0.1:8080", "localhost", false}, // port 8080 must be named
		{"127.0.0.1:8080", "localhost:8081", false},
		{"127.0.0.1:8080", "evil.example:8080", false},
		{"127.0.0.1:8080", "localhost.:8080", false},
		{"127.0.0.1:8080", "127.0.0.2:8080", false},
		{"127.0.0.1:8080", "", false},
		{"127.0.0.1:8080", "lab.example.org", true},
		{"127.0.0.1:8080", "lab.example.org:443", true},
		{"127.0.0.1:8080", "sub.lab.example.org", false},
		{"127.0.0.1:8080", "192.0.2.7:8443", true},
		{"127.0.0.1:8080", "192.0.2.7:8080", false},
		{"127.0.0.1:8080", "[2001:db8::1]:9000", true},
		{"127.0.0.1:80", "localhost", true},
		{"127.0.0.1:80", "127.0.0.1", true},
		{"[::1]:8080", "[::1]:8080", true},
		{"192.0.2.10:8080", "192.0.2.10:8080", true},
		{"0.0.0.0:8080", "0.0.0.0:8080", false},
		{"0.0.0.0:8080", "localhost:8080", true},
	}
	for _, c := range cases {
		p, err := newHostPolicy(c.listen, extra)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.allows(c.host); got != c.ok {
			t.Errorf("listening on %s, Host %q: served %v, want %v", c.listen, c.host, got, c.ok)
		}
	}
	for _, bad := range []string{"evil example", "a_b.example", "lab.example.org:0", "lab.example.org:99999", "lab.example.org:x", "2001:db8::1", "[192.0.2.1]", "-lab.example"} {
		if _, err := ParseHosts(bad); err == nil {
			t.Errorf("ParseHosts(%q) took it", bad)
		}
	}
}

// TestAllowedHostsServed: a deployment's name is served; a rebinding name
// is refused with 421 before anything else runs (no run is stored).
func TestAllowedHostsServed(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	l.srv = New(l.store, l.runner, Options{Listen: testHost, AllowedHosts: []string{"lab.example.org"}})
	for host, want := range map[string]int{"lab.example.org": http.StatusOK, "localhost:8080": http.StatusOK, "rebind.example:8080": http.StatusMisdirectedRequest} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Host = host
		if w := l.do(req); w.Code != want {
			t.Errorf("GET / with Host %s: %d, want %d", host, w.Code, want)
		}
	}
	req := httptest.NewRequest(http.MethodPost, "/api/runs", strings.NewReader(goodDoc))
	req.Host = "rebind.example:8080"
	req.Header.Set("Origin", "http://rebind.example:8080")
	req.Header.Set("Content-Type", "application/json")
	if w := l.do(req); w.Code != http.StatusMisdirectedRequest {
		t.Errorf("rebinding post: %d", w.Code)
	}
	req.Host = "lab.example.org"
	req.Header.Set("Origin", "http://lab.example.org")
	req.Body = io.NopCloser(strings.NewReader(goodDoc))
	if w := l.do(req); w.Code != http.StatusAccepted {
		t.Errorf("post on the deployment's name: %d %s", w.Code, w.Body)
	}
}
