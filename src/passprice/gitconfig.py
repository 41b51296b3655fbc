"""git's one setting that names a file of attribute rules (``core.attributesFile``) is read from git's own config
files, as git reads them, without running git: ``check`` spawns no git on a registry where no file of rules lies
(:func:`passprice.gitread.work_tree_rewrites`), so the file a setting names must be found by reading the settings.
The files are read in git's order (the system's, the user's, the repository's, its work tree's, then
``GIT_CONFIG_COUNT``'s pairs and ``GIT_CONFIG_PARAMETERS``'s, ``git -c``; a later value wins), ``include.path`` and
``includeIf.*.path`` followed (an ``includeIf`` as if its condition held: the file it names is looked at, and git,
asked next, decides); a file that cannot be read as git config is named in one line with its line number, as git
refuses it.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

import attrs

from passprice.errors import InputError
from passprice.files import shown

#: The most bytes of one config file read (a few hundred in practice).
MAX_CONFIG_BYTES = 1 << 20
#: How deep ``include.path`` may nest (git's own limit).
MAX_INCLUDE_DEPTH = 10

_SECTION = re.compile(r'\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\\n]|\\.)*)")?\s*\]')
_KEY = re.compile(r"([A-Za-z][A-Za-z0-9-]*)[ \t]*")
_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t", "b": "\b"}


class ConfigUnread(InputError):
    """A config file git reads that passprice cannot read as git config: its line names the file and line."""


@attrs.frozen
class Setting:
    """One setting's value (``value``, the text after ``=``, unquoted) and the config file that sets it (``file``,
    or a description: ``GIT_CONFIG_KEY_0``)."""

    value: str
    file: str


def _value(text: str, where: str, number: int, lines: list[str], at: int) -> tuple[str, int]:
    """The value of a ``key = value`` line whose text after ``=`` is ``text`` (line ``number`` of ``where``; ``lines``
    the file's lines and ``at`` the index of the next, for a line ending in a backslash): unquoted, escapes read,
    a comment and trailing blanks dropped, as git's ``parse_value``. Returns the value and the index of the next
    line. Raises :class:`ConfigUnread` for an open quote or an unknown escape."""
    out: list[str] = []
    quoted = False
    kept = 0  # length of out up to the last character that is not an unquoted blank
    i = 0
    text = text.lstrip(" \t")
    while True:
        if i >= len(text):
            if quoted:
                raise ConfigUnread(f"{shown(where)}: line {number}: a quote not closed; not git config (git refuses "
                                   "this file too)")
            break
        c = text[i]
        i += 1
        if c == "\\":
            if i >= len(text):  # a line continued on the next
                if at >= len(lines):
                    break
                text, i, at = lines[at], 0, at + 1
                continue
            escape = _ESCAPES.get(text[i])
            if escape is None:
                raise ConfigUnread(f"{shown(where)}: line {number}: an unknown escape \\{text[i]}; not git config "
                                   "(git refuses this file too)")
            out.append(escape)
            i += 1
            kept = len(out)
        elif c == '"':
            quoted = not quoted
            kept = len(out)
        elif not quoted and c in "#;":
            break
        else:
            out.append(c)
            if quoted or c not in " \t":
                kept = len(out)
    return "".join(out[:kept]), at


def entries(text: str, where: str) -> Iterator[tuple[str, str | None]]:
    """The settings of the config file text ``text`` (read from ``where``), in order: each as its name
    (``section.key`` or ``section.subsection.key``, section and key lowercased) and its value (``None`` for a key
    written alone, a boolean true). Raises :class:`ConfigUnread` naming ``where`` and the line git would refuse."""
    lines = text.replace("\r\n", "\n").split("\n")  # a file saved with CRLF line ends: git reads it alike
    section: str | None = None
    at = 0
    while at < len(lines):
        number = at + 1
        line = lines[at].lstrip(" \t")
        at += 1
        if number == 1 and line.startswith("\ufeff"):
            line = line[1:]
        while line:
            if line[0] in "#;":
                break
            if line[0] == "[":
                match = _SECTION.match(line)
                if not match:
                    raise ConfigUnread(f"{shown(where)}: line {number}: a section header not closed or not of "
                                       "letters, digits, '-' and '.'; not git config (git refuses this file too)")
                name = match.group(1).lower()
                if match.group(2) is not None:
                    name += "." + re.sub(r"\\(.)", r"\1", match.group(2))
                section = name
                line = line[match.end():].lstrip(" \t")
                continue
            key = _KEY.match(line)
            if key is None:
                raise ConfigUnread(f"{shown(where)}: line {number}: not a key; not git config (git refuses this file "
                                   "too)")
            rest = line[key.end():]
            name = f"{section}.{key.group(1).lower()}"  # a key before any section: git passes it over, as this does
            if not rest or rest[0] in "#;\r":
                yield name, None
            elif rest[0] == "=":
                value, at = _value(rest[1:], where, number, lines, at)
                yield name, value
            else:
                raise ConfigUnread(f"{shown(where)}: line {number}: a key followed by neither '=' nor the line's "
                                   "end; not git config (git refuses this file too)")
            break


def _expanded(value: str, base: Path) -> Path:
    """A path setting's value as git reads it: ``~/`` from the home folder, a relative path from ``base``."""
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else base / path


def _read(path: Path, depth: int, top: Path, out: list[Setting]) -> None:
    """Append the settings of the config file ``path`` (and of those it includes, ``depth`` deep so far) to ``out``:
    ``core.attributesfile`` as :class:`Setting` (relative to ``top``, the work tree's top, where git runs), else
    nothing. A file not there is skipped (git skips it too). Raises :class:`ConfigUnread`."""
    from passprice.files import read_regular
    from passprice.gitread import _there

    if not _there(path):
        return
    try:
        data = read_regular(path, MAX_CONFIG_BYTES)
    except InputError as e:
        if not os.path.exists(path):
            return  # a dangling link: git skips it too
        raise ConfigUnread(f"{e}; a git config file (so whether it names a file of attribute rules cannot be told)"
                           ) from None
    text = data.decode("utf-8", "surrogateescape")
    for name, value in entries(text, str(path)):
        if name == "core.attributesfile":
            if value is None:
                raise ConfigUnread(f"{shown(path)}: core.attributesFile has no value (a path); not git config (git "
                                   "refuses this file too)")
            out.append(Setting(str(_expanded(value, top)) if value else "", str(path)))
        elif value and (name == "include.path" or (name.startswith("includeif.") and name.endswith(".path"))):
            if depth >= MAX_INCLUDE_DEPTH:
                raise ConfigUnread(f"{shown(path)}: includes nest more than {MAX_INCLUDE_DEPTH} deep (git refuses "
                                   "this too)")
            _read(_expanded(value, path.parent), depth + 1, top, out)


def user_config_files() -> list[Path]:
    """The config files git reads in every repository, in git's order: the system's (``GIT_CONFIG_SYSTEM``, else
    ``/etc/gitconfig``; none under ``GIT_CONFIG_NOSYSTEM``), the user's (``GIT_CONFIG_GLOBAL``, else
    ``$XDG_CONFIG_HOME/git/config`` and ``~/.gitconfig``)."""
    env = os.environ
    files = []
    if env.get("GIT_CONFIG_NOSYSTEM", "").lower() not in ("1", "true", "yes", "on"):
        files.append(Path(env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"))
    if env.get("GIT_CONFIG_GLOBAL"):
        files.append(Path(env["GIT_CONFIG_GLOBAL"]))
    else:
        xdg = env.get("XDG_CONFIG_HOME") or ""
        if not os.path.isabs(xdg):
            xdg = os.path.join(os.path.expanduser("~"), ".config")
        files += [Path(xdg) / "git" / "config", Path(os.path.expanduser("~")) / ".gitconfig"]
    return files


def config_files(common: Path, git_dir: Path) -> list[Path]:
    """The config files git reads for the repository whose common folder is ``common`` and whose own folder (a work
    tree's, for one added by ``git worktree add``) is ``git_dir``, in git's order: :func:`user_config_files`, the
    repository's ``config`` and the work tree's ``config.worktree``."""
    return [*user_config_files(), common / "config", git_dir / "config.worktree"]


def attributes_file(common: Path, git_dir: Path, top: Path) -> Setting | None:
    """The ``core.attributesFile`` git applies in the repository of ``common`` and ``git_dir`` (:func:`config_files`)
    with its work tree's top at ``top``: the last value set (an empty value: none), or ``None`` when no file sets it
    (git then reads ``$XDG_CONFIG_HOME/git/attributes``). Raises :class:`ConfigUnread` naming a file git reads that
    passprice cannot read as git config."""
    found: list[Setting] = []
    for path in config_files(common, git_dir):
        _read(path, 0, top, found)
    env = os.environ
    with contextlib.suppress(ValueError):
        for n in range(min(int(env.get("GIT_CONFIG_COUNT") or 0), 1000)):
            if env.get(f"GIT_CONFIG_KEY_{n}", "").lower() == "core.attributesfile":
                value = env.get(f"GIT_CONFIG_VALUE_{n}", "")
                found.append(Setting(str(_expanded(value, top)) if value else "", f"GIT_CONFIG_KEY_{n}"))
    with contextlib.suppress(ValueError):  # `git -c core.attributesFile=X`, passed to a hook's passprice
        import shlex

        for item in shlex.split(env.get("GIT_CONFIG_PARAMETERS") or ""):
            key, _, value = item.partition("=")
            if key.lower() == "core.attributesfile":
                found.append(Setting(str(_expanded(value, top)) if value else "", "GIT_CONFIG_PARAMETERS"))
    return found[-1] if found else None
