"""What a doctor check gives: a :class:`Finding` at one of three levels.

``ok``; ``warn``: works, could be better, or will settle by itself; ``problem``: something
a user must do, and the finding names the command that does it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

OK, WARN, PROBLEM = "ok", "warn", "problem"


@dataclass(frozen=True, slots=True)
class Finding:
    name: str
    level: str  # ok | warn | problem
    finding: str
    fix: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
