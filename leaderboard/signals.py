"""Signals other apps listen to (e.g. correlations are recomputed after each new board)."""

from django.dispatch import Signal

# Sent after a snapshot is published and committed. kwargs: snapshot_id.
snapshot_ready = Signal()
