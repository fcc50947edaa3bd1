"""manage.py release_dataset: write a versioned, privacy-scrubbed release of the battles."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.cli import progress
from releases.models import DatasetRelease
from releases.selectors import chosen, file_url
from releases.services import ReleaseOptions, build_release, start_release


class Command(BaseCommand):
    help = (
        "Write a dataset release (Parquet, JSONL, the Copilot Arena CSV view, card, manifest, "
        "SHA256SUMS) to the releases storage and list it on /data/."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--min-age-days",
            type=int,
            default=None,
            help="Only battles older than this many days (default: ARENA_RELEASE_MIN_AGE_DAYS).",
        )
        parser.add_argument(
            "--license",
            default=None,
            help="Licence the card names (default: ARENA_RELEASE_LICENSE).",
        )
        parser.add_argument("--name", dest="release_version", default="",
                            help="Release name (default: the cut-off's date).")  # fmt: skip
        parser.add_argument(
            "--stable-ids",
            action="store_true",
            help="Pseudonyms and battle ids the same in every release made with this option "
            "(default: keyed for this release alone).",
        )
        parser.add_argument("--include-simulated", action="store_true")
        parser.add_argument(
            "--include-excluded", action="store_true", help="Battles excluded by moderation too."
        )
        parser.add_argument(
            "--on-secret",
            choices=DatasetRelease.OnSecret.values,
            default=DatasetRelease.OnSecret.REDACT,
            help="A battle whose code the secret scan flags: redact = keep the vote without its "
            "code (default), drop = leave the battle out.",
        )
        parser.add_argument("--hidden", action="store_true",
                            help="Do not list the release on /data/.")  # fmt: skip

    def handle(self, *args: Any, **o: Any) -> None:
        min_age = (
            settings.ARENA_RELEASE_MIN_AGE_DAYS if o["min_age_days"] is None else o["min_age_days"]
        )
        if min_age < 0:
            raise CommandError("--min-age-days must be 0 or more")
        options = ReleaseOptions(
            min_age_days=min_age,
            license=o["license"] or settings.ARENA_RELEASE_LICENSE,
            stable_ids=o["stable_ids"],
            include_simulated=o["include_simulated"],
            include_excluded=o["include_excluded"],
            on_secret=o["on_secret"],
            version=o["release_version"],
        )
        try:
            release = start_release(options=options)
        except (ValueError, ValidationError) as exc:
            raise CommandError(
                f"--name: {'; '.join(getattr(exc, 'messages', [str(exc)]))}"
            ) from exc
        if o["hidden"]:
            DatasetRelease.objects.filter(pk=release.pk).update(public=False)
        total = chosen(release=release).count()
        release = build_release(
            release_id=release.pk,
            progress=lambda rows: progress(rows, total=total, desc="Releasing", unit=" battles"),
        )
        c = release.counts
        self.stdout.write(
            f"Release {release.version}: {c['battles']:,} battles, {c['users']:,} voters, "
            f"{c['with_code']:,} with code; secret scan flagged {c['secret_flagged']:,} of "
            f"{c['research_rows']:,} battles with code ({release.on_secret}); "
            f"{release.size_bytes:,} bytes in {release.seconds:.1f} s."
        )
        self.stdout.write(f"Card: {file_url(release=release, name='README.md')}")
