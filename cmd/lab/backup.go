package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ratelab/ratelab/storage"
)

// cmdBackup writes a consistent copy of the lab's database while the lab
// may be serving: SQLite's VACUUM INTO into a temporary file beside FILE,
// checked, then renamed to FILE, so FILE is either the whole copy or
// absent.
func cmdBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("lab backup", flag.ContinueOnError)
	fset.SetOutput(stderr)
	dbPath := fset.String("db", "./ratelab.db", "the lab's SQLite database `FILE`")
	fset.Usage = func() {
		fmt.Fprintln(stderr, "usage: lab backup [--db ./ratelab.db] FILE")
		fmt.Fprintln(stderr, "Writes a consistent copy of the lab's database to FILE (a new file), also while the lab is serving.")
		fmt.Fprintln(stderr, "To restore it, stop the lab and start it on the copy: lab serve --db FILE (or copy FILE over the database")
		fmt.Fprintln(stderr, "after deleting the database's -wal and -shm files).")
		fset.PrintDefaults()
	}
	if err := fset.Parse(args); err != nil {
		return usageError{err}
	}
	if fset.NArg() != 1 {
		return usagef("want one FILE to write the copy to, got %d arguments", fset.NArg())
	}
	if _, err := os.Stat(*dbPath); err != nil {
		return usagef("no database at %s: %v", *dbPath, err)
	}
	dest, err := filepath.Abs(fset.Arg(0))
	if err != nil {
		return fmt.Errorf("backup file %s: %w", fset.Arg(0), err)
	}
	if _, err := os.Lstat(dest); err == nil {
		return usagef("%s exists; back up to a new file", fset.Arg(0))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("backup file: %w", err)
	}
	// An empty file is a valid target of VACUUM INTO.
	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".*.partial")
	if err != nil {
		return fmt.Errorf("backup file: %w", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name()) // gone after the rename; else the partial copy
	runs, err := storage.Backup(ctx, *dbPath, tmp.Name())
	if errors.Is(err, storage.ErrNotDatabase) {
		return usagef("--db %s: not an SQLite database (is it the lab's database?)", *dbPath)
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return fmt.Errorf("backup file: %w", err)
	}
	fi, err := os.Stat(dest)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backed up %d runs from %s to %s (%d bytes)\n", runs, *dbPath, fset.Arg(0), fi.Size())
	return nil
}
