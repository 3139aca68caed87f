package main

// Sharding: `lab run --shard K/N` runs one of N disjoint slices of a sweep's
// points and `lab merge` joins the slices into the outputs of the whole run.
//
// Assignment (deterministic, documented in docs/shards.md): point i of the
// sweep (its index in results.csv) belongs to shard i mod N, shards counted
// from 0 (Kubernetes' completion index, a Slurm array's task id from 0).
// Round robin spreads each limiter's points over the shards, so the shards
// take about the same time.
//
// A shard's directory holds results.csv, series.csv and clients.csv of its
// own points (to look at), shard-result.json.gz (its points' measurements,
// lossless: float64 values in JSON read back exactly) and shard.json (the
// shard manifest). The merge rebuilds the whole Result from the shards and
// writes every output through experiments/output, as the unsharded run
// does, so the bytes are the same.

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ratelab/ratelab/experiments"
	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/output"
)

// Shard file names and the manifest's format tag.
const (
	shardManifestFile = "shard.json"
	shardResultFile   = "shard-result.json.gz"
	shardFormat       = "ratelab-shard/1"
	// maxShards bounds N (a shard holds at least one point of a sweep of
	// at most a few thousand points).
	maxShards = 100_000
)

// shardSpec is K/N: shard K (from 0) of N.
type shardSpec struct{ K, N int }

// parseShard reads "K/N" with 0 <= K < N.
func parseShard(s string) (shardSpec, error) {
	ks, ns, ok := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(ks)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil {
		return shardSpec{}, fmt.Errorf("--shard %q: want K/N, for example 0/4 (shards count from 0)", s)
	}
	if n < 1 || n > maxShards {
		return shardSpec{}, fmt.Errorf("--shard %q: N must be 1 to %d", s, maxShards)
	}
	if k < 0 || k >= n {
		return shardSpec{}, fmt.Errorf("--shard %q: K must be 0 to %d (shards count from 0)", s, n-1)
	}
	return shardSpec{k, n}, nil
}

// shardPoints are the indexes of the points of shard K of N in a sweep of
// total points: every i with i mod N == K, increasing.
func shardPoints(sh shardSpec, total int) []int {
	pts := []int{}
	for i := sh.K; i < total; i += sh.N {
		pts = append(pts, i)
	}
	return pts
}

// shardManifest is shard.json: which run and which points a shard holds.
type shardManifest struct {
	Format        string `json:"format"`
	EngineVersion string `json:"engine_version"`
	// ConfigSHA256 is the sha256 of the config's canonical document
	// (experiments.Config.SHA256, as manifest.json records it).
	ConfigSHA256 string          `json:"config_sha256"`
	Shard        int             `json:"shard"`
	Shards       int             `json:"shards"`
	TotalPoints  int             `json:"total_points"`
	Points       []int           `json:"points"`
	Result       output.Output   `json:"result"` // shard-result.json.gz
	Config       json.RawMessage `json:"config"`
}

