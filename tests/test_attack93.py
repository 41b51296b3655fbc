"""Attack93 (issue 13): hostile input against what changed lately, each reproducer built in its test.

- (1) Three reads of a TOML file past the schema's loader used a bare ``tomllib.loads`` catching
  ``TOMLDecodeError`` alone: a lock beside the one written holding an integer of 5,000 digits (``ValueError``) or
  arrays nested 3,000 deep (``RecursionError``) made ``lock --name`` (``locking.require_unique_name``), ``lock
  --update`` and ``reproduce`` of a first-format lock (``locks.update_name_clash``) a traceback; an audit of a
  committed lock whose source record, at the lock's commit, nested 3,000 deep or held ``source`` as a string made
  ``audit LOCK`` a traceback (``RecursionError``; ``AttributeError: 'str' object has no attribute 'get'``). Each now
  reads through ``schema.toml_loads`` (every failure a ``TOMLDecodeError``), and such a file is passed over as one
  that does not parse was.
- (2) A registry file of another user's, mode ``0644`` (readable, not writable by this user), in a folder open to all
  (mode ``0777``) was replaced by ``fact set``, ``lock --update`` and ``calibrate`` run as ``nobody``, exit 0, the
  file then ``nobody``'s: ``check_writable`` refused a file with no write bit at all, not one this user may not write.
  Now refused before anything is written (exit 2), naming the file, its owner and mode.
- (3) A source record whose ``source.path`` names no document of this registry (``../secret.md``, a FIFO, a folder):
  ``sources``, ``check``, ``facts`` and ``diff`` refuse it (exit 2), while ``audit --source ID`` printed it as
  ``../secret.md in this registry`` and ``audit --fact CARD:PATH`` of a fact citing it went on, exit 0. Both now
  refuse it with the line ``sources`` gives (exit 2).
- (4) ``lock --update locks/X.lock.toml`` (the lock file given where the serving goes, as ``reproduce`` and ``audit``
  take it) said "locks/X.lock.lock.toml: no lock to update", a file nobody named; now the line names the file given
  and the command that re-locks it.
- (5) A GGUF header holding a metadata string past ``KEEP_STRING_LIMIT`` (64 KiB: an embedded
  ``tokenizer.huggingface.json``; here a 100,000-byte ``general.name``), kept as its length (``LongString``): its
  checkpoint digest (``pins.checkpoint_digest``) was a ``TypeError`` traceback ("Object of type LongString is not
  JSON serializable"), so ``lock --checkpoint FILE.gguf`` failed, exit 1; ``import`` of it passed (exit 0), after which
  ``check``, every ``lock`` of it and every later ``import`` (of any header, its entry written first) were that
  traceback. The digest now takes a long string as its length.
- (6) ``checkpoints.checkpoint_label`` (and ``checkpoint_origin``), documented "raises nothing", raised
  ``RecursionError`` for an entry whose ``[entry]`` table holds arrays nested 3,000 deep: its own-lines read
  (``_entry_table``) caught ``TOMLDecodeError`` alone. (No command was seen to reach it before the entry's validation
  refused the file; the label is now ``None``, an entry that does not read.)
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_helpers import REPO, bad, copy_root, invoke
from test_hostile_61 import as_nobody, needs_root

R1 = "r1-qwen7b-h200"

#: Bodies tomllib fails on with an exception other than ``TOMLDecodeError``.
HOSTILE = {"digits": "x = " + "1" * 5000, "nesting": "x = " + "[" * 3000 + "]" * 3000}


def _only(root: Path, name: str) -> None:
    """Leave ``root``'s lock ``name`` alone in ``locks/`` (``check`` judges every lock: CPU)."""
    for other in (root / "locks").glob("*.lock.toml"):
        if other.name != f"{name}.lock.toml":
            other.unlink()


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_1a_lock_name_beside_a_lock_tomllib_fails_on(tmp_path: Path, kind: str) -> None:
    # before: ValueError (digits) / RecursionError (nesting) traceback, exit 1
    root = copy_root(tmp_path)
    _only(root, "gemma3-270m-h100")
    (root / "locks" / "evil.lock.toml").write_text(f'[lock]\nname = "zz93"\n{HOSTILE[kind]}\n')
    # passed over, it was written, exit 0; since left98 a file that does not parse and holds the name quoted may be
    # a lock of that name: refused, naming it and its problem (tests/test_left98.py); since left103 its [lock]
    # table's name is read line by line and said as found (tests/test_left103.py)
    problem = {"digits": "Exceeds the limit (4300 digits) for integer string conversion: value has 5000 digits",
               "nesting": "arrays or tables nested too deeply"}
    bad("lock", "gemma3-270m-h100", "--name", "zz93", root=root,
        says=f"lock.name: 'zz93' is also the name of locks/evil.lock.toml, which does not read "
             f"(locks/evil.lock.toml: not valid TOML: {problem[kind]}), though its [lock] table's name reads 'zz93' "
             "at line 2, read line by line")
    assert not (root / "locks" / "zz93.lock.toml").exists()
    (root / "locks" / "evil.lock.toml").write_text(f'[lock]\nname = "other"\n{HOSTILE[kind]}\n')
    result = invoke("lock", "gemma3-270m-h100", "--name", "zz93", root=root)  # one not holding the name: passed over
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("locked zz93 (price, locks serving gemma3-270m-h100): ")
    assert (root / "locks" / "zz93.lock.toml").is_file()


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_1b_a_first_format_update_beside_a_lock_tomllib_fails_on(tmp_path: Path, kind: str) -> None:
    # before: ValueError / RecursionError traceback from locks.update_name_clash, exit 1, in both commands
    root = copy_root(tmp_path)
    _only(root, R1)
    old = root / "locks" / "old.lock.toml"
    shutil.copy(REPO / "tests" / "data" / "locks-v1" / f"{R1}.lock.toml", old)
    (root / "locks" / "evil.lock.toml").write_text(f'[lock]\nname = "{R1}"\n{HOSTILE[kind]}\n')
    before = old.read_bytes()
    update = invoke("lock", "--update", "-o", str(old), root=root)
    assert update.exit_code == 2, update.output
    # the clash with the readable locks/r1-qwen7b-h200.lock.toml is still found; the unreadable file passed over
    assert update.stderr.startswith(f"passprice: error: {old}: lock.name: 'r1-qwen7b-h200' is also the name of "
                                    "locks/r1-qwen7b-h200.lock.toml: --update would write")
    assert old.read_bytes() == before
    again = invoke("reproduce", str(old), root=root)
    assert again.exit_code == 0, again.output


