package accesslog

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// Load testers' results as logs: vegeta's `vegeta encode` CSV and JSON.

// vegetaColumns are the columns of vegeta's CSV encoding (lib.NewCSVEncoder,
// v12), as the reader's variables: the timestamp (Unix ns) is the
// request's start, the latency (ns) its service time as the attacker saw
// it.
var vegetaColumns = []string{"start_unix_ns", "status", "service_time_ns", "bytes_out", "bytes_in", "vegeta_error", "vegeta_body", "vegeta_attack", "vegeta_seq", "request_method", "request_uri", "vegeta_headers"}

// vegetaMinColumns: older vegetas write the first seven columns only.
const vegetaMinColumns = 3

// VegetaJSON is vegeta's JSON encoding (lib.NewJSONEncoder) as a JSON
// format: the timestamp (RFC 3339, ns) the start, the latency (ns) the
// service time.
const VegetaJSON = `{"attack":"$vegeta_attack","seq":$vegeta_seq,"code":$status,"timestamp":"$start_time","latency":$service_time_ns,"bytes_out":$bytes_out,"bytes_in":$bytes_in,"error":"$vegeta_error","method":"$request_method","url":"$request_uri"}`

// vegetaFormat is vegeta's CSV ("" or "csv") or JSON ("json") encoding.
func vegetaFormat(def string) (*Format, error) {
	switch strings.TrimSpace(def) {
	case "", "csv":
		f := &Format{Definition: "vegeta csv", csv: true, index: map[string]int{}}
		for _, c := range vegetaColumns {
			f.field(c)
		}
		return f, nil
	case "json":
		return ParseFormat(VegetaJSON)
	}
	return nil, fmt.Errorf("vegeta: --log-format %q: csv or json (vegeta encode --to)", def)
}

var errColumns = errors.New("not a CSV line of the format's columns")

// splitCSV reads one CSV line (RFC 4180, as encoding/csv writes it: a
// field with a comma, quote or newline quoted, its quotes doubled) into
// fields, column i into field i; a quoted field with doubled quotes is
// unescaped into scratch. The columns after vegetaMinColumns may be
// missing.
func (f *Format) splitCSV(line []byte, fields [][]byte, scratch *[]byte) error {
	if cap(*scratch) < len(line) {
		*scratch = make([]byte, 0, len(line))
	}
	*scratch = (*scratch)[:0]
	col := 0
	for i := 0; ; col++ {
		if col >= len(fields) {
			return errColumns
		}
		var v []byte
		if i < len(line) && line[i] == '"' {
			j := i + 1
			start := len(*scratch)
			escaped := false
			for {
				k := bytes.IndexByte(line[j:], '"')
				if k < 0 {
					return errColumns
				}
				if j+k+1 < len(line) && line[j+k+1] == '"' {
					*scratch = append(*scratch, line[j:j+k+1]...)
					escaped = true
					j += k + 2
					continue
				}
				if escaped {
					*scratch = append(*scratch, line[j:j+k]...)
					v = (*scratch)[start:]
				} else {
					v = line[i+1 : j+k]
				}
				i = j + k + 1
				break
			}
			if i < len(line) && line[i] != ',' {
				return errColumns
			}
		} else {
			k := bytes.IndexByte(line[i:], ',')
			if k < 0 {
				k = len(line) - i
			}
			v = line[i : i+k]
			if bytes.IndexByte(v, '"') >= 0 {
				return errColumns
			}
			i += k
		}
		fields[col] = v
		if i >= len(line) {
			break
		}
		i++ // the comma
	}
	if col+1 < vegetaMinColumns {
		return errColumns
	}
	return nil
}
