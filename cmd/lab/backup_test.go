package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratelab/ratelab/storage"
)

// TestBackupWhileServing: lab backup, run while lab serve is serving and
// taking new sweeps, writes a database that opens and holds the same done
// runs with the same files; FILE is never overwritten and a missing
// database is a usage error.
func TestBackupWhileServing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "lab.db")
	url, stop := startServe(t, db)
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	doc, err := os.ReadFile("../../experiments/presets/token-vs-leaky.json")
	if err != nil {
		t.Fatal(err)
	}
	submit := func() string {
		resp, err := http.Post(url+"/api/runs", "application/json", bytes.NewReader(doc))
		if err != nil {
			t.Error(err)
			return ""
		}
		resp.Body.Close()
		return strings.TrimPrefix(resp.Header.Get("Location"), "/api/runs/")
	}
	status := func(id string) string {
		resp, err := http.Get(url + "/api/runs/" + id)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r struct{ Status string }
		json.NewDecoder(resp.Body).Decode(&r)
		return r.Status
	}
	var done []string
	for range 2 {
		id := submit()
		for deadline := time.Now().Add(30 * time.Second); status(id) != storage.StatusDone; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("run %s not done", id)
			}
		}
		done = append(done, id)
	}

	// Sweeps and downloads go on while the copy is written.
	busy, quit := sync.WaitGroup{}, make(chan struct{})
	busy.Go(func() {
		for {
			select {
			case <-quit:
				return
			default:
			}
			submit()
			if resp, err := http.Get(url + "/runs/" + done[0] + "/files/series.csv"); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	backup := filepath.Join(dir, "backup.db")
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"backup", "--db", db, backup}, &out, &errOut)
	close(quit)
	busy.Wait()
	if code != 0 || !strings.Contains(out.String(), "backed up") {
		t.Fatalf("lab backup: exit %d: %s%s", code, out.String(), errOut.String())
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, ".backup.db.*")); len(matches) > 0 {
		t.Errorf("partial files left: %v", matches)
	}

	bk, err := storage.Open(context.Background(), backup)
	if err != nil {
		t.Fatal(err)
	}
	defer bk.Close()
	live, err := storage.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	for _, id := range done {
		r, err := bk.Get(context.Background(), id)
		if err != nil || r.Status != storage.StatusDone {
			t.Fatalf("run %s in the backup: %v", id, err)
		}
		files, err := live.Files(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			a, err := live.File(context.Background(), id, f.Name)
			if err != nil {
				t.Fatal(err)
			}
			b, err := bk.File(context.Background(), id, f.Name)
			if err != nil || !bytes.Equal(a.Data, b.Data) || b.SHA256 != f.SHA256 {
				t.Errorf("run %s file %s differs in the backup (%v)", id, f.Name, err)
			}
		}
		if _, err := bk.Result(context.Background(), id); err != nil {
			t.Errorf("run %s result in the backup: %v", id, err)
		}
	}

	// FILE exists: refused, untouched. No database: refused.
	before, _ := os.ReadFile(backup)
	if code := run(context.Background(), []string{"backup", "--db", db, backup}, &out, &errOut); code != 2 {
		t.Errorf("backup over an existing file: exit %d, want 2", code)
	}
	if after, _ := os.ReadFile(backup); !bytes.Equal(before, after) {
		t.Error("an existing backup file was changed")
	}
	if code := run(context.Background(), []string{"backup", "--db", filepath.Join(dir, "nosuch.db"), filepath.Join(dir, "x.db")}, &out, &errOut); code != 2 {
		t.Errorf("backup of a missing database: exit %d, want 2", code)
	}
	if _, err := os.Stat(filepath.Join(dir, "nosuch.db")); err == nil {
		t.Error("backup created the missing database")
	}
}