// shardFiles are the files of one shard's directory, shard.json last.
func shardFiles(cfg *experiments.Config, sh shardSpec, total int, res *experiments.Result) ([]output.File, error) {
	part := *res
	part.Config = nil // in shard.json, once
	raw, err := json.Marshal(&part)
	if err != nil {
		return nil, fmt.Errorf("shard result: %w", err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz) // no name, no time: the same bytes for the same shard
	if _, err := zw.Write(raw); err != nil {
		return nil, fmt.Errorf("shard result: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("shard result: %w", err)
	}
	files := []output.File{
		{Name: experiments.FileResults, Data: output.Results(res)},
		{Name: experiments.FileSeries, Data: output.SeriesCSV(res)},
	}
	if len(res.Clients) > 1 {
		files = append(files, output.File{Name: experiments.FileClients, Data: output.ClientsCSV(res)})
	}
	result := output.File{Name: shardResultFile, Data: gz.Bytes()}
	files = append(files, result)
	m := shardManifest{
		Format:        shardFormat,
		EngineVersion: experiments.EngineVersion,
		ConfigSHA256:  cfg.SHA256(),
		Shard:         sh.K,
		Shards:        sh.N,
		TotalPoints:   total,
		Points:        shardPoints(sh, total),
		Result:        output.Output{Name: shardResultFile, SHA256: result.SHA256(), Bytes: len(result.Data)},
		Config:        cfg.JSON(),
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("shard manifest: %w", err)
	}
	return append(files, output.File{Name: shardManifestFile, Data: append(data, '\n')}), nil
}

// loadedShard is one shard directory read back.
type loadedShard struct {
	dir string
	m   shardManifest
	res experiments.Result
}

// maxShardResultBytes bounds a shard's decompressed result.
const maxShardResultBytes = 8 << 30

func readShard(dir string) (*loadedShard, error) {
	data, err := os.ReadFile(filepath.Join(dir, shardManifestFile))
	if err != nil {
		return nil, fmt.Errorf("shard %s: %w", dir, err)
	}
	s := &loadedShard{dir: dir}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s.m); err != nil {
		return nil, fmt.Errorf("shard %s: %s: %w", dir, shardManifestFile, err)
	}
	if s.m.Format != shardFormat {
		return nil, fmt.Errorf("shard %s: format %q, want %q", dir, s.m.Format, shardFormat)
	}
	raw, err := os.ReadFile(filepath.Join(dir, shardResultFile))
	if err != nil {
		return nil, fmt.Errorf("shard %s: %w", dir, err)
	}
	if got := (output.File{Data: raw}).SHA256(); got != s.m.Result.SHA256 {
		return nil, fmt.Errorf("shard %s: %s has sha256 %s, the shard manifest says %s", dir, shardResultFile, got, s.m.Result.SHA256)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("shard %s: %s: %w", dir, shardResultFile, err)
	}
	plain, err := io.ReadAll(io.LimitReader(zr, maxShardResultBytes+1))
	if err != nil {
		return nil, fmt.Errorf("shard %s: %s: %w", dir, shardResultFile, err)
	}
	if len(plain) > maxShardResultBytes {
		return nil, fmt.Errorf("shard %s: %s: more than %d bytes", dir, shardResultFile, maxShardResultBytes)
	}
	if err := json.Unmarshal(plain, &s.res); err != nil {
		return nil, fmt.Errorf("shard %s: %s: %w", dir, shardResultFile, err)
	}
	return s, nil
}

// mergeShards checks that the shards are all of one run (same config, same
// engine version as this lab, same N), that each of 0..N-1 is there once and
// that together they hold every point once, and rebuilds the whole Result.
func mergeShards(dirs []string) (*experiments.Result, error) {
	shards := make([]*loadedShard, 0, len(dirs))
	for _, d := range dirs {
		s, err := readShard(d)
		if err != nil {
			return nil, err
		}
		shards = append(shards, s)
	}
	first := shards[0]
	if first.m.EngineVersion != experiments.EngineVersion {
		return nil, fmt.Errorf("shard %s: engine version %s, this lab is %s: merge with the lab that ran the shards", first.dir, first.m.EngineVersion, experiments.EngineVersion)
	}
	cfg, err := document.DecodeConfig(first.m.Config)
	if err != nil {
		return nil, fmt.Errorf("shard %s: config: %w", first.dir, err)
	}
	if sum := cfg.SHA256(); sum != first.m.ConfigSHA256 {
		return nil, fmt.Errorf("shard %s: the config reads back with sha256 %s, the shard manifest says %s", first.dir, sum, first.m.ConfigSHA256)
	}
	total := len(cfg.Points())
	n := first.m.Shards
	byK := make([]*loadedShard, n)
	for _, s := range shards {
		switch {
		case s.m.EngineVersion != first.m.EngineVersion:
			return nil, fmt.Errorf("shard %s: engine version %s, shard %s has %s", s.dir, s.m.EngineVersion, first.dir, first.m.EngineVersion)
		case s.m.ConfigSHA256 != first.m.ConfigSHA256:
			return nil, fmt.Errorf("shard %s: another config (sha256 %s) than shard %s (%s)", s.dir, s.m.ConfigSHA256, first.dir, first.m.ConfigSHA256)
		case s.m.Shards != n:
			return nil, fmt.Errorf("shard %s: one of %d shards, shard %s is one of %d", s.dir, s.m.Shards, first.dir, n)
		case s.m.Shard < 0 || s.m.Shard >= n:
			return nil, fmt.Errorf("shard %s: shard %d of %d is out of range", s.dir, s.m.Shard, n)
		case byK[s.m.Shard] != nil:
			return nil, fmt.Errorf("shard %d/%d given twice: %s and %s", s.m.Shard, n, byK[s.m.Shard].dir, s.dir)
		case s.m.TotalPoints != total:
			return nil, fmt.Errorf("shard %s: %d points in the sweep, the config has %d", s.dir, s.m.TotalPoints, total)
		}
		want := shardPoints(shardSpec{s.m.Shard, n}, total)
		if !slices.Equal(s.m.Points, want) {
			return nil, fmt.Errorf("shard %s: holds points %v, shard %d/%d is points %v", s.dir, s.m.Points, s.m.Shard, n, want)
		}
		if len(s.res.Points) != len(want) {
			return nil, fmt.Errorf("shard %s: %s holds %d points, the manifest lists %d", s.dir, shardResultFile, len(s.res.Points), len(want))
		}
		for j, p := range s.res.Points {
			if p.Index != want[j] {
				return nil, fmt.Errorf("shard %s: %s holds point %d where point %d belongs", s.dir, shardResultFile, p.Index, want[j])
			}
		}
		byK[s.m.Shard] = s
	}
	var missing []string
	for k, s := range byK {
		if s == nil {
			missing = append(missing, strconv.Itoa(k))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing shard %s of %d (shards count from 0)", strings.Join(missing, ", "), n)
	}
	head, err := resultHead(&first.res)
	if err != nil {
		return nil, err
	}
	for _, s := range shards[1:] {
		h, err := resultHead(&s.res)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(h, head) {
			return nil, fmt.Errorf("shard %s: its workload (arrivals, clients, groups, arrival curve) differs from shard %s's", s.dir, first.dir)
		}
	}
	res := first.res
	res.Config = cfg
	res.Points = make([]experiments.Point, total)
	res.Replicas = nil
	for _, s := range byK {
		for _, p := range s.res.Points {
			res.Points[p.Index] = p
		}
		res.Replicas = append(res.Replicas, s.res.Replicas...)
	}
	// A replicated point's runs, in point order, replications adjacent.
	slices.SortStableFunc(res.Replicas, func(a, b experiments.Point) int {
		if a.Index != b.Index {
			return a.Index - b.Index
		}
		return a.Replica - b.Replica
	})
	return &res, nil
}

// resultHead is everything of a Result but its points and config: what
// every shard computes alike from the workload.
func resultHead(r *experiments.Result) ([]byte, error) {
	h := *r
	h.Points, h.Config, h.Replicas = nil, nil, nil
	b, err := json.Marshal(&h)
	if err != nil {
		return nil, fmt.Errorf("shard result: %w", err)
	}
	return b, nil
}
