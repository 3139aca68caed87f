package web

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/ratelab/ratelab/storage"
)

// A run's downloads: each file is named <run-id>-<file> (DownloadName),
// and /runs/{id}/files.zip is all of them in one zip, streamed.

// DownloadName is the name a run's file is saved under: the run id, a
// hyphen and the file's own name, so files of several runs never
// overwrite each other in a downloads folder.
func DownloadName(runID, file string) string { return runID + "-" + file }

// ZipName is the name of the zip of all a run's files.
func ZipName(runID string) string { return DownloadName(runID, "files.zip") }

// attachment is a Content-Disposition that saves the body as name.
func attachment(name string) string {
	return mime.FormatMediaType("attachment", map[string]string{"filename": name})
}

// runZip streams every output file of a run as one zip: the entries are
// <run-id>/<file> (the folder a `lab run --out <run-id>` would write, so
// `diff -r` compares it with a CLI run), deflated, dated when the run
// finished. Each file is read from the store a chunk at a time and the
// zip is written as it goes (no Content-Length; a zip's central directory
// comes last, so a download cut short does not open). It takes a place
// of the downloads gate (routes.go).
func (s *Server) runZip(w http.ResponseWriter, r *http.Request) {
	run := s.headOr404(w, r)
	if run == nil {
		return
	}
	files, err := s.store.Files(r.Context(), run.ID)
	if err != nil {
		s.internalError(w, r, "list the run's files", err)
		return
	}
	if len(files) == 0 {
		s.errorPage(w, r, http.StatusNotFound, "No files yet",
			fmt.Sprintf("Run %s is %s and has no files to zip: a run has files once it is done (or partial).", run.ID, run.Status))
		return
	}
	modified := run.CreatedAt
	if run.FinishedAt != nil {
		modified = *run.FinishedAt
	}
	h := w.Header()
	h.Set("Content-Type", "application/zip")
	h.Set("Content-Disposition", attachment(ZipName(run.ID)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	zw := zip.NewWriter(w)
	if err := writeZip(r, s.store, zw, run.ID, files, modified); err != nil {
		// Past the headers an error can only cut the zip short: without
		// its central directory it does not open.
		if r.Context().Err() == nil {
			s.log.Warn("zip download ended early", "run", run.ID, "err", err)
		}
		return
	}
	if err := zw.Close(); err != nil && r.Context().Err() == nil {
		s.log.Warn("zip download ended early", "run", run.ID, "err", err)
	}
}

func writeZip(r *http.Request, st *storage.Store, zw *zip.Writer, id string, files []storage.File, modified time.Time) error {
	for _, f := range files {
		fr, err := st.OpenFile(r.Context(), id, f.Name)
		if err != nil {
			return err
		}
		hdr := &zip.FileHeader{Name: id + "/" + f.Name, Method: zip.Deflate, Modified: modified.UTC()}
		hdr.Comment = "sha256 " + f.SHA256
		out, err := zw.CreateHeader(hdr)
		if err != nil {
			return fmt.Errorf("zip %s: %w", f.Name, err)
		}
		n, err := io.Copy(out, fr)
		if err != nil {
			return fmt.Errorf("zip %s: %w", f.Name, err)
		}
		if n != int64(f.Bytes) {
			return fmt.Errorf("zip %s: %d bytes read, %d stored: %w", f.Name, n, f.Bytes, errors.New("the file changed"))
		}
	}
	return nil
}
