"""Battles of the Copilot Arena release, imported before battles could be stored without a user,
carried one made-up user ("copilot-arena-sample"): they become user-less (an empty user_hash),
as the release has no user column. Their content hash (which covers the user) follows, so a
re-import still finds them as duplicates."""

import hashlib
import hmac

from django.conf import settings
from django.db import migrations

SAMPLE_USER = "copilot-arena-sample"


def forwards(apps, schema_editor):
    Battle = apps.get_model("ingest", "Battle")
    key = settings.USER_ID_HMAC_KEY.encode()
    sample = hmac.digest(key, SAMPLE_USER.encode(), "sha256").hex()
    rows = Battle.objects.filter(user_hash=sample).values_list(
        "id", "kind", "model_a_id", "model_b_id", "outcome"
    )
    for pk, kind, a, b, outcome in rows.iterator():
        text = f"{kind}||{a}|{b}|{outcome}"
        Battle.objects.filter(pk=pk).update(
            user_hash="", content_hash=hashlib.sha256(text.encode()).hexdigest()
        )


class Migration(migrations.Migration):
    dependencies = [("ingest", "0005_pair_probability")]
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
