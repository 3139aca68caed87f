package deploy

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// importNginx reads limit_req_zone and limit_req back (the inverse of
// nginxFormat): each limit_req of the chosen block is a nginx-limit-req
// gate at its zone's rate and its burst, delay= and nodelay, keyed by the
// zone's key (key "client" when the key has a variable, "zone" when it is
// constant). Several limit_req in one block are nginx's zones checked
// together (limiter.NginxZones). Inheritance is nginx's: a block without
// limit_req of its own takes its parent's, and limit_req_status likewise.
//
// Refused, named: limit_req_dry_run on (nothing is refused: the log shows
// no limiting to compare), limit_conn (concurrent connections, which a log
// does not give), return in the limited block or its server (answers in
// the rewrite phase, before limit_req runs), limit_req_zone ... sync
// (NGINX Plus). Not followed, noted: include.
func importNginx(text string, opt ImportOptions) (*Imported, error) {
	root, err := parseNginxConf(text)
	if err != nil {
		return nil, err
	}
	zones := map[string]*nginxZoneDef{}
	var notes []string
	var walkErr error
	var zoneWalk func(ds []*nginxDirective)
	zoneWalk = func(ds []*nginxDirective) {
		for _, d := range ds {
			switch d.name {
			case "limit_req_zone":
				z, err := parseNginxZone(d)
				if err != nil && walkErr == nil {
					walkErr = err
				}
				if z != nil {
					if _, dup := zones[z.name]; dup && walkErr == nil {
						walkErr = fmt.Errorf("line %d: limit_req_zone: zone %q declared twice", d.line, z.name)
					}
					zones[z.name] = z
				}
			case "include":
				notes = append(notes, fmt.Sprintf("line %d: include %s is not followed: the import reads this text only (paste the included directives if they limit)", d.line, strings.Join(d.args, " ")))
			}
			zoneWalk(d.block)
		}
	}
	zoneWalk(root.block)
	if walkErr != nil {
		return nil, walkErr
	}

	// The limited blocks: those with limit_req of their own.
	var limited []*nginxScope
	var walk func(d *nginxDirective, parent *nginxScope)
	walk = func(d *nginxDirective, parent *nginxScope) {
		s := &nginxScope{d: d, parent: parent}
		for _, c := range d.block {
			if c.name == "limit_req" {
				s.own = true
			}
		}
		if s.own {
			limited = append(limited, s)
		}
		for _, c := range d.block {
			if c.block != nil {
				walk(c, s)
			}
		}
	}
	walk(root, nil)
	if len(limited) == 0 {
		return nil, fmt.Errorf("nginx: no limit_req in the configuration%s", notesSuffix(notes))
	}
	chosen := limited[0]
	if opt.Location != "" {
		chosen = nil
		for _, s := range limited {
			if s.d.name == "location" && strings.Join(s.d.args, " ") == strings.TrimSpace(opt.Location) {
				chosen = s
			}
		}
		if chosen == nil {
			return nil, fmt.Errorf("nginx: no location %q with limit_req of its own (limited: %s)", opt.Location, scopeList(limited))
		}
	} else if len(limited) > 1 {
		return nil, fmt.Errorf("nginx: limit_req in %d blocks (%s): pick the location the log is of (lab shadow --location)", len(limited), scopeList(limited))
	}

	im := &Imported{Status: 503, Where: chosen.where()}
	if err := chosen.checkUnmodelled(); err != nil {
		return nil, err
	}
	if d := chosen.find("limit_req_status"); d != nil {
		if len(d.args) != 1 {
			return nil, fmt.Errorf("line %d: limit_req_status takes one code", d.line)
		}
		code, err := strconv.Atoi(d.args[0])
		if err != nil || code < 400 || code > 599 {
			return nil, fmt.Errorf("line %d: limit_req_status %s: nginx takes a code from 400 to 599", d.line, d.args[0])
		}
		im.Status = code
	}
	seen := map[string]bool{}
	for _, d := range chosen.d.block {
		if d.name != "limit_req" {
			continue
		}
		st, err := nginxStage(d, zones)
		if err != nil {
			return nil, err
		}
		if seen[st.Name] {
			return nil, fmt.Errorf("line %d: limit_req zone=%s twice in one block (nginx: is duplicate)", d.line, st.Name)
		}
		seen[st.Name] = true
		im.Stages = append(im.Stages, *st)
	}
	if len(im.Stages) > 1 {
		im.Notes = append(im.Notes, fmt.Sprintf("%d limit_req in %s: checked as nginx checks them, every zone looked up before any is charged, the request waiting the longest of their delays", len(im.Stages), im.Where))
	}
	if d := chosen.find("limit_req_log_level"); d != nil {
		im.Notes = append(im.Notes, fmt.Sprintf("line %d: limit_req_log_level changes what nginx logs, not what it decides", d.line))
	}
	im.Notes = append(im.Notes, notes...)
	return im, nil
}

