"""git's one setting that names a file of attribute rules (``core.attributesFile``) is read from git's own config
files, as git reads them, without running git: ``check`` spawns no git on a registry where no file of rules lies
(:func:`passprice.gitread.work_tree_rewrites`), so the file a setting names must be found by reading the settings.
The files are read in git's order (the system's, the user's, the repository's, its work tree's, then
``GIT_CONFIG_COUNT``'s pairs and ``GIT_CONFIG_PARAMETERS``'s, ``git -c``; a later value wins), ``include.path`` and
``includeIf.*.path`` followed (an ``includeIf`` as if its condition held: the file it names is looked at, and git,
asked next, decides); a file that cannot be read as git config is named in one line with its line number, as git
refuses it. The null device reads as an empty file, as git reads it (``GIT_CONFIG_GLOBAL=/dev/null`` is git's own way
to read no user config). Reading is bounded, whatever the files hold: each file is read once however often it is
included (a file of 200 ``includeIf`` lines naming the next, five deep, is 200^5 reads followed naively), in linear
time, within :data:`MAX_CONFIG_TOTAL_BYTES` and :data:`MAX_INCLUDES` in all.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import attrs

from passprice.errors import InputError
from passprice.files import shown

#: The most bytes of one config file read (a few hundred in practice).
MAX_CONFIG_BYTES = 1 << 20
#: How deep ``include.path`` may nest (git's own limit).
MAX_INCLUDE_DEPTH = 10
#: The most bytes of all config files read for one look, includes too (a few KiB in practice).
MAX_CONFIG_TOTAL_BYTES = 4 << 20
#: The most names of included files that are there followed for one look (a handful in practice).
MAX_INCLUDES = 1000
#: The most names an include gives looked at for one look, there or not: a ``~/.gitconfig`` of 70,000 ``include.path``
#: lines naming nothing (969 KB) took ``check`` 2.3 s of CPU, and 4.5 s with the result memo stamping each absence
#: (attack round 37); git reads them, so this is far past any config's handful.
MAX_INCLUDE_NAMES = 10 * MAX_INCLUDES

#: A section header as git's ``get_base_var`` reads one: ``[`` at once followed by the section's letters, digits, '-'
#: and '.', then ``]`` — or blanks, a quoted subsection (a backslash takes the next character as it is) and ``]`` at
#: once. git refuses ``[ core ]`` and ``[core "x" ]``, which this took before (attack round 35).
_SECTION = re.compile(r'\[([A-Za-z0-9.-]*)(?:[ \t\r]+"((?:[^"\\\n]|\\.)*)")?\]')
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
        elif not quoted and c in " \t\r":  # git writes an unquoted blank inside a value as a space (a tab too)
            if out:
                out.append(" ")
        else:
            out.append(c)
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
        line = lines[at]
        at += 1
        if number == 1 and line.startswith("\ufeff"):  # git takes a byte-order mark only as the file's first bytes
            line = line[1:]
        pos = 0  # where the line is read from: sections on one line ([a][b]…) are read in linear time, not re-sliced
        while True:
            while pos < len(line) and line[pos] in " \t":
                pos += 1
            if pos >= len(line) or line[pos] in "#;":
                break
            if line[pos] == "\r":  # a carriage return alone: a blank to git between a line's statements
                pos += 1
                continue
            if line[pos] == "[":
                match = _SECTION.match(line, pos)
                if not match or not (match.group(1) or match.group(2) is not None):
                    raise ConfigUnread(f"{shown(where)}: line {number}: a section header not closed or not of "
                                       "letters, digits, '-' and '.' (as [section] or [section \"subsection\"], no "
                                       "blank inside the brackets but before the quote); not git config (git refuses "
                                       "this file too)")
                name = match.group(1).lower()
                if match.group(2) is not None:
                    name += "." + re.sub(r"\\(.)", r"\1", match.group(2))
                section = name
                pos = match.end()
                continue
            key = _KEY.match(line, pos)
            if key is None:
                raise ConfigUnread(f"{shown(where)}: line {number}: not a key; not git config (git refuses this file "
                                   "too)")
            rest = line[key.end():]
            name = f"{section}.{key.group(1).lower()}"  # a key before any section: git passes it over, as this does
            if not rest:  # git takes a key alone only at the line's end: a comment or a carriage return after it
                yield name, None  # is refused (git's get_value), which this read as the key alone (attack round 35)
            elif rest[0] == "=":
                value, at = _value(rest[1:], where, number, lines, at)
                # git holds a value as a C string: a NUL ends it (`attributesFile = RULES<NUL>x` names RULES)
                yield name, value.partition("\0")[0]
            else:
                raise ConfigUnread(f"{shown(where)}: line {number}: a key followed by neither '=' nor the line's "
                                   "end; not git config (git refuses this file too)")
            break


def _expanded(value: str, base: Path) -> Path:
    """A path setting's value as git reads it: ``~/`` from the home folder, a relative path from ``base``."""
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else base / path


