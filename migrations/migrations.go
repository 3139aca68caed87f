// Package migrations holds the lab database's schema as numbered SQL files
// (NNNN_name.sql). storage.Open applies, in order and one transaction each,
// every file numbered above the database's PRAGMA user_version, then sets
// user_version to that number; a database already at the last number is
// left untouched. Files are append-only: never edit one that has shipped.
package migrations

import "embed"

// FS holds every migration file.
//
//go:embed *.sql
var FS embed.FS
