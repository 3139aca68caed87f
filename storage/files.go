package storage

import (
	"bytes"
	"compress/flate"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"github.com/ratelab/ratelab/experiments/output"
)

// ChunkBytes is the size of the chunks an output file is stored in (the
// last one is shorter; an empty file has none). A reader of a file holds
// one chunk in memory at a time, so a download costs about ChunkBytes
// however large the file. Migration 0002 splits files at the same size.
const ChunkBytes = 256 << 10

// errFileChanged: a file's chunks do not add up to its size, as when its
// run is deleted while the file is read.
var errFileChanged = errors.New("the stored file ended early (was its run deleted?)")

// codecDeflate marks a file whose chunks are each compressed on their own
// (raw DEFLATE); ” is a file stored before migration 0003, chunks as
// they are.
const codecDeflate = "deflate"

// compressChunks splits data into chunks of ChunkBytes and deflates each
// on its own, so a reader still fetches and inflates one at a time.
func compressChunks(data []byte) [][]byte {
	var out [][]byte
	var buf bytes.Buffer
	zw, _ := flate.NewWriter(&buf, flate.DefaultCompression) // the level is valid
	for seq := 0; seq*ChunkBytes < len(data); seq++ {
		buf.Reset()
		zw.Reset(&buf)
		zw.Write(data[seq*ChunkBytes : min((seq+1)*ChunkBytes, len(data))]) // a bytes.Buffer takes every write
		zw.Close()
		out = append(out, bytes.Clone(buf.Bytes()))
	}
	return out
}

// inflate is one stored chunk's bytes: at most ChunkBytes.
func inflate(chunk []byte) ([]byte, error) {
	zr := flate.NewReader(bytes.NewReader(chunk))
	defer zr.Close()
	out, err := io.ReadAll(io.LimitReader(zr, ChunkBytes+1))
	if err != nil {
		return nil, fmt.Errorf("inflate: %w", err)
	}
	if len(out) > ChunkBytes {
		return nil, errors.New("inflate: a chunk longer than ChunkBytes")
	}
	return out, nil
}

// insertFiles stores files (their sums in sums) as rows of files and their
// bytes, deflated in chunks (chunks, from compressChunks), as rows of
// file_chunks, inside tx.
func insertFiles(ctx context.Context, tx *sql.Tx, id string, files []output.File, sums []string, chunks [][][]byte) error {
	fst, err := tx.PrepareContext(ctx, "INSERT INTO files (run_id, ord, name, sha256, bytes, codec) VALUES (?, ?, ?, ?, ?, ?)")
	if err != nil {
		return err
	}
	defer fst.Close()
	cst, err := tx.PrepareContext(ctx, "INSERT INTO file_chunks (run_id, name, seq, data) VALUES (?, ?, ?, ?)")
	if err != nil {
		return err
	}
	defer cst.Close()
	for i, f := range files {
		if _, err := fst.ExecContext(ctx, id, i, f.Name, sums[i], len(f.Data), codecDeflate); err != nil {
			return fmt.Errorf("file %s: %w", f.Name, err)
		}
		for seq, chunk := range chunks[i] {
			if _, err := cst.ExecContext(ctx, id, f.Name, seq, chunk); err != nil {
				return fmt.Errorf("file %s chunk %d: %w", f.Name, seq, err)
			}
		}
	}
	return nil
}

// Files lists a run's output files in manifest order, without their bytes
// (Data is nil). A run with no files yet gives an empty list; an unknown run
// is ErrNotFound.
func (s *Store) Files(ctx context.Context, id string) ([]File, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT name, sha256, bytes FROM files WHERE run_id = ? ORDER BY ord", id)
	if err != nil {
		return nil, fmt.Errorf("files of run %s: %w", id, err)
	}
	defer rows.Close()
	files := []File{}
	for rows.Next() {
		var f File
		if err := rows.Scan(&f.Name, &f.SHA256, &f.Bytes); err != nil {
			return nil, fmt.Errorf("files of run %s: %w", id, err)
		}
		files = append(files, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("files of run %s: %w", id, err)
	}
	if len(files) == 0 {
		var n int
		if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM runs WHERE id = ?", id).Scan(&n); err != nil {
			return nil, fmt.Errorf("files of run %s: %w", id, err)
		}
		if n == 0 {
			return nil, fmt.Errorf("run %s: %w", id, ErrNotFound)
		}
	}
	return files, nil
}

