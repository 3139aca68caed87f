package simulate

import (
	"math/rand/v2"

	"github.com/ratelab/ratelab/experiments"
)

// javaRandom is java.util.Random's generator.
type javaRandom struct{ state uint64 }

const javaMask = 1<<48 - 1

func newJavaRandom(seed int64) *javaRandom {
	return &javaRandom{state: (uint64(seed) ^ 0x5DEECE66D) & javaMask}
}

func (r *javaRandom) next(bits uint) uint64 {
	r.state = (r.state*0x5DEECE66D + 0xB) & javaMask
	return r.state >> (48 - bits)
}

// Float64 is nextDouble: exact in float64 (53 bits over 2^53).
func (r *javaRandom) Float64() float64 {
	return float64(r.next(26)<<27+r.next(27)) / (1 << 53)
}

// DrawClasses gives the n arrivals of one load their classes (nil without
// classes). The generator starts from its seed for every load, so arrival i
// always gets the i-th draw.
func DrawClasses(c *experiments.Config, n int) []uint8 {
	if len(c.Classes) == 0 {
		return nil
	}
	var next func() float64
	switch c.ClassDraw.Generator {
	case experiments.DrawPCG:
		next = rand.New(rand.NewPCG(uint64(c.ClassDraw.Seed), 0)).Float64
	default:
		next = newJavaRandom(c.ClassDraw.Seed).Float64
	}
	cum := make([]float64, len(c.Classes)-1)
	sum := 0.0
	for k := range cum {
		sum += c.Classes[k].Share
		cum[k] = sum
	}
	out := make([]uint8, n)
	for i := range out {
		u := next()
		k := 0
		for k < len(cum) && !(u < cum[k]) {
			k++
		}
		out[i] = uint8(k)
	}
	return out
}
