package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lab run --config manifest.json runs the sweep the manifest records: the
// same files, byte for byte; an edited manifest is refused (exit 2).
func TestRunFromManifest(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if code := run(context.Background(), []string{"run", "-q", "--preset", "token-vs-leaky", "--out", a}, &stdout, &stderr); code != 0 {
		t.Fatalf("lab run: exit %d: %s", code, stderr.String())
	}
	manifest := filepath.Join(a, "manifest.json")
	if code := run(context.Background(), []string{"run", "-q", "--config", manifest, "--out", b}, &stdout, &stderr); code != 0 {
		t.Fatalf("lab run --config manifest.json: exit %d: %s", code, stderr.String())
	}
	entries, err := os.ReadDir(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		x, _ := os.ReadFile(filepath.Join(a, e.Name()))
		y, err := os.ReadFile(filepath.Join(b, e.Name()))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs when run from the manifest (%v)", e.Name(), err)
		}
	}
	data, _ := os.ReadFile(manifest)
	edited := filepath.Join(dir, "edited.json")
	os.WriteFile(edited, bytes.Replace(data, []byte(`"duration_ms": 5000`), []byte(`"duration_ms": 4000`), 1), 0o644)
	stderr.Reset()
	if code := run(context.Background(), []string{"run", "-q", "--config", edited, "--out", filepath.Join(dir, "c")}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "config_sha256") {
		t.Errorf("an edited manifest: exit %d: %s", code, stderr.String())
	}
}
