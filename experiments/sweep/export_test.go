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

// WithoutFollow makes a load held in memory be read whole before its
// points run, for tests (by default the points follow it as it is read).
func WithoutFollow(opt Options) Options {
	opt.test.noFollow = true
	return opt
}

// WithFollowChunk sets how many arrivals the producer of a load followed
// by its points reads at a time, for tests.
func WithFollowChunk(opt Options, n int) Options {
	opt.test.followChunk = n
	return opt
}

// WithFollowAny makes the points follow a load even when it is expected
// to hold more arrivals than a load in memory may (it then streams), for
// tests.
func WithFollowAny(opt Options) Options {
	opt.test.followAny = true
	return opt
}
