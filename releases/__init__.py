"""Open data releases: versioned, privacy-scrubbed dataset files of the arena's battles
(Parquet, JSONL, the Copilot Arena CSV layout), their dataset card, checksums and manifest,
and the public download page that lists them (docs/data.md)."""
