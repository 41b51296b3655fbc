"""The code kept for the methods attrs generates (passprice.generated) is the code attrs' own compilation makes: a
class built from the cache behaves as one compiled as ever, in another process with another hash seed too; a damaged,
foreign or shared file is ignored and replaced; ``PASSPRICE_NO_CACHE`` bypasses it; an attrs without the hook falls
back to compiling; a warm price compiles none of passprice's methods."""

from __future__ import annotations

import builtins
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attr._make
import attrs
import pytest

from cli_helpers import REPO
from passprice import generated


@pytest.fixture
def code_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty cache folder of this test's own, the hook installed; the folder the code is kept in."""
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PASSPRICE_NO_CACHE", raising=False)
    was = attr._make._compile_and_eval
    assert generated.install()
    generated.forget()
    yield Path(generated._folder())
    generated.forget()
    attr._make._compile_and_eval = was


def compiled_scripts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the scripts ``compile`` is called on from now on (a miss compiles; a hit does not)."""
    names: list[str] = []
    real = builtins.compile

    def counting(source: Any, filename: Any, *args: Any, **kwargs: Any) -> Any:
        names.append(str(filename))
        return real(source, filename, *args, **kwargs)

    monkeypatch.setattr(builtins, "compile", counting)
    return names


def positive(_: Any, __: Any, value: int) -> None:
    if value <= 0:
        raise ValueError(f"not positive: {value}")


def probe_classes() -> tuple[type, type, type]:
    """Three classes of a passprice module name, built anew: frozen with a validator, a converter, a default
    factory; one whose hash reads no field (attrs' tuple is then a folded constant); one that caches its hash."""

    @attrs.frozen
    class Probe:
        __module__ = "passprice._probe"
        size: int = attrs.field(validator=positive)
        name: str = attrs.field(default="x", converter=str)
        tags: tuple[str, ...] = attrs.field(factory=tuple)

    @attrs.frozen
    class Bare:
        __module__ = "passprice._probe"
        note: str = attrs.field(default="", eq=False)

    @attrs.frozen(cache_hash=True)
    class Cached:
        __module__ = "passprice._probe"
        value: float

    return Probe, Bare, Cached


def methods(cls: type) -> dict[str, Any]:
    return {n: getattr(cls, n).__code__ for n in ("__init__", "__eq__", "__hash__", "__repr__")}


def test_a_class_built_from_the_cache_is_the_class_attrs_compiles(
    code_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = compiled_scripts(monkeypatch)
    first = probe_classes()  # a miss: compiled, kept at exit
    assert sum("passprice._probe" in n for n in names) == 3
    generated.flush()
    assert len(list(code_dir.glob("*.code"))) == 3
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in code_dir.glob("*.code"))
    names.clear()
    again = probe_classes()  # a hit: nothing compiled
    assert not [n for n in names if "passprice._probe" in n]
    generated.uninstall()
    plain = probe_classes()  # attrs' own compilation
    for cached, own in zip(again, plain, strict=True):
        assert methods(cached) == methods(own)  # co_code, constants (the hash's number), names, lines and columns
    probe, bare, cached_hash = again
    probe_own, bare_own, cached_own = plain
    a = probe(3, 7, ("t",))
    assert a.name == "7" and a == probe(3, "7", ("t",)) and a != probe(4, "7", ("t",))
    assert hash(a) == hash(probe_own(3, "7", ("t",)))  # the same class name: the same number in the hash
    assert repr(a) == "Probe(size=3, name='7', tags=('t',))"
    with pytest.raises(ValueError, match="not positive: 0"):
        probe(0)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        a.size = 4  # type: ignore[misc]
    assert probe(1).tags == () and probe(1).tags is not None
    assert hash(bare("a")) == hash(bare_own("b")) and bare("a") == bare("b")
    assert hash(cached_hash(1.5)) == hash(cached_own(1.5)) == hash(cached_hash(1.5))
    assert first[0](3, 7, ("t",)) != a  # another class (each call builds new ones), equal fields or not


def test_a_damaged_or_shared_file_is_ignored_and_replaced(code_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    probe_classes()
    generated.flush()
    files = sorted(code_dir.glob("*.code"))
    damaged, shared, foreign = files
    damaged.write_bytes(damaged.read_bytes()[:-5] + b"\x00" * 5)  # fails its checksum
    shared.chmod(0o620)  # writable by the group: not read
    body = foreign.read_bytes()[32:]  # another script's code under this file's name, checksum and all
    import marshal

    from passprice.digests import blake2b

    other = marshal.dumps(compile("x = 1", "<attrs generated methods passprice._other>", "exec"))
    foreign.write_bytes(blake2b(other).digest() + other)
    assert body
    names = compiled_scripts(monkeypatch)
    probe_classes()
    assert sum("passprice._probe" in n for n in names) == 3
    generated.flush()  # replaced: read back whole by the next build
    names.clear()
    probe_classes()
    assert not [n for n in names if "passprice._probe" in n]


def test_no_cache_and_another_attrs_fall_back_to_compiling(code_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PASSPRICE_NO_CACHE", "1")
    probe_classes()
    generated.flush()
    assert not code_dir.exists()
    monkeypatch.delenv("PASSPRICE_NO_CACHE")
    generated.uninstall()

    def other_signature(source: str, namespace: dict[str, Any]) -> None:  # an attrs whose private function changed
        raise AssertionError("not called")

    monkeypatch.setattr(attr._make, "_compile_and_eval", other_signature)
    assert not generated.install()
    assert attr._make._compile_and_eval is other_signature


_PROBE = """
import builtins, sys
import attrs
from passprice import generated
assert generated.install()
compiled = []
real = builtins.compile
def counting(source, filename, *a, **k):
    compiled.append(filename)
    return real(source, filename, *a, **k)
builtins.compile = counting
@attrs.frozen
class Probe:
    __module__ = "passprice._probe"
    size: int
    name: str = "x"
cached = Probe
generated.uninstall()
@attrs.frozen
class Probe:
    __module__ = "passprice._probe"
    size: int
    name: str = "x"
same = all(getattr(cached, n).__code__ == getattr(Probe, n).__code__ for n in ("__init__", "__eq__", "__hash__"))
print(len(str(hash("<attrs generated hash passprice._probe.Probe>"))), compiled.count(
    "<attrs generated methods passprice._probe.Probe>"), same, hash(cached(1)) == hash(Probe(1)))
"""


def test_another_process_with_another_hash_seed_reads_the_code_kept(tmp_path: Path) -> None:
    # attrs' __hash__ starts from hash() of the class's name, which differs with the hash seed: the code kept is
    # keyed without it, and this process's number is put back. Two seeds whose numbers have the same width share a
    # file (the stand-in keeps every column where it was).
    env = {**os.environ, "PASSPRICE_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("PASSPRICE_NO_CACHE", None)

    def run(seed: int) -> list[str]:
        done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, cwd=REPO,
                              env={**env, "PYTHONHASHSEED": str(seed)})
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    widths: dict[str, int] = {}
    for seed in range(1, 40):
        width, compiled, same, equal_hash = run(seed)
        assert same == "True" and equal_hash == "True"  # the code run is attrs' own, hash and all
        if width in widths:
            assert compiled == "1"  # only attrs' own compilation after uninstall: the cached class was read
            break
        assert compiled == "2"  # a width not seen yet: compiled (and kept), then attrs' own
        widths[width] = seed
    else:
        raise AssertionError(f"no two seeds of the same width: {widths}")


_PRICE = """
import builtins
compiled = []
real = builtins.compile
def counting(source, filename, *a, **k):
    compiled.append(str(filename))
    return real(source, filename, *a, **k)
builtins.compile = counting
import sys
from passprice import generated
if sys.argv[1:] == ["unshipped"]:
    generated.SHIPPED = "/nonexistent/methods"  # the cache folder alone
from passprice.cli import cli
try:
    cli(["price", "r1-qwen7b-h200", "--json"], prog_name="passprice")
except SystemExit as e:
    assert e.code == 0, e.code
names = [n for n in compiled if n.startswith("<attrs generated methods passprice.")]
print("widths:" + ",".join(str(len(str(hash(f"<attrs generated hash {n[25:-1]}>")))) for n in names))
print("compiled:" + ",".join(names))
"""


def test_a_warm_price_compiles_none_of_passprices_methods(tmp_path: Path) -> None:
    env = {**os.environ, "PASSPRICE_CACHE_DIR": str(tmp_path / "cache"), "PYTHONHASHSEED": "0"}
    env.pop("PASSPRICE_NO_CACHE", None)
    lines = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", _PRICE, "unshipped"], capture_output=True, text=True, cwd=REPO,
                              env=env)
        assert done.returncode == 0, done.stderr
        lines.append(done.stdout.splitlines()[-1])
    cold, warm = (set(filter(None, line.removeprefix("compiled:").split(","))) for line in lines)
    assert "<attrs generated methods passprice.serving.Serving>" in cold  # the first run compiles them all
    assert warm == set()


def test_a_cold_price_compiles_only_scripts_of_a_width_not_shipped(tmp_path: Path) -> None:
    # An empty cache folder: every script of passprice's classes comes from the package's methods folder, but for a
    # class whose __hash__ number (this seed's) has a width the folder does not ship.
    env = {**os.environ, "PASSPRICE_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("PASSPRICE_NO_CACHE", None)
    for seed in ("0", "3"):
        done = subprocess.run([sys.executable, "-c", _PRICE], capture_output=True, text=True, cwd=REPO,
                              env={**env, "PYTHONHASHSEED": seed})
        assert done.returncode == 0, done.stderr
        widths, names = (line.split(":", 1)[1] for line in done.stdout.splitlines()[-2:])
        assert not set(map(int, filter(None, widths.split(",")))) & set(generated.SHIPPED_WIDTHS), names
        assert len(list(filter(None, names.split(",")))) <= 3, names  # 2 of the 100-odd under seed 0


def test_pruning_removes_only_kept_code(code_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(generated, "MAX_SCRIPTS", 2)
    code_dir.mkdir(parents=True)
    mine = [code_dir / "notes.code", code_dir / f"{'g' * 40}.code", code_dir / "x.txt"]
    for p in mine:
        p.write_text("mine\n", encoding="utf-8")
    probe_classes()
    generated.flush()  # three kept, past the two allowed: the older half of the kept code removed
    assert all(p.read_text(encoding="utf-8") == "mine\n" for p in mine)
    assert 0 < len([p for p in code_dir.glob("*.code") if p not in mine]) <= 2


_EARLY = """
import builtins, sys
compiled = []
real = builtins.compile
def counting(source, filename, *a, **k):
    compiled.append(str(filename))
    return real(source, filename, *a, **k)
builtins.compile = counting
from passprice import generated
generated.SHIPPED = "/nonexistent/methods"  # the cache folder alone
generated.install_early()
import attrs
assert not any(f is generated._AfterAttrsBuilder for f in sys.meta_path)  # gone once attr._make was found
v = attrs.validators.instance_of(int)
v2 = attrs.validators.instance_of(int)
print(v == v2, hash(v) == hash(v2), repr(v).startswith("<instance_of validator for type <class 'int'>"))
print("compiled:" + ",".join(n for n in compiled if n.startswith("<attrs generated methods attr.validators.")))
"""


def test_the_console_script_keeps_attrs_own_validators_methods_too(tmp_path: Path) -> None:
    # passprice.entry puts the hook in place before attrs is imported: attrs' validators (defined with attrs itself
    # at its import) are compiled once, then read from the cache, and behave as attrs' own.
    env = {**os.environ, "PASSPRICE_CACHE_DIR": str(tmp_path / "cache"), "PYTHONHASHSEED": "0"}
    env.pop("PASSPRICE_NO_CACHE", None)
    lines = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", _EARLY], capture_output=True, text=True, cwd=REPO, env=env)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[0] == "True True True"
        lines.append(done.stdout.splitlines()[-1])
    cold, warm = (set(filter(None, line.removeprefix("compiled:").split(","))) for line in lines)
    assert "<attrs generated methods attr.validators._InstanceOfValidator>" in cold
    assert warm == set()



_MAKE_OWN = """
import builtins, sys
compiled = []
real = builtins.compile
def counting(source, filename, *a, **k):
    compiled.append(str(filename))
    return real(source, filename, *a, **k)
builtins.compile = counting
if sys.argv[1] == "hook":
    from passprice import generated
    generated.SHIPPED = "/nonexistent/methods"  # the cache folder alone
    generated.install_early()
import attr._make as m
assert "compile" not in vars(m)  # the stand-in is gone once the module has run
methods = [getattr(getattr(m, c), f) for c in ("Attribute", "_CountingAttr", "ClassProps", "Factory", "Converter")
           for f in ("__hash__", "__eq__", "__repr__")]
codes = [f.__code__ for f in methods if "<attrs generated" in getattr(getattr(f, "__code__", None), "co_filename", "")]
print(len(codes), hash(repr([(c.co_filename, c.co_code, c.co_consts, c.co_names, c.co_linetable) for c in codes])))
f = m.Factory(list)
print(f == m.Factory(list), hash(f) == hash(m.Factory(list)), repr(f))
print("compiled:" + ",".join(n for n in compiled if " attr._make." in n))
"""


def test_the_classes_attr_make_defines_as_it_runs_are_kept_too(tmp_path: Path) -> None:
    # attr._make builds Attribute, Factory, Converter … with its own _add_hash/_add_eq/_add_repr while it runs,
    # before the hook can wrap its _compile_and_eval: their scripts are read from the cache through the module's
    # "compile", the same code as attrs' own compilation (under each hash seed: the number __hash__ starts from).
    env = {**os.environ, "PASSPRICE_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("PASSPRICE_NO_CACHE", None)

    def run(how: str, seed: str) -> list[str]:
        done = subprocess.run([sys.executable, "-c", _MAKE_OWN, how], capture_output=True, text=True, cwd=REPO,
                              env={**env, "PYTHONHASHSEED": seed})
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[1] == "True True Factory(factory=<class 'list'>, takes_self=False)"
        return done.stdout.splitlines()

    for seed in ("0", "1"):
        own = run("plain", seed)
        cold, warm = run("hook", seed), run("hook", seed)
        assert cold[0] == warm[0] == own[0] and int(own[0].split()[0]) >= 10  # the same code, each script
        assert "<attrs generated __hash__ attr._make.Attribute>" in cold[2]
        assert warm[2] == "compiled:"  # read from the cache, none compiled


@pytest.fixture(scope="module")
def shipped_scripts() -> dict[str, tuple[str, str]]:
    """What ``python -m passprice.generated --write`` would write today: each file's name, script name and text."""
    return generated.collect()


def test_the_shipped_methods_folder_holds_today_s_scripts(shipped_scripts: dict[str, tuple[str, str]]) -> None:
    # Regenerate with `python -m passprice.generated --write` when a class is added or changed (README).
    folder = Path(generated.SHIPPED)
    files = {p.name: p.read_text(encoding="utf-8") for p in folder.glob("*.src")}
    assert sorted(files) == sorted(shipped_scripts)
    assert all(files[name] == text for name, (_, text) in shipped_scripts.items())
    names = {filename for filename, _ in shipped_scripts.values()}
    assert "<attrs generated methods passprice.serving.Serving>" in names
    assert "<attrs generated methods attr.validators._InstanceOfValidator>" in names
    assert "<attrs generated __hash__ attr._make.Attribute>" in names
    # a class with a __hash__: its script in each width shipped, the stand-in's 7s of that width
    serving = [t for f, t in shipped_scripts.values() if f.endswith("passprice.serving.Serving>")]
    assert len(serving) == len(generated.SHIPPED_WIDTHS) == 3
    assert sorted(sum(t.count(f" {'7' * w},\n") for t in serving) for w in (18, 19, 20)) == [1, 1, 1]
    assert sorted(sum(t.count(f" {'7' * w},\n") for w in (18, 19, 20)) for t in serving) == [1, 1, 1]


def test_shipped_code_is_the_code_compile_makes(shipped_scripts: dict[str, tuple[str, str]]) -> None:
    # from __future__ import annotations here as in generated.py and attr._make: compile() inherits its flag

    def named(code: Any, filename: str) -> bool:
        return code.co_filename == filename and all(
            named(c, filename) for c in code.co_consts if type(c) is type(code))

    assert len(shipped_scripts) > 500
    for filename, text in shipped_scripts.values():
        code, _ = generated._shipped(filename, text)
        own = compile(text, filename, "exec")
        assert code is not None and code == own and code.co_flags == own.co_flags, filename
        assert [c.co_flags for c in code.co_consts if type(c) is type(code)] == [
            c.co_flags for c in own.co_consts if type(c) is type(own)]
        assert named(code, filename)


def test_a_shipped_script_is_read_not_compiled_and_a_damaged_one_is_compiled(
    code_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    recorded: list[tuple[str, str, int]] = []
    monkeypatch.setattr(generated, "_recorded", recorded)
    monkeypatch.setattr(generated, "SHIPPED", str(tmp_path / "methods"))
    probe_classes()
    generated.forget()  # the cache folder stays empty
    monkeypatch.setattr(generated, "_recorded", None)
    shipped = tmp_path / "methods"
    shipped.mkdir()
    for filename, text, _ in recorded:
        (shipped / generated.shipped_name(filename, text)).write_text(text, encoding="utf-8")
    assert len(recorded) == 3
    names = compiled_scripts(monkeypatch)
    generated._listed.clear()
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    probe, _, cached_hash = probe_classes()
    assert not [n for n in names if "passprice._probe" in n]  # from the folder (its source compiled by importlib)
    assert len(list(shipped.glob("__pycache__/*.pyc"))) == 3  # as a module's
    generated.flush()
    assert not list(code_dir.glob("*.code"))  # nothing kept in the cache folder: the package ships it
    a = probe(3, 7, ("t",))
    assert a == probe(3, "7", ("t",)) and repr(a) == "Probe(size=3, name='7', tags=('t',))"
    assert hash(cached_hash(1.5)) == hash(cached_hash(1.5))
    generated.uninstall()
    own = probe_classes()
    generated.install()
    assert hash(a) == hash(own[0](3, "7", ("t",)))
    for p in shipped.glob("__pycache__/*"):
        p.unlink()
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # no .pyc written: kept in the cache folder instead
    names.clear()
    probe_classes()
    assert not [n for n in names if "passprice._probe" in n] and not list(shipped.glob("__pycache__/*"))
    generated.flush()
    assert len(list(code_dir.glob("*.code"))) == 3
    for p in code_dir.glob("*.code"):
        p.unlink()
    for p in shipped.glob("*.src"):  # damaged: not code
        p.write_text("def (\n", encoding="utf-8")
    names.clear()
    probe_classes()
    assert sum("passprice._probe" in n for n in names) == 3  # compiled as ever (importlib tried the file by its path)
    generated.flush()
    assert len(list(code_dir.glob("*.code"))) == 3