@pytest.mark.parametrize(
    "record",
    [lambda text: text + "\nzz = " + "[" * 3000 + "]" * 3000 + "\n",  # RecursionError
     lambda text: text + "\nzz = " + "1" * 5000 + "\n",  # ValueError
     lambda text: 'source = "a string"\n'],  # AttributeError on .get
    ids=["nesting", "digits", "not-a-table"],
)
def test_1c_an_old_locks_source_record_that_did_not_read_at_its_commit(tmp_path: Path, record: object) -> None:
    from test_diff import commit_all, git

    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    _only(path, "gemma3-270m-h100")
    git(path, "init", "-q", "-b", "main")
    source = path / "sources" / "nvidia-h100-datasheet.toml"
    good = source.read_text()
    source.write_text(record(good))  # type: ignore[operator]
    commit_all(path, "a hostile record")
    source.write_text(good)
    commit_all(path, "the record mended")
    result = invoke("audit", str(path / "locks" / "gemma3-270m-h100.lock.toml"), "--json", root=path)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    # a record that did not read at the lock's commit is passed over (as one added since is)
    assert out["sources_since_lock"] == [] and out["sources_compared"] is True


# 2. Another user's file of mode 0644 in a folder anyone may write.

FACT_SET = ("fact", "set", "h100_sxm5_80gb", "memory.bandwidth", "--value", "3.36", "--unit", "TB/s",
            "--provenance", "published", "--source", "nvidia-h100-datasheet", "--locator", "a table")


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A new folder under the system's temporary folder, mode 0755, removed afterwards: not under pytest's base
    folder, which another pytest run on the machine (as root) sets back to 0700 at its start, so that ``nobody``
    could not reach the copy mid-test ("/tmp/pytest-of-root: cannot read its files", 1 run in 3 beside others)."""
    import tempfile

    made = Path(tempfile.mkdtemp(prefix="attack93-"))
    made.chmod(0o755)
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


@needs_root
@pytest.mark.parametrize(("args", "file"), [
    (FACT_SET, "facts/cards/h100_sxm5_80gb.toml"),
    (("lock", "--update", "gemma3-270m-h100"), "locks/gemma3-270m-h100.lock.toml"),
    (("calibrate", "--stack", "llamacpp-cuda-2405"), "facts/stacks/llamacpp-cuda-2405.toml"),
], ids=["fact-set", "lock-update", "calibrate"])
def test_2_another_users_file_in_a_folder_open_to_all_is_not_replaced(
    open_folder: Path, args: tuple[str, ...], file: str
) -> None:
    # before: exit 0, the file replaced and owned by nobody (uid 65534) afterwards
    base = open_folder
    root = copy_root(base)
    for folder in (root, *(p for p in root.rglob("*") if p.is_dir())):
        folder.chmod(0o755)
    if not all(above.stat().st_mode & 0o001 for above in base.parents):
        pytest.skip(f"nobody may not pass a folder above {base}")
    # the modules the child needs, loaded while root may read them (a pyenv's library may lie under /root): the
    # command run whole on a scratch copy, nothing taken from the cache (the child bypasses it too; NumPy's C
    # extensions, or the digest's modules, failed to import in the child when the parent had read them from it)
    assert invoke("--no-cache", *args, root=copy_root(base / "scratch")).exit_code == 0
    path = root / file
    path.parent.chmod(0o777)
    path.chmod(0o644)
    before = path.read_bytes()

    def work() -> dict[str, object]:
        result = invoke(*args, root=root)
        return {"exit": result.exit_code, "stderr": result.stderr}

    seen = as_nobody(work)
    assert seen == {"exit": 2, "stderr": f"passprice: error: {path}: is read-only for this user (owned by user 0, mode "
                                         "644); passprice does not replace it\n"}, seen
    assert path.read_bytes() == before and path.stat().st_uid == 0
    assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith(".")) == []  # no temporary file left


def test_2_a_file_this_process_may_not_write_is_refused_before_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same refusal where the tests do not run as root: ``os.access`` saying what it says of another user's
    file (mode 0644, owner write bit set) is believed over the mode bits."""
    import os

    from passprice import files
    from passprice.errors import InputError

    path = tmp_path / "out.csv"
    path.write_text("old\n")
    path.chmod(0o644)
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **k: False if Path(p) == path else real(p, mode, **k))
    with pytest.raises(InputError) as said:
        files.write_atomically(path, "new\n", force=True)
    assert str(said.value) == (f"{path}: is read-only for this user (owned by user {os.getuid()}, mode 644); "
                               "passprice does not replace it")
    assert path.read_text() == "old\n"


