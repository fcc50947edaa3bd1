"""Signal handlers of core: a changed or deleted API client drops out of the per-process key cache."""

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from .auth import forget_client
from .models import ApiClient


@receiver(post_save, sender=ApiClient)
@receiver(post_delete, sender=ApiClient)
def _client_changed(instance: ApiClient, **_kwargs: object) -> None:
    forget_client(instance.key_prefix)
