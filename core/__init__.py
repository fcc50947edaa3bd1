"""Cross-cutting plumbing every app may use: API keys, throttles, Redis, errors, locks, audit."""