# 3. audit --source and --fact of a source whose document is no file of the registry.

REVIEW = "passprice-card-review"


@pytest.mark.parametrize("kind", ["outside", "fifo", "folder"])
def test_3_audit_refuses_a_source_naming_no_document_of_the_registry(tmp_path: Path, kind: str) -> None:
    import os

    root = copy_root(tmp_path)
    (tmp_path / "secret.md").write_text("hunter2\n")
    if kind == "fifo":
        os.mkfifo(root / "facts" / "pipe.md")
    path, problem = {
        "outside": ("../secret.md", "../secret.md lies outside the registry (a document of this registry is a file "
                    "inside its root)"),
        "fifo": ("facts/pipe.md", "facts/pipe.md is a FIFO (named pipe), not a regular file of this registry"),
        "folder": ("facts", "facts is a folder, not a regular file of this registry"),
    }[kind]
    record = root / "sources" / f"{REVIEW}.toml"
    record.write_text(record.read_text().replace('path = "facts/cards/README.md"', f'path = "{path}"'))
    line = f"passprice: error: sources/{REVIEW}.toml: source.path: {problem}"
    listed = invoke("sources", root=root)  # as before: the good ones listed, the bad one said
    assert listed.exit_code == 2 and listed.stderr.splitlines() == [line]
    # before: exit 0, "… · ../secret.md in this registry"
    assert bad("audit", "--source", REVIEW, root=root) == [line.replace("sources/", f"{root}/sources/")]
    assert bad("audit", "--source", REVIEW, "--json", root=root) == [line.replace("sources/", f"{root}/sources/")]
    # before: exit 0, the fact's audit; now the line `facts h100_sxm5_80gb` gives
    said = bad("audit", "--fact", "h100_sxm5_80gb:host.capacity", root=root)
    assert said == bad("facts", "h100_sxm5_80gb", root=root)
    assert said[0].endswith(f"host.capacity.source: source '{REVIEW}' names no document of this registry: "
                            f"sources/{REVIEW}.toml: source.path: {problem}")
    # a fact citing another source audits as before
    assert invoke("audit", "--fact", "h100_sxm5_80gb:memory.bandwidth", root=root).exit_code == 0


# 4. lock --update given a lock file where the serving goes.


