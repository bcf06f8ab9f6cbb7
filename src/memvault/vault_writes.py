"""The use cases that write the vault, as a replica that does not own it hands them over.

A method of ``Memory`` marked ``@vault_write("kind")`` runs in place on the vault's owner.
Elsewhere its arguments are queued in the database as JSON (see ``vault/owner.py``), the
owner runs the same method with them, and its answer (or its error) comes back as JSON and
is made into what the method returns, so a client is told the same on every replica.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from memvault import errors
from memvault.domain import Document
from memvault.recall import Deleted, Maintenance
from memvault.vault.board import BoardFormatError
from memvault.vault.edit import Edit
from memvault.vault.lifecycle import Report
from memvault.vault.owner import encode_error
from memvault.vault.remember import DerivedFragment, Draft, Remembered
from memvault.vault.snapshot import Snapshot

if TYPE_CHECKING:
    from memvault.memory import Memory

F = TypeVar("F", bound=Callable[..., Any])

# kind → the method as it runs on the owner
ROUTED: dict[str, Callable[..., Any]] = {}


def vault_write(kind: str) -> Callable[[F], F]:
    """Mark a ``Memory`` method as one that writes the vault: the owner runs it."""

    def mark(method: F) -> F:
        ROUTED[kind] = method

        @functools.wraps(method)
        def call(memory: Memory, *args: Any, **kwargs: Any) -> Any:
            if memory.vault_owner.is_owner():
                return method(memory, *args, **kwargs)
            return forward(memory, kind, args, kwargs)

        return call  # type: ignore[return-value]

    return mark


def forward(memory: Memory, kind: str, args: tuple, kwargs: dict) -> Any:
    """Queue the call for the owner, wait for its answer and return it as the method would."""
    before = None
    if kind == "forget":  # the answer is the document as it was: read it while it is there
        before = memory.get(args[0] if args else kwargs["memory_id"], counted=False)
    payload = {"args": [_encode(a) for a in args], "kwargs": _encode(kwargs)}
    answer = memory.vault_owner.submit(kind, payload)
    if "error" in answer:
        raise _error(answer)
    value = _decode(answer.get("value"), memory)
    if kind == "edit_fragment":  # the file the owner edited, read here as the owner would
        return memory.get(value, counted=False)
    if kind == "forget" and before is not None:
        return before.document
    return value


def apply(memory: Memory, kind: str, payload: dict) -> dict:
    """Run a queued call on the owner; its answer as JSON."""
    method = ROUTED.get(kind)
    if method is None:
        return {"error": "MemvaultError", "message": f"no vault write named {kind!r}"}
    try:
        args = [_decode(a, memory) for a in payload.get("args", [])]
        kwargs = _decode(payload.get("kwargs", {}), memory)
        value = method(memory, *args, **kwargs)
    except (errors.MemvaultError, BoardFormatError) as exc:
        return encode_error(exc)
    if kind == "edit_fragment":
        return {"value": value.id}
    if kind == "forget":
        return {"value": None}
    return {"value": _encode(value, memory)}


def _error(answer: dict) -> Exception:
    name, message = answer.get("error"), str(answer.get("message", ""))
    if name == "InvalidInput":
        return errors.InvalidInput(message, fields=list(answer.get("fields") or []))
    if name == "BoardFormatError":
        return BoardFormatError(message)
    kind = getattr(errors, str(name), None)
    if isinstance(kind, type) and issubclass(kind, errors.MemvaultError):
        return kind(message)
    return errors.MemvaultError(message)


def _encode(value: Any, memory: Memory | None = None) -> Any:
    if isinstance(value, Report):
        return {"__report__": dataclasses.asdict(value)}
    if isinstance(value, Remembered):
        assert memory is not None
        path = value.path.relative_to(memory.settings.vault_path).as_posix()
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
        return {str(k): _encode(v, memory) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_encode(v, memory) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def _decode(value: Any, memory: Memory) -> Any:
    if isinstance(value, list):
        return [_decode(v, memory) for v in value]
    if not isinstance(value, dict):
        return value
    if "__report__" in value:
        return Report(**value["__report__"])
    if "__remembered__" in value:
        action, path, similarity = value["__remembered__"]
        return Remembered(action, memory.settings.vault_path / path, similarity)
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
        return _RESULTS[name](**fields)
    return {k: _decode(v, memory) for k, v in value.items()}


_RESULTS: dict[str, type] = {
    "Deleted": Deleted,
    "Maintenance": Maintenance,
    "DerivedFragment": DerivedFragment,
}
