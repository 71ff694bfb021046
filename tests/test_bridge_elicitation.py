"""Unattended elicitation: forms are accepted with the schema's defaults, URLs declined."""

from __future__ import annotations

import anyio
import mcp_types as types

from launcher.bridge.elicitation import accept_with_defaults, schema_defaults


def test_defaults_are_taken_from_properties_that_declare_one() -> None:
    schema = {
        "type": "object",
        "properties": {
            "confirm": {"type": "boolean", "default": True},
            "name": {"type": "string"},
            "count": {"type": "integer", "default": 0},
        },
    }

    assert schema_defaults(schema) == {"confirm": True, "count": 0}
    assert schema_defaults({"type": "object"}) == {}


def test_form_requests_are_accepted_and_url_requests_declined() -> None:
    form = types.ElicitRequestFormParams(
        message="Proceed?",
        requested_schema={
            "type": "object",
            "properties": {"confirm": {"type": "boolean", "default": True}},
        },
    )
    url = types.ElicitRequestURLParams(
        message="Log in", url="https://example.invalid/login", elicitation_id="e1"
    )

    accepted = anyio.run(accept_with_defaults, None, form)
    declined = anyio.run(accept_with_defaults, None, url)

    assert (accepted.action, accepted.content) == ("accept", {"confirm": True})
    assert declined.action == "decline"
