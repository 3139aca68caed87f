package deploy_test

import (
	"fmt"
	"github.com/ratelab/ratelab/internal/realtools"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// nginxWrap is a whole nginx.conf around an export: its own pid, error log
// and temp paths in dir; httpPart goes in the http block and serverPart in
// a server's location.
const nginxWrap = `daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path %[1]s/tmp/body;
  proxy_temp_path %[1]s/tmp/proxy;
  fastcgi_temp_path %[1]s/tmp/fastcgi;
  uwsgi_temp_path %[1]s/tmp/uwsgi;
  scgi_temp_path %[1]s/tmp/scgi;
%[2]s
  server {
    listen 127.0.0.1:1;
    location / {
%[3]s
    }
  }
}
`

// TestNginxAcceptsEveryExport runs nginx -t on every nginx export, once
// with both directives in the http block and once with limit_req in a
// location, and checks the directives say what the rerun gate runs.
func TestNginxAcceptsEveryExport(t *testing.T) {
	t.Parallel()
	bin := realtools.Server(t, "nginx")
	zone := regexp.MustCompile(`(?m)^limit_req_zone (\S+) zone=ratelab:10m rate=(\d+)r/(s|m);$`)
	req := regexp.MustCompile(`(?m)^limit_req zone=ratelab( burst=(\d+))?( nodelay| delay=(\d+))?;$`)
	for i, e := range exports(t, "nginx") {
		var httpLines, locLines []string
		for _, line := range strings.Split(e.Text, "\n") {
			if strings.HasPrefix(line, "limit_req ") {
				locLines = append(locLines, line)
			} else {
				httpLines = append(httpLines, line)
			}
		}
		layouts := map[string][2]string{
			"http":     {e.Text, ""},
			"location": {strings.Join(httpLines, "\n"), strings.Join(locLines, "\n")},
		}
		for name, parts := range layouts {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
				t.Fatal(err)
			}
			conf := filepath.Join(dir, "nginx.conf")
			if err := os.WriteFile(conf, fmt.Appendf(nil, nginxWrap, dir, parts[0], parts[1]), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bin, "-t", "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log")).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "test is successful") {
				t.Errorf("export %d %s, %s layout: nginx -t: %v\n%s\n%s", i, label(e), name, err, out, e.Text)
			}
		}

		// The directives and the rerun gate agree.
		z, r := zone.FindStringSubmatch(e.Text), req.FindStringSubmatch(e.Text)
		if z == nil || r == nil {
			t.Fatalf("export %d: directives not found:\n%s", i, e.Text)
		}
		if e.Rerun == nil {
			continue
		}
		n, _ := strconv.ParseFloat(z[2], 64)
		if z[3] == "m" {
			n /= 60
		}
		burst, _ := strconv.ParseFloat(r[2], 64)
		if got := e.Rerun.ValuesOf("rate_rps")[0]; got != n {
			t.Errorf("export %d: rate %s r/%s, rerun rate_rps %g", i, z[2], z[3], got)
		}
		if got := e.Rerun.ValuesOf("burst")[0]; got != burst {
			t.Errorf("export %d: burst %g, rerun %g", i, burst, got)
		}
		if nodelay := r[3] == " nodelay"; nodelay != (e.Rerun.Option("nodelay") == "on") {
			t.Errorf("export %d: nodelay %v, rerun %q", i, nodelay, e.Rerun.Option("nodelay"))
		}
		if client := z[1] == "$binary_remote_addr"; client != (e.Rerun.Option("key") == "client") {
			t.Errorf("export %d: key %s, rerun %q", i, z[1], e.Rerun.Option("key"))
		}
	}
}
