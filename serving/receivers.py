"""Drop this process's serving state when what it is built from changes."""

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from catalogue.models import ArenaModel

from .models import ModelProvider, PairDistribution, SamplingConfig
from .selectors import clear_serving_state


@receiver([post_save, post_delete], sender=ModelProvider)
@receiver([post_save, post_delete], sender=SamplingConfig)
@receiver([post_save, post_delete], sender=PairDistribution)
@receiver([post_save, post_delete], sender=ArenaModel)
def _serving_inputs_changed(**_kwargs: object) -> None:
    clear_serving_state()
