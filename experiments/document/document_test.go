package document_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/field"
	"github.com/ratelab/ratelab/experiments/presets"
	"github.com/ratelab/ratelab/internal/enginetest"
)

// chainBase is base with a chain limiter, for keys deep in a stage.
const chainBase = `{"version": 1, "workload": {"duration_ms": 1000, "parts": [
  {"type": "bursts", "bursts": [{"at_ms": 0, "count": 5}]}]},
  "limiters": [{"type": "chain", "stages": [
    {"type": "token-bucket", "rate_rps": 100, "burst": [1, 2]},
    {"type": "server", "workers": 1, "service_ms": 1}]}]}`

// TestStrictDocuments: what encoding/json lets pass is refused with the
// path of the value at fault: a key given twice at any depth (also in
// another case, as encoding/json matches fields without regard to case),
// text that is not UTF-8, numbers beyond float64, and shapes past the
// reader's limits. malformed marks the errors that make a document no JSON
// text (a *Error, not too large).
func TestStrictDocuments(t *testing.T) {
	chain := func(old, new string) string {
		if !strings.Contains(chainBase, old) {
			panic("chain base has no " + old)
		}
		return strings.Replace(chainBase, old, new, 1)
	}
	cases := []struct {
		name, doc, path, msg string
		malformed            bool
	}{
		{"top-level key twice", enginetest.Edit(`"seed": 1`, `"seed": 1, "seed": 2`), "seed", "is given twice", false},
		{"limiters twice hides a bad first", enginetest.Edit(`"limiters": [`, `"limiters": [{"type": "bogus"}], "limiters": [`), "limiters", "is given twice", false},
		{"key twice in another case", enginetest.Edit(`"seed": 1`, `"seed": 1, "Seed": 2`), "Seed", `also as "seed"`, false},
		{"workload key twice", enginetest.Edit(`"duration_ms": 1000`, `"duration_ms": 1000, "duration_ms": 5`), "workload.duration_ms", "is given twice", false},
		{"part key twice", enginetest.Edit(`"rate_rps": 100}]`, `"rate_rps": 100, "rate_rps": -1}]`), "workload.parts[0].rate_rps", "is given twice", false},
		{"limiter key twice", enginetest.Edit(`"burst": 10`, `"burst": 0, "burst": 10`), "limiters[0].burst", "is given twice", false},
		{"limiter type twice", enginetest.Edit(`{"type": "token-bucket"`, `{"type": "bogus", "type": "token-bucket"`), "limiters[0].type", "is given twice", false},
		{"stage key twice", chain(`"burst": [1, 2]`, `"burst": [1, 2], "burst": 3`), "limiters[0].stages[0].burst", "is given twice", false},
		{"server stage key twice", chain(`"workers": 1`, `"workers": 1, "workers": 2`), "limiters[0].stages[1].workers", "is given twice", false},
		{"burst entry key twice", chain(`"count": 5`, `"count": 5, "count": 6`), "workload.parts[0].bursts[0].count", "is given twice", false},
		{"invalid UTF-8 in a name", enginetest.Edit(`"seed": 1`, "\"seed\": 1, \"name\": \"a\xffb\""), "name", "not valid UTF-8", true},
		{"invalid UTF-8 in a limiter name", enginetest.Edit(`"burst": 10`, "\"burst\": 10, \"name\": \"\xc3\x28\""), "limiters[0].name", "not valid UTF-8", true},
		{"invalid UTF-8 in a key", enginetest.Edit(`"seed": 1`, "\"seed\": 1, \"n\xe9\": 1"), "", "has a key that is not valid UTF-8", true},
		{"lone surrogate", enginetest.Edit(`"seed": 1`, `"seed": 1, "name": "a\ud800b"`), "name", "lone surrogate", true},
		{"low surrogate first", enginetest.Edit(`"seed": 1`, `"seed": 1, "name": "\udc00\ud800"`), "name", "not valid UTF-8", true},
		{"invalid UTF-8 in a trace", enginetest.Edit(`{"type": "constant", "rate_rps": 100}`, "{\"type\": \"trace\", \"csv\": \"1,\xff\\n\"}"), "workload.parts[0].csv", "not valid UTF-8", true},
		{"rate beyond float64", enginetest.Edit(`"rate_rps": 100, "burst": 10`, `"rate_rps": 1e309, "burst": 10`), "limiters[0].rate_rps", "is 1e309, beyond the range of numbers", false},
		{"seed below 0", enginetest.Edit(`"seed": 1`, `"seed": -1`), "seed", "must be a whole number from 0 to 18446744073709551615, not -1", false},
		{"seed past uint64", enginetest.Edit(`"seed": 1`, `"seed": 18446744073709551616`), "seed", "must be a whole number from 0 to 18446744073709551615", false},
		{"nested too deep", enginetest.Edit(`"seed": 1`, `"seed": 1, "x": `+strings.Repeat("[", 40)+strings.Repeat("]", 40)), "x" + strings.Repeat("[0]", 31), "more than 32 deep", false},
		{"too many limiters", enginetest.Edit(`"limiters": [`, `"limiters": [`+strings.Repeat(`{"type": "none"}, `, 101)), "limiters", "at most 100 limiters are allowed", false},
		{"too many stages", chain(`"stages": [`, `"stages": [`+strings.Repeat(`{"type": "server"}, `, 17)), "limiters[0].stages", "at most 16 stages are allowed", false},
		{"too many stage values", chain(`"burst": [1, 2]`, `"burst": [`+strings.Repeat("1, ", 1001)+`2]`), "limiters[0].stages[0].burst", "at most 1000 values are allowed", false},
		{"long key", enginetest.Edit(`"seed": 1`, `"seed": 1, "`+strings.Repeat("k", 1001)+`": 1`), "", "a key longer than 1000 bytes", false},
		{"long number", enginetest.Edit(`"seed": 1`, `"seed": 1`+strings.Repeat("0", 1000)), "seed", "a number longer than 1000 characters", false},
		{"leading zero", enginetest.Edit(`"seed": 1`, `"seed": 01`), "seed", "may not start with 0", true},
		{"control character", enginetest.Edit(`"seed": 1`, "\"seed\": 1, \"name\": \"a\tb\""), "name", "control character", true},
		{"bad escape", enginetest.Edit(`"seed": 1`, `"seed": 1, "name": "a\qb"`), "name", `unknown escape \q`, true},
		{"comma before the end", enginetest.Edit(`"seed": 1,`, `"seed": 1,,`), "", "expected a key", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := document.DecodeConfig([]byte(c.doc))
			if err == nil {
				t.Fatalf("accepted:\n%s", cfg.JSON())
			}
			var de *document.Error
			if isDoc := errors.As(err, &de) && !de.TooLarge; isDoc != c.malformed {
				t.Errorf("malformed: %v, want %v (%v)", isDoc, c.malformed, err)
			}
			for _, e := range field.Errors(err) {
				if e.Path == c.path && strings.Contains(e.Msg, c.msg) {
					return
				}
			}
			t.Fatalf("got %q, want an error at %q containing %q", err, c.path, c.msg)
		})
	}
}

