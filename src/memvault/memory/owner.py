"""The use cases that write the vault, as a replica that does not own it hands them over.

A part's vault write runs in place on the vault's owner (``VaultWrites.run``). Elsewhere
its arguments are queued in the database as JSON (see ``vault/owner.py``), the owner runs
the same write with them (``routes``: the parts' own bound methods, by kind, gathered where
the parts are composed), and its answer, or its error as the error's kind, comes back as
JSON and is made into what the write returns, so a client is told the same on every
replica.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import logging
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from memvault.config import Settings
from memvault.domain import Document
from memvault.errors import MemvaultError
from memvault.store import Store
from memvault.vault.board import BoardFormatError
from memvault.vault.edit import Edit
from memvault.vault.lifecycle import Report
from memvault.vault.owner import VaultOwner
from memvault.vault.remember import Draft, Remembered
from memvault.vault.snapshot import Snapshot

# The kind a board file memvault cannot safely change crosses as (not a MemvaultError).
BOARD_FORMAT = "board_format"

log = logging.getLogger(__name__)

_Args = ParamSpec("_Args")
_Answer = TypeVar("_Answer")


class Writing(Protocol):
    """A part with vault writes: it holds the replica's ``VaultWrites``."""

    writes: VaultWrites


_Part = TypeVar("_Part", bound=Writing)


def vault_write(
    in_place: Callable[Concatenate[_Part, _Args], _Answer],
) -> Callable[Concatenate[_Part, _Args], _Answer]:
    """A part's method that writes the vault: it runs as written on the vault's owner and
    is handed to the owner elsewhere, its kind the method's name (``VaultWrites.run``)."""
    kind = in_place.__name__

    @functools.wraps(in_place)
    def write(part: _Part, *args: _Args.args, **kwargs: _Args.kwargs) -> _Answer:
        return part.writes.run(kind, functools.partial(in_place, part), *args, **kwargs)

    write.in_place = in_place  # type: ignore[attr-defined]
    return write


def vault_writes(part: Writing) -> dict[str, Callable[..., Any]]:
    """A part's ``vault_write`` methods by kind, as the owner runs them for a replica."""
    return {
        name: functools.partial(member.in_place, part)
        for name, member in vars(type(part)).items()
        if hasattr(member, "in_place")
    }