func notesSuffix(notes []string) string {
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, "; ") + ")"
}

// nginxZoneDef is one limit_req_zone.
type nginxZoneDef struct {
	name string
	key  string
	rate float64 // requests/s as the lab's rate_rps: N, or N/60 for r/m
	line int
}

func parseNginxZone(d *nginxDirective) (*nginxZoneDef, error) {
	if len(d.args) < 3 {
		return nil, fmt.Errorf("line %d: limit_req_zone takes a key, zone=name:size and rate=", d.line)
	}
	z := &nginxZoneDef{key: d.args[0], line: d.line}
	for _, a := range d.args[1:] {
		switch {
		case strings.HasPrefix(a, "zone="):
			name, _, ok := strings.Cut(strings.TrimPrefix(a, "zone="), ":")
			if !ok || name == "" {
				return nil, fmt.Errorf("line %d: limit_req_zone %s: give zone=name:size", d.line, a)
			}
			z.name = name
		case strings.HasPrefix(a, "rate="):
			r := strings.TrimPrefix(a, "rate=")
			scale := 0.0
			switch {
			case strings.HasSuffix(r, "r/s"):
				scale, r = 1, strings.TrimSuffix(r, "r/s")
			case strings.HasSuffix(r, "r/m"):
				scale, r = 60, strings.TrimSuffix(r, "r/m")
			}
			n, err := strconv.ParseInt(r, 10, 64)
			if scale == 0 || err != nil || n <= 0 {
				return nil, fmt.Errorf("line %d: limit_req_zone %s: nginx takes rate=Nr/s or rate=Nr/m with N at least 1 (invalid rate)", d.line, a)
			}
			z.rate = float64(n) / scale
		case a == "sync":
			return nil, &Unmodelled{Directive: "limit_req_zone ... sync", Line: d.line,
				Why: "NGINX Plus shares the zone across a cluster, which the lab does not model: remove sync to replay one server's zone"}
		default:
			return nil, fmt.Errorf("line %d: limit_req_zone: unknown parameter %q", d.line, a)
		}
	}
	if z.name == "" || z.rate == 0 {
		return nil, fmt.Errorf("line %d: limit_req_zone needs zone=name:size and rate=", d.line)
	}
	return z, nil
}