// TestReadConfigLimits: past MaxBytes, or a string past MaxString, the
// document is too large (with the string's path); the reader's own error
// comes back as a *ReadError that unwraps to it.
func TestReadConfigLimits(t *testing.T) {
	doc := enginetest.Edit(`{"type": "constant", "rate_rps": 100}`, `{"type": "trace", "csv": "`+strings.Repeat(`1,a\n`, 300)+`"}`)
	_, err := document.ReadConfig(strings.NewReader(doc), document.Limits{MaxString: 1000})
	var de *document.Error
	if !errors.As(err, &de) || !de.TooLarge || de.Errors[0].Path != "workload.parts[0].csv" || !strings.Contains(de.Errors[0].Msg, "longer than 1000 bytes") {
		t.Errorf("string past the limit: %v", err)
	}
	// 300 lines of 4 decoded bytes: within 1200 bytes, as decoded (the
	// document's escapes take 1500).
	if _, err := document.ReadConfig(strings.NewReader(doc), document.Limits{MaxString: 1200}); err != nil {
		t.Errorf("string at the limit: %v", err)
	}
	_, err = document.ReadConfig(strings.NewReader(enginetest.Base+strings.Repeat(" ", 100)), document.Limits{MaxBytes: int64(len(enginetest.Base) + 10)})
	if !errors.As(err, &de) || !de.TooLarge || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("document past the limit: %v", err)
	}
	boom := errors.New("connection reset")
	_, err = document.ReadConfig(io.MultiReader(strings.NewReader(enginetest.Base[:40]), iotest.ErrReader(boom)), document.Limits{})
	var re *document.ReadError
	if !errors.As(err, &re) || !errors.Is(err, boom) {
		t.Errorf("reader error: %v", err)
	}
	// A reader that hands out one byte at a time reads the same config.
	for _, p := range presets.All() {
		want, err := document.DecodeConfig(p.JSON)
		if err != nil {
			t.Fatal(err)
		}
		got, err := document.ReadConfig(iotest.OneByteReader(bytes.NewReader(p.JSON)), document.Limits{})
		if err != nil || !bytes.Equal(got.JSON(), want.JSON()) {
			t.Errorf("%s one byte at a time: %v", p.Name, err)
		}
	}
}

