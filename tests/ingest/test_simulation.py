"""simulate_battles: realistic, marked as simulated, deletable, reproducible in content."""

from __future__ import annotations

import io

from django.core.management import call_command
from django.db.models import Count, F

from ingest.models import Battle, BattleKind, Outcome


def test_simulated_battles_look_like_the_published_arena(db):
    call_command("simulate_battles", "--battles", "20000", "--seed", "3", stdout=io.StringIO())
    qs = Battle.objects.all()
    assert qs.count() == 20000
    assert set(qs.values_list("source", flat=True).distinct()) == {"simulated"}
    completions = qs.filter(kind=BattleKind.COMPLETION)
    top_share = completions.filter(outcome=Outcome.A).count() / completions.count()
    assert 0.79 < top_share < 0.85  # the published 82% top-slot preference
    assert not completions.filter(outcome__in=[Outcome.TIE, Outcome.BOTH_BAD]).exists()
    edit_share = qs.filter(kind=BattleKind.EDIT).count() / 20000
    assert 0.08 < edit_share < 0.12
    python_share = qs.filter(language="python").count() / 20000
    assert 0.46 < python_share < 0.52
    assert set(qs.values_list("context_bucket", flat=True).distinct()) == {
        "<1k",
        "1-4k",
        "4-16k",
        ">16k",
    }
    assert qs.values("user_hash").distinct().count() > 500
    assert not qs.filter(model_a=F("model_b")).exists()


def test_same_seed_same_outcomes_and_delete(db):
    call_command("simulate_battles", "--battles", "3000", "--seed", "9", stdout=io.StringIO())
    first = list(
        Battle.objects.order_by("id").values_list("model_a__key", "model_b__key", "outcome")
    )
    call_command("simulate_battles", "--delete", stdout=io.StringIO())
    assert Battle.objects.count() == 0
    call_command("simulate_battles", "--battles", "3000", "--seed", "9", stdout=io.StringIO())
    second = list(
        Battle.objects.order_by("id").values_list("model_a__key", "model_b__key", "outcome")
    )
    assert first == second
    per_model = Battle.objects.values("model_a").annotate(n=Count("id"))
    assert len(per_model) == 11  # every published model battles