// nginxStage reads one limit_req against the zones.
func nginxStage(d *nginxDirective, zones map[string]*nginxZoneDef) (*ImportedStage, error) {
	var zone *nginxZoneDef
	var burst, delay int64
	nodelay := false
	for _, a := range d.args {
		var err error
		switch {
		case strings.HasPrefix(a, "zone="):
			name := strings.TrimPrefix(a, "zone=")
			z, ok := zones[name]
			if !ok {
				return nil, fmt.Errorf("line %d: limit_req zone=%s: no limit_req_zone declares %q", d.line, name, name)
			}
			zone = z
		case strings.HasPrefix(a, "burst="):
			burst, err = strconv.ParseInt(strings.TrimPrefix(a, "burst="), 10, 64)
		case strings.HasPrefix(a, "delay="):
			delay, err = strconv.ParseInt(strings.TrimPrefix(a, "delay="), 10, 64)
		case a == "nodelay":
			nodelay = true
		default:
			return nil, fmt.Errorf("line %d: limit_req: unknown parameter %q", d.line, a)
		}
		if err != nil || burst < 0 || delay < 0 {
			return nil, fmt.Errorf("line %d: limit_req %s: a whole number of requests", d.line, a)
		}
	}
	if zone == nil {
		return nil, fmt.Errorf("line %d: limit_req needs zone=", d.line)
	}
	if nodelay && delay > 0 {
		return nil, fmt.Errorf("line %d: limit_req: nodelay and delay= together (nginx: \"nodelay\" conflicts with \"delay\")", d.line)
	}
	opts := map[string]string{limiter.OptionNodelay: "off", limiter.OptionNginxKey: "zone"}
	if nodelay {
		opts[limiter.OptionNodelay] = "on"
	}
	if strings.Contains(zone.key, "$") {
		opts[limiter.OptionNginxKey] = "client"
	}
	s := spec(limiter.TypeNginxLimitReq, limiter.Params{limiter.ParamRate: zone.rate,
		limiter.ParamBurst: float64(burst), limiter.ParamNginxDelay: float64(delay)}, opts)
	s.Name = zone.name
	return &ImportedStage{Spec: s, Key: zone.key, Name: zone.name}, nil
}

// nginxScope is a block with its parent, for nginx's inheritance.
type nginxScope struct {
	d      *nginxDirective
	parent *nginxScope
	own    bool
}

func (s *nginxScope) where() string {
	if s.d.name == "" {
		return "the top level"
	}
	return strings.TrimSpace(s.d.name+" "+strings.Join(s.d.args, " ")) + fmt.Sprintf(" (line %d)", s.d.line)
}

func scopeList(ss []*nginxScope) string {
	var out []string
	for _, s := range ss {
		out = append(out, s.where())
	}
	return strings.Join(out, ", ")
}

// find is the directive in effect in the block: its own, else its
// parent's (nginx's merge of a single-valued setting).
func (s *nginxScope) find(name string) *nginxDirective {
	for sc := s; sc != nil; sc = sc.parent {
		for _, d := range sc.d.block {
			if d.name == name {
				return d
			}
		}
	}
	return nil
}

// checkUnmodelled refuses what changes the limited block's answers in a
// way the lab does not model.
func (s *nginxScope) checkUnmodelled() error {
	if d := s.find("limit_req_dry_run"); d != nil && len(d.args) == 1 && d.args[0] == "on" {
		return &Unmodelled{Directive: "limit_req_dry_run on", Line: d.line,
			Why: "nginx refuses nothing in dry run, so its log shows no limiting; the lab replays the zones as enforced: remove the directive (or set it off) to replay what enforcing would do"}
	}
	for sc := s; sc != nil; sc = sc.parent {
		for _, d := range sc.d.block {
			switch d.name {
			case "limit_conn":
				return &Unmodelled{Directive: "limit_conn", Line: d.line,
					Why: "it limits concurrent connections, which an access log does not give (no connection's lifetime): the lab replays limit_req only; remove limit_conn from the text to replay the limit_req zones alone"}
			case "if":
				if sc != s {
					continue
				}
				for _, c := range d.block {
					if c.name == "return" {
						return &Unmodelled{Directive: "return", Line: c.line,
							Why: fmt.Sprintf("in the if block of %s it answers the requests it matches in the rewrite phase, before limit_req (preaccess) runs: the lab cannot tell from the log which requests matched", sc.where())}
					}
				}
			case "return":
				if sc == s || sc.d.name == "server" {
					return &Unmodelled{Directive: "return", Line: d.line,
						Why: fmt.Sprintf("in %s it answers in the rewrite phase, before limit_req (preaccess) runs: no request reaches the limit; move return out of the block, or import the location that limits", sc.where())}
				}
			}
		}
	}
	return nil
}

