package limiter_test

import (
	"os"
	"testing"
)

// TestMain removes what tests share across the package's run: the Guava
// driver's classes (guavaDriverClasses).
func TestMain(m *testing.M) {
	code := m.Run()
	if guavaDriver.classes != "" {
		os.RemoveAll(guavaDriver.classes)
	}
	os.Exit(code)
}
