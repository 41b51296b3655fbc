"""The methods attrs generates for passprice's classes are compiled once per script text, not once per process: the
code ``compile`` makes of a script is kept in the user's cache folder, as Python keeps a module's ``.pyc``.

Why: attrs writes the source of each class's ``__init__``, ``__eq__``, ``__hash__``, ``__repr__`` … as text and
compiles it when the class is defined, in every process. A warm ``passprice price`` defines about 50 classes, and
compiling their methods was about a quarter of its CPU time (issue 16). The same text always compiles to the same
code, so the code is kept, marshalled, keyed by the text, the name attrs compiles it under and the interpreter's
version; any other text (another attrs version, an edited class) is a miss, compiled as ever and kept for the next run.

One part of the text differs from process to process: ``__hash__`` starts its tuple with a number attrs derives from
the class's name by ``hash()`` of a string, which changes with the interpreter's hash seed. Before keying, that number
is replaced by a stand-in of the same width (so every line and column stays where it was); the code kept is compiled
from that text, and the stand-in is put back to this process's number in the constants of the code loaded, so the
code run equals what ``compile`` makes of attrs' own text (``tests/test_generated.py`` compares them). A text whose
number cannot be found exactly once is not kept (compiled every time).

This replaces a private function of attrs (``attr._make._compile_and_eval``, which compiles and runs each class's
script); there is no public hook. :func:`install` checks that the function is there with the signature it wraps, and
does nothing otherwise, so another attrs version only falls back to compiling. Only the scripts attrs names
``<attrs generated methods passprice.…>`` (passprice's own classes) go through the cache.

Each script's code is one file, ``code/TAG/KEY.code`` in :func:`passprice.cache.cache_dir` (TAG: the interpreter's,
as in ``__pycache__``): the BLAKE2b digest of the rest (32 bytes, :func:`passprice.digests.blake2b`), then the
marshalled code. It is code that is run, as a ``.pyc`` is,
so it is read only when it is a regular file owned by the user and writable by no one else (each is written
``0o600``, in a folder made ``0o700``); one that is not, that is damaged, or that does not load is ignored and
replaced. What a process compiled is written when it exits, each file through a temporary file and a rename, so a
concurrent run sees a whole file or none; past :data:`MAX_SCRIPTS` files, the older half is removed.
``PASSPRICE_NO_CACHE=1`` and ``passprice --no-cache`` bypass it as they bypass the rest of the cache.

A script the cache folder does not hold (a first run, an empty cache folder, ``--no-cache``) is looked for in the
package's own ``methods`` folder (:data:`SHIPPED`) before it is compiled: every script its classes (and attrs' own)
have, one file each, written by ``python -m passprice.generated --write`` and named by the digest of its name and
text (:func:`shipped_name`), whose code Python's import machinery keeps in ``__pycache__`` as a module's. A text the
folder lacks (another attrs version, a class edited since, a number of a width not shipped) is compiled as ever;
``tests/test_generated.py`` fails until the folder holds exactly the scripts of today's classes.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import stat
import sys
from types import CodeType, FunctionType
from typing import Any

#: The name attrs compiles one of passprice's classes' methods under (``_generate_unique_filename``).
_PREFIX = "<attrs generated methods passprice."
#: The name attrs compiles the methods of its own classes under (its validators, converters, ``VersionInfo``):
#: defined whenever attrs is imported, they are kept too when :func:`install_early` put the hook in place first.
_ATTRS_OWN = "<attrs generated methods attr."
_METHODS = "<attrs generated methods "
#: Scripts kept (a few KB each): every command's classes together are a few hundred, each in up to four variants
#: (the width of the number its ``__hash__`` starts from).
MAX_SCRIPTS = 2048
#: The largest file read.
MAX_BYTES = 1 << 20

#: Code compiled by this process, by the path it is to be kept at: written when the process exits.
_pending: dict[str, bytes] = {}
_original: Any = None


def install() -> bool:
    """Route the compilation of the methods attrs generates for passprice's classes through the cache; ``True`` when
    it does (or already did), ``False`` when this attrs has no ``_compile_and_eval(script, globs, locs, filename)``
    to wrap (then attrs compiles as ever)."""
    try:
        import attr._make as make
    except ImportError:  # pragma: no cover - attrs is a dependency
        return False
    return _install_into(make)


def install_early() -> None:
    """:func:`install` as soon as attrs' class builder (``attr._make``) is defined, before attrs defines its own
    validators and converters with it when ``attr`` is first imported, so their methods are kept too (about 15
    scripts, some 2 % of a price's instructions to compile in every process); at once when attrs is imported
    already. The console script calls it before it imports anything of attrs (:mod:`passprice.entry`). Until then a
    finder on :data:`sys.meta_path` waits for ``attr._make``: it finds the module as the interpreter's own
    path finder does, and its loader runs the module, then :func:`install`; the finder removes itself at once,
    whatever it finds."""
    if "attr._make" in sys.modules:
        install()
    elif _AfterAttrsBuilder not in sys.meta_path:
        sys.meta_path.insert(0, _AfterAttrsBuilder)


class _AfterAttrsBuilder:
    """The finder :func:`install_early` puts first on :data:`sys.meta_path`: it answers only for ``attr._make``."""

    @staticmethod
    def find_spec(name: str, path: Any = None, target: Any = None) -> Any:
        if name != "attr._make":
            return None
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(_AfterAttrsBuilder)
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path, target)
        loader = getattr(spec, "loader", None)
        run = getattr(loader, "exec_module", None)
        if run is None:  # not found there, or another kind of loader: imported as ever (install() comes later)
            return spec

        def exec_module(module: Any) -> None:
            # attr._make defines classes of its own (Attribute, Factory, Converter …) while it runs, before
            # _install_into can put the hook in place: their methods' scripts reach the builtin ``compile``, which
            # their module finds here first (14 scripts, some 2 % of a price's instructions to compile).
            module.__dict__["compile"] = _compile_own
            try:
                run(module)
            finally:
                module.__dict__.pop("compile", None)
            _install_into(module)

        loader.exec_module = exec_module  # type: ignore[union-attr]  # this spec's own loader
        return spec


def _install_into(make: Any) -> bool:
    """:func:`install` on the module ``make`` (``attr._make``)."""
    global _original
    current = getattr(make, "_compile_and_eval", None)
    if current is _compile_and_eval:
        return True
    code = getattr(current, "__code__", None)
    if code is None or code.co_varnames[: code.co_argcount] != ("script", "globs", "locs", "filename"):
        return False
    _original = current
    make._compile_and_eval = _compile_and_eval
    extractor = getattr(make, "_AnnotationExtractor", None)
    if (
        isinstance(extractor, type) and extractor is not _Annotations
        and callable(getattr(extractor, "get_first_param_type", None))
        and callable(getattr(extractor, "get_return_type", None))
    ):
        _original_extractor[0] = extractor
        make._AnnotationExtractor = _Annotations
    return True


#: attrs' own ``attr._make._AnnotationExtractor``, once :func:`_install_into` has put :class:`_Annotations` there.
_original_extractor: list[Any] = [None]

#: The code flags of a function's ``*args`` and ``**kwargs`` (:mod:`inspect`'s ``CO_VARARGS``, ``CO_VARKEYWORDS``).
_VARARGS = 0x04
_VARKEYWORDS = 0x08


def _first_parameter(code: CodeType) -> str | None:
    """The name of the first parameter :func:`inspect.signature` lists for a function of ``code`` (positional ones,
    then ``*args``, the keyword-only ones, ``**kwargs``; ``co_varnames`` holds them as positional, keyword-only,
    ``*args``, ``**kwargs``), ``None`` for a function of none."""
    positional, keyword_only = code.co_argcount, code.co_kwonlyargcount
    if positional:
        return code.co_varnames[0]
    if code.co_flags & _VARARGS:
        return code.co_varnames[keyword_only]
    if keyword_only or code.co_flags & _VARKEYWORDS:
        return code.co_varnames[0]
    return None


class _Annotations:
    """attrs' ``_AnnotationExtractor`` (the type a converter takes and returns, for the ``__init__`` attrs writes),
    without :func:`inspect.signature` for a plain function: a :class:`types.FunctionType` with nothing in its
    ``__dict__`` (no ``__wrapped__``, ``__signature__`` or ``_partialmethod``, which the signature would follow),
    whose answers are its ``__annotations__`` of its first parameter and of ``return``, as the signature has them
    (strings under ``from __future__ import annotations``, never evaluated), ``None`` for none. Anything else
    (a builtin, a class, a ``functools.partial``, a wrapped function) is asked of attrs' own class. Why: every class
    with a converter asked :func:`inspect.signature` when it was defined (attrs' own ``_NotValidator`` when attrs is
    imported), and :mod:`inspect` (with :mod:`ast`, :mod:`dis` and :mod:`tokenize`) was 34 M of a price's 424 M
    instructions, imported for that alone (docs/PERFORMANCE.md; ``tests/test_afresh134.py`` holds the answers to
    attrs' own on every function of the package and the standard library's modules a price imports). Raises
    nothing of its own."""

    __slots__ = ("_asked", "_first", "_return")

    def __init__(self, callable: Any) -> None:
        self._asked: Any = None
        if type(callable) is FunctionType and not callable.__dict__:
            annotations = callable.__annotations__
            name = _first_parameter(callable.__code__)
            self._first = None if name is None else annotations.get(name)
            self._return = annotations.get("return")
        else:
            self._asked = _original_extractor[0](callable)

    def get_first_param_type(self) -> Any:
        """The annotation of the first parameter, ``None`` for none (or no parameter)."""
        return self._first if self._asked is None else self._asked.get_first_param_type()

    def get_return_type(self) -> Any:
        """The return annotation, ``None`` for none."""
        return self._return if self._asked is None else self._asked.get_return_type()


def uninstall() -> None:
    """Undo :func:`install` (the tests use it)."""
    import attr._make as make

    if _original is not None and make._compile_and_eval is _compile_and_eval:
        make._compile_and_eval = _original
    if _original_extractor[0] is not None and getattr(make, "_AnnotationExtractor", None) is _Annotations:
        setattr(make, "_AnnotationExtractor", _original_extractor[0])  # noqa: B010  # a private name of attrs


def _compile_and_eval(
    script: str, globs: dict[str, Any] | None, locs: Any = None, filename: str = ""
) -> None:
    """attrs' ``_compile_and_eval``: run the code of ``script`` in ``globs`` and ``locs``, the code taken from the
    cache when ``filename`` names a method script of a passprice class and the cache holds its text."""
    code = _cached(script, filename) if filename.startswith((_PREFIX, _ATTRS_OWN)) else None
    if code is None:
        code = compile(script, filename, "exec")
    eval(code, globs, locs)  # what attrs' own function does with the code it compiled


def _compile_own(source: Any, filename: Any, mode: str, *args: Any, **kwargs: Any) -> Any:
    """The builtin ``compile`` as ``attr._make`` sees it while it runs (:class:`_AfterAttrsBuilder`): the code of a
    method script of one of attrs' own classes (``<attrs generated __eq__ attr._make.Attribute>``) from the cache,
    anything else compiled as ever."""
    if (
        mode == "exec" and not args and not kwargs and type(source) is str and type(filename) is str
        and filename.startswith(_GENERATED) and f" {_ATTRS_MAKE}" in filename
    ):
        code = _cached(source, filename)
        if code is not None:
            return code
    return compile(source, filename, mode, *args, **kwargs)


#: How every name attrs compiles a script under starts (then the method's name, or ``methods``, then the class's).
_GENERATED = "<attrs generated "
#: The module of the classes attrs defines while :mod:`attr._make` runs.
_ATTRS_MAKE = "attr._make."


def _stand_in(script: str, filename: str) -> tuple[str, int | None, int] | None:
    """``script`` with the number its ``__hash__`` starts from replaced by a stand-in of the same width, that number
    and the stand-in; ``(script, None, 0)`` for a script without ``__hash__``; ``None`` when the number is not found
    exactly once or the stand-in is in the script already (the script is then not kept)."""
    if "def __hash__(self" not in script:
        return script, None, 0
    name = filename[len(_GENERATED) : -1].partition(" ")[2]  # after "methods" (or "__hash__" …): the class's name
    head, dash, count = name.rpartition("-")
    if dash and count.isdigit():  # attrs' linecache appends -N to a name already taken
        name = head
    number = hash(f"<attrs generated hash {name}>")  # attrs' _make_hash_script
    text = str(number)
    stand_in = int("7" * len(text))
    if script.count(text) != 1 or f" {text},\n" not in script or str(stand_in) in script:
        return None
    return script.replace(text, str(stand_in)), number, stand_in


def _replaced(code: CodeType, old: int, new: int) -> CodeType:
    """``code`` (a script's) with the constant ``old`` replaced by ``new`` in its ``__hash__`` function's constants
    (a constant of its own, or in a tuple the compiler folded)."""

    def swap(value: Any) -> Any:
        if type(value) is int and value == old:
            return new
        if type(value) is tuple:
            return tuple(swap(v) for v in value)
        if type(value) is CodeType:
            return value.replace(co_consts=tuple(swap(c) for c in value.co_consts))
        return value

    return code.replace(
        co_consts=tuple(swap(c) if type(c) is CodeType and c.co_name == "__hash__" else c for c in code.co_consts)
    )


def _cached(script: str, filename: str) -> CodeType | None:
    """The code of ``script`` (compiled under ``filename``): from the user's cache folder, else from the code shipped
    with the package (:func:`_shipped`), else compiled and kept in the cache folder for the next run; ``None`` when
    the script is not one to keep, or when the cache is bypassed and the package ships none for it."""
    found = _stand_in(script, filename)
    if found is None:
        return None
    text, number, stand_in = found
    if _recorded is not None:
        _recorded.append((filename, text, stand_in))
    cache, blake2b = _tools()[:2]
    path = None
    code = None
    if cache.enabled():
        # surrogatepass: a package folder named in bytes that are not UTF-8 holds lone surrogates (cache._key_start).
        key = blake2b(f"{sys.version}\0{filename}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()[:40]
        try:
            path = os.path.join(_folder(), f"{key}.code")
        except RuntimeError:  # no home folder to find the cache in
            path = None
        if path is not None:
            code = _read(path, filename)
    if code is None:
        code, compiled = _shipped(filename, text)
        if code is None:
            if path is None:
                return None
            code = compile(text, filename, "exec")
            compiled = True
        if compiled and path is not None:
            _keep(path, marshal.dumps(code))
    return code if number is None else _replaced(code, stand_in, number)


#: The folder of the method scripts shipped with the package (:func:`_shipped`), each the text :func:`_cached`
#: keys (the stand-in in its ``__hash__``) in a file of its own, ``KEY.src``, written by ``python -m
#: passprice.generated --write``; Python's own import machinery keeps each one's code in ``__pycache__`` beside it,
#: as for a module.
SHIPPED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "methods")
_SUFFIX = ".src"
#: The names in :data:`SHIPPED`, by the folder they were listed in (once a process).
_listed: dict[str, frozenset[str]] = {}
#: The future flag every script's code has where attrs (and this module) compile it: both modules are compiled
#: under ``from __future__ import annotations``, which ``compile`` inherits (``__future__.annotations.compiler_flag``).
_FUTURE_ANNOTATIONS = 0x1000000
#: The scripts :func:`_cached` was asked for while :func:`collect` records them (their name, text and stand-in),
#: else ``None``.
_recorded: list[tuple[str, str, int]] | None = None
#: The widths of the number a ``__hash__`` starts from (:func:`_stand_in`) whose scripts are shipped: 19 and 20
#: characters (``-`` and 19 digits) are each about 49 % of the numbers ``hash()`` gives, 18 about 5 %; a class's
#: script in a process whose number has another width (about 0.5 %) is compiled.
SHIPPED_WIDTHS = (18, 19, 20)


def shipped_name(filename: str, text: str) -> str:
    """The file name in :data:`SHIPPED` of the script ``text`` compiled under ``filename``: the first 40 hex digits
    of the BLAKE2b digest of both (not of the interpreter's version: each interpreter keeps its own ``.pyc``)."""
    from passprice.digests import blake2b

    return blake2b(f"{filename}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()[:40] + _SUFFIX


def _shipped(filename: str, text: str) -> tuple[CodeType | None, bool]:
    """The code of the script ``text`` compiled under ``filename`` from the package's :data:`SHIPPED` folder, or
    ``None`` where it holds no file of that text (another attrs version, a class edited since the folder was
    written) or the file does not load; and whether it was compiled here with no ``.pyc`` written (a package folder
    not writable, ``PYTHONDONTWRITEBYTECODE``: then it is kept in the cache folder, for the next run). The code is what
    :class:`importlib.machinery.SourceFileLoader` gives for the file (its ``.pyc`` when current, else the file
    compiled and its ``.pyc`` written, as for any module), given the script's own name and the future flag
    :func:`compile` in this module would have given it (the file is compiled without), so it equals
    ``compile(text, filename, "exec")`` here (``tests/test_generated.py`` compares every one). Why: a run with an
    empty cache folder compiled every script, 437 M instructions (7.7 %) of a cold review (docs/PERFORMANCE.md)."""
    folder = SHIPPED
    names = _listed.get(folder)
    if names is None:
        try:
            names = frozenset(os.listdir(folder))
        except OSError:
            names = frozenset()
        _listed[folder] = names
    if not names:
        return None, False
    name = shipped_name(filename, text)
    if name not in names:
        return None, False
    loader = _loader_class()("passprice.methods", os.path.join(folder, name))
    try:
        code = loader.get_code("passprice.methods")
    except (ImportError, OSError, SyntaxError, ValueError, EOFError, TypeError):
        return None, False
    if type(code) is not CodeType:
        return None, False
    compiled = loader.compiled
    if compiled:  # compiled here: its .pyc written (as a module's), or not (a folder not writable, -B)
        from importlib.util import cache_from_source

        compiled = not os.path.exists(cache_from_source(loader.path))
    return _as_compiled(code, filename), compiled


#: :func:`_loader_class`' answer, made once a process.
_LOADER: list[Any] = []


def _loader_class() -> Any:
    """:class:`importlib.machinery.SourceFileLoader`, noting in ``compiled`` whether it compiled the file (no current
    ``.pyc``); the class made when the first shipped script is read."""
    if not _LOADER:
        from importlib.machinery import SourceFileLoader

        class Loader(SourceFileLoader):
            compiled = False

            def source_to_code(  # type: ignore[override]  # importlib's own signature (a staticmethod in its stub)
                self, data: Any, path: Any, *, _optimize: int = -1
            ) -> Any:
                self.compiled = True
                return super().source_to_code(data, path, _optimize=_optimize)

        _LOADER.append(Loader)
    return _LOADER[0]


def _as_compiled(code: CodeType, filename: str) -> CodeType:
    """``code`` and every code in its constants named ``filename`` and given :data:`_FUTURE_ANNOTATIONS`."""
    consts = tuple(_as_compiled(c, filename) if type(c) is CodeType else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_flags=code.co_flags | _FUTURE_ANNOTATIONS, co_consts=consts)


_COLLECT = """
import importlib, json, pkgutil, sys
from passprice import generated
generated._recorded = []
generated.install_early()
import attr, passprice
for found in pkgutil.walk_packages(passprice.__path__, "passprice."):
    if found.name != "passprice.__main__":
        importlib.import_module(found.name)
json.dump(generated._recorded, sys.stdout)
"""


def collect() -> dict[str, tuple[str, str]]:
    """The name attrs compiles it under and the text of every method script the package's classes (and attrs' own)
    have when each of its modules is imported in a fresh process (each ``__hash__``'s in :data:`SHIPPED_WIDTHS`'
    widths), by its file name in :data:`SHIPPED`. Raises :class:`RuntimeError` when that
    process fails."""
    import json
    import subprocess

    env = {**os.environ, "PASSPRICE_NO_CACHE": "1"}
    done = subprocess.run([sys.executable, "-c", _COLLECT], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"collecting the method scripts failed: {done.stderr[-500:]}")
    scripts: dict[str, tuple[str, str]] = {}
    for filename, text, stand_in in json.loads(done.stdout):
        texts = [text] if not stand_in else [text.replace(str(stand_in), "7" * width) for width in SHIPPED_WIDTHS]
        scripts.update((shipped_name(filename, t), (filename, t)) for t in texts)
    return scripts


def write(folder: str = SHIPPED) -> int:
    """Write :func:`collect`'s scripts to ``folder``, each ``KEY.src``, and remove any other ``.src`` file there;
    the number of files written."""
    scripts = collect()
    os.makedirs(folder, exist_ok=True)
    for name in os.listdir(folder):
        if name.endswith(_SUFFIX) and name not in scripts:
            os.unlink(os.path.join(folder, name))
    for name, (_, text) in scripts.items():
        with open(os.path.join(folder, name), "w", encoding="utf-8", newline="") as f:
            f.write(text)
    return len(scripts)


#: The variables of the environment :func:`passprice.cachefolder.folder` reads (``HOME`` through
#: ``os.path.expanduser``): :func:`_folder`'s answer is kept for the values they have.
_FOLDER_VARIABLES = ("PASSPRICE_CACHE_DIR", "XDG_CACHE_HOME", "HOME", "LOCALAPPDATA")
#: :func:`_folder`'s answer, by the values of :data:`_FOLDER_VARIABLES` it was found under.
_folders: dict[tuple[str | None, ...], str] = {}


def _folder() -> str:
    """``code/TAG`` in the cache folder (:func:`passprice.cache.cache_dir`'s, as text: no :class:`~pathlib.Path` is
    made for each script), found once for the environment's values of :data:`_FOLDER_VARIABLES` (a price defines
    about 65 classes: each looked up the home folder and checked it exists, 4 % of its system calls). Raises
    :class:`RuntimeError` without a home folder (and keeps nothing)."""
    environ = os.environ
    values = tuple(environ.get(name) for name in _FOLDER_VARIABLES)
    found = _folders.get(values)
    if found is None:
        from passprice import cachefolder

        found = _folders[values] = os.path.join(cachefolder.folder(), "code", sys.implementation.cache_tag or "python")
    return found


#: How a kept script is opened: read-only, a link not followed, a FIFO not waited on.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
#: :func:`_tools`' answer, once a process.
_TOOLS: list[Any] = []


def _tools() -> tuple[Any, Any, Any]:
    """:mod:`passprice.cache`, :func:`passprice.digests.blake2b` and :func:`passprice.cachefolder.trusted`, imported
    when the first script is looked up (attrs' own, as ``attr`` is imported), not by each of the 80-odd a price
    defines (three imports a script; issue 16, afresh101)."""
    if not _TOOLS:
        from passprice import cache, cachefolder
        from passprice.digests import blake2b

        _TOOLS[:] = [cache, blake2b, cachefolder.trusted]
    return _TOOLS[0], _TOOLS[1], _TOOLS[2]


def _read(path: str, filename: str) -> CodeType | None:
    """The code kept at ``path`` for the script named ``filename``, or ``None``: none there, not a regular file owned
    by the user and writable by no one else (opened without following a link, without waiting on a FIFO), larger
    than :data:`MAX_BYTES`, a checksum that does not match, or not code of that name."""
    _, blake2b, trusted = _tools()
    try:
        fd = os.open(path, _READ_FLAGS)
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES or not trusted(st):
            return None
        data = os.read(fd, st.st_size + 1)  # its size, not the limit: a 1 MB buffer a read costs more than the read
    except OSError:
        return None
    finally:
        os.close(fd)
    digest, body = data[:32], data[32:]
    if blake2b(body).digest() != digest:
        return None
    try:
        code = marshal.loads(body)
    except (EOFError, ValueError, TypeError):
        return None
    return code if type(code) is CodeType and code.co_filename == filename else None


def _keep(path: str, body: bytes) -> None:
    """Queue ``body`` (marshalled code) to be written to ``path`` when the process exits."""
    from passprice.digests import blake2b

    if not _pending:
        import atexit

        atexit.register(flush)
    _pending[path] = blake2b(body).digest() + body


def flush() -> None:
    """Write the code this process compiled to the cache folder, each file ``0o600`` through a temporary file and a
    rename (not flushed to disk: a file a crash cuts short fails its checksum and is compiled again); then, past
    :data:`MAX_SCRIPTS` files, remove the older half. Silently nothing when the folder cannot be written."""
    if not _pending:
        return
    from passprice.cachefolder import make_folders

    pending = dict(_pending)
    _pending.clear()
    folders = set()
    for path, data in pending.items():
        folder = os.path.dirname(path)
        if folder not in folders:
            try:
                make_folders(folder, 0o700)
            except OSError:
                continue
            folders.add(folder)
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    for folder in folders:
        _prune(folder)


def _is_code_name(name: str) -> bool:
    """Whether ``name`` is one this module writes (a 40-digit hex key, ``.code``): only those are counted and
    removed, never a file of the user's that found its way into the folder."""
    return len(name) == 45 and name.endswith(".code") and _HEX.issuperset(name[:40])


_HEX = frozenset("0123456789abcdef")


def _prune(folder: str) -> None:
    """Remove the older half of the kept code when the folder holds more than :data:`MAX_SCRIPTS` files. The files
    are counted by name first and looked at (``stat``) only past the limit: every process that compiles a script
    prunes, and a status for each of hundreds of files cost it more than the compiling (about 15 M instructions)."""
    try:
        with os.scandir(folder) as entries:
            kept = [e for e in entries if _is_code_name(e.name)]
        if len(kept) <= MAX_SCRIPTS:
            return
        aged = sorted((e.stat().st_mtime_ns, e.path) for e in kept)
        for _, path in aged[: len(aged) - MAX_SCRIPTS // 2]:
            os.unlink(path)
    except OSError:
        return


def forget() -> None:
    """Drop what this process has compiled and not yet written (the tests use it)."""
    _pending.clear()


if __name__ == "__main__":  # pragma: no cover - python -m passprice.generated --write
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m passprice.generated --write")
    print(f"{write()} method scripts written to {SHIPPED}")