def null_device(path: Path | str) -> bool:
    """Whether ``path`` (a link followed) is the null device, which git reads as an empty file
    (``GIT_CONFIG_GLOBAL=/dev/null``, ``core.attributesFile=/dev/null``). Raises nothing."""
    try:
        found, null = os.stat(path), os.stat(os.devnull)
    except (OSError, ValueError):
        return False
    return stat.S_ISCHR(found.st_mode) and found.st_rdev == null.st_rdev


def _absent(path: Path) -> None:
    """Try to open ``path``, where nothing git reads is (nothing, or a link to nothing): the result memo stamps an open
    that failed as an input (:mod:`passprice.memorecord`), so a replay holds only while it stays so. A ``~/.gitconfig``
    linked to a file not yet there was passed over unstamped: once the file was written, naming a file of rules, the
    memo replayed the ``check`` that passed (attack round 34). Raises nothing."""
    with contextlib.suppress(OSError, ValueError):
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))


@attrs.define
class _Look:
    """One look through the config files: each file's result by its place (its folder's real path and its name),
    ``None`` while it is being read (an include loop), each include's result by the name it gives, and what was read
    so far."""

    top: Path
    done: dict[tuple[str, str], tuple[dict[str, Setting], int] | None] = attrs.Factory(dict)
    named: dict[str, tuple[dict[str, Setting], int] | None] = attrs.Factory(dict)
    read_bytes: int = 0
    includes: int = 0
    #: The settings looked for (lowercased names): :data:`WANTED`.
    names: frozenset[str] = frozenset({"core.attributesfile"})


#: The settings a look reads: the file of attribute rules, and the two by which git writes line ends as CRLF in a
#: checkout without a rule (:func:`passprice.gitread.config_line_ends`).
WANTED = frozenset({"core.attributesfile", "core.autocrlf", "core.eol"})


def _read(path: Path, look: _Look) -> tuple[dict[str, Setting], int] | None:
    """The last value of each setting of ``look.names`` the config file ``path`` sets, its own or an included
    file's, as :class:`Setting` by its lowercased name (``core.attributesfile`` relative to ``look.top``, the work
    tree's top, where git runs; a key written alone, a boolean's true, as ``true``), and how deep its includes nest;
    ``None`` when no file is there (git skips it too). A file included again is not read again. Raises
    :class:`ConfigUnread`: a file not read as git config, includes nesting past :data:`MAX_INCLUDE_DEPTH` (a loop
    too), more than :data:`MAX_INCLUDES` includes or :data:`MAX_CONFIG_TOTAL_BYTES` bytes in all."""
    from passprice.files import read_regular

    if not os.path.exists(path):  # nothing, or a link to nothing: git skips it
        _absent(path)
        return None
    if null_device(path):
        return {}, 0
    try:
        place = (os.path.realpath(path.parent), path.name)
    except (OSError, ValueError):
        place = (str(path.parent), path.name)
    if place in look.done:
        got = look.done[place]
        if got is None:
            raise ConfigUnread(f"{shown(path)}: includes nest more than {MAX_INCLUDE_DEPTH} deep (it includes itself, "
                               "by way of the files it includes; git refuses this too)")
        return got
    look.done[place] = None
    try:
        data = read_regular(path, MAX_CONFIG_BYTES)
    except InputError as e:
        raise ConfigUnread(f"{e}; a git config file (so whether it names a file of attribute rules cannot be told)"
                           ) from None
    look.read_bytes += len(data)
    if look.read_bytes > MAX_CONFIG_TOTAL_BYTES:
        raise ConfigUnread(f"{shown(path)}: the git config files read with their includes add up past "
                           f"{MAX_CONFIG_TOTAL_BYTES:,} bytes (so whether they name a file of attribute rules cannot "
                           "be told)")
    text = data.decode("utf-8", "surrogateescape")
    last: dict[str, Setting] = {}
    depth = 0
    for name, value in entries(text, str(path)):
        if name == "core.attributesfile" and name in look.names:
            if value is None:
                raise ConfigUnread(f"{shown(path)}: core.attributesFile has no value (a path); not git config (git "
                                   "refuses this file too)")
            last[name] = Setting(str(_expanded(value, look.top)) if value else "", str(path))
        elif name in look.names:
            last[name] = Setting("true" if value is None else value, str(path))
        elif value and _includes(name):
            got = _included(_expanded(value, path.parent), look, path)
            if got is not None:
                depth = max(depth, got[1] + 1)
                if depth > MAX_INCLUDE_DEPTH:
                    raise ConfigUnread(f"{shown(path)}: includes nest more than {MAX_INCLUDE_DEPTH} deep (git refuses "
                                       "this too)")
                last.update(got[0])
    look.done[place] = (last, depth)
    return last, depth


