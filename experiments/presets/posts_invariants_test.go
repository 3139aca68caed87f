package presets_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/ratelab/ratelab/experiments"
)

// The invariants each post's spec lists (../shared/post2-plateau-spec.md,
// post4-spec.md, post5-spec.md), checked on the seed lab's presets at the
// published window and at windows that are not multiples of 100 ms.
var invariantDurations = []float64{5000, 1201, 12345, 333}

const (
	postServiceMS  = 10.0  // service_ms
	postDeadlineMS = 200.0 // deadline_ms
)

// byLevel groups a result's points of the constant loads (loads 1..) by
// their rate (the load's name) and label.
func byLevel(t *testing.T, res *experiments.Result, label func(p *experiments.Point) string) map[string]map[string]*experiments.Point {
	t.Helper()
	out := map[string]map[string]*experiments.Point{}
	for i := range res.Points {
		p := &res.Points[i]
		if p.Load == 0 {
			continue
		}
		if out[p.LoadName] == nil {
			out[p.LoadName] = map[string]*experiments.Point{}
		}
		out[p.LoadName][label(p)] = p
	}
	return out
}

func rateOf(t *testing.T, name string) float64 { return num(t, name) }

func TestPost2Invariants(t *testing.T) {
	for _, d := range invariantDurations {
		t.Run(fmt.Sprint(d), func(t *testing.T) {
			res, out := runPostPreset(t, "admission-control", d)
			secs := d / 1000
			levels := byLevel(t, res, func(p *experiments.Point) string { return p.Limiter })
			prevP99 := -1
			for _, r := range []string{"50", "75", "100", "125", "150", "200", "300"} {
				nc, al := levels[r]["no-control"], levels[r]["admission-limited"]
				if nc.Metrics.OfferedRPS != al.Metrics.OfferedRPS {
					t.Errorf("%s rps: offered %g and %g", r, nc.Metrics.OfferedRPS, al.Metrics.OfferedRPS)
				}
				if nc.Metrics.Rejected != 0 {
					t.Errorf("%s rps: no-control rejected %d", r, nc.Metrics.Rejected)
				}
				if rateOf(t, r) <= 1000/postServiceMS {
					for _, p := range []*experiments.Point{nc, al} {
						m := p.Metrics
						if m.GoodputRPS != m.OfferedRPS || m.Rejected != 0 || m.Sojourn.P99 != postServiceMS {
							t.Errorf("%s rps %s at capacity or below: goodput %g offered %g rejected %d p99 %d", r, p.Limiter, m.GoodputRPS, m.OfferedRPS, m.Rejected, m.Sojourn.P99)
						}
					}
				} else {
					if nc.Metrics.Sojourn.P99 < prevP99 {
						t.Errorf("%s rps: no-control p99 %d fell from %d", r, nc.Metrics.Sojourn.P99, prevP99)
					}
					prevP99 = nc.Metrics.Sojourn.P99
				}
				// L × S <= D: nothing admitted is late.
				if m := al.Metrics; m.Late != 0 || m.GoodputRPS != float64(m.Admitted)/secs || float64(m.Sojourn.P99) > postDeadlineMS {
					t.Errorf("%s rps admission-limited: late %d goodput %g admitted/secs %g p99 %d", r, m.Late, m.GoodputRPS, float64(m.Admitted)/secs, m.Sojourn.P99)
				}
			}
			// The file: the two modes' rows agree at and below capacity.
			_, rs := rows(t, out["bp-post2-plateau.csv"])
			if len(rs) != 14 {
				t.Fatalf("plateau has %d rows, want 14", len(rs))
			}
			for i := range 3 {
				if fmt.Sprint(rs[i][1:]) != fmt.Sprint(rs[i+7][1:]) {
					t.Errorf("rows %v and %v differ at capacity or below", rs[i], rs[i+7])
				}
			}
		})
	}
}

func TestPost4Invariants(t *testing.T) {
	for _, d := range invariantDurations {
		t.Run(fmt.Sprint(d), func(t *testing.T) {
			res, out := runPostPreset(t, "load-shedding", d)
			levels := byLevel(t, res, func(p *experiments.Point) string { return p.ServerName })
			if len(levels) != 7 {
				t.Fatalf("%d levels, want 7", len(levels))
			}
			policies := []string{"fifo", "tail-drop", "expire", "lifo"}
			for r, ps := range levels {
				for _, pol := range policies {
					m := ps[pol].Metrics
					if m.OfferedRPS != ps["fifo"].Metrics.OfferedRPS {
						t.Errorf("%s rps %s: offered %g, fifo's %g", r, pol, m.OfferedRPS, ps["fifo"].Metrics.OfferedRPS)
					}
					if m.OnTime+m.Late+m.Shed != m.Arrivals {
						t.Errorf("%s rps %s: on time %d + late %d + shed %d != %d arrivals", r, pol, m.OnTime, m.Late, m.Shed, m.Arrivals)
					}
					if (pol == "expire" || pol == "tail-drop") && (m.Late != 0 || m.ServedLatePct != 0 || m.WastedPct != 0 || float64(m.Sojourn.P99) > postDeadlineMS) {
						t.Errorf("%s rps %s serves late work: late %d wasted %g p99 %d", r, pol, m.Late, m.WastedPct, m.Sojourn.P99)
					}
					if rateOf(t, r) <= 1000/postServiceMS && (m.Shed != 0 || m.GoodputRPS != m.OfferedRPS || m.Sojourn.P99 != postServiceMS) {
						t.Errorf("%s rps %s at capacity or below: shed %d goodput %g p99 %d", r, pol, m.Shed, m.GoodputRPS, m.Sojourn.P99)
					}
				}
			}
			head, rs := rows(t, out["bp-post4-hangover.csv"])
			if len(rs) != int(d/100) {
				t.Errorf("hangover has %d rows, want floor(%g/100)", len(rs), d)
			}
			for _, row := range rs {
				if num(t, row[0])+100 > 1000 { // windows ending by the first spike's start
					break
				}
				for _, c := range []string{"fifo_p99_ms", "tail_drop_p99_ms", "expire_p99_ms", "lifo_p99_ms"} {
					if num(t, row[head[c]]) != postServiceMS {
						t.Errorf("window %s %s = %s before the first spike, want %g", row[0], c, row[head[c]], postServiceMS)
					}
				}
			}
			_, sweep := rows(t, out["bp-post4-shed-sweep.csv"])
			if len(sweep) != 28 {
				t.Errorf("shed sweep has %d rows, want 28", len(sweep))
			}
		})
	}
}

