"""Hostile inputs against session 45's merges (issue 13), each escape kept as its reproducer, built in the test.

- (1) A review priced HEAD in its own process only when HEAD's pricing-model digest differed from the running code's;
  the digest leaves out ``pins.NOT_PRICING`` (``schema``, ``registry``, ``files`` …), and every number of every fact
  and lock is read by ``schema.toml_loads``. A pull request whose ``schema.parse_float`` read ``4.8`` as ``4.0`` (the
  H200's ``memory.bandwidth``) moved five locked prices by -16.67 % while the review said "no lock affected; 10 locks
  unaffected" (exit 0): the worst escape class, a lock a change slips past.
- (2) ``lock --name X`` beside a lock file refused only for its byte-order mark, whose ``[lock]`` table opens the file
  and names X: ``locks.name_as_read`` read the first line with the mark as no header, said "its [lock] table has no
  name", and the second lock of name X was written (exit 0).
- (3) A build record (``site-packages/passprice/pricing_model.json``) of arrays nested 100,000 deep, within its
  256 KiB: ``pins._recorded`` let ``json``'s RecursionError through, a traceback out of every command taking the
  pricing model's digest (``check``, ``diff``, ``lock``).
- (4) ``audit LOCK`` (or SERVING) run outside any registry named each cited document's stored excerpt
  ``sources/excerpts/X.txt (the text read, from the registry's top folder)``, a folder the reader had not, where
  ``audit --source ID`` and the README say ``the built-in registry's sources/excerpts/X.txt``.
- (5) A source record's excerpt (or document path) naming ``.git/config`` passed ``check`` (a regular file inside the
  registry), and ``init`` copied the checkout's git configuration into the new registry's ``.git/config``: a
  ``core.fsmonitor`` command there ran at every git command once the user ran ``git init`` in it.
- (6) Compiled code committed in ``src/passprice`` (an unchecked hash-based ``__pycache__/schema.cpython-311.pyc``,
  compiled from (1)'s ``schema.py``): Python imports it in place of the source, no digest covers it, and the review
  neither read it (only ``.py`` files of the code were materialized) nor named it: "no changes to facts, registry,
  locks or the pricing model; 10 locks unaffected" (exit 0) while the checkout priced 830.1 tokens/s, not 996.1.
- (7) ``locks.name_as_read`` read a ``name`` under an array of tables ``[[lock]]`` as the lock's name ("its [lock]
  table's name reads X"), a clash said of a file whose ``lock`` is an array (264 of 4,356 generated broken locks
  without a byte-order mark; with (2)'s, 1,421 of 8,712 verdicts wrong, mended by removing the broken line, now 0).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke

# --- (1) a figure read through a module the pricing model's digest leaves out ---------------------------------------

SLOW_FLOAT = '''    value = float(text)
    if math.isinf(value) and "inf" not in text:'''


#: What a side copied from the running package leaves out: compiled files, the JSON records, and a wheel's ``_data``
#: (an installed package's copy of the registry and schemas; a checkout has none: its schemas are ``schema/``).
CHECKOUT_ONLY = shutil.ignore_patterns("__pycache__", "*.json", "_data")

def _side(tmp_path: Path, name: str, schema_edit: bool) -> Path:
    from passprice import pins

    root = copy_root(tmp_path / name)
    shutil.copytree(REPO / "schema", root / "schema")
    package = root / "src" / "passprice"
    shutil.copytree(pins.PACKAGE, package, ignore=CHECKOUT_ONLY)
    if schema_edit:
        text = (package / "schema.py").read_text(encoding="utf-8")
        assert SLOW_FLOAT in text
        (package / "schema.py").write_text(text.replace(SLOW_FLOAT, SLOW_FLOAT.replace(
            "\n", '\n    if text == "4.8":\n        value = 4.0\n', 1)), encoding="utf-8")
    return root


def test_1_a_side_whose_unpinned_module_differs_is_priced_by_its_own_code(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice import pins, sidecode

    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    same, edited = _side(tmp_path, "same", False), _side(tmp_path, "edited", True)
    running = pins.pricing_model_digest()
    alike = sidecode.code_of(same / "src" / "passprice")
    assert (alike.model, alike.running) == (running, True)
    other = sidecode.code_of(edited / "src" / "passprice")
    # the same pricing model (schema.py is no part of it), but not the running code: priced in its own process
    assert (other.model, other.running) == (running, False)
    assert sidecode._unpinned_changes(edited / "src" / "passprice") == ("schema.py",)
    (edited / "src" / "passprice" / "stray.py").write_text("X = 1\n", encoding="utf-8")
    assert sidecode._unpinned_changes(edited / "src" / "passprice") == ("schema.py", "stray.py")


def test_1_the_review_sees_a_price_moved_by_a_number_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    base, head = _side(tmp_path, "base", False), _side(tmp_path, "head", True)
    result = invoke("diff", str(base), str(head), root=base)
    # was exit 0: "no fact changed; no lock affected; 10 locks unaffected; passprice's own code changed (1 file)"
    assert result.exit_code == 1, result.output
    assert "5 locks affected, 5 prices moved unreviewed; 5 locks unaffected" in result.stdout
    assert "tokens/s  996.1 → 830.1  (-16.67 %)" in result.stdout  # r1-qwen7b-h200: 4.0 / 4.8 of its memory pass
    assert result.stderr.startswith(
        "passprice: refused: it moves the locked prices of qwen3-30b-a3b-h200, qwen35-27b-h200-mtp, r1-qwen7b-h200, "
        "r1-qwen7b-h200-best, r1-qwen7b-h200-llamacpp without re-locking")


# --- (2) lock --name beside a lock refused for its byte-order mark --------------------------------------------------

R1 = "r1-qwen7b-h200"


def test_2_a_lock_file_opening_with_a_byte_order_mark_is_read_past_it(tmp_path: Path) -> None:
    # the file is refused for its mark alone ("save it as UTF-8 without BOM"), which mends it to a lock named R1; its
    # first line, "\ufeff[lock]", read as no header, so its name was "has no name" and the lock was written (exit 0):
    # two locks of one name once the mark is removed
    root = copy_root(tmp_path)
    locks = root / "locks"
    text = (locks / f"{R1}.lock.toml").read_text(encoding="utf-8")
    (locks / f"{R1}.lock.toml").unlink()
    head, lock = text.split("\n[lock]\n")
    (locks / "other.lock.toml").write_text("\ufeff[lock]\n" + lock + "\n" + head + "\n", encoding="utf-8")
    from passprice import locks as locking

    data = (locks / "other.lock.toml").read_bytes()
    assert locking.name_as_read(data, R1) == (True, f"its [lock] table's name reads {R1!r} at line 5")
    assert locking.name_as_read(b"\xef\xbb\xbf[lock]\nname = 'X'\nx =\n", "X") == (
        True, "its [lock] table's name reads 'X' at line 2")
    result = invoke("lock", R1, "--name", R1, root=root)
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"passprice: error: {locks / R1}.lock.toml: lock.name: '{R1}' is also the name of locks/other.lock.toml, "
        "which does not read (locks/other.lock.toml: starts with a byte-order mark (U+FEFF): save it as UTF-8 without "
        f"BOM), though its [lock] table's name reads '{R1}' at line 5, read line by line: a lock's name must be unique "
        "(`passprice check` refuses the two once it is mended): fix it or remove it, or lock this one under another "
        "name (--name NAME, or -o locks/NAME.lock.toml); nothing written\n")
    assert not (locks / f"{R1}.lock.toml").exists()


# --- (3) a build record nested past the recursion limit ---------------------------------------------------------------


def test_3_a_build_record_nested_deep_is_no_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import functools

    from passprice import pins

    record = tmp_path / "pricing_model.json"
    record.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    assert record.stat().st_size <= pins.RECORD_BYTES
    monkeypatch.setattr(pins, "_record_file", lambda: record)
    assert pins._recorded(str(pins.PACKAGE)) is None  # was RecursionError
    monkeypatch.setattr(pins, "_running", functools.cache(pins._running.__wrapped__))  # taken afresh, from the trees
    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    result = invoke("--no-cache", "check")
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and "RecursionError" not in result.output
    assert pins.pricing_model_digest() == pins._compute(str(pins.PACKAGE), kept=False)


# --- (4) audit outside a registry names the built-in registry's excerpt -----------------------------------------------


@pytest.mark.parametrize("form", ["text", "markdown"])
def test_4_audit_outside_any_registry_names_the_built_in_excerpt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 form: str) -> None:
    from click.testing import CliRunner

    from passprice.cli import cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PASSPRICE_ROOT", raising=False)
    result = CliRunner().invoke(cli, ["audit", "r1-qwen7b-h200", "--format", form])
    assert result.exit_code == 0, result.output
    from passprice.registry import embedded_root

    file = embedded_root().path / "sources" / "excerpts" / "cite102-excerpt.txt"
    built_in = ("stored excerpt: the built-in registry's sources/excerpts/cite102-excerpt.txt (the lines quoted from "
                f"the text read; its file: {file})")  # tests/test_walk128.py: its absolute path, as the README says
    from passprice.tables import markdown_prose

    # markdown escapes the path's underscores (an installed package's passprice/_data/…)
    assert (built_in if form == "text" else markdown_prose(built_in)) in result.stdout
    # was "stored excerpt: sources/excerpts/cite102-excerpt.txt (the text read, from the registry's top folder)"
    assert "from the registry's top folder" not in result.stdout
    inside = invoke("audit", "r1-qwen7b-h200")  # in the checkout: its own file, named from its top folder
    assert ("    stored excerpt: sources/excerpts/cite102-excerpt.txt (the lines quoted from the text read, "
            "from the registry's top folder)"
            in inside.stdout.splitlines())


# --- (5) a document in git's own folder ------------------------------------------------------------------------------

H200_PAGE = "sources/nvidia-h200-product-page.toml"
H200_EXCERPT = 'excerpt = "sources/excerpts/cite102-excerpt.txt"'


@pytest.mark.parametrize(("named", "key"), [(".git/config", "excerpt"), (".GIT/config", "excerpt"),
                                            ("sources/.git/config", "excerpt"), (".git/config", "path")])
def test_5_a_document_in_git_s_own_folder_is_refused_and_never_copied(tmp_path: Path, named: str, key: str) -> None:
    root = copy_root(tmp_path)
    shutil.copytree(REPO / "schema", root / "schema")
    (root / named).parent.mkdir(parents=True)
    (root / named).write_text('[core]\n\tfsmonitor = "touch planted; false"\n', encoding="utf-8")
    record = root / H200_PAGE
    text = record.read_text(encoding="utf-8")
    assert H200_EXCERPT in text
    line = f'{key} = "{named}"' + ("" if key == "excerpt" else "\n" + H200_EXCERPT)
    record.write_text(text.replace(H200_EXCERPT, line), encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output  # was 0: a regular file inside the registry
    said = (f"passprice: error: {H200_PAGE}: source.{key}: {named} lies in git's own folder (.git), where git tracks "
            "no file (a review reads the document through git at each revision): put the document elsewhere in the "
            f"registry, and name it in source.{key}")
    assert said in result.stderr.splitlines(), result.stderr
    if key == "excerpt":
        made = invoke("init", str(tmp_path / "mine"), root=root)
        assert made.exit_code == 0, made.output
        assert not (tmp_path / "mine" / named.rsplit("/", 1)[0]).exists()  # was the checkout's .git/config, copied
        assert (tmp_path / "mine" / "sources" / "excerpts" / "cite90-excerpt.txt").is_file()  # the others are


# --- (6) compiled code committed beside the modules ------------------------------------------------------------------


def _git(root: Path, *args: str) -> None:
    import subprocess

    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                   capture_output=True)


def test_6_compiled_files_are_those_imported_unchecked(tmp_path: Path) -> None:
    import importlib.machinery
    import py_compile

    from passprice import sidecode

    package = tmp_path / "passprice"
    (package / "__pycache__").mkdir(parents=True)
    (package / "a.py").write_text("X = 1\n", encoding="utf-8")
    for mode, name in [(py_compile.PycInvalidationMode.TIMESTAMP, "a.t.pyc"),
                       (py_compile.PycInvalidationMode.CHECKED_HASH, "a.c.pyc"),
                       (py_compile.PycInvalidationMode.UNCHECKED_HASH, "a.u.pyc")]:
        py_compile.compile(str(package / "a.py"), cfile=str(package / "__pycache__" / name), invalidation_mode=mode)
    (package / "b.pyc").write_bytes(b"")  # sourceless, beside the modules
    (package / f"c{importlib.machinery.EXTENSION_SUFFIXES[0]}").write_bytes(b"")
    (package / "__pycache__" / "short.pyc").write_bytes(b"abc")  # no header: counted
    assert sidecode.compiled_files(package) == (  # the folder's own files, then its subfolders'
        "b.pyc", f"c{importlib.machinery.EXTENSION_SUFFIXES[0]}", "__pycache__/a.u.pyc", "__pycache__/short.pyc")


def test_6_the_review_reads_and_names_compiled_code_a_revision_commits(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import py_compile
    import sys

    monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / "cache"))
    root = _side(tmp_path, "repo", False)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    edited = _side(tmp_path, "edited", True) / "src" / "passprice" / "schema.py"
    cached = root / "src" / "passprice" / "__pycache__" / f"schema.{sys.implementation.cache_tag}.pyc"
    cached.parent.mkdir()
    py_compile.compile(str(edited), cfile=str(cached), dfile="src/passprice/schema.py",
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    _git(root, "add", "-f", str(cached))
    _git(root, "commit", "-qm", "a cache")
    result = invoke("diff", "HEAD~1", "HEAD", root=root)
    # was exit 0: "no changes to facts, registry, locks or the pricing model; 10 locks unaffected"
    assert result.exit_code == 1, result.output
    assert "5 locks affected, 5 prices moved unreviewed; 5 locks unaffected; passprice's own code changed (1 file)" \
        in result.stdout
    assert "tokens/s  996.1 → 830.1  (-16.67 %)" in result.stdout
    assert (f"  src/passprice/__pycache__/schema.{sys.implementation.cache_tag}.pyc (compiled code, imported in place "
            "of its source)") in result.stdout.splitlines()
    assert result.stderr.startswith("passprice: refused: it moves the locked prices of qwen3-30b-a3b-h200, ")


# --- (7) a name under [[lock]] ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "verdict"), [
    ('[[lock]]\nname = "X"\nx = = 1\n', (False, "its [lock] table has no name")),
    ('[card]\nnote = "a"\n[[lock]]\nformat = 2\nname = "X"\nx = = 1\n', (False, "its [lock] table has no name")),
    ('[[lock]]\nname = "Y"\n[lock.sub]\nx = = 1\n', (False, "its [lock] table has no name")),
    ('[lock]\nname = "X"\nx = = 1\n[[card]]\nname = "Y"\n', (True, "its [lock] table's name reads 'X' at line 2")),
])
def test_7_a_name_under_an_array_of_lock_tables_is_no_lock_name(text: str, verdict: tuple[bool | None, str]) -> None:
    from passprice import locks

    assert locks.name_as_read(text.encode("utf-8"), "X") == verdict
