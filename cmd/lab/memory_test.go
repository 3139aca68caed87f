package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// traceDoc is a config document whose workload is parts inline traces of
// about csvBytes each ("t\n" lines), its body about 1.16 times that.
func traceDoc(csvBytes, parts int) []byte {
	var ps []map[string]string
	for range parts {
		var b strings.Builder
		for t := 0; b.Len() < csvBytes; t++ {
			b.WriteString(strconv.Itoa(t))
			b.WriteByte('\n')
		}
		ps = append(ps, map[string]string{"type": "trace", "csv": b.String()})
	}
	doc, _ := json.Marshal(map[string]any{"version": 1, "seed": 1,
		"workload": map[string]any{"duration_ms": 3_600_000, "parts": ps},
		"limiters": []any{map[string]any{"type": "token-bucket", "rate_rps": 100, "burst": 10}}})
	return doc
}

// TestMemoryCeiling runs a real lab serve process (this test binary as
// lab) under --max-memory-mb 256, posts 40 inline-trace bodies of 0.5 MB
// and 4 of 8 MB at once, and checks what the process held: its peak live
// heap (what the garbage collector found reachable, sampled every
// millisecond by watchHeap) stayed under the request body budget (half
// the ceiling) and an eighth of the ceiling, and, once every post was
// answered (one run running, the queue full), under a quarter of the
// ceiling; and its peak resident memory (VmHWM) stayed under the ceiling.
// The load and the ceiling are half of what they were (512 MiB, 1 and
// 16 MB bodies: 30 s and 20 CPU s, now 7 to 11 s and 7 CPU s); every
// bound is a fraction of the ceiling, so the margins are the same.
// The resident size alone cannot fail for a server that holds too much:
// lab serve sets the runtime's soft memory limit to 7/8 of the ceiling,
// so the collector keeps it under whatever the code holds (it passed with
// each bug below). The live heap is what the code holds. Measured
// (2026-12, 8 runs): peak 82 to 105 MiB, answered 4 to 29, peak RSS 212
// to 245; queued runs that keep their config and stored document:
// answered 102 to 103 (at 512 MiB: 206 to 240); a budget counting a
// body's bytes once instead of 5 times (its decoded cost): peak 142 to
// 157 (bound 160; at 512 MiB 257 to 326 of 320), so caught here only at
// its worst: web's TestBodyBudgetCountsDecodedCost pins the factor; a
// body read whole before decoding: not caught here, but by web's
// TestDocumentReadAsStream. Every answer is 202, 429 (queue full) or 503
// with Retry-After (past the budget), never another
// 5xx; a request the server's read timeout cut (a loaded machine) is
// counted apart (cutByReadTimeout), and no answer before it fails. A 408
// is the body rate's answer (web.MinBodyRate once the grace has passed):
// 44 bodies at once on a loaded machine, the server starved of CPU to read
// them, can arrive slower than that (8 of 44 did with -cpu 1 at load 18);
// it is the load's answer, as a read-timeout cut is, not the budget's.
func TestMemoryCeiling(t *testing.T) {
	const cutByReadTimeout = 1 // a post the server's read timeout closed
	if testing.Short() {
		t.Skip("starts lab serve and sends it 50 MB")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc: VmHWM is Linux's")
	}
	const ceilingMB = 256
	small, big := traceDoc(440_000, 1), traceDoc(3_475_000, 2)
	if len(small) < 1<<19-50_000 || len(big) < 15<<19 {
		t.Fatalf("bodies of %d and %d bytes", len(small), len(big))
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "lab.db"),
		"--engine-workers", "1", "--max-memory-mb", strconv.Itoa(ceilingMB))
	heapFile := filepath.Join(dir, "heap")
	cmd.Env = append(os.Environ(), "LAB_TEST_MAIN=1", heapWatchEnv+"="+heapFile)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	m := regexp.MustCompile(`running at (http://\S+) `).FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("lab serve said %q (%v): %s", line, err, stderr.String())
	}
	base := m[1]
	var (
		mu    sync.Mutex
		codes = map[int]int{}
		wg    sync.WaitGroup
	)
	send := func(doc []byte) {
		defer wg.Done()
		sent := time.Now()
		resp, err := http.Post(base+"/api/runs", "application/json", bytes.NewReader(doc))
		code := 0
		if err != nil && time.Since(sent) >= readTimeout {
			// The server's read timeout (a request must be read in
			// readTimeout) closed the connection: on a loaded machine
			// 44 bodies at once can take that long to read. Not an
			// answer of the budget's, and not a failure: a drop before
			// the timeout still is.
			code = cutByReadTimeout
			t.Logf("post after %v (read timeout %v): %v", time.Since(sent).Round(time.Millisecond), readTimeout, err)
		} else if err == nil {
			code = resp.StatusCode
			if (code == 503 || code == 429) && resp.Header.Get("Retry-After") == "" {
				code = -code
			}
			resp.Body.Close()
		} else {
			t.Logf("post: %v", err)
		}
		mu.Lock()
		codes[code]++
		mu.Unlock()
	}
	start := time.Now()
	for i := range 44 {
		wg.Add(1)
		if i%11 == 5 {
			go send(big)
		} else {
			go send(small)
		}
	}
	wg.Wait()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	hwm := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(status)
	if hwm == nil {
		t.Fatalf("no VmHWM in\n%s", status)
	}
	kb, _ := strconv.Atoi(string(hwm[1]))
	if err := os.WriteFile(heapFile+".ask", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var peakLive, settledLive int64
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(heapFile); err == nil {
			if _, err := fmt.Sscan(string(b), &peakLive, &settledLive); err != nil {
				t.Fatalf("heap report %q: %v", b, err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no heap report in 30 s: %s", stderr.String())
		}
	}
	t.Logf("live heap: peak %d MiB, settled %d MiB", peakLive>>20, settledLive>>20)
	t.Logf("40 × %d B and 4 × %d B at once in %v: answers %v, peak RSS %d MiB (ceiling %d MiB)",
		len(small), len(big), time.Since(start).Round(time.Millisecond), codes, kb>>10, ceilingMB)
	// The body budget, and an eighth of the ceiling for the running sweep
	// and the rest of the lab (without it: 249 MiB seen, 7 under the
	// budget, too close on a loaded machine).
	if bound := int64(ceilingMB)<<20/2 + int64(ceilingMB)<<20/8; peakLive >= bound {
		t.Errorf("peak live heap %d MiB, over the body budget (half the ceiling) and an eighth of the ceiling: %d MiB", peakLive>>20, bound>>20)
	}
	if settled := int64(ceilingMB) << 20 / 4; settledLive >= settled {
		t.Errorf("live heap %d MiB once the posts were answered, over a quarter of the ceiling (%d MiB): do queued runs hold their config?", settledLive>>20, settled>>20)
	}
	switch {
	case raceDetector:
		t.Logf("-race: peak RSS not checked (the detector's shadow memory), the live heap is")
	case kb>>10 >= ceilingMB:
		t.Errorf("peak RSS %d MiB, over the %d MiB ceiling", kb>>10, ceilingMB)
	}
	for code, n := range codes {
		if code != 202 && code != 429 && code != 503 && code != cutByReadTimeout && code != http.StatusRequestTimeout {
			t.Errorf("%d answers %d (negative: without Retry-After; 0: no answer, before the read timeout)", n, code)
		}
	}
	if codes[202] == 0 {
		t.Errorf("no submission was accepted: %v", codes)
	}
}
