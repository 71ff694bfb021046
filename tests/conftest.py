"""Suite-wide fixtures."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """subagent runs on asyncio (the CLI uses anyio.run's default); test on what ships."""
    return "asyncio"
