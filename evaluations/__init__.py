"""Offline evaluations run through the arena's own providers (pure parts, no Django).

``sandbox`` runs untrusted programs; ``humaneval``, ``infilling`` and ``judge`` build the
requests, score the answers and summarise them. The Django app (runs, Celery tasks, admin) is
built on top of these modules.
"""
