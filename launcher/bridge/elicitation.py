"""Answer server elicitation requests without a human: accept with the schema's defaults.

A sub-agent runs unattended, so a form is accepted with every default the server
declared; URL-mode requests (which need a person in a browser) are declined.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types


def schema_defaults(schema: dict[str, Any]) -> dict[str, Any]:
    """The `default` of every property of a flat elicitation schema that declares one."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    return {
        name: prop["default"]
        for name, prop in properties.items()
        if isinstance(prop, dict) and "default" in prop
    }


async def accept_with_defaults(
    context: Any, params: types.ElicitRequestParams
) -> types.ElicitResult:
    """The SDK's elicitation callback: form mode accepted with defaults, URL mode declined."""
    if isinstance(params, types.ElicitRequestFormParams):
        return types.ElicitResult(action="accept", content=schema_defaults(params.requested_schema))
    return types.ElicitResult(action="decline")
