package web

import (
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// The Host allow-list: a page on a foreign name that resolves to 127.0.0.1
// (DNS rebinding) is same-origin with itself, so the cross-origin check
// passes it; its requests still name the foreign host, and get 421.

// hostPolicy is the set of Host header values a server answers.
type hostPolicy struct {
	exact   map[string]bool // "localhost:8080", "[::1]:8080", "lab.example.org:8443"
	anyPort map[string]bool // names allowed on any port: "lab.example.org"
	port    string
}

var hostName = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)

// ParseHosts reads a comma-separated list of names a deployment serves
// (lab serve --allowed-hosts): "lab.example.org" (any port) or
// "lab.example.org:8443", IP addresses ("192.0.2.7", "[2001:db8::1]:8080")
// too. It returns them in lower case.
func ParseHosts(list string) ([]string, error) {
	var out []string
	for h := range strings.SplitSeq(list, ",") {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" {
			continue
		}
		name, port := splitHost(h)
		if port != "" {
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port[0] == '0' {
				return nil, fmt.Errorf("%q: the port must be a whole number from 1 to 65535", h)
			}
		}
		ip := net.ParseIP(strings.Trim(name, "[]"))
		switch {
		case strings.HasPrefix(name, "[") && (ip == nil || ip.To4() != nil):
			return nil, fmt.Errorf("%q: only an IPv6 address goes in brackets", h)
		case ip != nil && ip.To4() == nil && !strings.HasPrefix(name, "["):
			return nil, fmt.Errorf("%q: write an IPv6 address in brackets, as in [2001:db8::1]:8080", h)
		case ip == nil && (!hostName.MatchString(name) || len(name) > 253):
			return nil, fmt.Errorf("%q is not a host name (letters, digits, '-' and '.'), optionally with :port", h)
		}
		out = append(out, h)
	}
	return out, nil
}

// splitHost splits "name:port", "[v6]:port", "name" or "[v6]".
func splitHost(h string) (name, port string) {
	if strings.HasPrefix(h, "[") {
		if i := strings.LastIndex(h, "]"); i >= 0 {
			name, rest := h[:i+1], h[i+1:]
			if p, ok := strings.CutPrefix(rest, ":"); ok {
				return name, p
			}
			return name, ""
		}
		return h, ""
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		return h[:i], h[i+1:]
	}
	return h, ""
}

// newHostPolicy allows, on the port the server listens on, localhost,
// 127.0.0.1 and [::1], the address it listens on when it is one, and the
// extra names (see ParseHosts). A request on port 80 may leave it out.
func newHostPolicy(listen string, extra []string) (*hostPolicy, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w", listen, err)
	}
	p := &hostPolicy{exact: map[string]bool{}, anyPort: map[string]bool{}, port: port}
	names := []string{"localhost", "127.0.0.1", "[::1]"}
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		if ip.To4() == nil {
			names = append(names, "["+ip.String()+"]")
		} else {
			names = append(names, ip.String())
		}
	}
	for _, n := range names {
		p.exact[n+":"+port] = true
		if port == "80" {
			p.exact[n] = true
		}
	}
	for _, h := range extra {
		if name, port := splitHost(strings.ToLower(h)); port != "" {
			p.exact[name+":"+port] = true
		} else {
			p.anyPort[name] = true
		}
	}
	return p, nil
}

func (p *hostPolicy) allows(host string) bool {
	h := strings.ToLower(host)
	if p.exact[h] {
		return true
	}
	name, _ := splitHost(h)
	return p.anyPort[name]
}

// checkHost answers 421 Misdirected Request to a Host the server does not
// serve.
func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hosts.allows(r.Host) {
			s.fail(w, r, http.StatusMisdirectedRequest, "Host not served",
				fmt.Sprintf("this lab does not answer for the host %q: open it as localhost:%s, 127.0.0.1:%s or [::1]:%s, or start lab serve with --allowed-hosts naming the host",
					clipHost(r.Host), s.hosts.port, s.hosts.port, s.hosts.port))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func clipHost(h string) string {
	if len(h) > 80 {
		return h[:80] + "…"
	}
	return h
}
