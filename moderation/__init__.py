"""Moderation: excluding and restoring votes, merging models, anomaly reports, the audit log."""
