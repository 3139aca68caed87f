package accesslog

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// HAProxy's HTTP logs: a log-format string (HAProxy's %-variables) turned
// into a definition over the reader's variables, as Envoy's is.

// HAProxyHTTPLog is the log-format of HAProxy 2.x's `option httplog`.
const HAProxyHTTPLog = `%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC %CS %tsc %ac/%fc/%bc/%sc/%rc %sq/%bq %hr %hs %{+Q}r`

// HAProxyHTTPSLog is the log-format of HAProxy 2.x's `option httpslog`.
const HAProxyHTTPSLog = HAProxyHTTPLog + ` %[fc_err]/%[ssl_fc_err,hex]/%[ssl_c_err]/%[ssl_c_ca_err]/%[ssl_fc_is_resumed] %[ssl_fc_sni]/%sslv/%sslc`

// haproxyConfig is what a HAProxy definition says about its log lines.
type haproxyConfig struct {
	logFormat string
	reqCaps   []string // capture request header NAME, in order
	respCaps  []string // capture response header NAME
}

// readHAProxyDef reads a HAProxy log definition: "" (option httplog);
// the log-format string itself ("%ci:%cp [%tr] ..."); or lines of
// HAProxy's configuration (a frontend pasted as it is): `option httplog`,
// `option httpslog`, `log-format "..."` and `capture request header NAME
// len N` / `capture response header NAME len N` (a captured header's
// value logs in %hr / %hs); other lines are not about the log and are
// skipped.
func readHAProxyDef(def string) (*haproxyConfig, error) {
	c := &haproxyConfig{logFormat: HAProxyHTTPLog}
	s := strings.TrimSpace(def)
	if s == "" {
		return c, nil
	}
	if !strings.Contains(s, "\n") && strings.Contains(s, "%") && !strings.HasPrefix(s, "log-format") {
		c.logFormat = haproxyUnquote(s)
		return c, nil
	}
	for n, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		words := strings.Fields(line)
		if len(words) == 0 || strings.HasPrefix(words[0], "#") {
			continue
		}
		at := fmt.Sprintf("haproxy config line %d (%s)", n+1, clip(line))
		switch {
		case words[0] == "option" && len(words) >= 2 && words[1] == "httplog":
			if len(words) > 2 {
				return nil, fmt.Errorf("%s: option httplog %s: the lab reads option httplog without clf (give its log-format)", at, words[2])
			}
			c.logFormat = HAProxyHTTPLog
		case words[0] == "option" && len(words) >= 2 && words[1] == "httpslog":
			c.logFormat = HAProxyHTTPSLog
		case words[0] == "option" && len(words) >= 2 && words[1] == "tcplog":
			return nil, fmt.Errorf("%s: tcplog lines log no HTTP request: use option httplog", at)
		case words[0] == "log-format":
			c.logFormat = haproxyUnquote(strings.TrimSpace(strings.TrimPrefix(line, "log-format")))
		case words[0] == "capture" && len(words) >= 4 && words[2] == "header":
			switch words[1] {
			case "request":
				c.reqCaps = append(c.reqCaps, words[3])
			case "response":
				c.respCaps = append(c.respCaps, words[3])
			default:
				return nil, fmt.Errorf("%s: capture %s: request or response", at, words[1])
			}
		case words[0] == "declare" && len(words) >= 2 && words[1] == "capture",
			(words[0] == "http-request" || words[0] == "http-response") && len(words) >= 2 && words[1] == "capture":
			return nil, fmt.Errorf("%s: the lab reads the captures of `capture request header` and `capture response header` only (a %s %s slot's place in %%hr is not named)", at, words[0], words[1])
		}
	}
	return c, nil
}

