"""Putting the protected places back for a launcher that died (SIGKILL) mid-command: its
watchdog runs `python -m launcher.trust.revive RECORD` once it has ended the launcher's
processes. Only when no launcher that shares the record is alive: a live one puts the
places back itself after its next command.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from pathlib import Path

from launcher.trust import Protected, protected_set
from launcher.trust.guard import restore_all
from launcher.trust.record import _decode, _Record, places_of


def revive(folder: Path) -> list[str]:
    """Put back the places of the record in `folder` if its launchers are all gone; the
    places put back (or that could not be)."""
    record = _Record(folder.parent.parent, None, folder)
    text = record.orphaned()
    if text is None:
        return []
    protected = places_of(text)
    if not _trusted(folder, text, protected):
        return [f"{folder} (a record of places not this workspace's; ignored)"]
    originals = _decode(text, protected)
    said = restore_all(originals.before, originals.had)
    if originals.workspace is not None and originals.nested is not None:
        from launcher.trust.nested import NestedGuard

        said += NestedGuard.of(originals.workspace, originals.nested).check()
    record.forget()
    return said


def _plain(rel: str) -> bool:
    """A relative path with no `..` (or `.`, or empty part) in it."""
    parts = rel.split("/")
    return not rel.startswith("/") and all(p not in ("", ".", "..") for p in parts)


def _trusted(folder: Path, text: str, protected: Protected) -> bool:
    """Whether the record's places are ones the launcher protects for the workspace it
    names (recomputed from that path now), its paths plain and below them, and the folder
    the one a launcher names for those places. What the record says is never taken on its
    own: a place outside the workspace would be written unconfined."""
    raw = json.loads(text)
    workspace = raw.get("workspace")
    if not isinstance(workspace, str) or not os.path.isabs(workspace) or not protected.places:
        return False
    root = Path(os.path.realpath(workspace))
    allowed = {
        place
        for write_config in (False, True)
        for place in protected_set(root, write_config=write_config).places
    }
    if any(place not in allowed for place in protected.places):
        return False
    key = tuple((os.path.realpath(p.base), p.rel, p.open) for p in protected.places)
    if folder.name != hashlib.sha256(repr(key).encode()).hexdigest()[:32]:
        return False
    rels = [str(rel) for tree in raw["trees"] for rel in tree]
    rels += [str(way) for _, way in raw["had"]]
    if not all(_plain(rel) for rel in rels):
        return False
    bases = {str(p.base) for p in protected.places}
    return all(str(base) in bases for base, _ in raw["had"])


def main() -> None:
    """The watchdog's entry: one record directory."""
    if len(sys.argv) != 2:
        sys.exit(2)
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        revive(Path(sys.argv[1]))


if __name__ == "__main__":
    main()