// nginxDirective is one directive of nginx.conf: its name, arguments and
// block (nil when it has none).
type nginxDirective struct {
	name  string
	args  []string
	block []*nginxDirective
	line  int
}

// parseNginxConf reads nginx.conf syntax: words (quoted with ' or ", with
// \ escapes), ";" ending a directive, "{" "}" around a block, # comments.
// The top level is a block with no name.
func parseNginxConf(text string) (*nginxDirective, error) {
	root := &nginxDirective{block: []*nginxDirective{}}
	stack := []*nginxDirective{root}
	var words []string
	line, wordLine := 1, 0
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '#':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == ';' || c == '{':
			if len(words) == 0 {
				return nil, fmt.Errorf("nginx: line %d: unexpected %q", line, c)
			}
			d := &nginxDirective{name: words[0], args: words[1:], line: wordLine}
			top := stack[len(stack)-1]
			top.block = append(top.block, d)
			if c == '{' {
				d.block = []*nginxDirective{}
				stack = append(stack, d)
			}
			words = nil
			i++
		case c == '}':
			if len(words) > 0 {
				return nil, fmt.Errorf("nginx: line %d: %q is not terminated by \";\"", wordLine, words[0])
			}
			if len(stack) == 1 {
				return nil, fmt.Errorf("nginx: line %d: unexpected \"}\"", line)
			}
			stack = stack[:len(stack)-1]
			i++
		case c == '"' || c == '\'':
			var b strings.Builder
			start := line
			j := i + 1
			for ; j < len(text) && text[j] != c; j++ {
				if text[j] == '\\' && j+1 < len(text) {
					j++
				}
				if text[j] == '\n' {
					line++
				}
				b.WriteByte(text[j])
			}
			if j >= len(text) {
				return nil, fmt.Errorf("nginx: line %d: unterminated %c string", start, c)
			}
			if len(words) == 0 {
				wordLine = start
			}
			words = append(words, b.String())
			i = j + 1
		default:
			j := i
			for j < len(text) && !strings.ContainsRune(" \t\r\n;{}#\"'", rune(text[j])) {
				j++
			}
			if len(words) == 0 {
				wordLine = line
			}
			words = append(words, text[i:j])
			i = j
		}
	}
	if len(words) > 0 {
		return nil, fmt.Errorf("nginx: line %d: %q is not terminated by \";\"", wordLine, words[0])
	}
	if len(stack) > 1 {
		return nil, fmt.Errorf("nginx: line %d: block %q is not closed", stack[len(stack)-1].line, stack[len(stack)-1].name)
	}
	return root, nil
}

// NginxLogFormat finds log_format name in an nginx configuration and
// returns the directive's text (for accesslog.ParseFormat): a log and its
// config read together need the format only by name.
func NginxLogFormat(text, name string) (string, error) {
	root, err := parseNginxConf(text)
	if err != nil {
		return "", err
	}
	var found *nginxDirective
	var names []string
	var walk func(ds []*nginxDirective)
	walk = func(ds []*nginxDirective) {
		for _, d := range ds {
			if d.name == "log_format" && len(d.args) > 0 {
				names = append(names, d.args[0])
				if d.args[0] == name && found == nil {
					found = d
				}
			}
			walk(d.block)
		}
	}
	walk(root.block)
	if found == nil {
		return "", fmt.Errorf("nginx: no log_format %q in the configuration (it has: %s)", name, strings.Join(names, ", "))
	}
	var b strings.Builder
	b.WriteString("log_format")
	for _, a := range found.args {
		b.WriteString(" '")
		b.WriteString(strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(a))
		b.WriteString("'")
	}
	b.WriteString(";")
	return b.String(), nil
}
