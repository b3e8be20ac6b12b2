"""Say how each recorder under test wraps a command, and where its recording ends up.

``direct`` runs the command with no recorder (the baseline); ``script`` is util-linux
script(1); ``asciinema`` is asciinema 2.4 ``rec``; ``shellkeep`` is ``shellkeep run --``.
Every recording goes under the benchmark's temporary folder and is removed after each run.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

_BIN = Path(sys.executable).parent  # the venv's bin: asciinema lives beside python
_REPO = Path(__file__).resolve().parent.parent
_shellkeep = _BIN / "shellkeep"  # replaced by install_shellkeep: what a user's pip install gives


def install_shellkeep(workdir: Path) -> Path:
    """Install the working tree into a new venv under ``workdir`` as ``pip install .`` does; return its script.

    The dev venv's install is editable: its import hook costs every start-up about 9 ms that
    a user's install (pip, pipx) never pays. The new venv gets shellkeep itself, built from a
    copy of the tree (the source tree gets no build/ folder), and finds the dependencies in
    the dev venv through a ``.pth`` line; it is removed with ``workdir``.
    """
    import subprocess

    src = workdir / "src"
    shutil.copytree(
        _REPO, src, ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__", "bench", "tests")
    )
    venv = workdir / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python*/site-packages"))
    deps = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    (site / "_bench_dependencies.pth").write_text("\n".join(deps) + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet",
         "--no-deps", "--disable-pip-version-check", str(src)],
        check=True,
    )
    global _shellkeep
    _shellkeep = venv / "bin" / "shellkeep"
    return _shellkeep


@dataclass(frozen=True)
class Recorder:
    """One way of running a command in the outer pty.

    name: the column name in the results. workdir: the benchmark's temporary folder.
    """

    name: str
    workdir: Path

    def argv(self, command: list[str]) -> list[str]:
        """Return the argv that runs ``command`` under this recorder."""
        if self.name == "direct":
            return command
        if self.name == "script":
            return ["script", "-q", "-c", shlex.join(command), str(self._file)]
        if self.name == "asciinema":
            return [str(_BIN / "asciinema"), "rec", "-c", shlex.join(command), "--quiet", "--overwrite", str(self._file)]
        if self.name == "shellkeep":
            return [str(_shellkeep), "run", "--", *command]
        raise ValueError(self.name)

    @property
    def _file(self) -> Path:
        return self.workdir / f"{self.name}.out"

    def recording(self) -> Path | None:
        """Return the file the last run recorded to, or None (``direct``, or nothing written)."""
        if self.name in ("script", "asciinema"):
            return self._file if self._file.exists() else None
        if self.name == "shellkeep":
            casts = sorted(shellkeep_home(self.workdir).glob("projects/*/*/session.cast"))
            return casts[-1] if casts else None
        return None

    def clean(self) -> None:
        """Remove what the last run recorded."""
        if self.name in ("script", "asciinema"):
            self._file.unlink(missing_ok=True)
        elif self.name == "shellkeep":
            home = shellkeep_home(self.workdir)
            _wait_for_housekeeping(home)
            shutil.rmtree(home, ignore_errors=True)
            home.mkdir(exist_ok=True)


def _wait_for_housekeeping(home: Path, timeout_s: float = 120.0) -> None:
    """Wait until no process works on ``home`` any more.

    shellkeep compresses and indexes a session in a detached process after it returns; that
    CPU must not land in the next measured run.
    """
    import time

    needle = f"SHELLKEEP_HOME={home}".encode()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        busy = False
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    busy = True
                    break
            except OSError:
                continue
        if not busy:
            return
        time.sleep(0.05)


def shellkeep_home(workdir: Path) -> Path:
    """Return the SHELLKEEP_HOME used by the benchmark."""
    return workdir / "shellkeep-home"


def recorder_env(workdir: Path) -> dict[str, str]:
    """Return the environment every run gets: the caller's, with all state pointed into ``workdir``.

    SHELLKEEP_* variables of an enclosing session are dropped (inside one, ``shellkeep run``
    would exec the program without recording it); PYTHONDONTWRITEBYTECODE is dropped too.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SHELLKEEP_", "ASCIINEMA_"))}
    # Start Python programs the way an installed one starts: with cached bytecode. The cache
    # goes into workdir (a warm-up run fills it) so the source tree gets no __pycache__.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(
        PYTHONPYCACHEPREFIX=str(workdir / "pycache"),
        TERM="xterm-256color",
        LANG=env.get("LANG") or "C.UTF-8",
        SHELLKEEP_HOME=str(shellkeep_home(workdir)),
        SHELLKEEP_CONFIG=str(workdir / "no-config" / "config.toml"),  # defaults only
        ASCIINEMA_CONFIG_HOME=str(workdir / "asciinema-config"),
    )
    return env


def tool_versions() -> dict[str, str]:
    """Return the versions of the recorders (one line each)."""
    import subprocess

    versions: dict[str, str] = {}
    for name, argv in (
        ("script", ["script", "--version"]),
        ("asciinema", [str(_BIN / "asciinema"), "--version"]),
        ("shellkeep", [str(_shellkeep), "--version"]),
    ):
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
            versions[name] = (out.stdout or out.stderr).strip().splitlines()[0]
        except (OSError, IndexError, subprocess.SubprocessError) as exc:
            versions[name] = f"unavailable ({exc})"
    return versions
