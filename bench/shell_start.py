"""Benchmark what the shell integration costs an interactive shell: start-up and each cd.

Usage: .venv/bin/python bench/shell_start.py [--repeats N] [--no-write]

For bash, zsh and fish (those installed): ``SHELL -i -c exit`` started from a folder with
nothing to say, with an rc file that is empty (bare), that sources the snippet written by
``shellkeep init SHELL --install`` (installed), or that runs ``eval "$(shellkeep init SHELL)"``
(``shellkeep init fish | source`` for fish: eval). The variants take turns within each
repeat. The notice file holds two sessions of other projects (one cut short, one running),
so the snippet reads it as it would on a working machine. Then the cost of one ``cd``: 200
cds between two folders with nothing to say, installed minus bare, per cd.

Target: the installed snippet adds under 5 ms to the shell's start. Writes
bench/RESULTS-shell.md, which bench/report.py puts into bench/RESULTS.md as its section 7
(and this script puts it there too, keeping the other sections).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sections import put_section  # bench/ is the script's folder, first on sys.path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
SHELLKEEP = Path(sys.executable).parent / "shellkeep"
SHELLS = ("bash", "zsh", "fish")
VARIANTS = ("bare", "installed", "eval")
TARGET_MS = 5.0
HEADING = "## 7. Shell start-up with the shell integration (bench/shell_start.py, run apart)"


def _rc_file(shell: str, user: Path) -> Path:
    return {"bash": user / ".bashrc", "zsh": user / ".zshrc", "fish": user / ".config" / "fish" / "config.fish"}[shell]


def _env(root: Path) -> dict[str, str]:
    user = root / "user"
    return {
        "HOME": str(user),
        "ZDOTDIR": str(user),
        "XDG_CONFIG_HOME": str(user / ".config"),
        "XDG_DATA_HOME": str(user / ".local" / "share"),
        "PATH": os.environ["PATH"],
        "SHELLKEEP_HOME": str(root / "data"),
        "SHELLKEEP_CONFIG": str(root / "config.toml"),
        "TERM": "xterm",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }


def _prepare(root: Path, env: dict[str, str], shells: list[str]) -> dict[str, dict[str, str]]:
    """Install each shell's snippet; return the rc text of every variant, per shell."""
    (root / "user").mkdir()
    (root / "here" / "a").mkdir(parents=True)
    (root / "here" / "b").mkdir()
    rcs: dict[str, dict[str, str]] = {}
    for shell in shells:
        rc = _rc_file(shell, root / "user")
        subprocess.run([str(SHELLKEEP), "init", shell, "--install"], env=env, check=True, capture_output=True)
        installed = rc.read_text()
        rc.write_text("")
        evaluated = (
            f"{SHELLKEEP} init fish | source\n" if shell == "fish" else f'eval "$({SHELLKEEP} init {shell})"\n'
        )
        rcs[shell] = {"bare": "", "installed": installed, "eval": evaluated}
    _fill_notices(root, env)
    return rcs


def _fill_notices(root: Path, env: dict[str, str]) -> None:
    """Write two sessions of other projects into the notice file, through shellkeep's own code."""
    sys.path.insert(0, str(REPO))
    from shellkeep.store import notices
    from shellkeep.store.paths import resolve_paths
    from shellkeep.store.session import SessionMeta, boot_id, create_session_folder, host_name

    paths = resolve_paths(env)
    for n, status in enumerate(("interrupted", "running")):
        project = root / f"elsewhere{n}"
        project.mkdir()
        sid = f"20261201-10000{n}-000aa"
        folder = create_session_folder(paths, project, sid)
        meta = SessionMeta(
            id=sid, project="p", project_root=str(project), cwd=str(project), command=["claude"], agent="claude",
            started_at="2026-12-01T10:00:00.000Z", host=host_name(), pid=os.getpid(), boot_id=boot_id(),
            cast=str(folder / "session.cast"), status=status,
        )
        (notices.note_ended if status == "interrupted" else notices.note_running)(paths, meta)


