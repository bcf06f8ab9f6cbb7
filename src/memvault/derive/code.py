"""What code and commands say about a project: the functions and classes an edit defines,
the libraries a file imports, the dependencies a manifest lists, the packages a command
installs, and the ``calls()`` a conversation names.

Each reader knows one language or tool and says nothing when unsure: an unknown file
type yields no symbols, a relative import no library, a ``pip install ./dir`` no package.
Standard-library modules are not libraries here; they would link every Python file to
``os`` and say nothing.
"""

from __future__ import annotations

import os
import re
import shlex
import sys

_PYTHON = frozenset({".py", ".pyi"})
_SCRIPT = frozenset(
    {".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts", ".vue", ".svelte"}
)
_GO = frozenset({".go"})
_RUST = frozenset({".rs"})

_DEFINITIONS = {
    "python": [
        re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)", re.M),
        re.compile(r"^[ \t]*class[ \t]+([A-Za-z_]\w*)", re.M),
    ],
    "script": [
        re.compile(
            r"^[ \t]*(?:export[ \t]+)?(?:default[ \t]+)?(?:async[ \t]+)?function\b[ \t]*\*?[ \t]*"
            r"([A-Za-z_$][\w$]*)",
            re.M,
        ),
        re.compile(
            r"^[ \t]*(?:export[ \t]+)?(?:default[ \t]+)?(?:abstract[ \t]+)?class[ \t]+"
            r"([A-Za-z_$][\w$]*)",
            re.M,
        ),
        re.compile(
            r"^[ \t]*(?:export[ \t]+)?(?:const|let|var)[ \t]+([A-Za-z_$][\w$]*)[ \t]*"
            r"(?::[^=\n]+)?=[ \t]*(?:async[ \t]+)?(?:\([^)\n]*\)|[A-Za-z_$][\w$]*)[ \t]*"
            r"(?::[^=\n]+)?=>",
            re.M,
        ),
    ],
    "go": [
        re.compile(r"^func[ \t]+(?:\([^)]*\)[ \t]*)?([A-Za-z_]\w*)", re.M),
        re.compile(r"^type[ \t]+([A-Za-z_]\w*)[ \t]+(?:struct|interface)\b", re.M),
    ],
    "rust": [
        re.compile(
            r"^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?(?:async[ \t]+)?(?:unsafe[ \t]+)?fn[ \t]+"
            r"([A-Za-z_]\w*)",
            re.M,
        ),
        re.compile(
            r"^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?(?:struct|enum|trait)[ \t]+([A-Za-z_]\w*)", re.M
        ),
    ],
}

_PY_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w. \t,]+)", re.M)
_PY_FROM = re.compile(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import\b", re.M)
_JS_FROM = re.compile(r"""(?:^|[\s}*])from[ \t]*['"]([^'"\n]+)['"]""", re.M)
_JS_BARE = re.compile(r"""^[ \t]*import[ \t]*['"]([^'"\n]+)['"]""", re.M)
_JS_CALL = re.compile(r"""\b(?:require|import)\([ \t]*['"]([^'"\n]+)['"][ \t]*\)""")
_NODE_BUILTIN_NAMES = """
assert async_hooks buffer child_process cluster console crypto dgram dns events fs http
http2 https inspector module net os path perf_hooks process querystring readline stream
string_decoder timers tls tty url util v8 vm worker_threads zlib
"""
_NODE_BUILTINS = frozenset(_NODE_BUILTIN_NAMES.split())
_PY_BUILTINS = frozenset(sys.stdlib_module_names) | {"__future__", "__main__"}

# A call named in prose: "`fetchUser()` returns undefined". Builtins say nothing.
_CALL = re.compile(r"(?<![\w.$])([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*){0,2})\(\)")
_UNNAMED_CALLS = """
print len str int float bool list dict set tuple range open input super type main
console.log console.error require setTimeout
"""
_NOT_NAMED = frozenset(_UNNAMED_CALLS.split())

_REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:[<>=!~;@]|$)")
_PEP508 = r"""["']([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*({spec}[^"']*)["']"""
_PYPROJECT_PINNED = re.compile(_PEP508.format(spec="(?:[<>=!~]=?|===)"))
_PYPROJECT_ANY = re.compile(_PEP508.format(spec=""))
_PYPROJECT_LIST = re.compile(r"dependencies\s*=\s*\[([^\]]*)\]", re.S)
_PACKAGE_JSON = re.compile(
    r'"((?:@[\w.-]+/)?[\w.-]+)"\s*:\s*"(?:[\^~<>=v]*\s*\d[^"]*|\*|latest|next|'
    r'(?:workspace|npm|github|git\+\w+):[^"]*)"'
)
_PACKAGE_FIELDS = frozenset({"version", "node", "npm", "yarn", "pnpm", "bun", "packageManager"})

_SEPARATORS = re.compile(r"&&|\|\||[;|\n]")
_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=")  # FOO=1 before a command
# Options of install commands that take a value, which is not a package.
_VALUED_OPTIONS = """
-r --requirement -c --constraint -e --editable -i --index-url --extra-index-url -f
--find-links -t --target --prefix --root --python -p --registry -w --workspace --filter
-C --cwd
"""
_VALUED = frozenset(_VALUED_OPTIONS.split())


def language(path: str) -> str | None:
    extension = os.path.splitext(path)[1].lower()
    for extensions, name in (
        (_PYTHON, "python"),
        (_SCRIPT, "script"),
        (_GO, "go"),
        (_RUST, "rust"),
    ):
        if extension in extensions:
            return name
    return None


