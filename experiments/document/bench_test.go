package document_test

import (
	"os"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
)

// BenchmarkDecodeSeedConfig decodes the seed model's Post 3 config (the
// token-vs-leaky preset: 20 points, two reports of 13 columns), what lab
// run does before any point starts.
func BenchmarkDecodeSeedConfig(b *testing.B) {
	data, err := os.ReadFile("../presets/token-vs-leaky.json")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := document.DecodeConfig(data); err != nil {
			b.Fatal(err)
		}
	}
}
