"""Redaction benchmark: throughput on each rule's worst case and on ordinary tool output.

    .venv/bin/python bench/redact.py              # 1 MiB per case, median of 5 runs
    .venv/bin/python bench/redact.py --size 4096  # a smoke run

Each worst case is text that looks like the start of a match again and again without
completing one (or, for blocks, openers with no closer): what made a pattern slow before.
Also prints the in-process time for 72 KB of ``<private>`` openers, the case that froze the
server. docs/benchmarks.md records the latest figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _server import machine

from memvault.ingest.redact import redact_text

# One unit per rule, repeated to the size asked for (then TAILS, where a rule needs one).
WORST_CASES: dict[str, str] = {
    "private (openers, no closer)": "<private>x",
    "private_key (openers, no end)": "-----BEGIN RSA PRIVATE KEY-----\n",
    "anthropic_key (short tokens)": "-sk-ant-" + "a" * 12 + " ",
    "openai_key (short tokens)": "sk-" + "a" * 19 + " ",
    "openai_key (one long token)": "-sk-",
    "github_token (short tokens)": "-ghp_" + "a" * 29 + " ",
    "aws_access_key (short keys)": "AKIA" + "A" * 15 + " ",
    "slack_token (short tokens)": "-xoxb-" + "a" * 9 + " ",
    "google_api_key (short keys)": "-AIza" + "x" * 34 + " ",
    "stripe_key (short keys)": "sk_live_" + "a" * 15 + " ",
    "jwt (one run of starts)": "-eyJ",
    "jwt (first part, no second)": "eyJabcdefgh.-",
    "bearer (short tokens)": "bearer ",
    "url_password (scheme run)": "a.",
    "url_password (no password)": "a://b",
    "url_password (no @)": "a://b:c:",
    "secret (key, spaces, no =)": "password" + " " * 60 + "\n",
    "secret (short values)": "api_key=x ",
    "secret (words run together)": "apiapiapi",
}
# The scheme run is only looked at when there is a "://" somewhere.
TAILS = {"url_password (scheme run)": " x://"}

ORDINARY_LINES = (
    "$ pytest tests/test_api.py -k 'token and not slow' -q",
    "........................................................ [ 87%]",
    "FAILED tests/test_api.py::test_refresh_token_expires - AssertionError: 401 != 200",
    "def load_config(path: Path) -> dict[str, Any]:",
    '    """Read the settings file; the api_key comes from the environment."""',
    '    return {"api_key": os.environ.get("SERVICE_API_KEY"), "timeout": 30}',
    "commit 3f4e1c6a9b0d2e7f8c1a5b4d3e2f1a0b9c8d7e6f",
    "Author: Dev <dev@example.com>   Date: Mon Nov 30 10:00:00 2026 +0000",
    "  see https://docs.example.com/auth/keys#rotation and http://localhost:8080/health",
    '{"tool_name": "Read", "tool_input": {"file_path": "src/app/secrets.py"}, "ok": true}',
    "src/app/views/monkey_keyboard.py:42:5: E501 line too long (104 > 100 characters)",
)
# One line of CJK makes Python store the whole string two bytes a character.
CJK_LINE = "记忆系统不应该丢数据 — café, naïve, Straße: 3 passed, 1 skipped in 0.42s"


def ordinary(size: int, *, cjk: bool = False) -> str:
    text = "\n".join((*ORDINARY_LINES, CJK_LINE) if cjk else ORDINARY_LINES) + "\n"
    return (text * (size // len(text) + 1))[:size]


def filled(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


def median_seconds(run: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        run()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def throughput(redact: Callable[[str], str], text: str, runs: int) -> float:
    """MB/s (10^6 characters per second), median of ``runs``."""
    return len(text) / 1e6 / median_seconds(lambda: redact(text), runs)


def main(size: int, runs: int, redact: Callable[[str], str] = redact_text) -> None:
    print(f"machine: {machine()}")
    print(f"redaction throughput, {size:,} characters per case, median of {runs} runs:")
    rates = {}
    for name, unit in WORST_CASES.items():
        rates[name] = throughput(redact, filled(unit, size) + TAILS.get(name, ""), runs)
        print(f"  {name:32s} {rates[name]:10.3f} MB/s")
    print(f"  {'slowest worst case':32s} {min(rates.values()):10.3f} MB/s")
    for label, text in (
        ("ordinary tool output (ASCII)", ordinary(size)),
        ("ordinary tool output (CJK too)", ordinary(size, cjk=True)),
    ):
        print(f"  {label:32s} {throughput(redact, text, runs):10.3f} MB/s")
    private = "<private>" * 8000  # 72 KB
    seconds = median_seconds(lambda: redact(private), runs)
    print(f"72 KB of <private> openers, in process: {seconds * 1000:.2f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1 << 20, help="characters per case")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    main(args.size, args.runs)
