"""Share the command-line half of the built-in adapters: recognise, pre-assign, resume.

``CommandAdapter`` implements ``matches``, ``prepare``, ``find_session``, ``resume_argv``,
``read_exchanges`` and ``transcript_files`` from a few class attributes (executable names,
an argument grammar, which options pick a conversation, the transcript format, the resume
hint printed on exit); each agent's module adds where its transcripts live
(``transcript_layout``, or ``find_session`` itself) and how to read them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import ClassVar

from shellkeep.agents import jsonl
from shellkeep.agents.argv import (
    CommandLine,
    Grammar,
    Option,
    Token,
    find_option,
    first_positional,
    rebuild,
    split_command,
    tokenize,
)
from shellkeep.agents.base import AgentSession, Exchange, Launch, ScreenChrome, WaitingHints
from shellkeep.agents.locations import find_in_screen, is_new, mtime_at, newest, same_dir
from shellkeep.agents.plan import Plan

__all__ = ["HELP", "VERSION", "CommandAdapter", "TranscriptLayout", "jsonl_per_id", "locate_transcript"]

HELP = Option(("--help", "-h"))
VERSION = Option(("--version", "-v", "-V"))


class CommandAdapter:
    """Base of the built-in adapters; subclasses set the class attributes and ``transcript_layout``.

    Class attributes:
        name: the adapter's name, stored in meta.json.
        title: the agent's name as its makers write it, for people to read (``Claude Code``).
        has_native_transcript: True: the agent keeps a conversation ``find_session`` looks for.
        executables / packages / modules: how the agent is started (see ``split_command``).
        grammar: its arguments, so values and prompts are told apart.
        session_option: the option that gives a new conversation a chosen id, or None.
        non_conversation_options: options that make the run something else than a
            conversation (listing sessions, one-shot modes); no id is pre-assigned then.
        conversation_options: options that pick an existing conversation (resume, continue,
            session id, fork); when the user gave one, ``prepare`` leaves argv alone.
        id_options: those of them whose value is the agent's session id.
        fork_options: options that copy the picked conversation under a new id, so the
            id the user named is not the one the agent will write.
        dropped_on_resume: options removed from the user's argv by ``resume_argv``
            (conversation options, initial-prompt options, one-shot modes).
        transcript_format: how to read the JSONL transcript, or None when it is not JSONL.
        resume_hint: a regular expression whose group 1 is the session id in the resume
            command the agent prints on exit, or None.
    """

    name: str = ""
    title: str = ""
    has_native_transcript: bool = True
    executables: ClassVar[tuple[str, ...]] = ()
    packages: ClassVar[tuple[str, ...]] = ()
    modules: ClassVar[tuple[str, ...]] = ()
    grammar: ClassVar[Grammar] = Grammar(options=())
    session_option: ClassVar[Option | None] = None
    non_conversation_options: ClassVar[tuple[Option, ...]] = ()
    conversation_options: ClassVar[tuple[Option, ...]] = ()
    id_options: ClassVar[tuple[Option, ...]] = ()
    fork_options: ClassVar[tuple[Option, ...]] = ()
    dropped_on_resume: ClassVar[tuple[Option, ...]] = ()
    transcript_format: ClassVar[jsonl.TranscriptFormat | None] = None
    resume_hint: ClassVar[str | None] = None
    resume_failure_hint: ClassVar[str | None] = None
    """A regex for what the agent prints when its own resume cannot find or load a session."""
    screen_chrome: ScreenChrome = ScreenChrome()
    """What the agent's interface draws besides its answers (see ``ScreenChrome``)."""
    waiting_hints: WaitingHints = WaitingHints()
    """How the agent's screen shows it waits for its user (see ``WaitingHints``); none by default."""
    tested_versions: ClassVar[tuple[str, ...]] = ()
    """The agent versions this adapter was tested against (the real CLI, end to end), as
    ``PROG --version`` prints them; "0.24" stands for every 0.24.x (``knows_version``). Another
    version may work; ``shellkeep doctor`` warns about one newer than all of them."""
    input_includes_cache_read: ClassVar[bool] = False
    """Whether the input tokens the agent reports include the cached ones (``Usage.cache_read``),
    as OpenAI's and Google's APIs count them; Anthropic's count them apart."""
    answers_written_late: ClassVar[bool] = False
    """Whether the agent writes an answer to its transcript only after showing it (Qwen Code),
    so that a crash in between leaves the last prompt without its answer: it is then taken
    from the recording's screen (``screen_chrome`` says what is not answer text)."""
    inject_paste_mode: ClassVar[bool] = False
    """Type re-injected context only once the agent switched bracketed paste on (its input
    box takes fast typing for a paste, and an Enter inside a paste for a new line)."""
    ready_prompt: ClassVar[str | None] = None
    """A regex for the agent's ready prompt on screen (escape sequences as one space, runs of
    spaces as one): re-injected context is typed only once it showed and output then settled
    (``pty.inject.SettledInjection``; after long quiet without it, all the same). None: once
    output settles. For agents that draw their prompt late (Gemini CLI waits for answers to
    its terminal queries first)."""
    ready_prompt_required: ClassVar[bool] = False
    """Type re-injected context only once ``ready_prompt`` showed (or the long maximum wait
    passed), not after long quiet without it: for an agent that says nothing for more than
    ``pty.inject.UNSEEN_PROMPT_QUIET_S`` on a busy machine before drawing its input box."""
    inject_use_paste: ClassVar[bool] = True
    """Send re-injected context as a bracketed paste where the agent switched it on; False: typed
    as one line (Gemini CLI takes an Enter after a paste it does not trust for a new line)."""
    env_names: ClassVar[tuple[str, ...]] = ()
    """Environment variables that shape how the agent runs (its config and data folders, base
    URLs, provider switches, model and profile names, its API keys), recorded at the session's
    start under ``record.env = "agent"`` and given back on resume (``app.environment``)."""
    env_prefixes: ClassVar[tuple[str, ...]] = ()
    """Prefixes of more such variables (``CLAUDE_CODE_``)."""
    missing_transcript_reinjects: ClassVar[bool] = False
    """Re-inject straight away, before launching, when the agent holds no transcript of the
    session id where it will look and shellkeep none to restore (``app.native.no_transcript_found``):
    Gemini CLI's ``-r`` fails only after seconds ("No previous sessions found", exit 42). Others
    fail at once and the resume falls back after them."""
    cwd_fields: ClassVar[tuple[tuple[str, ...], ...]] = ()
    """Where a transcript record names the directory the agent ran in, as key paths into the
    record (Claude Code: ``("cwd",)``). A transcript taken to another machine has these
    rewritten (``relocate_record``); () when not known: such a transcript is not moved, and
    resuming there re-injects instead."""

    def knows_version(self, version: str) -> bool:
        """Return whether ``version`` ("2.1.197") is one of ``tested_versions`` or within one
        of them ("0.61" covers "0.61.3")."""
        return any(version == known or version.startswith(known + ".") for known in self.tested_versions)

    def is_newer_than_tested(self, version: str) -> bool:
        """Return whether ``version`` ("0.62.1") is newer than every one of ``tested_versions``.

        Compared number by number on each tested version's length ("1.0" covers "1.0.102");
        False when nothing was tested or ``version`` is not made of dotted numbers.
        """
        installed = _version_numbers(version)
        if installed is None or not self.tested_versions:
            return False
        tested = [t for t in (_version_numbers(v) for v in self.tested_versions) if t is not None]
        return bool(tested) and all(installed[: len(t)] > t for t in tested)

    def matches(self, argv: Sequence[str]) -> bool:
        """Return whether ``argv`` runs this agent (directly, through npx/node/python -m...)."""
        return split_command(argv, self.executables, self.packages, self.modules) is not None

    def agent_name(self, argv: Sequence[str]) -> str:
        """Return the adapter's name: a session of this agent is stored under it."""
        return self.name

    def command(self, argv: Sequence[str]) -> CommandLine:
        """Return ``argv`` split into launcher prefix and arguments (first word as prefix if unknown)."""
        found = split_command(argv, self.executables, self.packages, self.modules)
        if found is not None:
            return found
        if not argv:
            return CommandLine(prefix=(self.executables[0],) if self.executables else (), args=())
        return CommandLine(prefix=(argv[0],), args=tuple(argv[1:]))

    def starts_conversation(self, tokens: Sequence[Token]) -> bool:
        """Return whether the arguments start an interactive conversation (no help, version, subcommand)."""
        if find_option(tokens, HELP, VERSION, *self.non_conversation_options) is not None:
            return False
        first = first_positional(tokens)
        return first is None or first not in self.grammar.subcommands

    def session_id_from(self, token: Token) -> str | None:
        """Return the session id named by a conversation option the user gave, or None."""
        if token.option in self.id_options and token.value and self.looks_like_id(token.value):
            return token.value
        return None

    def looks_like_id(self, value: str) -> bool:
        """Return whether ``value`` is one of this agent's session ids (not a name or search term)."""
        return bool(value.strip())

    def new_session_id(self) -> str:
        """Return a fresh id to pre-assign (a random UUID)."""
        return str(uuid.uuid4())

    def prepare(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> Launch:
        """Return the launch for ``argv``, with ``session_option <new id>`` added when it applies.

        Nothing is added when the agent cannot take an id, when argv asks for help, a
        version or a subcommand, or when the user already picked a conversation; in the
        last case the id is taken from the user's flag when it names one.
        """
        cmd = self.command(argv)
        tokens = tokenize(cmd.args, self.grammar)
        if not self.starts_conversation(tokens):
            return Launch(argv=tuple(argv))
        given = find_option(tokens, *self.conversation_options)
        if given is not None:
            forked = find_option(tokens, *self.fork_options) is not None
            return Launch(argv=tuple(argv), agent_session_id=None if forked else self.session_id_from(given))
        if self.session_option is None:
            return Launch(argv=tuple(argv))
        session_id = self.new_session_id()
        new_argv = (*cmd.prefix, self.session_option.names[0], session_id, *cmd.args)
        return Launch(argv=new_argv, agent_session_id=session_id)

    def typed_argv(self, argv: Sequence[str], agent_session_id: str | None) -> list[str]:
        """Return ``argv`` without the options naming ``agent_session_id`` (``id_options``): the
        command as the user typed it, for a title (``prepare`` and a resume add such an option)."""
        if not agent_session_id:
            return list(argv)
        cmd = self.command(argv)
        tokens = tokenize(cmd.args, self.grammar)
        kept = [t for t in tokens if not (t.option in self.id_options and t.value == agent_session_id)]
        return [*cmd.prefix, *(word for token in kept for word in token.words)]

    def is_preassigned(self, launch: Launch) -> bool:
        """Return whether ``launch.agent_session_id`` was given through ``session_option`` (a new conversation)."""
        if launch.agent_session_id is None or self.session_option is None:
            return False
        tokens = tokenize(self.command(launch.argv).args, self.grammar)
        token = find_option(tokens, self.session_option)
        return token is not None and token.value == launch.agent_session_id

    def transcript_layout(self, cwd: Path, env: Mapping[str, str]) -> TranscriptLayout | None:
        """Return where the agent keeps the transcripts of ``cwd``, or None; subclasses know."""
        return None

    def find_session(
        self,
        launch: Launch,
        cwd: Path,
        env: Mapping[str, str],
        started_at: datetime,
        screen_text: str,
    ) -> AgentSession | None:
        """Return the conversation ``launch`` started in ``cwd`` (clues in ``locate_transcript``'s order).

        The transcripts are those of ``transcript_layout``; the screen hint is what
        ``resume_hint`` finds on the last screen. None when the adapter has no layout.
        """
        layout = self.transcript_layout(cwd, env)
        if layout is None:
            return None
        return locate_transcript(
            self.name,
            layout,
            known_id=launch.agent_session_id,
            preassigned=self.is_preassigned(launch),
            cwd=cwd,
            started_at=started_at,
            hinted_id=None if self.resume_hint is None else find_in_screen(screen_text, self.resume_hint),
        )

    def transcript_path_in(self, session: AgentSession, cwd: Path, env: Mapping[str, str]) -> Path | None:
        """Return where the agent, started in ``cwd``, looks for ``session``'s transcript, or None.

        For an agent that keys its store by directory (Claude Code's
        ``projects/<dash-encoded cwd>/<id>.jsonl``) this differs from ``session.transcript``
        once the project was moved; for one that does not, it is the same file. None when
        it is not known (no layout, no id).
        """
        layout = self.transcript_layout(cwd, env)
        if layout is None or session.session_id is None:
            return None
        return layout.expected_path(session.session_id)

    def relocate_record(self, record: dict[str, object], remap: Callable[[str], str]) -> bool:
        """Rewrite in place the directories ``record`` names at ``cwd_fields``; return whether one changed.

        record: one parsed transcript record (a JSON object of the agent's JSONL).
        remap: old directory -> new one (returned as it is when it is not the session's).
        """
        changed = False
        for path in self.cwd_fields:
            holder: object = record
            for key in path[:-1]:
                holder = holder.get(key) if isinstance(holder, dict) else None
            if not isinstance(holder, dict):
                continue
            old = holder.get(path[-1])
            if isinstance(old, str) and old:
                new = remap(old)
                if new != old:
                    holder[path[-1]] = new
                    changed = True
        return changed

    def resume_argv_in(self, argv: Sequence[str], cwd: Path) -> list[str]:
        """Return a native resume ``argv`` to run in ``cwd``, a directory other than the session's.

        Unchanged by default; an agent that asks which directory to use when a conversation
        was recorded in another one (Codex) is told ``cwd`` on its command line.
        """
        return list(argv)

    def resume_words(self, session: AgentSession) -> list[str]:
        """Return the arguments that resume ``session`` (``["--resume", id]``); subclasses override."""
        return ["--resume", session.session_id or ""]

    def resume_env(self, session: AgentSession) -> dict[str, str]:
        """Return environment variables the native resume of ``session`` needs ({} by default).

        For agents that keep several stores (OpenCode's channel databases), this points the
        agent at the one the session was found in, so that it does not look in another.
        """
        return {}

    def resume_argv(self, original_argv: Sequence[str], session: AgentSession) -> list[str] | None:
        """Return the user's command with its conversation flags and prompt replaced by a resume.

        None when the session has no id or its transcript is known to be missing (the
        agent would refuse to resume it).
        """
        if session.session_id is None:
            return None
        if session.transcript is not None and not session.transcript.exists():
            return None
        cmd = self.command(original_argv)
        tokens = tokenize(cmd.args, self.grammar)
        kept = rebuild(tokens, self.dropped_on_resume, drop_positionals=self.grammar.prompt_positionals)
        return [*cmd.prefix, *kept, *self.resume_words(session)]

    def fresh_argv(self, original_argv: Sequence[str]) -> list[str]:
        """Return the user's command as a new conversation, for re-injection into it.

        Conversation flags (a pre-assigned id, resume, continue, fork), one-shot modes and an
        initial prompt are dropped; the user's other arguments are kept.
        """
        cmd = self.command(original_argv)
        tokens = tokenize(cmd.args, self.grammar)
        kept = rebuild(tokens, self.dropped_on_resume, drop_positionals=self.grammar.prompt_positionals)
        return [*cmd.prefix, *kept]

    def read_exchanges(self, session: AgentSession, limit: int | None = None) -> list[Exchange]:
        """Return the session's exchanges (the last ``limit``); [] with a warning when unreadable."""
        if session.transcript is None or self.transcript_format is None:
            return []
        return jsonl.read_exchanges(session.transcript, self.transcript_format, limit, self.name)

    def read_transcript(self, session: AgentSession, upto_bytes: int | None = None, *, warn_damage: bool = True) -> jsonl.TranscriptReading:
        """Return all the session's exchanges and where its transcript is damaged, streamed.

        A JSONL transcript is read record by record (``jsonl.read_transcript``; only its
        first ``upto_bytes`` when given); other stores (a database, Markdown, a JSON
        document) give ``read_exchanges`` and no damage report. Never raises.
        """
        path = session.transcript
        if path is None or self.transcript_format is None or not path.name.endswith((".jsonl", ".jsonl.zst")):
            return jsonl.TranscriptReading(tuple(self.read_exchanges(session)))
        return jsonl.read_transcript(path, self.transcript_format, self.name, upto_bytes=upto_bytes, warn_damage=warn_damage)

    def read_plan(self, session: AgentSession) -> Plan | None:
        """Return the task list the agent stopped at, read from its transcript (``agents.plan``).

        None when this agent keeps no task list, or none was written. Raises OSError when
        the transcript cannot be read; subclasses that know the agent's plan tools override it.
        """
        return None

    def read_title(self, session: AgentSession) -> str | None:
        """Return the agent's own title for the conversation, on one line (``agents.titles``).

        None when this agent keeps none, or wrote none yet. Raises OSError when its file
        cannot be read; subclasses that know where the agent keeps it override it.
        """
        return None

    def remove_resume_leftovers(self, session: AgentSession) -> list[Path]:
        """Delete files the agent's resume left beside ``session``'s transcript that would make it
        delete the transcript later; return them. None by default (see ``GeminiAdapter``)."""
        return []

    def transcript_files(self, session: AgentSession) -> list[Path]:
        """Return the transcript when it exists."""
        if session.transcript is not None and session.transcript.is_file():
            return [session.transcript]
        return []

    def __repr__(self) -> str:
        """Return ``<ClaudeAdapter claude>``."""
        return f"<{type(self).__name__} {self.name}>"


def _version_numbers(version: str) -> tuple[int, ...] | None:
    """Return "0.61.0" as (0, 61, 0); None when a part is not a number."""
    try:
        return tuple(int(part) for part in version.strip().split("."))
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class TranscriptLayout:
    """Where one agent keeps the transcripts of one project, for ``locate_transcript``.

    transcripts: the project's transcript files (any order).
    path_of: the existing transcript of a session id, or None.
    id_of: the session id of a transcript file, or None.
    head_of: the start time and cwd recorded at a transcript's head (each may be None).
    expected_path: where a pre-assigned id's transcript will appear, or None when unknown.
    """

    transcripts: Callable[[], list[Path]]
    path_of: Callable[[str], Path | None]
    id_of: Callable[[Path], str | None]
    head_of: Callable[[Path], tuple[datetime | None, str | None]]
    expected_path: Callable[[str], Path | None]


def jsonl_per_id(
    folders: Sequence[Path],
    head_of: Callable[[Path], tuple[datetime | None, str | None]],
    *,
    also_in: Callable[[], Iterable[Path]] | None = None,
) -> TranscriptLayout:
    """Return the layout of an agent that writes each conversation to ``<session id>.jsonl``.

    folders: the project's folders, the one a new transcript goes to first (at least one).
    head_of: see ``TranscriptLayout``.
    also_in: more folders where a session id's transcript is looked for after ``folders``
        (called at each look-up).
    """

    def path_of(session_id: str) -> Path | None:
        for folder in (*folders, *(also_in() if also_in is not None else ())):
            path = folder / f"{session_id}.jsonl"
            if path.is_file():
                return path
        return None

    return TranscriptLayout(
        transcripts=lambda: [p for folder in folders for p in folder.glob("*.jsonl")],
        path_of=path_of,
        id_of=lambda path: path.stem,
        head_of=head_of,
        expected_path=lambda session_id: folders[0] / f"{session_id}.jsonl",
    )


def locate_transcript(
    agent: str,
    layout: TranscriptLayout,
    *,
    known_id: str | None,
    preassigned: bool,
    cwd: Path,
    started_at: datetime,
    hinted_id: str | None,
) -> AgentSession | None:
    """Return the conversation a launch produced, trying the clues from the surest down.

    1. the pre-assigned id's transcript, when it exists;
    2. the newest transcript that started after ``started_at`` with a matching (or no) cwd;
    3. the id the user's resume flag named, when its transcript exists;
    4. the id hinted on the last screen (with its transcript, else without);
    5. the transcript of the cwd last written after ``started_at`` (a continued conversation);
    6. the pre-assigned id, its transcript not written yet.
    """
    if known_id is not None and preassigned:
        path = layout.path_of(known_id)
        if path is not None:
            return AgentSession(agent=agent, session_id=known_id, transcript=path)
    recent: list[tuple[Path, str]] = []  # written since the launch, in cwd; newest first
    fresh: list[tuple[datetime, str, Path]] = []  # also started since the launch
    for path in newest(layout.transcripts()):
        if not is_new(mtime_at(path), started_at):
            break
        begun, recorded_cwd = layout.head_of(path)
        session_id = layout.id_of(path)
        if session_id is None or (recorded_cwd is not None and not same_dir(recorded_cwd, cwd)):
            continue
        recent.append((path, session_id))
        if begun is not None and is_new(begun, started_at):
            fresh.append((begun, session_id, path))
    if fresh:
        _, session_id, path = max(fresh, key=lambda item: item[0])
        return AgentSession(agent=agent, session_id=session_id, transcript=path)
    if known_id is not None and not preassigned:
        path = layout.path_of(known_id)
        if path is not None:
            return AgentSession(agent=agent, session_id=known_id, transcript=path)
    if hinted_id is not None:
        return AgentSession(agent=agent, session_id=hinted_id, transcript=layout.path_of(hinted_id))
    if recent:
        path, session_id = recent[0]
        return AgentSession(agent=agent, session_id=session_id, transcript=path)
    if known_id is not None:
        return AgentSession(agent=agent, session_id=known_id, transcript=layout.expected_path(known_id))
    return None