class VaultWrites:
    """Whether this replica writes the vault, and the writes it runs for the others."""

    def __init__(self, settings: Settings, store: Store) -> None:
        self.settings = settings
        self.store = store
        self.routes: dict[str, Callable[..., Any]] = {}
        self._results: dict[str, type] = {}  # the answers that cross as their fields
        self._on_gain: Callable[[], None] = lambda: None
        self._on_loss: Callable[[], None] = lambda: None
        # Which replica writes the vault: on PostgreSQL, one at a time; on SQLite, this one.
        self.claim = VaultOwner(
            store,
            apply=self.apply,
            on_gain=lambda: self._on_gain(),
            on_loss=lambda: self._on_loss(),
            vault=settings.vault_path,
        )

    def route(
        self, routes: Mapping[str, Callable[..., Any]], *, results: Iterable[type] = ()
    ) -> None:
        """The writes this replica runs for the others: kind → the part's bound method;
        and the dataclasses their answers are, made again from their fields here."""
        self.routes.update(routes)
        self._results.update({result.__name__: result for result in results})

    def watch(self, on_gain: Callable[[], None], on_loss: Callable[[], None]) -> None:
        """What to start when this replica gains the vault, and to stop when it loses it."""
        self._on_gain, self._on_loss = on_gain, on_loss

    def is_owner(self) -> bool:
        return self.claim.is_owner()

    def refuse(self, reason: str) -> None:
        """Never own the vault in this process (``reason`` says why, in health): its vault
        writes are handed to the replica that does."""
        self.claim.refusal = reason

    def run(self, kind: str, in_place: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``in_place(*args, **kwargs)`` on the vault's owner; elsewhere handed to it."""
        if self.claim.is_owner():
            return in_place(*args, **kwargs)
        return self.forward(kind, args, kwargs)

    def forward(self, kind: str, args: tuple, kwargs: dict) -> Any:
        """Queue the call for the owner, wait for its answer and return it decoded."""
        payload = {"args": [self._encode(a) for a in args], "kwargs": self._encode(kwargs)}
        answer = self.claim.submit(kind, payload)
        if "error" in answer:
            raise _error(answer)
        return self._decode(answer.get("value"))

    def apply(self, kind: str, payload: dict) -> dict:
        """Run a queued call on the owner; its answer as JSON. Whatever the call raises is
        its answer, as it would have been the caller's in place: a call this replica
        cannot make (a replica of another version asked it with other arguments) or one
        that fails is answered, never left at the head of the queue for every write
        behind it to wait on. Only the database's failure of the moment
        (``Store.transient``) leaves it queued, to be applied again."""
        method = self.routes.get(kind)
        if method is None:
            return encode_error(MemvaultError(f"no vault write named {kind!r}"))
        try:
            args = [self._decode(a) for a in payload.get("args", [])]
            kwargs = self._decode(payload.get("kwargs", {}))
            call = inspect.signature(method).bind(*args, **kwargs)
        except (KeyError, TypeError, ValueError) as exc:
            return encode_error(
                MemvaultError(
                    f"the vault's owner cannot run the vault write {kind!r} as asked ({exc}): "
                    "are all replicas on the same memvault version?"
                )
            )
        try:
            value = method(*call.args, **call.kwargs)
        except (MemvaultError, BoardFormatError) as exc:
            return encode_error(exc)
        except Exception as exc:
            if self.store.transient(exc):
                raise  # the database, for a moment: the write stays queued for a next try
            log.exception("the vault write %r failed", kind)
            return encode_error(
                MemvaultError(f"the vault write {kind!r} failed on the vault's owner: {exc!r}")
            )
        return {"value": self._encode(value)}

    def _encode(self, value: Any) -> Any:
        if isinstance(value, Report):
            return {"__report__": dataclasses.asdict(value)}
        if isinstance(value, Remembered):
            path = value.path.relative_to(self.settings.vault_path).as_posix()
            return {"__remembered__": [value.action, path, value.similarity]}
        if isinstance(value, Snapshot):
            return {"__snapshot__": dataclasses.asdict(value)}
        if isinstance(value, Draft):
            return {"__draft__": dataclasses.asdict(value)}
        if isinstance(value, Edit):
            return {"__edit__": dataclasses.asdict(value)}
        if isinstance(value, Document):
            return {"__document__": dataclasses.asdict(value)}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {"__fields__": [type(value).__name__, dataclasses.asdict(value)]}
        if isinstance(value, dict):
            return {str(k): self._encode(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._encode(v) for v in value]
        if isinstance(value, Path):
            return str(value)
        return value

    def _decode(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self._decode(v) for v in value]
        if not isinstance(value, dict):
            return value
        if "__report__" in value:
            return Report(**value["__report__"])
        if "__remembered__" in value:
            action, path, similarity = value["__remembered__"]
            return Remembered(action, self.settings.vault_path / path, similarity)
        if "__snapshot__" in value:
            fields = value["__snapshot__"]
            extra = [(title, list(lines)) for title, lines in fields.get("extra", [])]
            return Snapshot(fields["metadata"], fields["sections"], extra)
        if "__draft__" in value:
            return Draft(**value["__draft__"])
        if "__edit__" in value:
            return Edit(**value["__edit__"])
        if "__document__" in value:
            return Document(**value["__document__"])
        if "__fields__" in value:
            name, fields = value["__fields__"]
            return self._results[name](**fields)
        return {k: self._decode(v) for k, v in value.items()}


def encode_error(exc: BaseException) -> dict[str, Any]:
    """An error the owner met applying a write, as its kind, message and fields."""
    kind = BOARD_FORMAT if isinstance(exc, BoardFormatError) else getattr(exc, "kind", "error")
    return {"error": kind, "message": str(exc), "fields": getattr(exc, "fields", [])}


def _error(answer: dict) -> Exception:
    kind, message = str(answer.get("error")), str(answer.get("message", ""))
    if kind == BOARD_FORMAT:
        return BoardFormatError(message)
    return MemvaultError.of_kind(kind, message, list(answer.get("fields") or []))
