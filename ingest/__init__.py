"""Everything the editor extension talks to: battle ingest, completion logs, API keys."""
