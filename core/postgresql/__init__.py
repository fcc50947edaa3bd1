"""Django's PostgreSQL backend with the pool's health check adjusted (see base.py)."""
