"""Files a shell command writes, read from the command line itself.

Agents create and move files with the shell as often as with their file tools
(``echo hello > note.txt``, ``cp a b``, ``mkdir -p src/x``), and a session's snapshot and
fragments should name those files too. This is a reading of the common forms, not a shell:
redirections, ``tee``, ``touch``, ``mkdir``, ``cp``, ``mv``, ``install``, ``ln``,
``git mv``, ``sed -i``. Anything it cannot read for certain (variables, substitutions,
globs) names no file rather than a wrong one.
"""

from __future__ import annotations

import shlex

LIMIT = 20
_SEPARATORS = {"&&", "||", ";", "|", "&", "|&", "\n", "(", ")", ";;"}
_REDIRECTS = {">", ">>", ">|", "&>", "&>>"}
_PREFIXES = {"sudo", "command", "env", "nohup", "time", "exec", "builtin", "xargs"}
_DESTINATION_LAST = {"cp", "mv", "install", "ln", "rsync"}
_ALL_ARGUMENTS = {"touch", "mkdir", "tee"}
_UNSURE = set("$`*?[{~")
_NOT_FILES = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"}


def written_files(command: str) -> list[str]:
    """The paths ``command`` creates, writes, moves to or edits in place, in order."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        lexer.commenters = ""
        tokens = list(lexer)
    except ValueError:  # an unclosed quote: not a command line we can read
        return []
    found: list[str] = []
    words: list[str] = []
    tokens.append(";")
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if token in _REDIRECTS or token in (">&", "<&", "<", "<<", "<<<", "<>"):
            if words and words[-1].isdigit():
                words.pop()  # 2> err.log: the 2 is a descriptor, not an argument
            if index < len(tokens):
                target = tokens[index]
                index += 1
                if token in _REDIRECTS:
                    _add(found, target)
        elif token in _SEPARATORS or set(token) <= set(";&|()"):
            found.extend(p for p in _of_simple_command(words) if p not in found)
            words = []
        else:
            words.append(token)
    return found[:LIMIT]


def _of_simple_command(words: list[str]) -> list[str]:
    while words and (("=" in words[0] and not words[0].startswith("-")) or words[0] in _PREFIXES):
        words = words[1:]
    if not words:
        return []
    program = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    if program == "git" and args[:1] == ["mv"]:
        program, args = "mv", args[1:]
    operands = [a for a in args if not a.startswith("-")]
    found: list[str] = []
    if program in _ALL_ARGUMENTS:
        for operand in operands:
            _add(found, operand)
    elif program in _DESTINATION_LAST and len(operands) >= 2:
        *sources, destination = operands
        if len(sources) == 1 and not destination.endswith("/"):
            _add(found, destination)
        else:  # into a folder: each source keeps its name there
            for source in sources:
                _add(found, f"{destination.rstrip('/')}/{source.rstrip('/').rsplit('/', 1)[-1]}")
    elif program == "sed" and any(a.startswith(("-i", "--in-place")) for a in args):
        for operand in _sed_files(args):
            _add(found, operand)
    return found


def _sed_files(args: list[str]) -> list[str]:
    """``sed -i [-e SCRIPT]… [SCRIPT] FILE…``: the files, after the script."""
    operands, scripted, skip = [], False, False
    for arg in args:
        if skip:
            skip = False
        elif arg in ("-e", "-f", "--expression", "--file"):
            scripted = skip = True
        elif arg.startswith(("--expression=", "--file=")):
            scripted = True
        elif not arg.startswith("-"):
            operands.append(arg)
    return operands if scripted else operands[1:]


def _add(found: list[str], path: str) -> None:
    if path and path not in _NOT_FILES and not (_UNSURE & set(path)) and path not in found:
        found.append(path)
