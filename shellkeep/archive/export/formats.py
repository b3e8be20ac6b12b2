"""Write a session as asciicast v2 (cast), plain text (txt), Markdown (md) or JSON (json).

cast: asciicast v2 (docs.asciinema.org/manual/asciicast/v2), the recording's plain bytes
when it is v2 (decrypted and decompressed when stored so), else converted (v1, v3).
txt: the transcript, each line the screen showed (a redraw adds nothing). md: the conversation as a
document (terminal output in fenced code blocks). json: an object ``{"session", "exchanges", "markers", "checkpoints", "usage"}``. agent: the
stored copy of the agent's own transcript, followed through its reference (``vault.copies``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from collections.abc import Iterable
from typing import IO

from shellkeep.archive.timeline import exchange_offset_s, read_session_markers
from shellkeep.asciicast.encoder import encode_event, encode_header
from shellkeep.asciicast.reader import Cast
from shellkeep.store.checkpoints import Checkpoint, read_checkpoints
from shellkeep.store.session import SessionMeta, title_of
from shellkeep.terminal.transcript import read_transcript, transcript_text
from shellkeep.errors import UserInputError
from shellkeep.vault.access import Vault
from shellkeep.vault.copies import copy_names, open_copy
from shellkeep.vault.exchanges import read_exchanges

__all__ = [
    "session_document", "summary_rows", "token_line", "write_agent", "write_cast", "write_json", "write_md", "write_output", "write_transcript", "write_txt",
]


def write_cast(meta: SessionMeta, out: IO[bytes], vault: Vault) -> None:
    """Write the recording as plain asciicast v2; raises DataError when it is corrupt."""
    path = Path(meta.cast)
    cast = vault.open_recording(path)
    if cast.header.version == 2:
        # Validate first (a corrupt line raises before anything is written), then copy the
        # plain asciicast the vault yields (decrypted and decompressed as needed).
        for _ in cast.events():
            pass
        with vault.open_stream(path) as fh:
            shutil.copyfileobj(fh, out, 1 << 20)
        return
    import dataclasses

    out.write(encode_header(dataclasses.replace(cast.header, version=2)))
    for event in cast.events():
        if event.code != "x":
            out.write(encode_event(event.time, event.code, event.data))


def write_txt(meta: SessionMeta, out: IO[bytes], vault: Vault) -> None:
    """Write the transcript: each line the screen showed, once per showing (not per redraw), in order."""
    write_transcript(vault.open_recording(Path(meta.cast)), out)


def write_transcript(cast: Cast, out: IO[bytes]) -> None:
    """Write the transcript of an opened recording (see ``write_txt``)."""
    for line in read_transcript(cast):
        out.write(line.text.encode("utf-8", "replace") + b"\n")


def session_document(meta: SessionMeta, vault: Vault) -> dict[str, object]:
    """Return the JSON export: ``session`` (meta.json, its ``title`` the one ``show`` gives:
    its own, else ``about``), ``exchanges`` (each with ``number``,
    1-based, and ``time_s``, seconds since start), ``markers`` (recording and checkpoints),
    ``checkpoints`` (``checkpoints.jsonl``'s objects) and ``usage`` (token totals)."""
    exchanges = []
    for exchange in read_exchanges(meta, vault):
        item = exchange.to_json()
        item["number"] = exchange.index + 1
        item["time_s"] = exchange_offset_s(meta, exchange)
        exchanges.append(item)
    markers = [{"n": m.n, "time_s": m.time_s, "label": m.label} for m in read_session_markers(meta, vault)]
    checkpoints = [c.to_json() for c in read_checkpoints(meta.folder)]
    session = {**meta.to_json(), "title": meta.title or meta.about}  # the title ``show`` gives (a sealed one read already)
    return {"session": session, "exchanges": exchanges, "markers": markers, "checkpoints": checkpoints, "usage": meta.usage}


def write_json(meta: SessionMeta, out: IO[bytes], vault: Vault) -> None:
    """Write ``session_document`` as indented JSON."""
    out.write(json.dumps(session_document(meta, vault), indent=2, ensure_ascii=False).encode("utf-8") + b"\n")


def write_agent(meta: SessionMeta, out: IO[bytes], vault: Vault) -> None:
    """Write shellkeep's copy of the agent's own transcript (redacted), streamed from the chunk store.

    The transcript named by ``agent_transcript``, else the session's first copy; plaintext
    (a ``.jsonl.zst`` rollout comes out decompressed). Raises UserInputError when the session
    holds no copy, DataError when a chunk is missing or damaged.
    """
    names = copy_names(meta.folder)
    wanted = Path(meta.agent_transcript).name if meta.agent_transcript else None
    name = wanted if wanted in names else (names[0] if names else None)
    if name is None:
        raise UserInputError(
            f"session {meta.id} holds no copy of an agent transcript; export it as md or json instead"
        )
    with open_copy(vault, meta.folder, name) as fh:
        for piece in iter(lambda: fh.read(1 << 20), b""):
            out.write(piece)


def write_md(meta: SessionMeta, out: IO[bytes], vault: Vault) -> None:
    """Write the conversation as Markdown: metadata, the checkpoints, then each exchange's
    prompt, answer and tool calls; a session without exchanges gets its transcript in a code block."""
    lines = [f"# Session {_md_text(meta.name or meta.id)}", ""]
    lines += ["| | |", "|---|---|"]
    for key, value in summary_rows(meta):
        lines.append(f"| {key} | {_md_cell(value)} |")
    lines.append("")
    checkpoints = read_checkpoints(meta.folder)
    if checkpoints:
        lines += ["## Checkpoints", ""]
        lines += [f"- {_md_text(checkpoint_line(c))}" for c in checkpoints]
        lines.append("")
    exchanges = read_exchanges(meta, vault)
    for exchange in exchanges:
        at = exchange_offset_s(meta, exchange)
        when = f" (at {at:.1f} s)" if at is not None else ""
        title = exchange.prompt.strip().splitlines()[0] if exchange.prompt.strip() else "(empty prompt)"
        lines += [f"## {exchange.index + 1}. {_md_text(title[:80])}{when}", "", "**Prompt**", ""]
        lines += [f"> {line}" if line else ">" for line in exchange.prompt.splitlines() or [""]]
        lines += ["", "**Answer**", ""]
        if not exchange.answer.strip():
            lines += ["_(no answer)_", ""]
        elif answer_is_output(meta):
            lines += _md_code(exchange.answer.strip("\n").splitlines())
        else:
            lines += [exchange.answer.strip(), ""]
        if exchange.tool_calls:
            lines += ["**Tools**", ""]
            lines += [f"- `{c.name}` {_md_text(c.summary)}" for c in exchange.tool_calls]
            lines.append("")
        if exchange.usage is not None:
            u = exchange.usage
            lines += [f"_tokens: {u.input} in, {u.output} out, {u.cache_read} cache read, {u.cache_write} cache write_", ""]
    if not exchanges:
        lines += ["## Transcript", ""]
        lines += _md_code(transcript_text(vault.open_recording(Path(meta.cast))))
    out.write("\n".join(lines).encode("utf-8", "replace"))


def answer_is_output(meta: SessionMeta) -> bool:
    """Return whether ``meta``'s answers are terminal output: its exchanges were built from the
    recording (no agent transcript), so an answer is what the program printed, not prose."""
    return not meta.agent_transcript


def _md_code(lines: Iterable[str]) -> list[str]:
    """Return ``lines`` as a fenced ``text`` code block (a fence inside is broken with a zero-width space)."""
    return ["```text", *(line.replace("```", "`\u200b``") for line in lines), "```", ""]


def summary_rows(meta: SessionMeta) -> list[tuple[str, str]]:
    """Return (label, value) rows describing a session, for documents and pages."""
    rows = [
        ("id", meta.id),
        ("name", meta.name or "-"),
        ("title", title_of(meta) or "-"),
        ("command", " ".join(meta.command) or "-"),
        ("agent", meta.agent),
        ("project", f"{meta.project} ({meta.project_root})"),
        ("cwd", meta.cwd),
        ("started", meta.started_at),
        ("ended", meta.ended_at or "-"),
        ("duration", "-" if meta.duration is None else f"{meta.duration:.1f} s"),
        ("status", meta.status + ("" if meta.exit_code is None else f" (exit {meta.exit_code})")),
        ("host", f"{meta.user}@{meta.host}" if meta.user else meta.host or "-"),
        ("terminal", f"{meta.cols}x{meta.rows} {meta.term or ''}".strip()),
        ("exchanges", str(meta.exchange_count)),
    ]
    if meta.usage:
        rows.append(("tokens", token_line(meta.usage)))
    return rows


def checkpoint_line(checkpoint: Checkpoint) -> str:
    """Return one line about a checkpoint: ``1 at 3.2 s 'before edit': main 1a2b3c4d5e, files 9f8e7d6c5b``."""
    label = f" '{checkpoint.label}'" if checkpoint.label else ""
    if checkpoint.has_snapshot:
        git = f"{checkpoint.branch or 'detached'} {(checkpoint.head or 'no commit')[:10]}, files {(checkpoint.snapshot or '')[:10]}"
    elif checkpoint.git_root:  # an exchange's, added when the conversation was collected (app.checkpoints)
        git = "marker only (no snapshot: added after the session had ended)"
    else:
        git = "marker only (not in a git work tree)"
    return f"{checkpoint.n} at {checkpoint.time_s:.1f} s{label}: {git}"


def token_line(usage: dict[str, int]) -> str:
    """Format token totals: ``1234 in · 567 out · 89 cache read · 0 cache write``."""
    return (
        f"{usage.get('input', 0)} in · {usage.get('output', 0)} out · "
        f"{usage.get('cache_read', 0)} cache read · {usage.get('cache_write', 0)} cache write"
    )


def _md_text(text: str) -> str:
    return text.replace("\n", " ").replace("<", "&lt;")


def _md_cell(text: str) -> str:
    return _md_text(text).replace("|", "\\|")


def write_output(cast: Cast, out: IO[bytes]) -> None:
    """Write an opened recording's output events as they were recorded (UTF-8, escape
    sequences included), streamed; raises DataError when the recording is corrupt."""
    for event in cast.events():
        if event.code == "o":
            out.write(event.data.encode("utf-8", "replace"))
