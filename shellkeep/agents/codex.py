"""Know OpenAI Codex CLI (``codex``): its rollout files, their records, ``codex resume``.

Rollouts: ``$CODEX_HOME`` (else ``~/.codex``) ``/sessions/YYYY/MM/DD/rollout-<local time>-<thread
uuid>.jsonl``, possibly compressed as ``.jsonl.zst``; archived ones in ``archived_sessions/``.
Each line is ``{timestamp, type, payload}`` (codex-rs ``RolloutLine``, Codex 0.171):
``session_meta`` (id, cwd), ``turn_context`` (model), ``response_item`` (what the model saw:
messages, function calls and outputs), ``event_msg`` (what the TUI showed: ``user_message``,
``agent_message``, ``token_count``). Codex cannot be given an id; it prints
``codex resume <id>`` on exit. ``codex resume <id>`` of a thread it does not know exits with
status 1 after printing ``ERROR: No saved session found with ID <id>. ...`` (0.171.0).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path

from shellkeep.agents import jsonl
from shellkeep.agents.adapter import HELP, VERSION, CommandAdapter
from shellkeep.agents.titles import codex_title
from shellkeep.agents.plan import Plan, PlanBuilder, items_from, scan_records
from shellkeep.agents.argv import Arity, Grammar, Option, Token, find_option, first_positional, rebuild, tokenize
from shellkeep.agents.base import AgentSession, Exchange, Launch, ScreenChrome, Usage, WaitingHints
from shellkeep.agents.codex_state import stale_thread
from shellkeep.agents.locations import (
    UUID_PATTERN,
    find_in_screen,
    home_dir,
    is_new,
    mtime_at,
    newest,
    same_dir,
    shown_on_screen,
)
from shellkeep.agents.records import (
    ExchangeBuilder,
    JsonObject,
    as_dict,
    as_int,
    as_list,
    as_str,
    dig,
    parse_time,
    texts_of,
)

__all__ = ["CODEX_FORMAT", "CodexAdapter", "codex_home", "find_rollout"]

_RESUME_SUBCOMMANDS = frozenset({"resume", "fork"})
_LAST = Option(("--last",))
_ALL = Option(("--all",))
_IMAGE = Option(("--image", "-i"), Arity.MANY)
_CD = Option(("--cd", "-C"), Arity.ONE)

_GRAMMAR = Grammar(
    options=(
        HELP,
        VERSION,
        _LAST,
        _ALL,
        _IMAGE,
        _CD,
        *(
            Option(names, Arity.ONE)
            for names in (
                ("--config", "-c"),
                ("--model", "-m"),
                ("--profile", "-p"),
                ("--sandbox", "-s"),
                ("--ask-for-approval", "-a"),
                ("--local-provider",),
                ("--enable",),
                ("--disable",),
                ("--add-dir",),
            )
        ),
        *(
            Option((name,))
            for name in (
                "--oss",
                "--search",
                "--full-auto",
                "--dangerously-bypass-approvals-and-sandbox",
                "--yolo",
                "--include-non-interactive",
                "--no-alt-screen",
            )
        ),
    ),
    subcommands=frozenset(
        {
            "exec",
            "e",
            "review",
            "login",
            "logout",
            "mcp",
            "mcp-server",
            "app-server",
            "completion",
            "sandbox",
            "debug",
            "apply",
            "a",
            "cloud",
            "features",
            "archive",
            "unarchive",
            "migrate-rollouts",
            "help",
        }
    ),
)

_INSTRUCTION_PREFIXES = ("<", "# AGENTS.md instructions")


def codex_home(env: Mapping[str, str]) -> Path:
    """Return Codex's home folder: ``$CODEX_HOME`` when set, else ``~/.codex``."""
    configured = env.get("CODEX_HOME")
    if configured:
        return Path(configured)
    return home_dir(env) / ".codex"


def find_rollout(home: Path, thread_id: str) -> Path | None:
    """Return the rollout file of a thread (plain ``.jsonl`` preferred over ``.jsonl.zst``), or None."""
    for folder, pattern in (
        (home / "sessions", f"*/*/*/rollout-*-{thread_id}.jsonl"),
        (home / "archived_sessions", f"rollout-*-{thread_id}.jsonl"),
    ):
        for suffix in ("", ".zst"):
            found = sorted(folder.glob(pattern + suffix))
            if found:
                return found[-1]
    return None


