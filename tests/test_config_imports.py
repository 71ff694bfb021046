"""The config package stays on the fast path: it never imports mcp, httpx or anyio."""

from __future__ import annotations

import subprocess
import sys


def test_importing_config_loads_no_heavy_package() -> None:
    code = (
        "import sys, launcher.config; "
        "heavy = {'mcp', 'httpx', 'httpx2', 'anyio'}; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    )
    assert out.stdout.strip() == "[]"