def _includes(name: str) -> bool:
    """Whether the setting ``name`` names a file to include: ``include.path``, ``includeIf.COND.path``."""
    return name == "include.path" or (name.startswith("includeif.") and name.endswith(".path"))


def _included(path: Path, look: _Look, by: Path | str) -> tuple[dict[str, Setting], int] | None:
    """:func:`_read` of the file ``path`` an include (in ``by``) names, once a name: each name of a file that is there
    counted against :data:`MAX_INCLUDES`, each name against :data:`MAX_INCLUDE_NAMES`."""
    name = str(path)
    if name in look.named:
        return look.named[name]
    if len(look.named) >= MAX_INCLUDE_NAMES:
        raise ConfigUnread(f"{shown(by)}: more than {MAX_INCLUDE_NAMES:,} names of files to include in all, there or "
                           "not (git config; so whether they name a file of attribute rules cannot be told)")
    if os.path.lexists(path):
        look.includes += 1
        if look.includes > MAX_INCLUDES:
            raise ConfigUnread(f"{shown(by)}: more than {MAX_INCLUDES:,} files included in all (git config; so "
                               "whether they name a file of attribute rules cannot be told)")
    got = look.named[name] = _read(path, look)
    return got


def user_config_files() -> list[Path]:
    """The config files git reads in every repository, in git's order: the system's (``GIT_CONFIG_SYSTEM``, else
    ``/etc/gitconfig``; none under ``GIT_CONFIG_NOSYSTEM``), the user's (``GIT_CONFIG_GLOBAL``, else
    ``$XDG_CONFIG_HOME/git/config`` and ``~/.gitconfig``). A variable set empty names no file, as git reads it:
    ``GIT_CONFIG_GLOBAL=`` read ``~/.gitconfig`` (attack round 34)."""
    env = os.environ
    files = []
    if env.get("GIT_CONFIG_NOSYSTEM", "").lower() not in ("1", "true", "yes", "on"):
        system = env.get("GIT_CONFIG_SYSTEM", "/etc/gitconfig")
        if system:
            files.append(Path(system))
    if "GIT_CONFIG_GLOBAL" in env:
        if env["GIT_CONFIG_GLOBAL"]:
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