def _time_once(shell: str, script: str, env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run([shell, "-i", "-c", script], env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, check=False)
    return time.perf_counter() - started


def measure(shells: list[str], repeats: int) -> dict[str, dict[str, list[float]]]:
    """Return start-up times (seconds) per shell and variant, plus ``cd:bare``/``cd:installed`` runs."""
    with tempfile.TemporaryDirectory(prefix="shellkeep-shell-bench-") as tmp:
        root = Path(tmp)
        env = _env(root)
        rcs = _prepare(root, env, shells)
        here = root / "here"
        cds = "; ".join(["cd a", "cd ../b", "cd .."] * 67)[: -len("; cd ..")] + "; exit"  # 200 cds
        found: dict[str, dict[str, list[float]]] = {shell: {} for shell in shells}
        for shell in shells:
            rc = _rc_file(shell, root / "user")
            for _ in range(3):  # warm the page cache and fish's first-run files
                for variant in VARIANTS:
                    rc.write_text(rcs[shell][variant])
                    _time_once(shell, "exit", env, here)
            for i in range(repeats):
                order = VARIANTS[i % 3:] + VARIANTS[: i % 3]
                for variant in order:
                    rc.write_text(rcs[shell][variant])
                    found[shell].setdefault(variant, []).append(_time_once(shell, "exit", env, here))
            for i in range(max(5, repeats // 4)):
                for variant in ("bare", "installed"):
                    rc.write_text(rcs[shell][variant])
                    found[shell].setdefault(f"cd:{variant}", []).append(_time_once(shell, cds, env, here))
        return found


def render(found: dict[str, dict[str, list[float]]], repeats: int) -> str:
    """Return the markdown section."""
    lines = [
        HEADING,
        "",
        f"`SHELL -i -c exit` from a folder with nothing to say, {repeats} runs per variant taking turns; "
        "median (min) in ms. The machine is shared with other work (load average below), so the verdict "
        "compares the minimums, the runs least disturbed; the medians carry the noise. installed: the rc file sources the file `shellkeep init SHELL --install` "
        "wrote; eval: `eval \"$(shellkeep init SHELL)\"` (fish: `shellkeep init fish | source`), which "
        "starts Python at every shell start. The notice file lists two sessions of other projects. "
        f"Target: installed adds under {TARGET_MS:g} ms. One cd: 200 cds between folders with nothing "
        "to say, installed minus bare, divided by 200.",
        "",
        "| shell | bare | installed | eval | installed adds (by min) | eval adds | one cd adds | verdict |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for shell, runs in found.items():
        med = {v: statistics.median(runs[v]) * 1000 for v in VARIANTS}
        low = {v: min(runs[v]) * 1000 for v in VARIANTS}
        added = med["installed"] - med["bare"]
        per_cd_us = (statistics.median(runs["cd:installed"]) - statistics.median(runs["cd:bare"])) / 200 * 1e6
        verdict = "**pass**" if low["installed"] - low["bare"] < TARGET_MS else "**FAIL**"  # see the text
        lines.append(
            f"| {shell} | {med['bare']:.1f} ({low['bare']:.1f}) | {med['installed']:.1f} ({low['installed']:.1f}) "
            f"| {med['eval']:.1f} ({low['eval']:.1f}) | {added:+.1f} ms ({low['installed'] - low['bare']:+.1f} ms) "
            f"| {med['eval'] - med['bare']:+.1f} ms "
            f"| {per_cd_us:+.0f} µs | {verdict} |"
        )
    versions = " · ".join(_version(shell) for shell in found)
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    lines += [
        "",
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · {os.cpu_count()} CPUs · load average at the end "
        f"{load} · {versions}",
    ]
    return "\n".join(lines)


def _version(shell: str) -> str:
    flag = "--version"
    out = subprocess.run([shell, flag], capture_output=True, text=True, check=False).stdout.splitlines()
    return out[0].strip() if out else shell


def write(section: str) -> None:
    """Write bench/RESULTS-shell.md and put the section into bench/RESULTS.md, replacing an older one."""
    (BENCH_DIR / "RESULTS-shell.md").write_text(section + "\n")
    put_section(BENCH_DIR / "RESULTS.md", HEADING, section)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=40, help="runs per shell and variant (default 40)")
    parser.add_argument("--no-write", action="store_true", help="print the section, leave the results files alone")
    args = parser.parse_args()
    shells = [shell for shell in SHELLS if shutil.which(shell)]
    if not SHELLKEEP.exists():
        print(f"shell_start: no shellkeep beside {sys.executable}; run it with the venv's python", file=sys.stderr)
        return 2
    section = render(measure(shells, args.repeats), args.repeats)
    print(section)
    if not args.no_write:
        write(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