// File returns one output file of a run with all its bytes, or
// ErrNotFound. For a file of any size, OpenFile reads it a chunk at a time.
func (s *Store) File(ctx context.Context, id, name string) (*File, error) {
	fr, err := s.OpenFile(ctx, id, name)
	if err != nil {
		return nil, err
	}
	f := fr.File
	f.Data = make([]byte, 0, f.Bytes)
	for {
		chunk, err := fr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		f.Data = append(f.Data, chunk...)
	}
	return &f, nil
}

// OpenFile returns a reader of one output file of a run, or ErrNotFound.
// The reader's File has the name, sha256 and size (Data is nil); reading
// it fetches one chunk of ChunkBytes at a time, each with its own query,
// so a slow reader holds no database connection between chunks. Files
// never change once stored; a file whose run is deleted while it is read
// ends in an error.
func (s *Store) OpenFile(ctx context.Context, id, name string) (*FileReader, error) {
	fr := &FileReader{File: File{Name: name}, st: s, ctx: ctx, id: id}
	err := s.db.QueryRowContext(ctx, "SELECT sha256, bytes, codec FROM files WHERE run_id = ? AND name = ?", id, name).
		Scan(&fr.SHA256, &fr.Bytes, &fr.codec)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %s file %s: %w", id, name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("run %s file %s: %w", id, name, err)
	}
	return fr, nil
}

// FileReader reads a stored file chunk by chunk (see OpenFile). It is an
// io.Reader and an io.WriterTo (io.Copy writes each chunk as it comes).
type FileReader struct {
	File
	st    *Store
	ctx   context.Context
	id    string
	codec string // how the chunks are stored (codecDeflate or '')
	seq   int    // the next chunk
	read  int    // bytes fetched so far
	rest  []byte // the unread part of the last chunk fetched (Read)
}

// next fetches the next chunk, or io.EOF after the last one.
func (fr *FileReader) next() ([]byte, error) {
	if fr.read >= fr.Bytes {
		return nil, io.EOF
	}
	var chunk []byte
	err := fr.st.db.QueryRowContext(fr.ctx, "SELECT data FROM file_chunks WHERE run_id = ? AND name = ? AND seq = ?", fr.id, fr.Name, fr.seq).
		Scan(&chunk)
	if err == nil && fr.codec == codecDeflate {
		chunk, err = inflate(chunk)
	}
	if errors.Is(err, sql.ErrNoRows) || err == nil && (len(chunk) == 0 || fr.read+len(chunk) > fr.Bytes) {
		err = errFileChanged
	}
	if err != nil {
		return nil, fmt.Errorf("run %s file %s chunk %d: %w", fr.id, fr.Name, fr.seq, err)
	}
	fr.seq++
	fr.read += len(chunk)
	return chunk, nil
}

// Read implements io.Reader.
func (fr *FileReader) Read(p []byte) (int, error) {
	if len(fr.rest) == 0 {
		chunk, err := fr.next()
		if err != nil {
			return 0, err
		}
		fr.rest = chunk
	}
	n := copy(p, fr.rest)
	fr.rest = fr.rest[n:]
	return n, nil
}

// WriteTo implements io.WriterTo: it writes the rest of the file to w, a
// chunk at a time.
func (fr *FileReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	if len(fr.rest) > 0 {
		n, err := w.Write(fr.rest)
		total += int64(n)
		fr.rest = fr.rest[n:]
		if err != nil {
			return total, err
		}
	}
	for {
		chunk, err := fr.next()
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
		n, err := w.Write(chunk)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
}
