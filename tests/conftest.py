"""Fixtures every test gets: a private shellkeep home and config, and a project folder.

Also where the optional ``shared`` folder is: ``$SHELLKEEP_SHARED_DIR``, else ``shared``
beside the checkout. Everything the suite needs is in ``tests/data``; ``shared`` only adds
cases (public recordings in ``real-casts``, agent samples in ``reference/agent-samples``).
A test or parameter set that reads it carries ``needs_shared(folder)``; when that folder is
absent it is left out, and the run says so in one line of the summary.

No test touches the user's home: at the start of the run every test process gets a temporary
``HOME`` and ``XDG_*`` folders (``tests/home_guard.py``; the real home stays in
``SHELLKEEP_TEST_REAL_HOME`` for the pinned agent CLIs under ``~/.cache/shellkeep-ci``), and the
run fails when the real home's watched dotfiles changed meanwhile. With ``CI`` set a skipped
test is a failure: CI installs everything the suite needs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from shellkeep.store.paths import Paths
from tests import home_guard

REPO = Path(__file__).resolve().parents[1]
"""The checkout (or work tree) these tests belong to."""

SHARED = Path(os.environ.get("SHELLKEEP_SHARED_DIR") or REPO.parent / "shared").absolute()
"""The optional shared folder: ``$SHELLKEEP_SHARED_DIR``, else ``../shared`` beside the checkout."""

REAL_CASTS = SHARED / "real-casts"
"""Public asciicast recordings, listed in its ``SOURCES.md`` (INVALID ones must be refused)."""

AGENT_SAMPLES = SHARED / "reference" / "agent-samples"
"""One sample transcript per agent, written with the format notes in ``shared/reference``."""

_MARK = "needs_shared"
_RAN, _LEFT_OUT = "shellkeep_shared_ran", "shellkeep_shared_left_out"
_counts_key = pytest.StashKey[dict[str, int]]()
_home_base_key = pytest.StashKey[Path]()
_home_before_key = pytest.StashKey[dict[str, home_guard.Entry]]()
_home_changes_key = pytest.StashKey[list[str]]()


def needs_shared(folder: Path) -> pytest.MarkDecorator:
    """Mark a test or a ``pytest.param`` that reads ``folder`` inside the optional shared folder."""
    return pytest.mark.needs_shared(folder=str(folder))


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker and start the counts the summary line reports."""
    config.addinivalue_line("markers", f"{_MARK}(folder): reads the optional shared folder; left out when it is absent")
    config.stash[_counts_key] = {_RAN: 0, _LEFT_OUT: 0}
    base = home_guard.isolate()  # None in an xdist worker: the controller's HOME is inherited
    if base is not None:
        config.stash[_home_base_key] = base
        config.stash[_home_before_key] = home_guard.snapshot(home_guard.real_home())


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when the real home's watched dotfiles changed (the process that isolated only)."""
    before = session.config.stash.get(_home_before_key, None)
    if before is None or os.environ.get("SHELLKEEP_TEST_HOME_CHECK") == "0":
        return  # =0: on a machine where other programs share the home and write in it meanwhile
    found = home_guard.changes(before, home_guard.snapshot(home_guard.real_home()))
    session.config.stash[_home_changes_key] = found
    if found and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the temporary HOME this process made."""
    base = config.stash.get(_home_base_key, None)
    if base is not None:
        home_guard.remove(base)


def _skips_fail() -> bool:
    """Say whether a skip is a failure in this run: in CI, where every dependency is installed."""
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """In CI, turn a skipped test (not an expected failure) into a failure naming the reason."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if report.skipped and not hasattr(report, "wasxfail") and _skips_fail():
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where no test may skip: {_skip_reason(report.longrepr)}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    """In CI, turn a module skipped at collection (``importorskip``) into a collection error."""
    outcome = yield
    report: pytest.CollectReport = outcome.get_result()  # type: ignore[attr-defined]
    if report.skipped and _skips_fail():
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where no test may skip: {_skip_reason(report.longrepr)}"


def _skip_reason(longrepr: object) -> str:
    """Return the reason of a skip report's ``(file, line, reason)`` longrepr."""
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out the tests whose shared folder is absent (deselected, not skipped); count both kinds."""
    kept: list[pytest.Item] = []
    left_out: list[pytest.Item] = []
    ran = 0
    for item in items:
        mark = item.get_closest_marker(_MARK)
        if mark is None:
            kept.append(item)
        elif Path(mark.kwargs["folder"]).is_dir():
            kept.append(item)
            ran += 1
        else:
            left_out.append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept
    counts = {_RAN: ran, _LEFT_OUT: len(left_out)}
    config.stash[_counts_key] = counts
    workeroutput = getattr(config, "workeroutput", None)  # set on a pytest-xdist worker
    if workeroutput is not None:
        workeroutput.update(counts)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """On the pytest-xdist controller: take the counts a worker made (each collects every test)."""
    output = getattr(node, "workeroutput", {})
    config: pytest.Config = node.config  # type: ignore[attr-defined]
    counts = config.stash[_counts_key]
    for key in (_RAN, _LEFT_OUT):
        counts[key] = max(counts[key], int(output.get(key, 0)))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Say in one line what the optional shared folder added, or that it is missing; name the
    real home's dotfiles the run changed."""
    touched = config.stash.get(_home_changes_key, [])
    if touched:
        terminalreporter.write_line(
            f"shellkeep: the tests changed the real home {home_guard.real_home()} (HOME must stay "
            f"the temporary one): {'; '.join(touched[:20])}",
            red=True,
        )
    counts = config.stash[_counts_key]
    missing = [str(folder) for folder in (REAL_CASTS, AGENT_SAMPLES) if not folder.is_dir()]
    if missing:
        terminalreporter.write_line(
            f"shellkeep: optional corpus not found: {', '.join(missing)} (set SHELLKEEP_SHARED_DIR); "
            f"its recordings and samples were not swept, {counts[_LEFT_OUT]} tests that need it left out",
            yellow=True,
        )
    elif counts[_RAN]:
        terminalreporter.write_line(f"shellkeep: optional corpus {SHARED}: {counts[_RAN]} extra cases ran")


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Paths:
    """Point ``SHELLKEEP_HOME`` and ``SHELLKEEP_CONFIG`` into ``tmp_path``; cd into a project.

    Clears ``SHELLKEEP_SESSION`` so tests run the same inside a recorded shell.
    """
    data = tmp_path / "home"
    config = tmp_path / "config" / "config.toml"
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("SHELLKEEP_HOME", str(data))
    monkeypatch.setenv("SHELLKEEP_CONFIG", str(config))
    for var in ("SHELLKEEP_SESSION", "SHELLKEEP_SESSION_DIR", "SHELLKEEP_PROJECT", "SHELLKEEP_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(project)
    return Paths(home=data, config_file=config)


@pytest.fixture
def no_os_keyring(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Never touch the developer's real keyring: keys go to the key file in the data folder,
    as on a headless box; the key cache starts and ends empty. Does nothing without the
    encryption dependencies (their tests skip)."""
    try:
        import keyring
        import keyring.backends.null
    except ImportError:
        yield
        return
    from shellkeep.vault.keys import forget_cached_keys

    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.null.Keyring())  # type: ignore[no-untyped-call]
    forget_cached_keys()
    yield
    keyring.set_keyring(previous)
    forget_cached_keys()
