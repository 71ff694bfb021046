"""YAML without anchors and aliases, for every file a host or a workspace hands us.

An alias is a reference: ten nested ones in a few hundred bytes expand to 10^10 values
once anything walks the data (masking, JSON), whatever bound the file's size has. No
file we read needs them, so a file that uses one is refused, naming its line.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.events import AliasEvent, CollectionStartEvent, ScalarEvent


class NoAliasLoader(yaml.SafeLoader):
    """PyYAML's safe loader that raises a ComposerError (with its line) at the first
    anchor (`&name`) or alias (`*name`)."""

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event: Any = self.peek_event()  # type: ignore[no-untyped-call]
        mark: Any = getattr(event, "start_mark", None)
        if isinstance(event, AliasEvent):
            raise ComposerError(None, None, f"aliases (*{event.anchor}) are not allowed", mark)
        if isinstance(event, ScalarEvent | CollectionStartEvent) and event.anchor is not None:
            raise ComposerError(None, None, f"anchors (&{event.anchor}) are not allowed", mark)
        return super().compose_node(parent, index)


def compose_plain(text: str) -> yaml.Node | None:
    """The node tree of `text`; yaml.YAMLError (with `problem_mark`) for an anchor or alias."""
    return yaml.compose(text, Loader=NoAliasLoader)