func TestPost5Invariants(t *testing.T) {
	for _, d := range invariantDurations {
		t.Run(fmt.Sprint(d), func(t *testing.T) {
			res, out := runPostPreset(t, "slo-load-control", d)
			levels := byLevel(t, res, func(p *experiments.Point) string { return p.ServerName })
			if len(levels) != 7 {
				t.Fatalf("%d levels, want 7", len(levels))
			}
			for r, ps := range levels {
				b, p := ps["blind"].Metrics, ps["priority"].Metrics
				if b.OfferedRPS != p.OfferedRPS || b.Classes[0].OfferedRPS != p.Classes[0].OfferedRPS {
					t.Errorf("%s rps: offered %g/%g, critical %g/%g", r, b.OfferedRPS, p.OfferedRPS, b.Classes[0].OfferedRPS, p.Classes[0].OfferedRPS)
				}
				for _, m := range []experiments.Metrics{b, p} {
					for k, c := range m.Classes {
						if float64(c.Sojourn.P99) > postDeadlineMS || c.SuccessPct < 0 || c.SuccessPct > 100 {
							t.Errorf("%s rps class %d: p99 %d success %g", r, k, c.Sojourn.P99, c.SuccessPct)
						}
					}
					if m.GoodputRPS > m.OfferedRPS {
						t.Errorf("%s rps: goodput %g > offered %g", r, m.GoodputRPS, m.OfferedRPS)
					}
					if rateOf(t, r) <= 1000/postServiceMS {
						for k, c := range m.Classes {
							if c.SuccessPct != 100 || (c.Offered > 0 && c.Sojourn.P99 != postServiceMS) || !*m.SLOMet {
								t.Errorf("%s rps class %d below capacity: success %g p99 %d", r, k, c.SuccessPct, c.Sojourn.P99)
							}
						}
					}
				}
				// The realized critical share is the seeded draws' over the
				// scored prefix, not q × offered.
				if want := criticalDraws(b.Arrivals); b.Classes[0].Offered != want {
					t.Errorf("%s rps: %d critical of %d arrivals, want %d (java.util.Random(23))", r, b.Classes[0].Offered, b.Arrivals, want)
				}
			}
			_, rs := rows(t, out["bp-post5-protection.csv"])
			for i := range 2 { // 50 and 100 rps: the two policies agree
				if fmt.Sprint(rs[i][1:]) != fmt.Sprint(rs[i+7][1:]) {
					t.Errorf("rows %v and %v differ at capacity or below", rs[i], rs[i+7])
				}
			}
			_, burst := rows(t, out["bp-post5-slo-burst.csv"])
			if len(burst) != int((d-postDeadlineMS)/100) {
				t.Errorf("burst has %d rows, want floor((%g - 200)/100)", len(burst), d)
			}
			for _, row := range burst {
				for _, c := range row[1:] {
					if v := num(t, c); v < 0 || v > 100 {
						t.Errorf("burst row %v: %s out of [0, 100]", row, c)
					}
				}
			}
		})
	}
}

// criticalDraws counts the draws below 0.25 among the first n of
// java.util.Random(23), written out here from the JDK's definition.
func criticalDraws(n int) int {
	seed := (uint64(23) ^ 0x5DEECE66D) & (1<<48 - 1)
	next := func(bits uint) uint64 {
		seed = (seed*0x5DEECE66D + 0xB) & (1<<48 - 1)
		return seed >> (48 - bits)
	}
	c := 0
	for range n {
		u := float64((next(26)<<27)+next(27)) * math.Ldexp(1, -53)
		if u < 0.25 {
			c++
		}
	}
	return c
}

// The first draws of java.util.Random(23).nextDouble(), printed by OpenJDK.
func TestJavaRandomDraws(t *testing.T) {
	if got := criticalDraws(1000); got != 245 {
		t.Errorf("%d of the first 1000 draws below 0.25, want 245", got)
	}
}
