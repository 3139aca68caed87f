package charts

import (
	"strings"
)

// ColumnLabel is a results.csv column's name on the page with its unit:
// the results table's label for its default columns ("goodput (req/s)"),
// else the key with the unit its name ends in (keys carry their unit
// last: _ms, _rps, _pct) or, for a limiter parameter, the registry's
// unit: "sojourn_max_ms (ms)", "burst (requests)"; a key without a unit
// is itself.
func ColumnLabel(key string) string {
	for _, c := range tableColumns {
		if c.key == key {
			return c.label
		}
	}
	if u := columnUnit(key); u != "" {
		return key + " (" + u + ")"
	}
	return key
}

// keyUnits are the units a column key's last word names.
var keyUnits = []struct{ suffix, unit string }{
	{"_ms", "ms"},
	{"_rps", "req/s"},
	{"_pct", "%"},
}

// columnUnit is the unit of a results column: a limiter parameter's from
// the registry, else the one its key ends in ("" for none).
func columnUnit(key string) string {
	if u := ParamUnit(key); u != "" {
		return u
	}
	for _, k := range keyUnits {
		if strings.HasSuffix(key, k.suffix) {
			return k.unit
		}
	}
	return ""
}
