"""Own the talk with object storage: one bucket (and prefix) named by a URL, through obstore.

URLs: ``s3://bucket/prefix`` (AWS and S3-compatible stores), ``gs://``, ``az://``,
``file:///mnt/share`` and ``memory:///`` (a store in this process, for tests). Credentials,
regions and endpoints come from obstore's usual sources (``AWS_*``, ``GOOGLE_*``,
``AZURE_*`` variables, profile files, instance roles); shellkeep never stores them. A plain
http endpoint (MinIO) is allowed when the user names one, said in one line (``open_bucket``).
obstore is imported when a bucket is opened, never on other commands' paths.

Every call blocks until the store answers; a store error is raised as ``ShellkeepError``
with one line naming the URL, and a missing object as ``FileNotFoundError``.
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.errors import ShellkeepError, UserInputError
from shellkeep.logs import get_logger

if TYPE_CHECKING:
    from obstore.store import ObjectStore

log = get_logger(__name__)

SCHEMES = ("s3", "s3a", "gs", "az", "abfs", "abfss", "file", "memory", "http", "https")


@dataclass(frozen=True, slots=True)
class Bucket:
    """One object store and prefix. Paths given to its methods are relative to the prefix."""

    url: str
    store: ObjectStore

    def list(self, prefix: str = "") -> dict[str, int]:
        """Return ``{path: size in bytes}`` of every object under ``prefix`` (paginated listing)."""
        import obstore

        found: dict[str, int] = {}
        with self._errors("list"):
            for batch in obstore.list(self.store, prefix or None):
                for entry in batch:
                    found[str(entry["path"])] = int(entry["size"])
        return found

    def list_folders(self, prefix: str) -> builtins.list[str]:  # ``list`` here is the method above
        """Return the names of the folders right under ``prefix`` (one delimited listing)."""
        import obstore

        with self._errors("list"):
            listed = obstore.list_with_delimiter(self.store, prefix)
        return sorted(p.rstrip("/").rsplit("/", 1)[-1] for p in listed["common_prefixes"])

    def get(self, path: str) -> bytes:
        """Return the bytes of ``path``; raises FileNotFoundError when there is none."""
        import obstore

        with self._errors("read", path):
            return bytes(obstore.get(self.store, path).bytes())

    def put(self, path: str, data: bytes) -> None:
        """Store ``data`` at ``path`` in one request (atomic: readers see all of it or none)."""
        import obstore

        with self._errors("write"):
            obstore.put(self.store, path, data, use_multipart=False)

    def delete(self, path: str) -> None:
        """Delete ``path`` (no error when it is already gone)."""
        import obstore

        with self._errors("delete"):
            try:
                obstore.delete(self.store, path)
            except FileNotFoundError:
                pass

    @contextmanager
    def _errors(self, what: str, path: str = "") -> Iterator[None]:
        try:
            yield
        except FileNotFoundError as exc:
            if _no_such_bucket(exc):
                raise ShellkeepError(self._missing_bucket()) from exc
            # obstore's NotFoundError is a FileNotFoundError whose text is a long debug dump:
            # one line instead, naming the object (callers say what it was and what to do).
            raise FileNotFoundError(f"no object {path or '(listing)'} in {self.url}") from exc
        except ShellkeepError:
            raise
        except Exception as exc:  # noqa: BLE001 - obstore raises its own error classes
            if _no_such_bucket(exc):
                raise ShellkeepError(self._missing_bucket()) from exc
            if _asked_instance_metadata(exc):
                raise ShellkeepError(f"could not {what} {self.url}: {NO_CREDENTIALS}") from exc
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            advice = "check the URL and the storage credentials"
            if "builder error" in first and os.environ.get("AWS_ALLOW_HTTP", "").lower() not in ("", "true", "1"):
                advice = f"a plain http endpoint needs AWS_ALLOW_HTTP=true (it is '{os.environ['AWS_ALLOW_HTTP']}')"
            raise ShellkeepError(f"could not {what} {self.url}: {first[:300]}; {advice}") from exc

    def _missing_bucket(self) -> str:
        name = self.url.split("://", 1)[1].split("/", 1)[0]
        return f"the bucket '{name}' does not exist (remote {self.url}); create it, or check the URL and the endpoint"


NO_CREDENTIALS = "no storage credentials found; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE"


def _asked_instance_metadata(exc: BaseException) -> bool:
    """Return whether obstore's error comes from asking the instance-metadata service for a key:
    what it does when the environment holds no credentials (an IMDSv2 token request to
    169.254.169.254, or to ``AWS_METADATA_ENDPOINT``), which off a cloud machine fails."""
    text = str(exc)
    return "169.254.169.254" in text or "/latest/api/token" in text or "/latest/meta-data/iam/" in text


def _no_such_bucket(exc: BaseException) -> bool:
    """Return whether obstore's error is S3's (or GCS's, Azure's) answer that the bucket is not there."""
    text = str(exc)
    return any(code in text for code in ("NoSuchBucket", "ContainerNotFound", "The specified bucket does not exist"))


def url_problem(url: str) -> str | None:
    """Return what is wrong with the storage URL ``url`` (a phrase to follow it), or None.

    No request and no obstore: ``config set``/``validate`` use it as well as ``open_bucket``,
    so a URL every sync command refuses is refused when it is set.
    """
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme not in SCHEMES:
        return "is not a storage URL; use s3://bucket/prefix, gs://, az:// or file:///path"
    rest = url.split("://", 1)[1]
    if scheme not in ("file", "memory") and not rest.split("/", 1)[0].strip():
        return f"names no bucket; use {scheme}://bucket/prefix"
    if scheme == "file" and not rest.startswith("/"):
        return "needs an absolute path; use file:///path/to/folder"
    return None


_said_http: set[str] = set()
"""The ``http://`` URLs already said to be plain http in this process (once each)."""

