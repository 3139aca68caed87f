// Package realtools finds the real software the tests check models
// against (nginx, HAProxy, javac and Guava, the go command): a test fails
// when it is missing in CI (CI=true) or with RATELAB_E2E=1, as .ci/run
// installs it, and skips elsewhere. Tests only.
package realtools

import (
	"os"
	"os/exec"
	"testing"
)

// Required reports whether a test that needs real software must fail
// instead of skipping when it is missing.
func Required() bool {
	return os.Getenv("CI") == "true" || os.Getenv("RATELAB_E2E") == "1"
}

// Missing fails or skips a test whose real software is not installed;
// what says which and how to install it.
func Missing(t testing.TB, what string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s (CI=true or RATELAB_E2E=1: this test must run; see .ci/run)", what)
	}
	t.Skipf("%s; set RATELAB_E2E=1 to make this a failure", what)
}

// Server is the path of a server binary Debian installs in /usr/sbin
// (nginx, haproxy), found on PATH or there; else Missing names its
// package.
func Server(t testing.TB, name string) string {
	t.Helper()
	if bin, err := exec.LookPath(name); err == nil {
		return bin
	}
	if _, err := os.Stat("/usr/sbin/" + name); err == nil {
		return "/usr/sbin/" + name
	}
	Missing(t, "no "+name+" binary (apt-get install "+name+")")
	return ""
}
