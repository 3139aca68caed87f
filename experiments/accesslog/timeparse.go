package accesslog

// Times as logs write them, read without allocating.

import "time"

// parseDecimalMS reads seconds written as a decimal ("1701452060.123",
// "0.005") as milliseconds; at most 9 decimals.
func parseDecimalMS(b []byte) (float64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var whole int64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if whole > 1<<50 {
			return 0, false
		}
		whole = whole*10 + int64(b[i]-'0')
	}
	if i == 0 {
		return 0, false
	}
	ms := whole * 1000
	if i == len(b) {
		return float64(ms), true
	}
	if b[i] != '.' || i+1 == len(b) || len(b)-i-1 > 9 {
		return 0, false
	}
	var frac, scale int64 = 0, 1
	for j := i + 1; j < len(b); j++ {
		c := b[j]
		if c < '0' || c > '9' {
			return 0, false
		}
		frac = frac*10 + int64(c-'0')
		scale *= 10
	}
	if scale <= 1000 {
		return float64(ms + frac*(1000/scale)), true
	}
	return float64(ms) + float64(frac)*1000/float64(scale), true
}

// parseUint reads a whole number of at most 18 digits.
func parseUint(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d (proleptic
// Gregorian; Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func digits(b []byte, n int) (int64, bool) {
	if len(b) < n {
		return 0, false
	}
	return parseUint(b[:n])
}

var months = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// parseTimeLocal reads nginx's $time_local, "01/Dec/2026:18:14:20 +0000",
// as Unix seconds.
func parseTimeLocal(b []byte) (int64, bool) {
	if len(b) != 26 || b[2] != '/' || b[6] != '/' || b[11] != ':' || b[14] != ':' || b[17] != ':' || b[20] != ' ' {
		return 0, false
	}
	d, ok1 := digits(b[0:], 2)
	y, ok2 := digits(b[7:], 4)
	hh, ok3 := digits(b[12:], 2)
	mm, ok4 := digits(b[15:], 2)
	ss, ok5 := digits(b[18:], 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5) {
		return 0, false
	}
	m := int64(-1)
	for i, name := range months {
		if string(b[3:6]) == name {
			m = int64(i + 1)
		}
	}
	off, ok := parseOffset(b[21:], false)
	if m < 0 || !ok || !validClock(d, hh, mm, ss) {
		return 0, false
	}
	return daysFromCivil(y, m, d)*86400 + hh*3600 + mm*60 + ss - off, true
}

// parseISO8601 reads nginx's $time_iso8601, "2026-12-01T18:14:20+00:00"
// (or "Z"), as Unix seconds.
func parseISO8601(b []byte) (int64, bool) {
	if len(b) < 20 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return 0, false
	}
	y, ok1 := digits(b[0:], 4)
	m, ok2 := digits(b[5:], 2)
	d, ok3 := digits(b[8:], 2)
	hh, ok4 := digits(b[11:], 2)
	mm, ok5 := digits(b[14:], 2)
	ss, ok6 := digits(b[17:], 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || m < 1 || m > 12 || !validClock(d, hh, mm, ss) {
		return 0, false
	}
	var off int64
	switch rest := b[19:]; {
	case len(rest) == 1 && rest[0] == 'Z':
	case len(rest) == 6 && rest[3] == ':':
		o, ok := parseOffset(rest, true)
		if !ok {
			return 0, false
		}
		off = o
	default:
		return 0, false
	}
	return daysFromCivil(y, m, d)*86400 + hh*3600 + mm*60 + ss - off, true
}

func validClock(d, hh, mm, ss int64) bool {
	return d >= 1 && d <= 31 && hh < 24 && mm < 60 && ss < 61
}

// parseOffset reads "+0100" (or "+01:00" with colon) as seconds east.
func parseOffset(b []byte, colon bool) (int64, bool) {
	want := 5
	if colon {
		want = 6
	}
	if len(b) != want || (b[0] != '+' && b[0] != '-') {
		return 0, false
	}
	h, ok1 := digits(b[1:], 2)
	mi := b[3:]
	if colon {
		if b[3] != ':' {
			return 0, false
		}
		mi = b[4:]
	}
	m, ok2 := digits(mi, 2)
	if !ok1 || !ok2 || m >= 60 {
		return 0, false
	}
	off := h*3600 + m*60
	if b[0] == '-' {
		off = -off
	}
	return off, true
}

// parseRFC3339MS reads an RFC 3339 time with an optional fraction of up to
// 9 digits ("2016-04-15T20:17:00.310Z", "2018-07-02T22:22:48.364000Z",
// "2026-12-01T18:14:20.5+01:00") as Unix ms.
func parseRFC3339MS(b []byte) (float64, bool) {
	if len(b) < 20 {
		return 0, false
	}
	frac := 0.0
	rest := b[19:]
	if rest[0] == '.' {
		i := 1
		var v, scale int64 = 0, 1
		for ; i < len(rest) && rest[i] >= '0' && rest[i] <= '9'; i++ {
			if i > 9 {
				return 0, false
			}
			v = v*10 + int64(rest[i]-'0')
			scale *= 10
		}
		if i == 1 {
			return 0, false
		}
		frac = float64(v) * 1000 / float64(scale)
		rest = rest[i:]
	}
	whole := make([]byte, 0, 25)
	whole = append(append(whole, b[:19]...), rest...)
	sec, ok := parseISO8601(whole)
	if !ok {
		return 0, false
	}
	return float64(sec*1000) + frac, true
}

// parseDateNoZone reads "01/Dec/2026:20:51:09" (HAProxy's date, local
// time without a zone) as Unix seconds in loc.
func parseDateNoZone(b []byte, loc *time.Location) (int64, bool) {
	if len(b) != 20 || b[2] != '/' || b[6] != '/' || b[11] != ':' || b[14] != ':' || b[17] != ':' {
		return 0, false
	}
	d, ok1 := digits(b[0:], 2)
	y, ok2 := digits(b[7:], 4)
	hh, ok3 := digits(b[12:], 2)
	mm, ok4 := digits(b[15:], 2)
	ss, ok5 := digits(b[18:], 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5) || !validClock(d, hh, mm, ss) {
		return 0, false
	}
	m := int64(-1)
	for i, name := range months {
		if string(b[3:6]) == name {
			m = int64(i + 1)
		}
	}
	if m < 0 {
		return 0, false
	}
	if loc == time.UTC {
		return daysFromCivil(y, m, d)*86400 + hh*3600 + mm*60 + ss, true
	}
	return time.Date(int(y), time.Month(m), int(d), int(hh), int(mm), int(ss), 0, loc).Unix(), true
}

// parseNanos reads a whole number of nanoseconds (at most 19 digits, as
// a Unix time in ns is), negative ones refused.
func parseNanos(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}
