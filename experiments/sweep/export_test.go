package sweep

// WithStreamCache makes loads of more than n arrivals stream (n = 0: every
// load whose points run the forward pass), for tests.
func WithStreamCache(opt Options, n int) Options {
	opt.test.streamCacheSet, opt.test.streamCache = true, n
	return opt
}

// WithMaxLivePoints sets how many points share a pass over a stream, for
// tests.
func WithMaxLivePoints(opt Options, n int) Options {
	opt.test.maxLivePoints = n
	return opt
}

// WithStreamBatch sets how many arrivals a batch of a stream holds, for
// tests.
func WithStreamBatch(opt Options, n int) Options {
	opt.test.streamBatch = n
	return opt
}

// WithoutSplit runs every streamed point's pass on one goroutine, even
// with spare workers, for tests.
func WithoutSplit(opt Options) Options {
	opt.test.noSplit = true
	return opt
}