def test_4_lock_update_of_a_lock_file_names_it_and_the_way(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _only(root, "gemma3-270m-h100")
    lock = root / "locks" / "gemma3-270m-h100.lock.toml"
    before = lock.read_bytes()
    head = "a lock file where the serving goes: `lock --update SERVING` re-locks locks/SERVING.lock.toml; to re-lock "
    # before: "passprice: error: …/locks/gemma3-270m-h100.lock.lock.toml: no lock to update (write one without
    # --update)"
    assert bad("lock", "--update", str(lock), root=root) == [
        f"passprice: error: {lock}: {head}this file, `passprice lock --update -o {lock}`"]
    assert bad("lock", "--update", "gemma3-270m-h100.lock.toml", root=root) == [
        f"passprice: error: gemma3-270m-h100.lock.toml: {head}this file, `passprice lock --update gemma3-270m-h100`"]
    assert lock.read_bytes() == before
    # the ways it names work
    for way in (("--update", "-o", str(lock)), ("--update", "gemma3-270m-h100")):
        done = invoke("lock", *way, root=root)
        assert done.exit_code == 0, done.output
        assert done.stdout.startswith("locked gemma3-270m-h100 (price, locks serving gemma3-270m-h100): ")


# 5. A header holding a string longer than passprice keeps.


def test_5_a_header_with_a_string_past_the_kept_limit_is_digested(tmp_path: Path) -> None:
    from gguf import GGUFValueType

    from gguf_bytes import Meta, Tensor, encode
    from importable import importable_meta
    from passprice.gguf_header import KEEP_STRING_LIMIT, read_header
    from passprice.gguf_records import LongString
    from passprice.pins import checkpoint_content, checkpoint_digest

    root = copy_root(tmp_path)
    _only(root, "gemma3-270m-h100")
    tensors = [Tensor("token_embd.weight", (8, 16), 0, 0)]
    long = tmp_path / "long.gguf"
    long.write_bytes(encode([*importable_meta(), Meta("general.name", GGUFValueType.STRING, "x" * 100_000)], tensors))
    short = tmp_path / "short.gguf"
    short.write_bytes(encode([*importable_meta(), Meta("general.name", GGUFValueType.STRING, "short")], tensors))
    assert KEEP_STRING_LIMIT < 100_000
    header = read_header(long)
    assert header.metadata["general.name"] == LongString(100_000)
    assert checkpoint_content(header)["metadata"]["general.name"] == ["string", {"length": 100_000}]
    assert checkpoint_digest(header).startswith("sha256:")  # before: TypeError
    # before: exit 1, TypeError traceback
    done = invoke("lock", "--checkpoint", str(long), "--card", "h100_sxm5_80gb", "-o", str(tmp_path / "x.lock.toml"),
                  root=root)
    assert done.exit_code == 0, done.output
    assert invoke("import", str(long), "--name", "long", root=root).exit_code == 0  # as before
    # before: each a TypeError traceback (the import's entry written first)
    assert invoke("import", str(short), "--name", "short", root=root).exit_code == 0
    checked = invoke("check", root=root)
    assert checked.exit_code == 0 and checked.stdout.endswith("all holds\n"), checked.output
    again = invoke("lock", "--checkpoint", "long", "--card", "h100_sxm5_80gb", "-o", str(tmp_path / "y.lock.toml"),
                   root=root)
    assert again.exit_code == 0, again.output
    assert invoke("reproduce", str(tmp_path / "y.lock.toml"), root=root).exit_code == 0


# 6. The label of an entry nested past the parser.


def test_6_the_label_of_an_entry_nested_past_the_parser_is_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from passprice.checkpoints import checkpoint_label, checkpoint_origin
    from passprice.registry import Root

    monkeypatch.setenv("PASSPRICE_NO_CACHE", "1")
    root = copy_root(tmp_path)
    entry = root / "registry" / "checkpoints" / "gemma3-270m-q4_k_m.toml"
    text = entry.read_text()
    assert text.count('imported_by = "passprice 0.1.0"\n') == 1
    entry.write_text(text.replace('imported_by = "passprice 0.1.0"\n',
                                  'imported_by = "passprice 0.1.0"\nzz = ' + "[" * 3000 + "]" * 3000 + "\n"))
    registry = Root(root)
    # before: RecursionError from both
    assert checkpoint_label(registry, "gemma3-270m-q4_k_m", "origin") is None
    assert checkpoint_origin(registry, "gemma3-270m-q4_k_m") is None