def _thread_id_by_name(home: Path, name: str) -> str | None:
    """Return the thread id ``session_index.jsonl`` gives for a thread name (last entry wins)."""
    try:
        records = jsonl.read_records(home / "session_index.jsonl")
    except OSError:
        return None
    found: str | None = None
    for record in records:
        if record.get("thread_name") == name or record.get("id") == name:
            found = as_str(record.get("id")) or found
    return found


def _is_turn_start(record: JsonObject) -> bool:
    """Return whether a record opens a turn: its ``turn_context``, written just before the prompt.

    Counting contexts rather than prompts keeps each turn's model in a window read from
    the end; a rollout without them (old Codex) is read back to its start.
    """
    return record.get("type") == "turn_context"


def _is_instruction(text: str) -> bool:
    """Return whether a user-role message is Codex's injected context, not something typed."""
    return text.lstrip().startswith(_INSTRUCTION_PREFIXES)


def _output_text(value: object) -> object:
    """Return a function call output's text (older Codex wrapped it as JSON ``{output, metadata}``)."""
    if isinstance(value, str) and value.startswith("{"):
        try:
            decoded = json.loads(value)
        except ValueError:
            return value
        if isinstance(decoded, dict) and "output" in decoded:
            return decoded["output"]
    return value


def _build(records: Iterable[JsonObject]) -> list[Exchange]:
    """Turn rollout records in file order into exchanges (iterated twice: a stream will do).

    Prompts are ``event_msg/user_message`` records; when a rollout has none (old Codex),
    user-role ``response_item`` messages that are not injected context are used. The answer
    is the ``agent_message`` events, else the assistant ``response_item`` messages. Usage sums
    ``token_count.info.last_token_usage`` (repeated counts with an unchanged total are skipped).
    """
    has_events = any(r.get("type") == "event_msg" and dig(r, "payload", "type") == "user_message" for r in records)
    builder = ExchangeBuilder()
    model: str | None = None
    events_text: list[str] = []
    items_text: list[str] = []
    last_total: object = None

    def flush_answer() -> None:
        for text in events_text or items_text:
            builder.answer(text)
        events_text.clear()
        items_text.clear()

    for record in records:
        kind = record.get("type")
        payload = as_dict(record.get("payload"))
        if payload is None:
            continue
        ptype = payload.get("type")
        if kind == "turn_context":
            model = as_str(payload.get("model")) or model
            if not builder.is_answered:  # a context recorded just after its prompt
                builder.set_model(model)
        elif kind == "event_msg" and ptype == "user_message":
            flush_answer()
            builder.prompt(as_str(payload.get("message")) or "", record.get("timestamp"))
            builder.set_model(model)
        elif kind == "event_msg" and ptype == "agent_message":
            text = as_str(payload.get("message"))
            if text:
                events_text.append(text)
        elif kind == "event_msg" and ptype == "token_count":
            info = as_dict(payload.get("info"))
            if info is None:
                continue
            total = info.get("total_token_usage")
            if total is not None and total == last_total:
                continue
            last_total = total
            usage = as_dict(info.get("last_token_usage"))
            if usage is not None:
                builder.add_usage(
                    Usage(
                        input=as_int(usage.get("input_tokens")),
                        output=as_int(usage.get("output_tokens")),
                        cache_read=as_int(usage.get("cached_input_tokens")),
                    )
                )
        elif kind == "response_item" and ptype == "message":
            text = "\n".join(texts_of(as_list(payload.get("content"))))
            if payload.get("role") == "user":
                if not has_events and text.strip() and not _is_instruction(text):
                    flush_answer()
                    builder.prompt(text, record.get("timestamp"))
                    builder.set_model(model)
            elif payload.get("role") == "assistant" and text.strip():
                items_text.append(text)
        elif kind == "response_item" and ptype == "function_call":
            builder.tool_call(as_str(payload.get("name")) or "?", payload.get("arguments"))
        elif kind == "response_item" and ptype == "custom_tool_call":
            builder.tool_call(as_str(payload.get("name")) or "?", _patch_summary(payload.get("input")))
        elif kind == "response_item" and ptype == "local_shell_call":
            builder.tool_call("shell", dig(payload, "action", "command"))
        elif kind == "response_item" and ptype == "web_search_call":
            builder.tool_call("web_search", dig(payload, "action"))
        elif kind == "response_item" and ptype in ("function_call_output", "custom_tool_call_output"):
            builder.tool_result(_output_text(payload.get("output")))
    flush_answer()
    return builder.exchanges()


