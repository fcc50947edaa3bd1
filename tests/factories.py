"""factory_boy factories for the catalogue and battles."""

from __future__ import annotations

import factory

from catalogue.models import ArenaModel, Visibility
from ingest.models import Battle, BattleKind, BattleSource, Outcome, Privacy


class ArenaModelFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ArenaModel
        django_get_or_create = ("key",)

    key = factory.Sequence(lambda n: f"model-{n}")
    display_name = factory.LazyAttribute(lambda o: o.key.replace("-", " ").title())
    organization = "Example Org"
    license = "Proprietary"
    visibility = Visibility.PUBLIC


class BattleFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Battle

    pair_id = factory.Sequence(lambda n: f"pair-{n}")
    user_hash = factory.Sequence(lambda n: f"{n:064x}")
    model_a = factory.SubFactory(ArenaModelFactory)
    model_b = factory.SubFactory(ArenaModelFactory)
    outcome = Outcome.A
    kind = BattleKind.COMPLETION
    privacy = Privacy.PRIVATE
    source = BattleSource.API
    content_hash = factory.Sequence(lambda n: f"{n:064x}")
