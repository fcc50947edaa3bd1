"""Catalogue: release date, knowledge cutoff and retirement date of each model."""

from django.db import migrations, models
from django.db.models import F


def date_existing_retirements(apps, schema_editor):
    # Models retired before the field existed: their last change is the best date known.
    ArenaModel = apps.get_model("catalogue", "ArenaModel")
    ArenaModel.objects.filter(visibility="retired", retired_at__isnull=True).update(
        retired_at=F("updated_at")
    )


class Migration(migrations.Migration):

    dependencies = [
        ('catalogue', '0001_move_from_leaderboard'),
    ]

    operations = [
        migrations.AddField(
            model_name='arenamodel',
            name='knowledge_cutoff',
            field=models.CharField(blank=True, help_text='As its maker states it, e.g. 2024-04 or “late 2023”.', max_length=32),
        ),
        migrations.AddField(
            model_name='arenamodel',
            name='release_date',
            field=models.DateField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='arenamodel',
            name='retired_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(date_existing_retirements, migrations.RunPython.noop),
    ]