// TestDocumentsStillRead: what is not refused reads as before: escapes,
// surrogate pairs, keys in another case (encoding/json's match), numbers
// with exponents, white space everywhere (but in a name, which is one
// line of printable text: field.Line).
func TestDocumentsStillRead(t *testing.T) {
	doc := " \n" + strings.NewReplacer(`"seed": 1`, `"SEED": 1, "name": "caf\u00e9 \ud83d\ude00 \"q\" \\ \/"`,
		`"burst": 10`, `"burst": [1.0e1]`).Replace(enginetest.Base) + "\n\t "
	cfg, err := document.DecodeConfig([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Seed != 1 || cfg.Name != "café 😀 \"q\" \\ /" || cfg.Limiters[0].Params["burst"][0] != 10 {
		t.Errorf("read %+v", cfg)
	}
}

var surrogateEscape = regexp.MustCompile(`\\u[dD][89a-fA-F]`)

// FuzzReadDocument: the document reader (document_reader.go) agrees with encoding/json on what
// is JSON: it refuses whatever json.Valid refuses, and calls nothing
// malformed that json.Valid takes, unless it is not UTF-8 or may hold a
// lone surrogate. Run with
//
//	go test -run '^$' -fuzz FuzzReadDocument -fuzztime 60s ./experiments/
func FuzzReadDocument(f *testing.F) {
	for _, p := range presets.All() {
		f.Add(p.JSON)
	}
	for _, s := range []string{enginetest.Base, chainBase, `{"a":1,"a":2}`, `[1,2,{"x":"\ud83d\ude00"}]`, `{"a":-0.5e+3}`, `"\u00e9"`, `01`, `{"a":[}`, "\"\xff\"", `1 2`, `{"a" 1}`, `[1,]`, `nul`, `-`, `1.`, `1e`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := document.DecodeConfig(data)
		if len(field.Errors(err)) == 0 && err != nil {
			t.Fatalf("error %q has no field errors", err)
		}
		if !json.Valid(data) {
			if err == nil {
				t.Fatal("accepted what is not JSON")
			}
			return
		}
		var de *document.Error
		if errors.As(err, &de) && !de.TooLarge && utf8.Valid(data) && !surrogateEscape.Match(data) {
			t.Fatalf("JSON called malformed: %v", err)
		}
	})
}
