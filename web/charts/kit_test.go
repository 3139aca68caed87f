package charts

import (
	"strings"
	"testing"
)

func TestLegendRows(t *testing.T) {
	if r := legendRows([]string{"token-bucket", "leaky-bucket", "offered"}); r != 1 {
		t.Errorf("three short names: %d rows", r)
	}
	long := strings.Repeat("x", 30)
	if r := legendRows([]string{long, long, long, long, long, long}); r != 3 {
		t.Errorf("six 30-character names: %d rows, want 3", r)
	}
}
