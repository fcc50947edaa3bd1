"""Offline evaluations run through the arena's own providers.

The suites' pure parts import no Django: ``sandbox`` runs untrusted programs; ``humaneval``,
``infilling``, ``judge`` and ``judge_stats`` build requests, score answers and summarise
them. The Django app on top stores runs and items (``models``), executes them on Celery
workers (``driver``, ``tasks``) through the arena's providers (``client``), publishes the
scores as external boards (``publish``) and shows them in the admin (``admin``).
"""
