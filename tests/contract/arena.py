"""The server side of the contract test: the catalogue, stub-served providers and a public board.

Four tagged models are served by the stub provider (two chat models, so inline edits can be
served, a Mistral FiM model and an OpenAI-completions model) and one untagged decoy that the
extension must never be offered, because the driver sets ``arena.modelTags``. A published
board from other users' simulated battles stands in for the crowd. Django is imported inside
the functions, as the fixtures need it only once the test database exists.
"""

from __future__ import annotations

TAG = "contract"
SECRET_ENV = "CONTRACT_STUB_KEY"
SECRET = "sk-contract-test-0123456789abcdef"

# catalogue key -> (provider kind, remote model name, first word of its completions)
SERVED = {
    "gpt-4o-2024-08-06": ("openai_chat", "stub-gpt", "alpha"),
    "claude-3-5-sonnet-20240620": ("openai_chat", "stub-claude", "bravo"),
    "codestral-2405": ("mistral_fim", "stub-codestral", "charlie"),
    "deepseek-coder-fim": ("openai_completion", "stub-deepseek", "delta"),
}
CHAT = ("gpt-4o-2024-08-06", "claude-3-5-sonnet-20240620")
DECOY = ("decoy-untagged-model", "openai_completion", "stub-decoy", "echo")
CROWD_BATTLES = 600


def completion_text(key: str, marker: str) -> str:
    """What the stub answers for ``key`` in a run marked ``marker`` (distinct first letters)."""
    word = SERVED[key][2] if key in SERVED else DECOY[3]
    return f'{word}_result("COMPLETION_{marker}")'


def configure_stub(stub, marker: str) -> None:
    for key, (_kind, remote, _word) in SERVED.items():
        stub.behave(remote, middle=completion_text(key, marker))
    stub.behave(DECOY[2], middle=completion_text(DECOY[0], marker))


def seed(stub) -> None:
    """Catalogue, providers and a published board (the database must be reachable)."""
    from analysis.simulate import simulate_battles
    from ingest.models import Battle, BattleKind, BattleSource, Outcome, Privacy
    from leaderboard.models import RatingConfig
    from leaderboard.recompute import recompute
    from serving.models import ModelProvider
    from tests.factories import ArenaModelFactory

    models = {}
    for key, (kind, remote, _word) in [*SERVED.items(), (DECOY[0], (*DECOY[1:3], None))]:
        models[key] = ArenaModelFactory(key=key)
        ModelProvider.objects.create(
            model=models[key],
            kind=kind,
            base_url=stub.base_url,
            remote_model=remote,
            api_key_env=SECRET_ENV,
            timeout_seconds=10.0,
            tags=TAG if key in SERVED else "",
        )
    keys = list(SERVED)
    crowd = dict(zip(keys, (1060.0, 1030.0, 990.0, 960.0), strict=True))
    sim = simulate_battles(crowd, CROWD_BATTLES, seed=14, top_slot_p=0.6)
    outcome = {0: Outcome.A, 1: Outcome.B, 2: Outcome.TIE}
    Battle.objects.bulk_create(
        Battle(
            pair_id=f"crowd-{i}",
            user_hash=f"{i % 40:064x}",
            model_a=models[keys[a]],
            model_b=models[keys[b]],
            outcome=outcome[int(o)],
            kind=BattleKind.COMPLETION,
            privacy=Privacy.PRIVATE,
            source=BattleSource.SIMULATED,
            content_hash=f"{i:064x}",
        )
        for i, (a, b, o) in enumerate(zip(sim.a, sim.b, sim.outcome, strict=True))
    )
    config = RatingConfig.current()
    config.rounds, config.slice_rounds = 100, 50
    config.save()
    recompute(trigger="test")
