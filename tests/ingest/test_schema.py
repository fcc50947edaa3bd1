"""The schema lists the catalogue's model keys once (`ModelKey`) and generates without warnings."""

from __future__ import annotations

import yaml

from catalogue.selectors import catalogue


def test_model_keys_are_one_component_and_the_schema_has_no_warning(client, models, capfd):
    capfd.readouterr()
    r = client.get("/api/schema/")
    assert r.status_code == 200
    # drf-spectacular prints its warnings to stderr: a non-JSON line in a production log.
    assert "Warning" not in capfd.readouterr().err
    schema = yaml.safe_load(r.content)
    component = schema["components"]["schemas"]["ModelKey"]
    assert component["enum"] == sorted(catalogue()) and component["enum"]
    battle = schema["components"]["schemas"]["Battle"]["properties"]
    assert battle["model_a"] == battle["model_b"] == {"$ref": "#/components/schemas/ModelKey"}
