"""`subagent check` reports: the `--json` object (CONTRACT.md) and JUnit XML.

JUnit: one `<testsuite name="subagent check">`, one `<testcase>` per check (classname
= the agent, name = the check), a `<failure message=FIRST>` whose text lists every
failure. GitHub Actions, GitLab and Jenkins all read this subset.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from launcher.check.runner import CheckResult

SUITE_NAME = "subagent check"


def check_report(results: Sequence[CheckResult]) -> dict[str, Any]:
    """The `--json` object: totals and one entry per check, in the order run."""
    failed = sum(1 for r in results if not r.passed)
    return {
        "passed": len(results) - failed,
        "failed": failed,
        "checks": [
            {
                "name": r.case.name,
                "agent": r.case.agent,
                "source": str(r.case.source) if r.case.source else None,
                "status": "passed" if r.passed else "failed",
                "failure": r.failures[0] if r.failures else None,
                "failures": list(r.failures),
                "session_id": r.session_id,
                "duration_s": round(r.duration_s, 3),
            }
            for r in results
        ],
    }


def junit_xml(results: Sequence[CheckResult]) -> ET.ElementTree:
    """The JUnit document for `results`."""
    failed = sum(1 for r in results if not r.passed)
    suite = ET.Element(
        "testsuite",
        name=SUITE_NAME,
        tests=str(len(results)),
        failures=str(failed),
        errors="0",
        skipped="0",
        time=f"{sum(r.duration_s for r in results):.3f}",
    )
    for r in results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=r.case.agent,
            name=r.case.name,
            time=f"{r.duration_s:.3f}",
        )
        if r.case.source is not None:
            case.set("file", str(r.case.source))
        if r.failures:
            failure = ET.SubElement(case, "failure", message=r.failures[0], type="check")
            failure.text = "\n".join(r.failures)
    suites = ET.Element("testsuites", name=SUITE_NAME, tests=suite.get("tests", "0"))
    suites.set("failures", str(failed))
    suites.append(suite)
    ET.indent(suites)
    return ET.ElementTree(suites)


def write_junit(results: Sequence[CheckResult], path: Path) -> None:
    """Write the JUnit XML report to `path` (parent directories created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    junit_xml(results).write(path, encoding="utf-8", xml_declaration=True)
