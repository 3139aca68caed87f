// Package seedlab holds the seed lab's published sha256 of its third
// post's files, for the tests of every package that checks them (runner,
// storage, web, experiments/presets). Tests only.
//
// Source: shared/seeds/token-vs-leaky-bucket.txt, the seed lab's post on
// token and leaky buckets, which prints the sums of the files its
// --deterministic --duration 5s run wrote (the token-vs-leaky preset).
// They are the external contract: hashes of files made by the seed lab's
// program, not by this engine, so they stay sha256 here and no
// RATELAB_UPDATE=1 can rewrite them (the presets' own outputs are goldens
// under experiments/presets/testdata/).
package seedlab

// The token-vs-leaky preset's files and their published sha256.
const (
	Post3BurstSweepFile   = "bp-post3-burst-sweep.csv"
	Post3BurstSweepSHA256 = "d29c75e9eaa020ba6192686883d30a6366ab7640534847a20d55e339072987c6"
	Post3ShapingFile      = "bp-post3-shaping.csv"
	Post3ShapingSHA256    = "80841498be4d0e0a48076599602ed624b18d23e45dcbd6e880ebd580b7471543"
)