// haproxyUnquote reads one HAProxy config word: "..." with \" and \\
// escapes, '...' as it is, else \x as x.
func haproxyUnquote(s string) string {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return s[1 : len(s)-1]
	}
	quoted := len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"'
	if quoted {
		s = s[1 : len(s)-1]
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// haproxyVariables are HAProxy's log-format variables the reader reads by
// name; any other %X is the variable $haproxy_X, %[fetch] $haproxy_fetch_...
var haproxyVariables = map[string]string{
	"ci":  "remote_addr",
	"tr":  "start_local_ms", // the request's date, ms, local time (2.x)
	"ST":  "status",
	"Tr":  "upstream_service_time_ms", // the server's response time, -1 none
	"r":   "request",
	"HM":  "request_method",
	"HU":  "request_uri",
	"HP":  "uri",
	"ID":  "request_id",
	"T":   "time_local", // GMT date, whole seconds, with its zone
	"Tl":  "time_local",
	"trg": "time_local",
	"trl": "time_local",
}

// HAProxyVariables turns a HAProxy log-format into a definition over the
// reader's variables: %tr the request's start (ms; %t, the accept date,
// when the format has no %tr, as 1.x's httplog), %ST $status, %Tr the
// service time (ms, -1 none), %ci $remote_addr, %r $request, %HM, %HU,
// %HP $request_method, $request_uri, $uri, %T/%Tl/%trg/%trl $time_local
// (whole seconds), %hr the request captures ({$http_name|...}, named by
// capture request header), %hs the response's ($sent_http_name), any
// other %X $haproxy_X. Spaces are separators as HAProxy writes them: a run
// is one space, and an item that logs nothing (%hr without captures) takes
// no separator.
func HAProxyVariables(c *haproxyConfig) (string, error) {
	lf := c.logFormat
	hasTR := false // %tr itself, not %trg or %trl
	for rest := lf; ; {
		i := strings.Index(rest, "%tr")
		if i < 0 {
			break
		}
		rest = rest[i+3:]
		if rest == "" || !isLetter(rest[0]) {
			hasTR = true
			break
		}
	}
	var out strings.Builder
	lastSpace := true // HAProxy writes no separator before the first item
	sep := false
	emit := func(s string) {
		if s == "" {
			return
		}
		if sep && !lastSpace {
			out.WriteByte(' ')
		}
		sep = false
		out.WriteString(s)
		lastSpace = false
	}
	for i := 0; i < len(lf); {
		ch := lf[i]
		switch {
		case ch == ' ' || ch == '\t':
			sep = true
			i++
		case ch == '\\' && i+1 < len(lf):
			emit(string(lf[i+1]))
			i += 2
		case ch == '$':
			return "", fmt.Errorf("haproxy log-format: a literal $ at byte %d: the lab cannot read it", i)
		case strings.HasPrefix(lf[i:], "%ci:%cp") && (i+7 == len(lf) || !isLetter(lf[i+7])):
			// an IPv6 address has colons too: the pair is one field, the
			// address before its last colon ($remote_addr derived, as ALB's)
			emit("${client_port}")
			i += 7
		case ch == '%' && i+1 < len(lf) && lf[i+1] == '%':
			emit("%")
			i += 2
		case ch == '%':
			j := i + 1
			quote := false
			var flags string
			if j < len(lf) && lf[j] == '{' {
				k := strings.IndexByte(lf[j:], '}')
				if k < 0 {
					return "", fmt.Errorf("haproxy log-format: unterminated %%{ at byte %d", i)
				}
				flags = lf[j+1 : j+k]
				j += k + 1
				for _, fl := range strings.FieldsFunc(flags, func(r rune) bool { return r == '+' || r == '-' || r == ',' }) {
					if fl == "Q" {
						quote = strings.Contains(flags, "+Q")
					}
				}
			}
			var name, v string
			if j < len(lf) && lf[j] == '[' {
				k := strings.IndexByte(lf[j:], ']')
				if k < 0 {
					return "", fmt.Errorf("haproxy log-format: unterminated %%[ at byte %d", i)
				}
				v = "haproxy_fetch_" + varName(strings.ToLower(lf[j+1:j+k]))
				j += k + 1
			} else {
				k := j
				for k < len(lf) && isLetter(lf[k]) {
					k++
				}
				name = lf[j:k]
				if name == "" {
					return "", fmt.Errorf("haproxy log-format: a %% with no variable at byte %d", i)
				}
				j = k
				var ok bool
				v, ok = haproxyVariables[name]
				if name == "t" && !hasTR {
					v, ok = "start_local_ms", true
				}
				if ok && strings.Contains(flags, "+X") {
					return "", fmt.Errorf("haproxy log-format: %%{%s}%s: the lab reads %%%s in decimal", flags, name, name)
				}
				if !ok {
					v = "haproxy_" + name
				}
			}
			i = j
			switch name {
			case "hr", "hs":
				caps, prefix := c.reqCaps, "http_"
				if name == "hs" {
					caps, prefix = c.respCaps, "sent_http_"
				}
				if len(caps) == 0 {
					continue // logs nothing
				}
				parts := make([]string, len(caps))
				for k, h := range caps {
					parts[k] = "${" + prefix + varName(strings.ToLower(h)) + "}"
				}
				item := "{" + strings.Join(parts, "|") + "}"
				if quote {
					item = `"` + item + `"`
				}
				emit(item)
				continue
			case "hrl", "hsl":
				return "", fmt.Errorf("haproxy log-format: %%%s: the lab reads the captures as %%hr and %%hs ({a|b})", name)
			}
			item := "${" + v + "}"
			if quote {
				item = `"` + item + `"`
			}
			emit(item)
		default:
			emit(string(ch))
			i++
		}
	}
	if strings.TrimSpace(out.String()) == "" {
		return "", errors.New("haproxy log-format: empty")
	}
	return out.String(), nil
}

// haproxyFormat compiles a HAProxy definition (readHAProxyDef).
func haproxyFormat(def string) (*Format, error) {
	c, err := readHAProxyDef(def)
	if err != nil {
		return nil, err
	}
	text, err := HAProxyVariables(c)
	if err != nil {
		return nil, err
	}
	f, err := ParseFormat(text)
	if err != nil {
		return nil, fmt.Errorf("haproxy log-format %q: %w", c.logFormat, err)
	}
	f.syslog = true
	return f, nil
}

// stripSyslog cuts a syslog header off a line: "<134>" (the priority),
// then RFC 5424's "1 TIMESTAMP HOST APP PROCID MSGID SD " or RFC 3164's
// "Mmm dd hh:mm:ss [host] tag[pid]: " (as HAProxy sends to a syslog
// server and rsyslog writes to a file). A line without one is as it is.
func stripSyslog(line []byte) []byte {
	s := line
	if len(s) > 2 && s[0] == '<' {
		if j := bytes.IndexByte(s[:min(len(s), 6)], '>'); j > 1 {
			if _, ok := parseUint(s[1:j]); ok {
				s = s[j+1:]
			}
		}
	}
	if len(s) > 2 && s[0] == '1' && s[1] == ' ' { // RFC 5424
		rest := s[2:]
		for range 5 {
			k := bytes.IndexByte(rest, ' ')
			if k < 0 {
				return line
			}
			rest = rest[k+1:]
		}
		if len(rest) > 0 && rest[0] == '[' { // structured data
			k := bytes.Index(rest, []byte("] "))
			if k < 0 {
				return line
			}
			return rest[k+2:]
		}
		if k := bytes.IndexByte(rest, ' '); k >= 0 {
			return rest[k+1:]
		}
		return line
	}
	if len(s) > 16 && s[3] == ' ' && s[6] == ' ' && s[9] == ':' && s[12] == ':' && s[15] == ' ' {
		for _, m := range months {
			if string(s[:3]) == m {
				if k := bytes.Index(s[16:], []byte(": ")); k >= 0 {
					return s[16+k+2:]
				}
				return line
			}
		}
	}
	return s
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
