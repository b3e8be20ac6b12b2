"""Record a program: what ``shellkeep``, ``shellkeep PROGRAM`` and ``shellkeep run`` do.

Click-free, so the console script can start the child without importing click:
``parse_run_args`` recognises the plain forms of those command lines and returns None for
anything else (help, group options, an unknown ``run`` option, a missing value), which
the click group in ``cli/main.py`` then parses and reports. ``cli/run.py`` (click) builds
the same ``RunArgs`` and calls ``record``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

_TABLE: tuple[tuple[str, str, str], ...] = (
    ("run", "shellkeep.cli.run:run",
     "Record PROGRAM in a pty; with no PROGRAM, record $SHELL."),
    ("ls", "shellkeep.cli.ls:ls",
     "List this project's sessions, newest first."),
    ("ps", "shellkeep.cli.ps:ps",
     "List the sessions recording now, in every project, newest first."),
    ("show", "shellkeep.cli.show:show",
     "Show one session's metadata, its checkpoints, its exchanges and the tokens they used."),
    ("replay", "shellkeep.cli.replay:replay",
     "Play a recording in this terminal: space pauses, . steps, ] jumps to the next marker, Ctrl-C stops."),
    ("config", "shellkeep.cli.config:config",
     "Show, check and change shellkeep's settings."),
    ("resume", "shellkeep.cli.resume:resume",
     "Put a session back: its last screen, then its agent, in the same conversation."),
    ("browse", "shellkeep.cli.browse:browse",
     "Pick a session: type to filter, Enter resumes it, Ctrl-R replays it, Ctrl-A shows every project."),
    ("search", "shellkeep.cli.search:search",
     "Search what sessions showed and the prompts and answers, best hits first."),
    ("ask", "shellkeep.cli.ask:ask",
     "Ask your own agent a question about past sessions; it reads them through shellkeep's MCP server."),
    ("serve", "shellkeep.cli.serve:serve",
     "Serve the sessions of every project as a web page: list, search, replay, live view, stats."),
    ("mcp", "shellkeep.cli.mcp:mcp",
     "Serve this project's sessions to AI agents as a read-only MCP server on stdin/stdout."),
    ("cat", "shellkeep.cli.cat:cat",
     "Print a session's output as recorded (escape sequences and all), or with --text as plain text."),
    ("export", "shellkeep.cli.export:export",
     "Export a session: cast (asciicast v2), txt (transcript), md (the conversation), json (metadata, "
     "exchanges, markers), html (a page for audit, viewable offline, with the screen at each exchange in "
     "colour) or agent (shellkeep's redacted copy of the agent's own transcript, as the agent wrote it)."),
    ("import", "shellkeep.cli.import_:import_",
     "Import an asciicast v1, v2 or v3 recording as a session of this project, or, with --agent, the "
     "sessions an agent CLI keeps of its own that shellkeep did not record."),
    ("audit", "shellkeep.cli.audit:audit",
     "List who read which recording, when, and with which command (oldest first)."),
    ("reindex", "shellkeep.cli.reindex:reindex",
     "Rebuild the search index from the session folders, with a progress bar."),
    ("key", "shellkeep.cli.key:key",
     "Manage the key that encrypts sessions at rest (encryption.encrypt = true)."),
    ("gc", "shellkeep.cli.gc:gc",
     "Remove sessions past the retention limits and print what that frees."),
    ("sync", "shellkeep.cli.sync:sync",
     "Copy finished sessions to object storage (S3, GCS, Azure, file://) and read other machines'."),
    ("pin", "shellkeep.cli.pin:pin",
     "Pin a session: gc and the retention limits never remove it."),
    ("unpin", "shellkeep.cli.pin:unpin",
     "Unpin a session: the retention limits apply to it again."),
    ("rm", "shellkeep.cli.rm:rm",
     "Remove a session: its folder, its index rows; the audit log records it."),
    ("redact", "shellkeep.cli.redact:redact",
     "Redact a stored session again with the current rules (built-in and your own)."),
    ("init", "shellkeep.cli.init:init",
     "Print the shell integration: agents recorded when typed, a notice in projects with interrupted sessions."),
    ("stats", "shellkeep.cli.stats:stats",
     "Sum up every project's sessions: time recorded, exchanges, tokens and estimated cost."),
    ("doctor", "shellkeep.cli.doctor:doctor",
     "Check the data folder, free space, index, keys, config, agents and shell integration."),
    ("mark", "shellkeep.cli.mark:mark",
     "Add a checkpoint: a marker in the recording and, in a git work tree, a snapshot of the files "
     "(tracked and untracked, not ignored) that 'shellkeep diff' and 'shellkeep restore-files' use."),
    ("diff", "shellkeep.cli.diff:diff",
     "Show what changed in the session's git work tree, as a patch, between two checkpoints (see "
     "'shellkeep show' for their numbers)."),
    ("restore-files", "shellkeep.cli.restore_files:restore_files",
     "Put the files of the session's git work tree back as they were at checkpoint N, after a checkpoint "
     "of them as they are now."),
    ("watch", "shellkeep.cli.watch:watch",
     "Follow a session that is recording now, read-only: its current screen at once, then live output; q "
     "or Ctrl-C leaves."),
)
"""Each command: its name, ``"module:function"`` of its click command, and its short help.