def definitions(path: str, code: str) -> list[str]:
    """Functions and classes ``code`` (written to ``path``) defines, in order, once each."""
    found: dict[str, None] = {}
    for pattern in _DEFINITIONS.get(language(path) or "", []):
        for match in pattern.finditer(code):
            name = match.group(1)
            if len(name) > 1 and not (name.startswith("__") and name.endswith("__")):
                found[name] = None
    return list(found)


def imports(path: str, code: str) -> list[str]:
    """Third-party libraries ``code`` (written to ``path``) imports, by package name."""
    kind = language(path)
    if kind == "python":
        return _unique(_python_imports(code))
    if kind == "script":
        specs = [m.group(1) for p in (_JS_FROM, _JS_BARE, _JS_CALL) for m in p.finditer(code)]
        return _unique(filter(None, map(npm_package, specs)))
    return []


def _python_imports(code: str):
    for match in _PY_IMPORT.finditer(code):
        for part in match.group(1).split(","):
            words = part.split()
            if words:
                yield from _python_module(words[0])
    for match in _PY_FROM.finditer(code):
        yield from _python_module(match.group(1))


def _python_module(dotted: str):
    if dotted.startswith("."):
        return
    top = dotted.split(".")[0]
    if top and top not in _PY_BUILTINS:
        yield python_package(top)


def python_package(name: str) -> str:
    """A Python distribution or module name in its normalized form (PEP 503), so
    ``typing_extensions`` and ``Typing-Extensions`` are one library."""
    return re.sub(r"[-_.]+", "-", name).lower()


def npm_package(spec: str) -> str | None:
    """The package an import specifier or install argument names; None for a relative
    path, a URL, an alias or a Node built-in."""
    spec = spec.strip()
    if not spec or spec.startswith((".", "/", "~", "#", "$", "@/", "node:")) or ":" in spec:
        return None
    parts = spec.split("/")
    if spec.startswith("@"):
        if len(parts) < 2 or not parts[1]:
            return None
        name = f"{parts[0]}/{parts[1].split('@')[0]}"
    else:
        name = parts[0].split("@")[0]
    if not re.fullmatch(r"(?:@[\w.-]+/)?[\w.-]+", name) or name in _NODE_BUILTINS:
        return None
    return name.lower()


def dependencies(path: str, code: str) -> list[str]:
    """Libraries a manifest edit declares (requirements files, pyproject.toml,
    package.json)."""
    name = os.path.basename(path).lower()
    if name.startswith("requirements") and name.endswith((".txt", ".in")):
        found = [_requirement(line) for line in code.splitlines()]
        return _unique(python_package(n) for n in found if n)
    if name == "pyproject.toml":
        found = [m.group(1) for m in _PYPROJECT_PINNED.finditer(code)]
        for block in _PYPROJECT_LIST.finditer(code):
            found += [m.group(1) for m in _PYPROJECT_ANY.finditer(block.group(1))]
        return _unique(python_package(n) for n in found)
    if name == "package.json":
        found = [m.group(1) for m in _PACKAGE_JSON.finditer(code)]
        return _unique(n.lower() for n in found if n not in _PACKAGE_FIELDS)
    return []


def _requirement(line: str) -> str | None:
    line = line.split("#", 1)[0].strip()
    if not line or line.startswith("-"):
        return None
    match = _REQUIREMENT.match(line)
    return match.group(1) if match else None


def installed(command: str) -> list[str]:
    """Packages a shell command adds with a package manager (pip, uv, poetry, npm, yarn,
    pnpm, bun, cargo, go get)."""
    found: list[str] = []
    for segment in _SEPARATORS.split(command):
        words = _words(segment)
        while words and (words[0] == "sudo" or _ASSIGNMENT.match(words[0])):
            words = words[1:]
        if words:
            found += _packages(words)
    return _unique(found)


def _words(segment: str) -> list[str]:
    try:
        return shlex.split(segment)
    except ValueError:
        return segment.split()


def _packages(words: list[str]) -> list[str]:
    program = os.path.basename(words[0]).lower()
    rest = words[1:]
    if program.startswith("python") and rest[:2] == ["-m", "pip"]:
        program, rest = "pip", rest[2:]
    if program == "uv" and rest[:1] == ["pip"]:
        program, rest = "pip", rest[1:]
    verb = rest[0] if rest else ""
    arguments = _arguments(rest[1:])
    if (program in ("pip", "pip3", "pipenv") and verb == "install") or (
        program in ("uv", "poetry", "pdm") and verb == "add"
    ):
        return [python_package(n) for a in arguments if (n := _python_argument(a))]
    if (program in ("npm", "pnpm", "bun") and verb in ("i", "install", "add")) or (
        program == "yarn" and verb == "add"
    ):
        return [n for a in arguments if (n := npm_package(a))]
    if program == "cargo" and verb == "add":
        return [a.split("@")[0].lower() for a in arguments if re.fullmatch(r"[\w-]+(@\S+)?", a)]
    if program == "go" and verb == "get":
        modules = (a.split("@")[0] for a in arguments)
        return [m for m in modules if "." in m.split("/")[0] and not m.startswith(".")]
    return []


def _arguments(words: list[str]) -> list[str]:
    """The positional arguments, without options and the values options take."""
    found, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word.startswith("-"):
            skip = word in _VALUED
        else:
            found.append(word)
    return found


def _python_argument(argument: str) -> str | None:
    if any(c in argument for c in "/\\:") or argument.startswith("."):
        return None
    if argument.endswith((".whl", ".zip", ".tar.gz")):
        return None
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", argument)
    return match.group(0) if match else None


def calls(text: str) -> list[str]:
    """Functions named as calls in prose (``foo()``, ``client.fetch()``)."""
    found = (m.group(1) for m in _CALL.finditer(text))
    return _unique(n for n in found if n not in _NOT_NAMED and len(n) > 1)


def _unique(names) -> list[str]:
    return list(dict.fromkeys(names))
