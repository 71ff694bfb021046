"""Answer server elicitation requests: the host's answer when one can be asked (see
asking.py), else without a human: a form accepted with the schema's defaults, URL mode
declined.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from pydantic import ValidationError

from launcher.bridge.asking import host_asker


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
    """The SDK's elicitation callback: the host's answer when one is asked, else form mode
    accepted with defaults and URL mode declined."""
    ask = host_asker()
    if ask is not None:
        wire = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        answer = await ask({"method": "elicitation/create", "params": wire})
        if answer is not None:
            try:
                return types.ElicitResult.model_validate(answer)
            except ValidationError:
                return types.ElicitResult(action="decline")  # a malformed answer: no data
    if isinstance(params, types.ElicitRequestFormParams):
        return types.ElicitResult(action="accept", content=schema_defaults(params.requested_schema))
    return types.ElicitResult(action="decline")
