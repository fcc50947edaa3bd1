"""/data/ lists ready public releases with counts, sizes, checksums and their card; every page
links to it; the admin makes a release through a real Celery worker and withdraws one."""

from __future__ import annotations

import time

import pytest

from core.models import AuditEntry
from releases.models import DatasetRelease
from tests.releases.helpers import post, release

DEADLINE_SECONDS = 180


def test_data_page_without_releases_says_how_to_make_one(client, db):
    r = client.get("/data/")
    assert r.status_code == 200
    assert "No release has been published yet" in r.content.decode()


def test_data_page_lists_a_ready_public_release(client, models, keyed_api, release_dir):
    for n in range(3):
        post(keyed_api, n, user=f"dev-{n}")
    made = release(license="odc-by")
    parquet = made.file("battles.parquet")
    page = client.get("/data/").content.decode()
    assert f"Release {made.version}" in page
    assert "<strong>3</strong> battles" in page and "odc-by" in page
    assert parquet["sha256"] in page
    assert f'href="/data/files/{made.version}/README.md"' in page
    assert f'href="/data/files/{made.version}/battles.parquet"' in page
    for withdrawn in (DatasetRelease.Status.FAILED, DatasetRelease.Status.BUILDING):
        DatasetRelease.objects.filter(pk=made.pk).update(status=withdrawn)
        assert made.version not in client.get("/data/").content.decode()
    DatasetRelease.objects.filter(pk=made.pk).update(status="ready", public=False)
    assert made.version not in client.get("/data/").content.decode()


@pytest.mark.parametrize("path", ["/", "/take-part/", "/methodology/", "/data/"])
def test_every_page_links_to_the_data_page(client, db, path):
    assert 'href="/data/"' in client.get(path).content.decode()


def _wait_for(release_filter, status: str) -> DatasetRelease:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while time.monotonic() < deadline:
        found = DatasetRelease.objects.filter(**release_filter).first()
        if found is not None and found.status != DatasetRelease.Status.BUILDING:
            assert found.status == status, found.error
            return found
        time.sleep(0.2)
    raise AssertionError(f"no {status} release within {DEADLINE_SECONDS} s")


@pytest.mark.integration
def test_admin_makes_a_release_on_the_worker_and_withdraws_it(
    release_dir, celery_worker, models, keyed_api, admin_client
):
    for n in range(4):
        post(keyed_api, n, user=f"dev-{n}", prefix="def f():\n    return 1\n")
    r = admin_client.post(
        "/admin/releases/datasetrelease/add/",
        {
            "version": "",
            "license": "cc-by-nc-4.0",
            "min_age_days": "0",
            "on_secret": "redact",
        },
    )
    assert r.status_code == 302, r.content.decode()[:2000]
    made = _wait_for({"license": "cc-by-nc-4.0"}, DatasetRelease.Status.READY)
    assert made.counts["battles"] == 4 and made.counts["with_code"] == 4
    assert (release_dir / made.version / "battles.parquet").is_file()
    assert AuditEntry.objects.filter(action="start_release", target=made.version).exists()

    # The admin action: a new release with the selected one's options.
    r = admin_client.post(
        "/admin/releases/datasetrelease/",
        {"action": "release_again", "_selected_action": [made.pk]},
    )
    assert r.status_code == 302
    again = _wait_for({"version": f"{made.version}.2"}, DatasetRelease.Status.READY)
    assert again.license == "cc-by-nc-4.0" and again.counts["battles"] == 4

    r = admin_client.post(
        "/admin/releases/datasetrelease/",
        {
            "action": "withdraw",
            "_selected_action": [made.pk],
            "apply": "1",
            "reason": "a secret was reported in it",
        },
    )
    assert r.status_code == 302
    made.refresh_from_db()
    assert not made.public
    assert AuditEntry.objects.get(action="withdraw_release").reason == "a secret was reported in it"
    page = admin_client.get("/data/").content.decode()
    assert f"Release {again.version}" in page and f"Release {made.version}<" not in page
