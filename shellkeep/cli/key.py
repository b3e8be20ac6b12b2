"""``shellkeep key``: make, show, export, import and rotate the encryption key."""

from __future__ import annotations

import os
import sys

import click

from shellkeep.cli.options import context, json_option, paths, warn
from shellkeep.cli.output import plural, print_json
from shellkeep.errors import ShellkeepError, UserInputError


def _key_file() -> str:
    """Return ``encryption.key_file`` in effect (raises ConfigError for a broken config)."""
    return context(strict=True).config.encryption.key_file


def _print_report(report: object, as_json: bool, verb: str) -> None:
    if as_json:
        print_json(report)
        return
    click.echo(f"{verb} {getattr(report, 'current', None)} in {getattr(report, 'store', '')}")


def _notice_plain_key_file() -> None:
    """Warn, once per data folder, that the key is a plain file beside the data."""
    from shellkeep.vault.keys import plain_key_notice

    notice = plain_key_notice(paths(), _key_file())
    if notice:
        warn(notice)


@click.group(name="key")
def key() -> None:
    """Manage the key that encrypts sessions at rest (encryption.encrypt = true).

    The key lives in the OS keyring where one is usable, else in a 0600 key file in the
    data directory, or in encryption.key_file. Back it up: without it nothing encrypted
    can be read.

    Example: shellkeep key init
    """


@key.command(name="init")
@click.option(
    "--force",
    is_flag=True,
    help="Make a key even though sessions are sealed under a lost key (they stay unreadable).",
)
@json_option
def init(force: bool, as_json: bool) -> None:
    """Make the encryption key (once; an existing key is never replaced).

    Refused while sessions are encrypted under a key no store holds: import that key
    with 'shellkeep key import FILE' instead.

    Example: shellkeep key init && shellkeep config set encryption.encrypt true
    """
    from shellkeep.vault.keys import init_key

    report = init_key(paths(), _key_file(), force=force)
    _print_report(report, as_json, "created key")
    if not as_json:
        warn("back it up now with 'shellkeep key export FILE': without it encrypted sessions are lost")
    _notice_plain_key_file()


@key.command(name="status")
@json_option
def status(as_json: bool) -> None:
    """Show where the keys are and the current key's id (never the key itself).

    Example: shellkeep key status
    """
    from shellkeep.vault.keys import key_status, plain_key_warning

    report = key_status(paths(), _key_file())
    if as_json:
        print_json(report)
        return
    lost = ", ".join(report.lost)
    if report.current is None and report.lost:  # 'key init' is refused then: the fix is an import
        click.echo(
            f"no key: sessions are encrypted with {lost}, which no key store holds; "
            f"import your key export with 'shellkeep key import FILE' (it would go to {report.store})"
        )
    elif report.current is None:
        click.echo(f"no key yet (it would go to {report.store}); run 'shellkeep key init'")
    else:
        count = len(report.keys)
        click.echo(f"current key {report.current} in {report.store} ({count} key{'' if count == 1 else 's'})")
        if report.lost:
            click.echo(f"missing: sessions are encrypted with {lost}; import it with 'shellkeep key import FILE'")
    if report.beside_data and report.current is not None:
        click.echo(f"warning: {plain_key_warning(report.store)}")


@key.command(name="export")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True), required=False)
def export(file: str | None) -> None:
    """Write every key to FILE (mode 0600), or to stdout, for a backup or another machine.

    Example: shellkeep key export ~/shellkeep-keys.json
    """
    from shellkeep.store.atomic import open_output
    from shellkeep.vault.keys import export_keys
    import json

    key_set, report = export_keys(paths(), _key_file())
    data = (json.dumps(key_set.to_json(), indent=2) + "\n").encode("utf-8")
    if file in (None, "-"):
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        with open_output(file) as out:
            out.write(data)
        click.echo(f"exported {len(report.keys)} key{'' if len(report.keys) == 1 else 's'} to {file}")
    warn("this holds your encryption keys in the clear: keep it somewhere safe")


@key.command(name="import")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--make-current", is_flag=True, help="Encrypt new sessions with the imported current key.")
@json_option
def import_(file: str, make_current: bool, as_json: bool) -> None:
    """Add the keys of a file written by 'shellkeep key export' ('-' reads stdin).

    Example: shellkeep key import ~/shellkeep-keys.json
    """
    from shellkeep.vault.keys import import_keys

    try:
        text = sys.stdin.read() if file == "-" else open(os.path.expanduser(file), encoding="utf-8").read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserInputError(f"cannot read key file '{file}': {getattr(exc, 'strerror', None) or exc}") from exc
    report = import_keys(paths(), text, file, _key_file(), make_current=make_current)
    _notice_plain_key_file()
    if as_json:
        print_json(report)
        return
    click.echo(
        f"imported {len(report.added)} new key{'' if len(report.added) == 1 else 's'} into {report.store}; "
        f"current key {report.current}"
    )


@key.command(name="rotate")
@click.option("--include-plain", is_flag=True, help="Also encrypt sessions stored in the clear.")
@json_option
def rotate(include_plain: bool, as_json: bool) -> None:
    """Make a new key and re-encrypt every session with it; run again to resume.

    An interrupted rotation continues where it stopped. Old keys are dropped once every
    session is done; sessions still recording keep the old key until a later run.

    Example: shellkeep key rotate
    """
    from shellkeep.vault.rotation import rotate_key

    def progress(session_id: str, done: int, total: int) -> None:
        if not as_json and sys.stderr.isatty():
            sys.stderr.write(f"\rre-encrypting {done}/{total}")
            sys.stderr.flush()

    result = rotate_key(paths(), _key_file(), include_plain=include_plain, on_session=progress)
    if not as_json and sys.stderr.isatty():
        sys.stderr.write("\r\x1b[K")
    if as_json:
        print_json(result)
    else:
        again = " (resumed)" if result.resumed else ""
        click.echo(f"key {result.new_key}{again}: re-encrypted {plural(result.files, 'file')} of {plural(result.sessions, 'session')}")
        for line in result.errors:
            warn(f"not re-encrypted: {line}")
        if result.running:
            warn(f"{plural(len(result.running), 'session')} still recording keep the old key; run 'shellkeep key rotate' after they end")
    if result.errors:
        raise ShellkeepError(
            f"{plural(len(result.errors), 'session')} could not be re-encrypted; old keys kept; "
            "fix them and run 'shellkeep key rotate' again to resume"
        )
