"""The YAML readers Obsidian's side of a vault uses, run in a real ``node``: js-yaml and
npm ``yaml``, fetched once into the test cache (a skip without node, a failure in CI)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.helpers import npm_pack, require_tool

PACKAGES = {"js-yaml": "4.1.0", "yaml": "2.9.1"}

# Reads a JSON list of YAML documents on stdin; answers, for each, what every reader made
# of it ({"error": …} when it refused). Dates (js-yaml makes Date objects of timestamps)
# come back as the ISO text PyYAML's side is compared in.
SCRIPT = r"""
const [jsyaml, YAML] = process.argv.slice(1).map((p) => require(p));
const plain = (v) => {
  if (v instanceof Date) {
    const iso = v.toISOString();
    return iso.endsWith("T00:00:00.000Z") ? iso.slice(0, 10) : iso;
  }
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  }
  return v;
};
const read = (parse, text) => {
  try { return { value: plain(parse(text)) }; } catch (e) { return { error: String(e) }; }
};
let input = "";
process.stdin.on("data", (c) => (input += c));
process.stdin.on("end", () => {
  const answers = JSON.parse(input).map((text) => ({
    "js-yaml": read((t) => jsyaml.load(t), text),
    yaml: read((t) => YAML.parse(t, { uniqueKeys: true }), text),
  }));
  process.stdout.write(JSON.stringify(answers));
});
"""


def packages() -> list[Path]:
    require_tool("node")
    npm = require_tool("npm")
    cache = Path(os.environ.get("MEMVAULT_TEST_CACHE", Path.home() / ".cache" / "memvault-tests"))
    folders = []
    for name, version in PACKAGES.items():
        folder = cache / f"{name}-{version}"
        if not (folder / "package.json").exists():
            npm_pack(npm, f"{name}@{version}", folder)
        folders.append(folder)
    return folders


def read_with_node(documents: list[str]) -> list[dict[str, dict[str, Any]]]:
    """What js-yaml and npm ``yaml`` read in each YAML document."""
    folders = packages()
    done = subprocess.run(
        [require_tool("node"), "-e", SCRIPT, *map(str, folders)],
        input=json.dumps(documents),
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout)