def reached_files(paths: list[Path]) -> list[Path]:
    """``paths`` (config files git reads at every start) and every file their ``include.path`` and
    ``includeIf.*.path`` settings name, those of the files they name too (an ``includeIf`` as if its condition held),
    and the absolute ones the environment's settings include (``git -c include.path=FILE``), each once, in the
    order met: what :func:`passprice.gitread.blocking_file` looks through before git runs, since git opens each one
    it includes and blocks on a FIFO there (``[include] path = FIFO`` in ``.git/config`` held ``diff`` and ``fact
    show --history`` for ever, attack71). A file that is not there, not a regular file or not read as git config is
    listed but not followed (git's own error, or the blocking file's refusal, says what is wrong). Within the bounds
    a look through the config files keeps (:data:`MAX_INCLUDE_DEPTH` deep, :data:`MAX_INCLUDE_NAMES` names,
    :data:`MAX_CONFIG_TOTAL_BYTES` read). The answer is kept in the process while every file it read is unchanged
    (its size, change time and inode): git runs some tens of times a review, and a ``~/.gitconfig`` of 40,000
    ``include.path`` lines (948 KB) read each time took ``diff`` from 0.64 to 3.2 s of CPU. Raises nothing."""
    from passprice.files import read_regular

    key = (tuple(str(path) for path in paths), tuple(_environment_pairs()))
    kept = _REACHED.get(key)
    if kept is not None and all(_signature(Path(name)) == signature for name, signature in kept[0]):
        return list(kept[1])
    found: dict[str, Path] = {}
    read: list[tuple[str, tuple[int, ...] | None]] = []
    queue: list[tuple[Path, int]] = [(path, 0) for path in paths]
    for name, value, _ in key[1]:
        if value and _includes(name) and Path(os.path.expanduser(value)).is_absolute():
            queue.append((Path(os.path.expanduser(value)), 1))
    total = 0
    while queue and len(found) < MAX_INCLUDE_NAMES:
        path, depth = queue.pop(0)
        if str(path) in found:
            continue
        found[str(path)] = path
        if depth >= MAX_INCLUDE_DEPTH:
            continue
        signature = _signature(path)
        if signature is None or not stat.S_ISREG(signature[0]):
            continue
        try:
            data = read_regular(path, MAX_CONFIG_BYTES)
        except (InputError, OSError, ValueError):
            continue
        read.append((str(path), signature))
        total += len(data)
        if total > MAX_CONFIG_TOTAL_BYTES:
            break
        with contextlib.suppress(InputError):
            for setting_name, setting in entries(data.decode("utf-8", "surrogateescape"), str(path)):
                if setting and _includes(setting_name):
                    queue.append((_expanded(setting, path.parent), depth + 1))
    _REACHED.clear()  # one answer kept: the last look's
    _REACHED[key] = (read, list(found.values()))
    return list(found.values())


#: :func:`reached_files`' last answer, by its question: the files it read with their :func:`_signature`, and the files.
_REACHED: dict[tuple[tuple[str, ...], tuple[tuple[str, str, str], ...]],
               tuple[list[tuple[str, tuple[int, ...] | None]], list[Path]]] = {}


def _signature(path: Path) -> tuple[int, ...] | None:
    """``path``'s mode, size, change time (ns) and inode, a link followed; ``None`` when it is not there."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    return found.st_mode, found.st_size, found.st_ctime_ns, found.st_mtime_ns, found.st_ino


def _environment_pairs() -> list[tuple[str, str, str]]:
    """The settings the environment gives, in git's order, each as its name (lowercased), value and where it is
    given: ``GIT_CONFIG_COUNT``'s pairs (``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n`` for each n below the count, as
    many as there are: a count of 2,000 was read only to 1,000), then ``GIT_CONFIG_PARAMETERS``'s (``git -c``)."""
    env = os.environ
    out = []
    count = (env.get("GIT_CONFIG_COUNT") or "").lstrip()
    if count.isascii() and count.isdigit():
        numbers = sorted(int(m.group(1)) for k in env if (m := re.fullmatch(r"GIT_CONFIG_KEY_(0|[1-9][0-9]{0,9})", k)))
        out += [(env[f"GIT_CONFIG_KEY_{n}"].lower(), env.get(f"GIT_CONFIG_VALUE_{n}", ""), f"GIT_CONFIG_KEY_{n}")
                for n in numbers if n < int(count)]
    # `git -c core.attributesFile=X`, passed to a hook's passprice
    out += [(key.lower(), value, "GIT_CONFIG_PARAMETERS") for key, value in parameters(env.get("GIT_CONFIG_PARAMETERS")
                                                                                      or "")]
    return out


#: What git's ``isspace`` holds (git-compat-util.h's own ctype: not the locale's, nor Unicode's).
_SPACE = " \t\n\r"


def _dequoted(text: str, at: int) -> tuple[str, int] | None:
    """git's ``sq_dequote_step`` (quote.c): the single-quoted word starting at ``text[at]`` (``'\\''`` and
    ``'\\!'`` between two quoted parts give a quote and a ``!``) and the index just past it, or ``None`` when no
    quote opens there or it is not closed."""
    if at >= len(text) or text[at] != "'":
        return None
    out: list[str] = []
    i = at + 1
    while True:
        close = text.find("'", i)
        if close < 0:
            return None
        out.append(text[i:close])
        i = close + 1
        if text[i:i + 1] == "\\" and text[i + 1:i + 2] in ("'", "!") and text[i + 2:i + 3] == "'":
            out.append(text[i + 1])
            i += 3
            continue
        return "".join(out), i