The short help is the first sentence of the command's help, untruncated, as click takes it
for the group's ``--help`` and for completions; keeping it here lets both print without
importing any command. tests/unit/test_contract.py checks each against the real help.
"""

COMMANDS: dict[str, str] = {name: target for name, target, _ in _TABLE}
"""Command name -> ``"module:function"`` of its click command; any other word is a program."""

SHORT_HELP: dict[str, str] = {name: short for name, _, short in _TABLE}
"""Command name -> its short help (click shortens it to the screen's width)."""

_VALUE_OPTIONS = ("--name", "--title", "--restart")
_FLAG_OPTIONS = ("--no-input", "--no-redact", "-q", "--quiet")


@dataclass(frozen=True, slots=True)
class RunArgs:
    """The options of one recording; ``argv`` empty means ``$SHELL``."""

    argv: tuple[str, ...] = ()
    name: str | None = None
    title: str | None = None
    no_input: bool = False
    no_redact: bool = False
    quiet: bool = False  # -q: no start line
    restart: str | None = None  # 'no', 'on-failure' or 'on-failure:N'; None: record.restart


def parse_run_args(args: Sequence[str]) -> RunArgs | None:
    """Return the recording a command line asks for, or None when click must parse it.

    args: the words after ``shellkeep``. Recognised: nothing; ``PROGRAM [ARGS...]``
    (PROGRAM not a command, not starting with '-'); ``-- [PROGRAM [ARGS...]]``; and ``run``
    with ``--name``/``--title``/``--restart`` (``--name N`` or ``--name=N``), ``--no-input``,
    ``--no-redact``, ``-q``/``--quiet``, then ``--`` or the program.
    """
    if not args:
        return RunArgs()
    first = args[0]
    if first == "--":
        return RunArgs(argv=tuple(args[1:]))
    if first.startswith("-"):
        return None
    if first not in COMMANDS:
        return RunArgs(argv=tuple(args))
    if first != "run":
        return None
    values: dict[str, str] = {}
    flags: set[str] = set()
    i = 1
    while i < len(args):
        word = args[i]
        if word == "--":
            i += 1
            break
        if not word.startswith("-"):
            break
        option, eq, value = word.partition("=")
        if option in _VALUE_OPTIONS:
            if not eq:
                if i + 1 >= len(args):
                    return None
                i += 1
                value = args[i]
            values[option] = value
        elif option in _FLAG_OPTIONS and not eq:
            flags.add(option)
        else:
            return None
        i += 1
    argv = tuple(args[i:])
    if argv and argv[0].startswith("-"):
        return None  # click says: put the program after '--'
    return RunArgs(
        argv=argv,
        name=values.get("--name"),
        title=values.get("--title"),
        no_input="--no-input" in flags,
        no_redact="--no-redact" in flags,
        quiet=bool(flags & {"-q", "--quiet"}),
        restart=values.get("--restart"),
    )


def record(run: RunArgs) -> int:
    """Record ``run.argv`` (``$SHELL`` when empty) in a pty; return its exit status.

    With ``run.restart`` (else ``record.restart``) other than ``no``, the program is
    supervised (``app.supervise``): resumed in place when it crashes.
    Raises AgentNotFound (127) or ProgramNotExecutable (126) before anything is stored,
    UserInputError (2) for a bad ``--restart``.
    """
    import os
    from pathlib import Path

    from shellkeep.cli.console import warn
    from shellkeep.app.record import default_argv, run_session
    from shellkeep.app.run_request import RunRequest, check_name, load_settings
    from shellkeep.store.paths import resolve_paths

    from shellkeep.errors import AgentNotFound

    check_name(run.name)  # a new session only: a resumed one keeps the name it had
    here = Path.cwd()
    paths = resolve_paths()
    settings = load_settings(paths, here, warn=warn, no_input=run.no_input, no_redact=run.no_redact)
    banner = not run.quiet and sys.stdout.isatty()
    request = RunRequest(
        argv=run.argv or default_argv(os.environ),
        cwd=here,
        name=run.name,
        title=run.title,
        settings=settings,
        banner=banner,
    )
    policy = settings.restart if run.restart is None else run.restart
    try:
        if policy == "no":
            return run_session(paths, request, warn=warn).exit_code
        from shellkeep.app.supervise import restart_limit, supervise  # only supervised runs load it

        return supervise(paths, request, restarts=restart_limit(policy), warn=warn).exit_code
    except AgentNotFound as exc:
        hint = command_hint(request.argv[0])
        if hint is None:
            raise
        raise AgentNotFound(f"{exc} (did you mean {hint!r}?)") from None


def command_hint(word: str) -> str | None:
    """Return the shellkeep command ``word`` looks like a typo of (``lsit`` -> ``ls``), or None.

    Only for a bare word (no '/'); asked once the word is known to be no program on PATH.
    """
    if "/" in word:
        return None
    import difflib

    close = difflib.get_close_matches(word, COMMANDS, n=1, cutoff=0.6)
    return close[0] if close else None
