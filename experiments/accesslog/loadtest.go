package accesslog

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Load testers' results as logs: vegeta's `vegeta encode` CSV and JSON,
// k6's JSON output.

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

// K6JSON is k6's JSON output (k6 run --out json=FILE) as a JSON format: a
// Point line of metric http_reqs is a request, its data.time the request's
// end, the http_req_duration point that follows it (the same time) its
// duration; tags give $status, $request_method, $request_uri (the URL)
// and $tag_NAME.
const K6JSON = `{"type":"$k6_type","metric":"$k6_metric","data.time":"$k6_time","data.value":$k6_value,"data.tags.status":"$status","data.tags.method":"$request_method","data.tags.url":"$request_uri"}`

// k6Tags are the k6 tags read as $tag_NAME without being named.
var k6Tags = []string{"name", "group", "scenario", "expected_response", "proto", "check", "error", "error_code", "tls_version", "vu", "iter"}

// k6Format is k6's JSON output; def names further tags (a script's own,
// "tenant client_id") as $tag_NAME (a byte other than a letter, digit or
// _ read as _).
func k6Format(def string) (*Format, error) {
	text := strings.TrimSuffix(K6JSON, "}")
	tags := append(slices.Clone(k6Tags), strings.FieldsFunc(def, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })...)
	var names []string
	for _, tag := range tags {
		name := "tag_" + strings.Map(func(r rune) rune {
			if r < 128 && isVarByte(byte(r)) {
				return r
			}
			return '_'
		}, tag)
		if strings.ContainsAny(tag, `"\\.`) || slices.Contains(names, name) {
			return nil, fmt.Errorf("k6: tag %q: give tag names once each, without quotes, backslashes or dots ($%s)", tag, name)
		}
		names = append(names, name)
		text += fmt.Sprintf(`,"data.tags.%s":"$%s"`, tag, name)
	}
	f, err := ParseFormat(text + "}")
	if err != nil {
		return nil, err
	}
	f.k6 = true
	return f, nil
}
