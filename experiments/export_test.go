package experiments

// SetStreamCache makes loads of more than n arrivals stream (n = 0: every
// load whose points run the forward pass), for tests; it returns the
// function that restores the limit.
func SetStreamCache(n int) (restore func()) {
	old := streamCacheArrivals
	streamCacheArrivals = n
	return func() { streamCacheArrivals = old }
}

// SetMaxLivePoints sets how many points share a pass over a stream, for
// tests; it returns the function that restores it.
func SetMaxLivePoints(n int) (restore func()) {
	old := maxLivePoints
	maxLivePoints = n
	return func() { maxLivePoints = old }
}

// SetStreamBatch sets how many arrivals a batch of a stream holds, for
// tests; it returns the function that restores it.
func SetStreamBatch(n int) (restore func()) {
	old := streamBatch
	streamBatch = n
	return func() { streamBatch = old }
}
