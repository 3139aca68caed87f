package limiter

import (
	"math"
	"sort"
)

// tDigest is github.com/influxdata/tdigest v0.0.1 (tdigest.go,
// centroid.go), the digest failsafe-go's adaptive limiter takes its
// recent RTT quantile from, line for line: Add, process (merging with
// sort.Sort, the same unstable sort on the same Less, so the same order),
// updateCumulative and Quantile, at compression 100. The digest is only
// ever added to and reset here.
type tDigest struct {
	compression       float64
	maxProcessed      int
	maxUnprocessed    int
	processed         centroidList
	unprocessed       centroidList
	cumulative        []float64
	processedWeight   float64
	unprocessedWeight float64
	min, max          float64
}

type centroid struct{ mean, weight float64 }

// add is Centroid.Add (the weight is never negative here).
func (c *centroid) add(r centroid) {
	if c.weight != 0 {
		c.weight += r.weight
		c.mean += r.weight * (r.mean - c.mean) / c.weight
	} else {
		c.weight = r.weight
		c.mean = r.mean
	}
}

type centroidList []centroid

func (l centroidList) Len() int           { return len(l) }
func (l centroidList) Less(i, j int) bool { return l[i].mean < l[j].mean }
func (l centroidList) Swap(i, j int)      { l[i], l[j] = l[j], l[i] }

func newTDigest(compression float64) tDigest {
	t := tDigest{compression: compression}
	t.maxProcessed = int(2 * math.Ceil(compression))
	t.maxUnprocessed = int(8 * math.Ceil(compression))
	t.processed = make(centroidList, 0, t.maxProcessed)
	t.unprocessed = make(centroidList, 0, t.maxUnprocessed+1)
	t.reset()
	return t
}

func (t *tDigest) reset() {
	t.processed = t.processed[:0]
	t.unprocessed = t.unprocessed[:0]
	t.cumulative = t.cumulative[:0]
	t.processedWeight = 0
	t.unprocessedWeight = 0
	t.min = math.MaxFloat64
	t.max = -math.MaxFloat64
}

func (t *tDigest) add(x, w float64) {
	if math.IsNaN(x) {
		return
	}
	t.unprocessed = append(t.unprocessed, centroid{x, w})
	t.unprocessedWeight += w
	if t.processed.Len() > t.maxProcessed || t.unprocessed.Len() > t.maxUnprocessed {
		t.process()
	}
}

func (t *tDigest) process() {
	if t.unprocessed.Len() > 0 || t.processed.Len() > t.maxProcessed {
		t.unprocessed = append(t.unprocessed, t.processed...)
		sort.Sort(&t.unprocessed)
		t.processed = t.processed[:0]
		t.processed = append(t.processed, t.unprocessed[0])
		t.processedWeight += t.unprocessedWeight
		t.unprocessedWeight = 0
		soFar := t.unprocessed[0].weight
		limit := t.processedWeight * t.integratedQ(1.0)
		for _, c := range t.unprocessed[1:] {
			projected := soFar + c.weight
			if projected <= limit {
				soFar = projected
				(&t.processed[t.processed.Len()-1]).add(c)
			} else {
				k1 := t.integratedLocation(soFar / t.processedWeight)
				limit = t.processedWeight * t.integratedQ(k1+1.0)
				soFar += c.weight
				t.processed = append(t.processed, c)
			}
		}
		t.min = math.Min(t.min, t.processed[0].mean)
		t.max = math.Max(t.max, t.processed[t.processed.Len()-1].mean)
		t.updateCumulative()
		t.unprocessed = t.unprocessed[:0]
	}
}

func (t *tDigest) updateCumulative() {
	if n := t.processed.Len() + 1; n <= cap(t.cumulative) {
		t.cumulative = t.cumulative[:n]
	} else {
		t.cumulative = make([]float64, n)
	}
	prev := 0.0
	for i, c := range t.processed {
		cur := c.weight
		t.cumulative[i] = prev + cur/2.0
		prev = prev + cur
	}
	t.cumulative[t.processed.Len()] = prev
}

func (t *tDigest) quantile(q float64) float64 {
	t.process()
	if q < 0 || q > 1 || t.processed.Len() == 0 {
		return math.NaN()
	}
	if t.processed.Len() == 1 {
		return t.processed[0].mean
	}
	index := q * t.processedWeight
	if index <= t.processed[0].weight/2.0 {
		return t.min + 2.0*index/t.processed[0].weight*(t.processed[0].mean-t.min)
	}
	lower := sort.Search(len(t.cumulative), func(i int) bool { return t.cumulative[i] >= index })
	if lower+1 != len(t.cumulative) {
		z1 := index - t.cumulative[lower-1]
		z2 := t.cumulative[lower] - index
		return tdWeightedAverage(t.processed[lower-1].mean, z2, t.processed[lower].mean, z1)
	}
	z1 := index - t.processedWeight - t.processed[lower-1].weight/2.0
	z2 := (t.processed[lower-1].weight / 2.0) - z1
	return tdWeightedAverage(t.processed[t.processed.Len()-1].mean, z1, t.max, z2)
}

func (t *tDigest) integratedQ(k float64) float64 {
	return (math.Sin(math.Min(k, t.compression)*math.Pi/t.compression-math.Pi/2.0) + 1.0) / 2.0
}

func (t *tDigest) integratedLocation(q float64) float64 {
	return t.compression * (math.Asin(2.0*q-1.0) + math.Pi/2.0) / math.Pi
}

func tdWeightedAverage(x1, w1, x2, w2 float64) float64 {
	if x1 <= x2 {
		return tdWeightedAverageSorted(x1, w1, x2, w2)
	}
	return tdWeightedAverageSorted(x2, w2, x1, w1)
}

func tdWeightedAverageSorted(x1, w1, x2, w2 float64) float64 {
	x := (x1*w1 + x2*w2) / (w1 + w2)
	return math.Max(x1, math.Min(x, x2))
}
