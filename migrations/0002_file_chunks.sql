-- Output files in chunks, so a download reads one chunk at a time instead
-- of the whole file (a 26 MB series.csv was 26 MB of memory per download).
--
-- files keeps each file's name, order, sha256 and size; file_chunks holds
-- its bytes in chunks of storage.ChunkBytes (256 KiB), seq 0, 1, ..., the
-- last one shorter; an empty file has no chunk.
--
-- Version 2 has a step in Go after this file, in the same transaction
-- (storage/migrate.go, chunkFiles): it splits every file stored under
-- version 1 into chunks, reading each file once, then drops files.data.
-- (Splitting in SQL with substr() reads the whole value again for every
-- chunk: 11 s for one 26 MB file.)

CREATE TABLE file_chunks (
    run_id TEXT    NOT NULL,
    name   TEXT    NOT NULL,
    seq    INTEGER NOT NULL,                         -- 0, 1, ...: bytes from seq * ChunkBytes
    data   BLOB    NOT NULL,
    PRIMARY KEY (run_id, name, seq),
    FOREIGN KEY (run_id, name) REFERENCES files (run_id, name) ON DELETE CASCADE
);
