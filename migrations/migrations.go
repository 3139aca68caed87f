// Package migrations holds the lab database's schema as numbered SQL files
// (NNNN_name.sql). storage.Open applies, in order and one transaction each,
// every file numbered above the database's PRAGMA user_version, then sets
// user_version to that number; a database already at the last number is
// left untouched. A migration may have a step in Go that runs in its
// transaction after the file (storage/migrate.go lists them: 0002 splits
// stored files into chunks). Files are append-only: never edit one that
// has shipped.
package migrations

import "embed"

// FS holds every migration file.
//
//go:embed *.sql
var FS embed.FS
