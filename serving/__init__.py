"""Pair serving for the editor extension: providers, latency-aware pair sampling, FiM clean-up."""
