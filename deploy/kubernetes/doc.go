// Package kubernetes holds the Kubernetes manifests that run a sweep as
// shards (an Indexed Job, one pod per shard, on a shared volume) and merge
// them (a Job); docs/shards.md explains them. Its test decodes them
// strictly with the Kubernetes API types.
package kubernetes