_ENDPOINT_VARIABLES = ("AWS_ENDPOINT_URL", "AWS_ENDPOINT")
"""Where obstore's S3 store reads an endpoint from (MinIO, Ceph, a local stand-in)."""


def _allow_plain_http(url: str, scheme: str) -> bool:
    """Allow plain http where the user asked for it, and say so in one line; return whether
    obstore's client option ``allow_http`` is to be passed.

    obstore refuses ``http://`` unless told (its error: "builder error"). An ``s3://`` URL
    whose endpoint variable is ``http://...`` (MinIO on a LAN or on this machine) gets
    ``AWS_ALLOW_HTTP=true`` set for this process; an ``http://`` URL the client option
    ``allow_http``. A user's own ``AWS_ALLOW_HTTP`` (any value) is left as it is.
    """
    if scheme == "http":
        if url not in _said_http:
            _said_http.add(url)
            log.warning(
                "'%s' is plain http: allowed (nothing is encrypted on the way; use https off this machine)", url
            )
        return True
    if scheme not in ("s3", "s3a") or "AWS_ALLOW_HTTP" in os.environ:
        return False
    endpoint = next((os.environ[v] for v in _ENDPOINT_VARIABLES if os.environ.get(v)), "")
    if endpoint.lower().startswith("http://"):
        os.environ["AWS_ALLOW_HTTP"] = "true"
        log.warning(
            "plain http endpoint %s: allowing it (AWS_ALLOW_HTTP) for this command "
            "(nothing is encrypted on the way; use https off this machine)",
            endpoint,
        )
    return False


def open_bucket(url: str, *, create: bool = False) -> Bucket:
    """Open the store ``url`` names (no request is made yet).

    create: a ``file://`` folder that does not exist is made (``sync push``); otherwise it is
    a UserInputError, so a command that only reads never makes folders for a mistyped URL.
    Raises UserInputError for an empty or unknown URL, one without a bucket, or one obstore refuses.
    """
    if not url:
        raise UserInputError("no remote is set; set sync.url (shellkeep config set sync.url s3://bucket/prefix) or pass --remote URL")
    problem = url_problem(url)
    if problem is not None:
        raise UserInputError(f"'{url}' {problem}")
    scheme = url.split("://", 1)[0].lower()
    from obstore.store import from_url

    allow_http = _allow_plain_http(url, scheme)
    try:
        if scheme == "file":
            folder = Path(url[len("file://") :])
            if not create and not folder.is_dir():
                raise UserInputError(f"no folder {folder} for the remote '{url}'; check the URL ('shellkeep sync push' makes it)")
            store = from_url(url.rstrip("/") + "/", mkdir=create)
        elif allow_http:
            store = from_url(url, client_options={"allow_http": True})
        else:
            store = from_url(url)
    except UserInputError:
        raise
    except Exception as exc:  # noqa: BLE001 - obstore's own error classes; no request was made: the URL is wrong
        first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
        raise UserInputError(f"'{url}' is not a storage URL obstore can open ({first}); check the URL") from exc
    return Bucket(url, store)
