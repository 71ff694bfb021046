"""Putting the protected places back for a launcher that died (SIGKILL) mid-command: its
watchdog runs `python -m launcher.trust.revive RECORD` once it has ended the launcher's
processes. Only when no launcher that shares the record is alive: a live one puts the
places back itself after its next command.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from launcher.trust.guard import restore_all
from launcher.trust.record import _decode, _Record, places_of


def revive(folder: Path) -> list[str]:
    """Put back the places of the record in `folder` if its launchers are all gone; the
    places put back (or that could not be)."""
    record = _Record(folder.parent.parent, None, folder)
    text = record.orphaned()
    if text is None:
        return []
    originals = _decode(text, places_of(text))
    said = restore_all(originals.before, originals.had)
    if originals.workspace is not None and originals.nested is not None:
        from launcher.trust.nested import NestedGuard

        said += NestedGuard.of(originals.workspace, originals.nested).check()
    record.forget()
    return said


def main() -> None:
    """The watchdog's entry: one record directory."""
    if len(sys.argv) != 2:
        sys.exit(2)
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        revive(Path(sys.argv[1]))


if __name__ == "__main__":
    main()
