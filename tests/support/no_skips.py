"""A pytest plugin: with LSP_VERIFY_NO_SKIPS set (CI sets it), a run in which any test was
skipped fails, each skip listed with its reason. Elsewhere a test whose tool is missing is
skipped and says why; CI installs every tool, so there a skip is a test that did not run."""

from __future__ import annotations

import os

import pytest


def _skipped(session: pytest.Session) -> list[pytest.TestReport]:
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    stats = getattr(reporter, "stats", {}) if reporter is not None else {}
    return [r for r in stats.get("skipped", []) if isinstance(r, pytest.TestReport)]


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not os.environ.get("LSP_VERIFY_NO_SKIPS"):
        return
    skipped = _skipped(session)
    if not skipped:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = [f"LSP_VERIFY_NO_SKIPS: {len(skipped)} test(s) skipped, which fails this run:"]
    for report in skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        lines.append(f"  {report.nodeid}: {reason}")
    if reporter is not None:
        reporter.ensure_newline()
        reporter.write_line("\n".join(lines), red=True)
    if session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
