"""Clear the in-process catalogue cache whenever a model or alias changes."""

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from .models import ArenaModel, ModelAlias
from .selectors import clear_catalogue_cache


@receiver([post_save, post_delete], sender=ArenaModel)
@receiver([post_save, post_delete], sender=ModelAlias)
def _catalogue_changed(**_kwargs: object) -> None:
    clear_catalogue_cache()
