"""Hand-made fixtures for the analysis tests."""
