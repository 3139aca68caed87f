package web

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/storage"
	"github.com/ratelab/ratelab/web/form"
)

// TestDownloadNamesAndZip: a file downloads as <run-id>-<file>; the zip
// holds every file under <run-id>/, byte for byte (several chunks, one
// chunk, empty); an unknown run and a run with no files are 404.
func TestDownloadNamesAndZip(t *testing.T) {
	t.Parallel()
	l := newLab(t, false, 4)
	var files []output.File
	for i, n := range []int{3*storage.ChunkBytes + 17, storage.ChunkBytes, 0} {
		data := make([]byte, n)
		for j := range data {
			data[j] = byte(j*7 + i)
		}
		files = append(files, output.File{Name: string(rune('a'+i)) + ".csv", Data: data})
	}
	id := l.storeRun(files)

	w := l.get("/runs/" + id + "/files/a.csv")
	if cd := w.Header().Get("Content-Disposition"); cd != `attachment; filename=`+id+`-a.csv` {
		t.Errorf("Content-Disposition %q", cd)
	}
	page := l.get("/runs/" + id).Body.String()
	for _, want := range []string{`download="` + id + `-a.csv"`, `href="/runs/` + id + `/files.zip"`, `download="` + id + `-files.zip"`} {
		if !strings.Contains(page, want) {
			t.Errorf("run page lacks %s", want)
		}
	}

	w = l.get("/runs/" + id + "/files.zip")
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/zip" {
		t.Fatalf("zip: %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	if cd := w.Header().Get("Content-Disposition"); cd != `attachment; filename=`+id+`-files.zip` {
		t.Errorf("zip Content-Disposition %q", cd)
	}
	zr, err := zip.NewReader(bytes.NewReader(w.Body.Bytes()), int64(w.Body.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != len(files) {
		t.Fatalf("zip holds %d files, want %d", len(zr.File), len(files))
	}
	for i, zf := range zr.File {
		if zf.Name != id+"/"+files[i].Name {
			t.Errorf("entry %d is %s", i, zf.Name)
		}
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, files[i].Data) {
			t.Errorf("%s: %d bytes, want %d, not the stored bytes", zf.Name, len(got), len(files[i].Data))
		}
		sum := sha256.Sum256(got)
		if zf.Comment != "sha256 "+hex.EncodeToString(sum[:]) {
			t.Errorf("%s: comment %q", zf.Name, zf.Comment)
		}
	}

	if w := l.get("/runs/aaaaaaaaaaaa/files.zip"); w.Code != http.StatusNotFound {
		t.Errorf("zip of an unknown run: %d", w.Code)
	}
	queued := runIDFrom(t, l.postForm("/runs", formValuesOf(form.Default())))
	if w := l.get("/runs/" + queued + "/files.zip"); w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), "no files") {
		t.Errorf("zip of a queued run: %d %s", w.Code, w.Body.String())
	}
}
