package simulate

// endTimes are the ends of the closed-loop requests in flight, a min-heap
// of times: what users_in_flight_max counts down. They are not events of
// the loop's heap on purpose: an event takes a sequence number, and
// numbering the ends would renumber every later event, changing the
// order of ties (loop.go); nothing happens at an end but the count.
type endTimes []float64

// push adds an end at t.
func (h *endTimes) push(t float64) {
	s := append(*h, t)
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !(s[i] < s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
	*h = s
}

// popThrough removes the ends at or before t and returns how many.
func (h *endTimes) popThrough(t float64) int {
	s, n := *h, 0
	for len(s) > 0 && s[0] <= t {
		last := len(s) - 1
		s[0] = s[last]
		s = s[:last]
		for i := 0; ; {
			l := 2*i + 1
			if l >= len(s) {
				break
			}
			m := l
			if l+1 < len(s) && s[l+1] < s[l] {
				m = l + 1
			}
			if !(s[m] < s[i]) {
				break
			}
			s[i], s[m] = s[m], s[i]
			i = m
		}
		n++
	}
	*h = s
	return n
}