def _patch_summary(value: object) -> object:
    """Return the files an ``apply_patch`` input touches (``update parse.py``), else the input."""
    if not isinstance(value, str):
        return value
    files = re.findall(r"^\*\*\* (Add|Update|Delete) File: (.+)$", value, flags=re.MULTILINE)
    if files:
        return ", ".join(f"{verb.lower()} {path.strip()}" for verb, path in files)
    return value


CODEX_FORMAT = jsonl.TranscriptFormat(is_prompt=_is_turn_start, build=_build, streams=True)
"""How Codex rollouts are read."""


CODEX_SCREEN = ScreenChrome(
    input_box=r"›(?: .*)?",
    lines=(
        r"(?:─ )?Worked for .*",  # "Worked for <1s • 17:13"
        r"[•◦] Working .*",  # "• Working (3s • esc to interrupt)"
        r"Waiting for .* · esc cancel",  # "Waiting for startup  · esc cancel"
    ),
    mark=r"[•◦] ",
)
"""What Codex 0.171.0 draws besides answers (seen in tests/agents/test_screen_exchanges.py), on
the alternate screen: the composer ``› Ask Codex to do anything`` with a status line (model, folder,
title) and a footer (``? for shortcuts``, ``⚠ 2 warnings``) below the conversation, the prompt
echoed as ``› <prompt>``, an answer as ``• <text>``, then ``Worked for <1s • 17:13``."""


CODEX_WAITING = WaitingHints(
    approval=(
        r"Would you like to [^\n]{1,120}\?",  # "Would you like to run the following command?"
        r"Yes, proceed",
        r"Press enter to confirm or esc to cancel",
    ),
    input=(r"Ask Codex to do anything", r"\? for shortcuts"),
)
"""How Codex 0.171.0 shows it waits (tests/data/agents/screens/codex-0.171.0-approval.cast, recorded
against a stand-in that asks for a command needing escalated permissions): its approval dialog
``Would you like to run the following command?`` / ``$ touch ...`` / ``› 1. Yes, proceed (y)`` /
``2. Yes, and don't ask again ...`` / ``3. No, and tell Codex what to do differently (esc)`` /
``Press enter to confirm or esc to cancel``; its ready composer ``› Ask Codex to do anything``."""



def read_codex_plan(rollout: Path) -> Plan | None:
    """Return the plan of a Codex rollout as its last ``update_plan`` call left it, or None.

    The call is a ``response_item`` whose payload is ``{type: function_call, name: update_plan,
    arguments}``, ``arguments`` a JSON string ``{explanation?, plan: [{step, status}]}`` with
    status ``pending``, ``in_progress`` or ``completed`` (codex-rs ``UpdatePlanArgs``).
    """
    builder = PlanBuilder()
    for record in scan_records(rollout, (b"update_plan",)):
        payload = as_dict(record.get("payload"))
        if record.get("type") != "response_item" or payload is None:
            continue
        if payload.get("type") != "function_call" or payload.get("name") != "update_plan":
            continue
        arguments: object = payload.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                continue
        args = as_dict(arguments) or {}
        builder.replace("update_plan", items_from(args.get("plan"), ("step",)), as_str(args.get("explanation")))
    return builder.plan()