def parameters(text: str) -> list[tuple[str, str]]:
    """The settings ``GIT_CONFIG_PARAMETERS`` holds (``git -c``), each as its key and value, read as git reads them
    (config.c ``parse_config_env_list``): single-quoted words apart by whitespace, each ``'key=value'`` or
    ``'key'='value'`` (``'key'=`` and a key without ``=`` are true, ``''`` here). Raises :class:`ConfigUnread` where
    git says "bogus format in GIT_CONFIG_PARAMETERS" and stops, naming the byte (0-based): a word not quoted, a
    quote not closed, text after a word, an empty key. Before attack round 39 such a value was read as no setting
    (``shlex`` refusing it), or read where git refuses it (``core.attributesFile=X`` unquoted), while git itself
    refused to run."""
    out: list[tuple[str, str]] = []
    i = 0

    def bogus(at: int, what: str) -> ConfigUnread:
        return ConfigUnread(f"GIT_CONFIG_PARAMETERS: byte {at}: {what}; git refuses it too ('bogus format in "
                            "GIT_CONFIG_PARAMETERS') and runs no command: set it as git -c writes it ('key=value', "
                            "single-quoted, apart by spaces) or unset it")

    while i < len(text):
        key = _dequoted(text, i)
        if key is None:
            raise bogus(i, "a quote not closed" if text[i] == "'" else "not a single-quoted word")
        word, i = key
        if i >= len(text) or text[i] in _SPACE:
            name, equals, value = word.partition("=")
            pair = (name, value if equals else "")
        elif text[i] == "=":
            i += 1
            if i < len(text) and text[i] == "'":
                got = _dequoted(text, i)
                if got is None:
                    raise bogus(i, "a quote not closed")
                value, i = got
                if i < len(text) and text[i] not in _SPACE:
                    raise bogus(i, "text right after a quoted value")
            elif i < len(text) and text[i] not in _SPACE:
                raise bogus(i, "a value not single-quoted")
            else:
                value = ""
            name, pair = word, (word, value)
        else:
            raise bogus(i, "text right after a quoted key")
        if not name.strip():
            raise bogus(i, "an empty key")
        out.append(pair)
        while i < len(text) and text[i] in _SPACE:
            i += 1
    return out


def attributes_file(common: Path, git_dir: Path, top: Path) -> Setting | None:
    """The ``core.attributesFile`` git applies in the repository of ``common`` and ``git_dir`` (:func:`config_files`)
    with its work tree's top at ``top``: the last value set (an empty value: none), or ``None`` when no file sets it
    (git then reads ``$XDG_CONFIG_HOME/git/attributes``). A file the environment includes (``git -c
    include.path=FILE``, absolute, as git requires there) is read too: its rule file was applied by git and passed by
    ``check`` (attack round 34). Raises :class:`ConfigUnread` naming a file git reads that passprice cannot read as
    git config."""
    return settings(common, git_dir, top, frozenset({"core.attributesfile"})).get("core.attributesfile")


def settings(common: Path, git_dir: Path, top: Path, names: frozenset[str] = WANTED) -> dict[str, Setting]:
    """The settings of ``names`` (lowercased: ``core.attributesfile``, ``core.autocrlf``, ``core.eol``) git applies
    in the repository of ``common`` and ``git_dir`` (:func:`config_files`) with its work tree's top at ``top``, each
    its last value (:class:`Setting`; ``core.attributesfile``'s a path from ``top``, empty for an empty value; a key
    written alone ``true``), in git's order, the environment's last (:func:`_environment_pairs`); a name no file
    sets is absent. A file the environment includes (``git -c include.path=FILE``, absolute, as git requires there)
    is read too. Raises :class:`ConfigUnread` naming a file git reads that passprice cannot read as git config."""
    look = _Look(top, names=names)
    found: dict[str, Setting] = {}
    for path in config_files(common, git_dir):
        got = _read(path, look)
        if got is not None:
            found.update(got[0])
    for name, value, where in _environment_pairs():
        if name == "core.attributesfile" and name in names:
            found[name] = Setting(str(_expanded(value, top)) if value else "", where)
        elif name in names:
            found[name] = Setting(value, where)
        elif value and _includes(name):
            path = Path(os.path.expanduser(value))
            if path.is_absolute():  # a relative one: git refuses it ("relative config includes must come from files")
                got = _included(path, look, where)
                if got is not None:
                    found.update(got[0])
    return found