class CodexAdapter(CommandAdapter):
    """Adapter for Codex CLI (``codex``, ``npx @openai/codex``)."""

    name = "codex"
    title = "Codex"
    # Its home (config, sessions, logs), its sqlite folder, the OpenAI endpoint, key and model.
    env_names = ("CODEX_HOME", "CODEX_SQLITE_HOME", "CODEX_API_KEY", "AZURE_OPENAI_API_KEY", "OPENAI_API_KEY",
                 "OPENAI_BASE_URL", "OPENAI_ORGANIZATION", "OPENAI_PROJECT", "OPENAI_MODEL")  # fmt: skip
    env_prefixes = ("CODEX_",)
    executables = ("codex",)
    tested_versions = ("0.165.0", "0.171.0")
    input_includes_cache_read = True
    packages = ("@openai/codex",)
    grammar = _GRAMMAR
    screen_chrome = CODEX_SCREEN
    waiting_hints = CODEX_WAITING
    transcript_format = CODEX_FORMAT
    resume_failure_hint = r"No saved session found with ID [0-9A-Za-z_-]+"
    cwd_fields = (("payload", "cwd"),)  # session_meta and turn_context (0.171.0)

    def starts_conversation(self, tokens: Sequence[Token]) -> bool:
        """Return whether the arguments start an interactive conversation (also ``resume``/``fork``)."""
        if find_option(tokens, HELP, VERSION, *self.non_conversation_options) is not None:
            return False
        first = first_positional(tokens)
        return first is None or first in _RESUME_SUBCOMMANDS or first not in self.grammar.subcommands

    def prepare(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> Launch:
        """Return the launch unchanged (Codex takes no id); note the id of ``codex resume <id>``."""
        cmd = self.command(argv)
        tokens = tokenize(cmd.args, self.grammar)
        positionals = [t.words[0] for t in tokens if t.is_positional]
        if positionals[:1] == ["resume"] and len(positionals) > 1 and find_option(tokens, _LAST) is None:
            return Launch(argv=tuple(argv), agent_session_id=positionals[1])
        return Launch(argv=tuple(argv))

    def find_session(
        self,
        launch: Launch,
        cwd: Path,
        env: Mapping[str, str],
        started_at: datetime,
        screen_text: str,
    ) -> AgentSession | None:
        """Return the thread ``launch`` ran in ``cwd``.

        Codex takes no id up front, and its rollouts are written by a shared app-server
        daemon (Codex 0.171), not by the process shellkeep started, so the thread is matched
        by what this session showed. In order: the ``codex resume <id>`` hint Codex printed
        on exit; among the rollouts of ``cwd`` that started after ``started_at``, the one whose
        prompts are on this session's last screen (``shown_on_screen``), else, when none or
        several are, the newest; the thread named by ``codex resume <id|name>``; a rollout in
        ``cwd`` written after ``started_at`` (a continued thread).
        """
        home = codex_home(env)
        hinted = find_in_screen(screen_text, rf"codex resume ({UUID_PATTERN})")
        if hinted is not None:
            return AgentSession(agent=self.name, session_id=hinted, transcript=find_rollout(home, hinted))
        recent = self._recent_rollouts(home, started_at)
        fresh: list[tuple[datetime, str, Path]] = []
        touched: list[tuple[str, Path]] = []
        for path in recent:
            meta = next((r for r in jsonl.read_head(path, max_records=4) if r.get("type") == "session_meta"), None)
            payload = as_dict(meta.get("payload")) if meta is not None else None
            if payload is None or not same_dir(payload.get("cwd"), cwd):
                continue
            thread_id = as_str(payload.get("id")) or _id_from_name(path)
            if thread_id is None:
                continue
            begun = parse_time(payload.get("timestamp")) or parse_time(meta.get("timestamp") if meta else None)
            if is_new(begun, started_at):
                fresh.append((begun or started_at, thread_id, path))
            touched.append((thread_id, path))
        if len(fresh) > 1:  # two sessions in one folder: the one whose prompts this screen shows
            shown = [item for item in fresh if shown_on_screen(self._prompts(item[2]), screen_text)]
            fresh = shown or fresh
        if fresh:
            _, thread_id, path = max(fresh, key=lambda item: item[0])
            return AgentSession(agent=self.name, session_id=thread_id, transcript=path)
        named = launch.agent_session_id
        if named is not None:
            thread_id = named if re.fullmatch(UUID_PATTERN, named) else _thread_id_by_name(home, named)
            if thread_id is not None:
                return AgentSession(agent=self.name, session_id=thread_id, transcript=find_rollout(home, thread_id))
        if touched:
            thread_id, path = touched[0]
            return AgentSession(agent=self.name, session_id=thread_id, transcript=path)
        return None

    def _prompts(self, rollout: Path, limit: int = 3) -> list[str]:
        """Return the last ``limit`` prompts of a rollout (the ones likeliest still on screen)."""
        return [e.prompt for e in jsonl.read_exchanges(rollout, CODEX_FORMAT, limit, self.name)]

    def _recent_rollouts(self, home: Path, started_at: datetime) -> list[Path]:
        """Return rollouts in the date folders since ``started_at`` written after it, newest first.

        Date folders are in local time; the day before the start is searched too, and at
        most 31 days.
        """
        sessions = home / "sessions"
        day = (started_at.astimezone() - timedelta(days=1)).date()
        today = datetime.now().astimezone().date()
        paths: list[Path] = []
        for _ in range(32):
            if day > today:
                break
            folder = sessions / f"{day.year:04d}" / f"{day.month:02d}" / f"{day.day:02d}"
            paths.extend(folder.glob("rollout-*.jsonl"))
            paths.extend(folder.glob("rollout-*.jsonl.zst"))
            day += timedelta(days=1)
        return [p for p in newest(paths) if is_new(mtime_at(p), started_at)]

    def transcript_path_in(self, session: AgentSession, cwd: Path, env: Mapping[str, str]) -> Path | None:
        """Return the thread's rollout under this ``$CODEX_HOME``, else where it goes there.

        Rollouts are kept by date, not by directory: an existing one (``find_rollout``) is
        the file, else ``sessions/YYYY/MM/DD/<the rollout's name>`` (the date from its name,
        ``rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl``; ``.zst`` dropped). None without an id or
        a rollout name to go by.
        """
        if session.session_id is None:
            return None
        home = codex_home(env)
        found = find_rollout(home, session.session_id)
        if found is not None or session.transcript is None:
            return found
        name = session.transcript.name.removesuffix(".zst")
        date = re.match(r"rollout-(\d{4})-(\d{2})-(\d{2})T", name)
        if date is None:
            return None
        return home / "sessions" / date.group(1) / date.group(2) / date.group(3) / name

    def read_title(self, session: AgentSession) -> str | None:
        """Return the agent's title of the conversation (``agents.titles.codex_title``)."""
        if session.transcript is None or not session.transcript.is_file():
            return None
        return codex_title(session.transcript, session.session_id)

    def read_plan(self, session: AgentSession) -> Plan | None:
        """Return the task list the conversation stopped at (``read_codex_plan``)."""
        if session.transcript is None or not session.transcript.is_file():
            return None
        return read_codex_plan(session.transcript)

    def native_resume_problem(self, session: AgentSession, env: Mapping[str, str]) -> str | None:
        """Return why ``codex resume <id>`` would come up without the conversation: its ``threads``
        row points at no rollout, a gone or an empty one, or one holding fewer user messages than the
        session's transcript (``codex_state.stale_thread``); None when it is fine."""
        if session.session_id is None:
            return None
        return stale_thread(codex_home(env), env, session.session_id, session.transcript)

    def resume_words(self, session: AgentSession) -> list[str]:
        """Return ``["resume", <thread id>]``."""
        return ["resume", session.session_id or ""]

    def resume_argv(self, original_argv: Sequence[str], session: AgentSession) -> list[str] | None:
        """Return ``codex <the user's options> resume <id>``, dropping a resume/fork subcommand and the prompt."""
        if session.session_id is None:
            return None
        if session.transcript is not None and not session.transcript.exists():
            return None
        cmd = self.command(original_argv)
        tokens = tokenize(cmd.args, self.grammar)
        kept = rebuild(tokens, (_LAST, _ALL), drop_positionals=True)
        return [*cmd.prefix, *kept, *self.resume_words(session)]


    def resume_argv_in(self, argv: Sequence[str], cwd: Path) -> list[str]:
        """Return ``codex --cd <cwd> ... resume <id>``: the user's own ``--cd`` replaced.

        ``codex resume`` in a directory other than the thread's recorded cwd asks first
        ("Working directory · resume", defaulting to the thread's directory, which may be
        gone); a working directory given on the command line is taken without asking.
        """
        cmd = self.command(argv)
        kept = rebuild(tokenize(cmd.args, self.grammar), (_CD,))
        return [*cmd.prefix, "--cd", str(cwd), *kept]

    def fresh_argv(self, original_argv: Sequence[str]) -> list[str]:
        """Return ``codex <the user's options>``: a resume/fork subcommand and the prompt dropped."""
        cmd = self.command(original_argv)
        tokens = tokenize(cmd.args, self.grammar)
        return [*cmd.prefix, *rebuild(tokens, (_LAST, _ALL), drop_positionals=True)]


def _id_from_name(path: Path) -> str | None:
    """Return the thread uuid at the end of a rollout file name."""
    match = re.search(rf"({UUID_PATTERN})\.jsonl(?:\.zst)?$", path.name)
    return match.group(1) if match else None
