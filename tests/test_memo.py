"""The result memo (passprice.memo): a read-only command's replayed output is the output a fresh run prints, byte for
byte, and every kind of change to what the run depends on is a miss — never a stale replay.

Each run is a real process started the way the console script starts (``passprice.entry:main``). A run that must be
a replay is started with ``passprice.cli`` made unimportable: a run that falls through to the command line then
fails with "import of passprice.cli halted", so a replay is told from a fresh run by that alone. The runs a test
records patch :data:`passprice.memo.KEEP_NS` so that files the test has just written may be kept (a real run keeps
nothing that changed within 0.1 s before it); :data:`passprice.memo.TRUST_NS` keeps its real value, so those files
are hashed again at every lookup, as a file changed within the same tick of the file system's clock is.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.cli_helpers import REPO, copy_root

from passprice import cachefolder, memo, memorecord

CHILD = (
    "import sys\n"
    "from passprice import memo\n"
    "memo.KEEP_NS = (-10**18, -10**18)\n"
    "{patch}\n"
    "sys.argv[0] = 'passprice'\n"
    "from passprice.entry import main\n"
    "main()\n"
)
HALTED = "import of passprice.cli halted"
R1 = "r1-qwen7b-h200"
CARD = Path("facts") / "cards" / "h200_sxm_141gb.toml"


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    """A private registry (``root``), a cache folder, and the environment every run of a test gets."""
    root = copy_root(tmp_path)
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PASSPRICE_")}
    env["PASSPRICE_CACHE_DIR"] = str(cache)
    return {"root": root, "cache": cache, "env": env, "tmp": tmp_path}


def run(w: dict[str, Any], *args: str, replay: bool = False, cwd: Path | None = None, patch: str = "",
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """``passprice ARGS`` through the console script's entry, in the registry (or ``cwd``); ``replay``: with
    ``passprice.cli`` unimportable, so only a replay succeeds."""
    lines = patch + ("\nsys.modules['passprice.cli'] = None" if replay else "")
    return subprocess.run(
        [sys.executable, "-c", CHILD.format(patch=lines), *args], cwd=cwd or w["root"], env=env or w["env"],
        capture_output=True, timeout=300,
    )


def entries(w: dict[str, Any]) -> list[Path]:
    folder = w["cache"] / "memo"
    return sorted(folder.glob("*.memo")) if folder.is_dir() else []


def fresh(w: dict[str, Any], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    """What a fresh run of the same command prints: the command line itself (``passprice.cli``, never the entry
    that keeps and replays) run in this process, in the registry (or ``cwd``), with the test's environment (and no
    other ``PASSPRICE_`` variable). A process of its own (``PASSPRICE_NO_MEMO``) cost 0.3-1 s of CPU a call, 30
    calls (suite47); the runs compared with it are processes."""
    from click.testing import CliRunner

    from passprice.cli import cli

    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("PASSPRICE_")}
    with contextlib.chdir(cwd or w["root"]):
        done = CliRunner().invoke(cli, list(args), env={**env, **w["env"]}, prog_name="passprice")
    assert done.exception is None or isinstance(done.exception, SystemExit), repr(done.exception)
    return subprocess.CompletedProcess(list(args), done.exit_code, done.stdout_bytes, done.stderr_bytes)


def recorded(w: dict[str, Any], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run ``args`` once (kept), then check that the next run is a replay of it; the first run."""
    first = run(w, *args, cwd=cwd)
    assert first.returncode == 0, first.stderr.decode()
    assert entries(w), "the run was not kept"
    again = run(w, *args, cwd=cwd, replay=True)
    assert HALTED not in again.stderr.decode(), again.stderr.decode()
    assert (again.stdout, again.stderr, again.returncode) == (first.stdout, first.stderr, 0)
    return first


def missed(w: dict[str, Any], *args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> bool:
    """Whether the run is not a replay (it reached the command line)."""
    done = run(w, *args, cwd=cwd, env=env, replay=True)
    return HALTED in done.stderr.decode()


def same_size_edit(path: Path, old: bytes, new: bytes) -> None:
    """Replace ``old`` by ``new`` (the same length) in ``path``, in place, its modification time put back."""
    assert len(old) == len(new)
    data = path.read_bytes()
    assert data.count(old) >= 1
    st = path.stat()
    path.write_bytes(data.replace(old, new, 1))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns


# --- each kept command: the replay is the fresh run, byte for byte --------------------------------------------------

GGUF = "gemma3-270m-q4_k_m.header.gguf.xz"

COMMANDS = [
    ("price", R1, "--json"),
    ("price", R1, "--no-lock"),
    ("best", R1, "--json"),
    ("compare", R1, "--cards", "h200_sxm_141gb,rtx_4090"),
    ("max-batch", R1),
    ("cards",),
    ("facts", "h200_sxm_141gb"),
    ("servings", "--json"),
    ("checkpoints",),
    ("explain",),
    ("explain", "kv-cache"),
    ("sources",),
    ("header", f"../models/{GGUF}"),
    ("kv", "deepseek-r1-distill-qwen-7b-q4_k_m"),
    ("roofline", "h200_sxm_141gb", R1),
    ("reproduce", R1),
    ("check",),
    ("audit", R1),
    ("fact", "show", "h200_sxm_141gb", "memory.bandwidth"),
    ("speculate", "qwen35-27b-h200-mtp", "--passes", "1000", "--tokens", "1,2"),
    ("simulate", R1, "--synthetic", "20"),
    ("sweep", R1, "--batches", "1-4", "--positions", "512"),
    ("validate",),
]


def test_every_kept_command_is_listed_here() -> None:
    assert {c[0] if c[0] != "fact" else "fact show" for c in COMMANDS} == set(memo.COMMANDS)


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_replay_is_the_fresh_run(world: dict[str, Any], args: tuple[str, ...]) -> None:
    models = world["tmp"] / "models"
    models.mkdir()
    shutil.copy(REPO / "tests" / "data" / GGUF, models / GGUF)
    first = recorded(world, *args)
    plain = fresh(world, *args)
    assert (first.stdout, first.stderr, first.returncode) == (plain.stdout, plain.stderr, plain.returncode)
    assert first.stdout  # each prints something to compare


# --- each kind of change is a miss -----------------------------------------------------------------------------------


def test_a_same_size_edit_in_the_same_second_misses(world: dict[str, Any]) -> None:
    first = recorded(world, "price", R1, "--no-lock", "--json")
    same_size_edit(world["root"] / CARD, b"value = 4.8\n", b"value = 4.7\n")  # memory.bandwidth, TB/s
    assert missed(world, "price", R1, "--no-lock", "--json")
    second = run(world, "price", R1, "--no-lock", "--json")
    assert second.stdout != first.stdout  # the price moved: a replay would have been stale
    assert second.stdout == fresh(world, "price", R1, "--no-lock", "--json").stdout


def test_a_file_added_anywhere_in_the_root_misses(world: dict[str, Any]) -> None:
    recorded(world, "cards")
    (world["root"] / "registry" / "checkpoints" / "notes.txt").write_text("x\n")
    assert missed(world, "cards")


def test_a_folder_added_deep_in_the_root_misses(world: dict[str, Any]) -> None:
    recorded(world, "cards")
    (world["root"] / "facts" / "cards" / "old").mkdir()
    assert missed(world, "cards")


def test_a_name_added_in_the_working_folder_misses(world: dict[str, Any]) -> None:
    # Run outside the registry (--root), naming the serving by a relative name: a file of that name appearing in the
    # working folder may change what the name means.
    work = world["tmp"] / "work"
    work.mkdir()
    args = ("--root", str(world["root"]), "price", R1, "--json")
    recorded(world, *args, cwd=work)
    (work / R1).write_text("")
    assert missed(world, *args, cwd=work)


def test_an_environment_variable_misses(world: dict[str, Any]) -> None:
    recorded(world, "cards")
    assert missed(world, "cards", env={**world["env"], "SOME_SETTING": "1"})


def test_a_gguf_file_outside_the_root_changed_misses(world: dict[str, Any]) -> None:
    models = world["tmp"] / "models"
    models.mkdir()
    gguf = models / "m.gguf"
    import lzma

    gguf.write_bytes(lzma.decompress((REPO / "tests" / "data" / GGUF).read_bytes()))
    recorded(world, "header", str(gguf))
    # The same bytes written anew (another inode, another ctime): its status differs, its content does not: a replay.
    data = gguf.read_bytes()
    copy = models / "copy.tmp"
    copy.write_bytes(data)
    copy.replace(gguf)
    assert not missed(world, "header", str(gguf))
    # One byte of its name changed in place, size and modification time kept: a miss.
    same_size_edit(gguf, b"gemma", b"gemmb")
    assert missed(world, "header", str(gguf))
    # A split checkpoint's shard appearing beside it: a miss.
    same_size_edit(gguf, b"gemmb", b"gemma")
    assert not missed(world, "header", str(gguf))
    (models / "m-00002-of-00002.gguf").write_bytes(b"")
    assert missed(world, "header", str(gguf))


def test_a_change_to_the_package_code_misses(world: dict[str, Any]) -> None:
    # A copy of the package (and the schemas beside it, as in a checkout) put first on the import path.
    source = world["tmp"] / "checkout"
    shutil.copytree(REPO / "src" / "passprice", source / "src" / "passprice",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "schema", source / "schema")
    env = {**world["env"], "PYTHONPATH": str(source / "src")}
    # The copy's first run may write its bytecode into the copy's __pycache__ folders (unless PYTHONDONTWRITEBYTECODE
    # is set): folders it read changed during the run, so that run is not kept; the next one is.
    for _ in range(2):
        first = run(world, "cards", env=env)
        assert first.returncode == 0, first.stderr.decode()
    assert not missed(world, "cards", env=env)
    module = source / "src" / "passprice" / "simulate.py"  # not even imported by `cards`
    module.write_text(module.read_text() + "\n# edited\n")
    assert missed(world, "cards", env=env)


@pytest.mark.parametrize("bypass", [("--no-cache",), ()])
def test_no_cache_is_never_kept(world: dict[str, Any], bypass: tuple[str, ...]) -> None:
    env = world["env"] if bypass else {**world["env"], "PASSPRICE_NO_CACHE": "1"}
    for _ in range(2):
        done = run(world, *bypass, "cards", env=env)
        assert done.returncode == 0
    assert entries(world) == []
    assert missed(world, *bypass, "cards", env=env)


# --- entries that are not whole and ours are misses ------------------------------------------------------------------


def test_a_damaged_entry_is_a_miss_and_is_rebuilt(world: dict[str, Any]) -> None:
    first = recorded(world, "cards")
    (entry,) = entries(world)
    data = entry.read_bytes()
    for damaged in (data[: len(data) // 2], data[:-1] + bytes([data[-1] ^ 1]), b"", b"\n" + data):
        entry.write_bytes(damaged)
        entry.chmod(0o600)
        assert missed(world, "cards")
        again = run(world, "cards")  # rebuilt …
        assert again.stdout == first.stdout
        assert not missed(world, "cards")  # … and replayed


def test_an_entry_others_may_write_is_a_miss(world: dict[str, Any]) -> None:
    recorded(world, "cards")
    (entry,) = entries(world)
    entry.chmod(0o620)
    assert missed(world, "cards")


def test_an_entry_of_another_user_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = tmp_path / "x.memo"
    entry.write_bytes(b"data")
    entry.chmod(0o600)
    assert cachefolder.read(str(entry), 100) == b"data"
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(entry).st_uid + 1)
    assert cachefolder.read(str(entry), 100) is None
    os.mkfifo(tmp_path / "fifo.memo")
    assert cachefolder.read(str(tmp_path / "fifo.memo"), 100) is None  # never opened for reading: no wait


def test_an_entry_for_another_key_is_a_miss(world: dict[str, Any]) -> None:
    recorded(world, "cards")
    (entry,) = entries(world)
    other = entry.with_name("0" * 64 + ".memo")
    shutil.copy(entry, other)
    assert memo._load(str(other), "0" * 64) is None
    assert memo._load(str(entry), entry.name[:-5]) is not None


# --- runs that are never kept ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [
    ["lock", R1, "-o", "x.lock.toml"], ["fact", "set", "h200_sxm_141gb", "memory.bandwidth"], ["init", "x"],
    ["import", "x.gguf"], ["diff"], ["fact", "show", "h200_sxm_141gb", "memory.bandwidth", "--history"],
    ["roofline", "h200_sxm_141gb", R1, "--plot", "x.png"], ["sweep", R1, "-o", "x.csv"], ["sweep", R1, "-ox.csv"],
    ["sweep", R1, "--output=x.csv"], ["audit", R1, "--plot=x.png", "--force"], ["--no-cache", "price", R1],
    ["--version"], ["price", "--checkpoint", "-"], ["calibrate", "--stack", "x", "--dry-run"], [],
    # click takes the last --root, the stamp was of the first: a source removed from the second replayed.
    ["--root", "a", "--root", "b", "cards"], ["--root=a", "--root", "b", "price", R1],
])
def test_writing_and_git_commands_are_never_kept(argv: list[str]) -> None:
    assert memo.command_of(argv) is None


def test_kept_commands_are_recognised() -> None:
    assert memo.command_of(["price", R1, "--json"]) == "price"
    assert memo.command_of(["--root", "x", "fact", "show", "c", "p"]) == "fact show"
    assert memo.command_of(["--root=x", "cards"]) == "cards"


def test_a_refusal_is_not_kept(world: dict[str, Any]) -> None:
    same_size_edit(world["root"] / CARD, b"value = 4.8\n", b"value = 0.0\n")
    done = run(world, "price", R1, "--json")
    assert done.returncode != 0
    assert entries(world) == []


def recorder(tmp_path: Path) -> memorecord.Recorder:
    cache = tmp_path / "cache"
    cache.mkdir(exist_ok=True)
    return memorecord.Recorder(str(tmp_path), str(cache))


def watched(r: memorecord.Recorder, action: Any) -> None:
    """Run ``action`` with ``r`` receiving this process's audit events (the hook stays, idle, after)."""
    if not memorecord.Recorder.hooked:
        sys.addaudithook(memorecord._audit)
        memorecord.Recorder.hooked = True
    memorecord.Recorder.current = r
    try:
        action()
    finally:
        memorecord.Recorder.current = None


def test_a_run_that_starts_a_process_is_spoiled(tmp_path: Path) -> None:
    r = recorder(tmp_path)
    watched(r, lambda: subprocess.run(["true"], check=False))
    assert r.spoiled == "subprocess.Popen"


def test_a_run_that_writes_outside_the_cache_is_spoiled(tmp_path: Path) -> None:
    r = recorder(tmp_path)
    (tmp_path / "cache" / "documents").mkdir()
    watched(r, lambda: (tmp_path / "cache" / "documents" / ("0" * 64 + ".json")).write_text("x"))
    assert r.spoiled is None
    watched(r, lambda: (tmp_path / "out.csv").write_text("x"))
    assert r.spoiled is not None and "out.csv" in r.spoiled


def test_a_run_that_removes_a_file_is_spoiled(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("x")
    r = recorder(tmp_path)
    watched(r, lambda: (tmp_path / "x").unlink())
    assert r.spoiled is not None and "os.remove" in r.spoiled


def test_a_run_that_reads_standard_input_is_spoiled(tmp_path: Path) -> None:
    r = recorder(tmp_path)
    guard = memorecord.Stdin(sys.stdin, r)
    assert r.spoiled is None
    guard.encoding  # noqa: B018 - any use of standard input
    assert r.spoiled == "standard input was used"


def test_a_run_that_opens_a_fifo_is_spoiled(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r = recorder(tmp_path)

    def opening() -> None:
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        os.close(fd)

    watched(r, opening)
    assert r.spoiled is not None and "not a regular file" in r.spoiled


def test_reads_are_recorded_with_their_status(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text("x")
    r = recorder(tmp_path)
    watched(r, lambda: ((tmp_path / "a.toml").read_bytes(), os.listdir(tmp_path), (tmp_path / "gone").exists()))
    assert r.spoiled is None
    assert r.opened[str(tmp_path / "a.toml")] == memo._stamp(os.stat(tmp_path / "a.toml"))
    assert str(tmp_path) in r.listed


def test_a_large_output_is_not_kept(tmp_path: Path) -> None:
    r = recorder(tmp_path)
    r.printed(1, b"x" * memo.MAX_OUTPUT)
    assert r.spoiled is None
    r.printed(2, b"y")
    assert r.spoiled is not None and r.out == []


# --- the status vouches for a file only when it was already old when the run was recorded ---------------------------


def test_an_old_file_is_trusted_by_its_status_and_a_new_one_is_hashed(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    run(world, "cards", patch="memo.TRUST_NS = (-10**18, -10**18)")  # as if every file were old when recorded
    (path,) = entries(world)
    entry = memo._load(str(path), path.name[:-5])
    assert entry is not None and not any(item[3] for item in entry["items"] if item[1] != "p")
    hashed = []
    real = memo._digest
    monkeypatch.setattr(memo, "_digest", lambda p, e=None: hashed.append(p) or real(p, e))
    assert memo.still(entry) and hashed == []
    card = world["root"] / CARD
    card.write_bytes(card.read_bytes())  # the same bytes: its ctime moves, so it is hashed, and it holds
    assert memo.still(entry) and hashed == [str(card)]
    # A file the run did not read is known by its status alone (its bytes were no input): rewritten, a miss.
    readme = world["root"] / "facts" / "cards" / "README.md"
    readme.write_bytes(readme.read_bytes())
    assert not memo.still(entry)


# --- random edits never let a stale output replay --------------------------------------------------------------------


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    w: dict[str, Any] = {"tmp": tmp_path_factory.mktemp("memo-hypothesis")}
    w["root"] = copy_root(w["tmp"])
    w["cache"] = w["tmp"] / "cache"
    w["env"] = {k: v for k, v in os.environ.items() if not k.startswith("PASSPRICE_")}
    w["env"]["PASSPRICE_CACHE_DIR"] = str(w["cache"])
    recorded(w, "price", R1, "--no-lock", "--json")
    (path,) = entries(w)
    w["entry"] = memo._load(str(path), path.name[:-5])
    w["card"] = (w["root"] / CARD).read_bytes()
    return w


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from("0123456789.e")), min_size=1, max_size=3),
       keep_time=st.booleans())
def test_random_card_edits_never_replay(kept: dict[str, Any], edits: list[tuple[int, str]], keep_time: bool) -> None:
    card = kept["root"] / CARD
    original: bytes = kept["card"]
    values = [i for i in range(len(original) - 8) if original[i : i + 8] == b"value = "]
    data = bytearray(original)
    for where, char in edits:
        start = values[where % len(values)] + 8
        data[start] = ord(char)  # a digit of some fact's value: same size, another figure (or the same)
    st0 = card.stat()
    try:
        card.write_bytes(bytes(data))
        if keep_time:
            os.utime(card, ns=(st0.st_atime_ns, st0.st_mtime_ns))
        assert memo.still(kept["entry"]) == (bytes(data) == original)
    finally:
        card.write_bytes(original)
    assert memo.still(kept["entry"])


def test_a_root_too_large_to_stamp_is_not_kept(world: dict[str, Any]) -> None:
    done = run(world, "cards", patch="from passprice import memorecord\nmemorecord.MAX_TREE_ITEMS = 5")
    assert done.returncode == 0 and done.stdout
    assert entries(world) == []


def test_a_name_in_bytes_that_are_not_utf8_is_keyed_and_replayed(world: dict[str, Any]) -> None:
    # An argument in bytes that are not UTF-8 (a file name): keyed as those bytes, and the output replayed byte for
    # byte (header prints the name escaped).
    import lzma

    name = os.fsdecode(b"m\xff\xfe.gguf")
    gguf = world["tmp"] / name
    gguf.write_bytes(lzma.decompress((REPO / "tests" / "data" / GGUF).read_bytes()))
    first = recorded(world, "header", str(gguf))
    assert b"m\\udcff\\udcfe.gguf" in first.stdout
    assert missed(world, "header", str(world["tmp"] / os.fsdecode(b"m\xff\xfd.gguf")))


def test_a_file_changed_during_the_run_is_not_kept(tmp_path: Path) -> None:
    # The stamp is taken after the run: a file it read whose status moved since it was opened (or that changed within
    # KEEP_NS before the run) cannot vouch for what the run read, so the run is not kept.
    root = copy_root(tmp_path)
    card = root / CARD
    since = memo.time.time_ns()
    r = recorder(tmp_path)
    r.opened[str(card)] = memo._stamp(os.stat(card))
    argv = ["--root", str(root), "cards"]
    probes = memorecord._probes(argv, str(tmp_path))
    assert memorecord.world(since, r, argv, probes, None) is None  # changed just before the run (KEEP_NS)
    assert r.spoiled is not None and "changed during or just before the run" in r.spoiled
    r = recorder(tmp_path)
    r.opened[str(card)] = memo._stamp(os.stat(card))
    card.write_bytes(card.read_bytes() + b"\n")
    keep = memo.KEEP_NS
    try:
        memo.KEEP_NS = (-(10**18), -(10**18))
        assert memorecord.world(since, r, argv, probes, None) is None
    finally:
        memo.KEEP_NS = keep
    assert r.spoiled == f"{card} changed during the run"


# --- attack round (memo-breaker): links, `..` and a cache folder holding the registry --------------------------------


def _edited_copy(w: dict[str, Any], name: str) -> Path:
    """A second registry beside ``w``'s root whose card's memory bandwidth is 4.7 TB/s (the root's says 4.8)."""
    other = w["tmp"] / name
    for folder in ("facts", "registry", "locks", "sources"):
        shutil.copytree(w["root"] / folder, other / folder)
    card = other / CARD
    card.write_bytes(card.read_bytes().replace(b"value = 4.8\n", b"value = 4.7\n", 1))
    return other


def _retarget(link: Path, target: Path) -> None:
    """Point ``link`` at ``target`` by a rename over it (as ``ln -sfn`` does)."""
    tmp = link.with_name(link.name + ".new")
    tmp.symlink_to(target)
    tmp.replace(link)


def test_a_root_given_through_a_link_that_is_retargeted_misses(world: dict[str, Any]) -> None:
    # `--root /deploy/current`, a link to one release's registry, retargeted to another release's: the tree stamped
    # under the first release's real path is unchanged, but the root the command names is another. The link lies
    # outside the working folder, so no listing the run stamped changes either.
    other = _edited_copy(world, "release2")
    links, work = world["tmp"] / "deploy", world["tmp"] / "work"
    links.mkdir()
    work.mkdir()
    (links / "current").symlink_to(world["root"])
    args = ("--root", str(links / "current"), "price", R1, "--no-lock", "--json")
    first = recorded(world, *args, cwd=work)
    _retarget(links / "current", other)
    assert missed(world, *args, cwd=work)
    second = run(world, *args, cwd=work)
    assert second.stdout != first.stdout
    assert second.stdout == fresh(world, *args, cwd=work).stdout


def test_a_card_path_through_a_link_into_the_root_misses_when_retargeted(world: dict[str, Any]) -> None:
    # `--card /elsewhere/cards/x.toml` where /elsewhere/cards links to the root's facts/cards: the file it resolves to
    # lies in the root's stamped tree, which stays as it was when the link is pointed at another folder of cards.
    other = _edited_copy(world, "other")
    links = world["tmp"] / "links"
    links.mkdir()
    (links / "cards").symlink_to(world["root"] / "facts" / "cards")
    args = ("price", R1, "--no-lock", "--json", "--card", str(links / "cards" / "h200_sxm_141gb.toml"))
    first = recorded(world, *args)
    _retarget(links / "cards", other / "facts" / "cards")
    assert missed(world, *args)
    assert run(world, *args).stdout != first.stdout


def test_a_path_with_dotdot_after_a_link_is_the_file_it_names(world: dict[str, Any]) -> None:
    # `header sub/../m.gguf` with `sub` a link to a folder elsewhere names the m.gguf beside that folder, not one in
    # the working folder: the run's reads were once recorded under the lexically normalised name (a file that is not
    # there), so an edit to the file the run read replayed.
    import lzma

    elsewhere = world["tmp"] / "elsewhere"
    (elsewhere / "dir").mkdir(parents=True)
    gguf = elsewhere / "m.gguf"
    gguf.write_bytes(lzma.decompress((REPO / "tests" / "data" / GGUF).read_bytes()))
    work = world["tmp"] / "work"
    work.mkdir()
    (work / "sub").symlink_to(elsewhere / "dir")
    first = recorded(world, "header", "sub/../m.gguf", cwd=work)
    same_size_edit(gguf, b"gemma", b"gemmb")
    assert missed(world, "header", "sub/../m.gguf", cwd=work)
    assert run(world, "header", "sub/../m.gguf", cwd=work).stdout != first.stdout


# "root" (the cache folder the registry itself) is refused since leftovers 27b (tests/test_leftovers_27b.py).
@pytest.mark.parametrize("where", ["parent", "documents"])
def test_a_cache_folder_holding_the_root_still_stamps_it(world: dict[str, Any], where: str) -> None:
    # PASSPRICE_CACHE_DIR set to the registry itself, or to a folder above it (a home folder; one whose registry
    # lies in a folder named as one of the cache's own, `documents/`): every file under the cache folder was taken for
    # the cache's own, keyed by content, and left out of the stamp, so a card edited there replayed the old price.
    root = world["root"]
    if where == "documents":
        moved = world["tmp"] / "documents" / "reg"
        moved.parent.mkdir()
        root.rename(moved)
        root = moved
    cache = {"root": root, "parent": root.parent, "documents": root.parent.parent}[where]
    w = {**world, "root": root, "cache": cache, "env": {**world["env"], "PASSPRICE_CACHE_DIR": str(cache)}}
    # The first run makes the cache's folders (its compiled code's at exit, after the stamp) in a folder the stamp
    # holds: that run is not kept or does not replay; the next is and does.
    assert run(w, "price", R1, "--no-lock", "--json").returncode == 0
    first = recorded(w, "price", R1, "--no-lock", "--json")
    same_size_edit(root / CARD, b"value = 4.8\n", b"value = 4.7\n")
    assert missed(w, "price", R1, "--no-lock", "--json")
    second = run(w, "price", R1, "--no-lock", "--json")
    assert second.stdout != first.stdout
    assert second.stdout == fresh(w, "price", R1, "--no-lock", "--json").stdout


def test_only_the_cache_own_files_are_the_cache(tmp_path: Path) -> None:
    r = recorder(tmp_path)
    cache = tmp_path / "cache"
    assert r._cached(str(cache / "memo" / ("0" * 64 + ".memo")))
    assert r._cached(str(cache / "documents" / ".x1y2.tmp"))
    assert r._cached(str(cache / "code" / str(sys.implementation.cache_tag) / ("a" * 40 + ".code.123.tmp")))
    assert not r._cached(str(cache / "documents" / "grid.json"))  # a user's file, with cache = a home folder
    assert r._cached(str(cache / "documents"))
    assert not r._cached(str(cache / "facts" / "cards" / "x.toml"))
    assert not r._cached(str(cache / "documents" / "reg" / "facts"))
    assert not r._cached(str(cache / "memo" / ".." / "x.toml"))


def test_a_file_removed_beyond_a_link_in_the_root_misses(world: dict[str, Any]) -> None:
    # The root's sources/ a link to a shared folder: a price looked each cited source up by its status alone (is
    # sources/ID.toml there?), and the tree held the link's text, not what lies beyond it, so a source removed from
    # the shared folder replayed a price that a fresh run refuses. Since session 13 a price reads (validates) every
    # record it cites, as lock and check did: a shared folder outside the registry is refused from the first run (a
    # registry's files lie inside it), and nothing is kept; a link to a folder inside the registry still misses.
    root = world["root"]
    outside = world["tmp"] / "shared"
    (root / "sources").rename(outside)
    (root / "sources").symlink_to(outside)
    done = run(world, "price", R1, "--no-lock", "--json")
    assert done.returncode == 2 and b"outside the registry" in done.stderr and b"through a symbolic link" in done.stderr
    assert entries(world) == []
    (root / "sources").unlink()
    inside = root / "shared-sources"
    outside.rename(inside)
    (root / "sources").symlink_to(inside)
    recorded(world, "price", R1, "--no-lock", "--json")
    (inside / "nvidia-hopper-whitepaper.toml").unlink()
    assert missed(world, "price", R1, "--no-lock", "--json")
    done = run(world, "price", R1, "--no-lock", "--json")
    assert done.returncode == 2 and b"no source 'nvidia-hopper-whitepaper'" in done.stderr


def test_a_second_root_option_is_not_kept(world: dict[str, Any]) -> None:
    # `--root A --root B`: click reads B; the stamp was A's tree (and B's opened files only), so a source removed
    # from B (looked up by its status alone) replayed a price a fresh run refuses.
    other = _edited_copy(world, "second")
    args = ("--root", str(world["root"]), "--root", str(other), "price", R1, "--no-lock", "--json")
    for _ in range(2):
        assert run(world, *args).returncode == 0
    assert entries(world) == []
    (other / "sources" / "nvidia-hopper-whitepaper.toml").unlink()
    assert run(world, *args).returncode == 2


def test_ctrl_c_while_the_stamp_is_taken_is_one_line_and_130(world: dict[str, Any]) -> None:
    # The command has printed; Ctrl-C comes while the memo stamps what it read (a first run hashes its files): once
    # the interpreter's KeyboardInterrupt traceback, status 130 by accident. Now one line, 130, and nothing kept.
    patch = (
        "import os, signal\n"
        "from passprice import memorecord\n"
        "real = memorecord.world\n"
        "def interrupted(*a, **k):\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    return real(*a, **k)\n"
        "memorecord.world = interrupted\n"
    )
    done = run(world, "cards", patch=patch)
    assert done.returncode == 130
    assert done.stdout == fresh(world, "cards").stdout
    assert done.stderr == b"passprice: interrupted\n"
    assert entries(world) == []
    done = run(world, "cards", patch=patch.replace("SIGINT", "SIGTERM"))  # the command line's SIGTERM handler
    assert (done.returncode, done.stderr) == (143, b"passprice: terminated\n")
    assert entries(world) == []


def test_a_warning_option_is_in_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # `python -W error passprice …` turns a warning a run prints into an exception: another run, another key.
    before = memo.material(["cards"])
    monkeypatch.setattr(sys, "warnoptions", ["error"])
    assert memo.material(["cards"]) != before


def test_a_replay_into_a_closed_pipe_ends_quietly_as_a_run_does() -> None:
    # `passprice sweep … | head`: a fresh run whose reader goes away stops quietly with status 0 (the command line's
    # BrokenPipeError handling); a replay said "passprice: error: standard output: Broken pipe" and exited 2.
    child = (
        "import os, sys\n"
        "from passprice import memo\n"
        "r, w = os.pipe()\n"
        "os.close(r)\n"
        "os.dup2(w, 1)\n"
        "sys.exit(memo._replay({'out': [(2, b'before\\n'), (1, b'x' * 10), (2, b'after\\n')], 'status': 0}))\n"
    )
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, b"before\n")
    full = child.replace("os.close(r)\n", "").replace("r, w = os.pipe()", "w = os.open('/dev/full', os.O_WRONLY)")
    done = subprocess.run([sys.executable, "-c", full], capture_output=True, timeout=60)
    full_disk = b"before\npassprice: error: standard output: No space left on device\n"
    assert (done.returncode, done.stderr) == (2, full_disk)


@pytest.mark.parametrize("memo_off", [False, True], ids=["memo", "no-memo"])
def test_a_reader_gone_from_the_pipe_ends_a_run_quietly(world: dict[str, Any], memo_off: bool) -> None:
    """Newcomer walkthrough: ``passprice price r1-qwen7b-h200 --batch 12 | head -1`` printed three chained tracebacks
    (BrokenPipeError in the memo's recording stream, then ValueError writing the error line to a closed standard
    error) about half the time, exit 1. A run whose standard output's reader has left (the pipe's read end closed
    before it writes: EPIPE for certain) exits 0 with nothing on standard error, recorded or not, and keeps nothing."""
    read, write = os.pipe()
    os.close(read)
    env = {**world["env"], **({"PASSPRICE_NO_MEMO": "1"} if memo_off else {})}
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD.format(patch=""), "price", R1, "--batch", "12"], cwd=world["root"], env=env,
            stdout=write, stderr=subprocess.PIPE, timeout=300, check=False,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr.decode()) == (0, "")
    assert entries(world) == []


def test_the_stamp_resolves_paths_as_realpath_does(tmp_path: Path) -> None:
    """The world stamp resolves each file's folder once (``_World._realpath``, issue 16: an ``lstat`` of every
    component of every path was a third of a miss's stamp); it must give what :func:`os.path.realpath` gives for a
    path through a linked folder, a file that is itself a link (to one in another folder), a dangling link, ``..``
    after a link, ``.``, a trailing separator and a path that is not there."""
    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    (real / "sub" / "m.gguf").write_bytes(b"x")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "target.toml").write_bytes(b"y")
    (tmp_path / "linked").symlink_to(real / "sub")
    (real / "sub" / "file-link.toml").symlink_to(tmp_path / "elsewhere" / "target.toml")
    (real / "sub" / "dangling").symlink_to(tmp_path / "nowhere")
    w = memorecord._World(0, memorecord.Recorder(str(tmp_path), str(tmp_path / "cache")), None)
    paths = [
        tmp_path / "linked" / "m.gguf", tmp_path / "linked" / "file-link.toml", tmp_path / "linked" / "dangling",
        tmp_path / "linked" / ".." / "sub" / "m.gguf", tmp_path / "linked" / "..", tmp_path / "linked" / ".",
        real / "sub" / "m.gguf", tmp_path / "linked" / "absent.toml", tmp_path / "absent" / "m.gguf",
    ]
    for path in [*map(str, paths), str(tmp_path / "linked") + os.sep, "relative/m.gguf"]:
        assert w._realpath(path) == os.path.realpath(path), path
    # Asked twice, the folder is resolved once and the answer is the same.
    again = str(tmp_path / "linked" / "m.gguf")
    assert w._realpath(again) == os.path.realpath(again) == str(real / "sub" / "m.gguf")


def test_bytecode_read_is_stamped_by_its_status_and_a_source_by_its_bytes(tmp_path: Path) -> None:
    """A ``.pyc`` the run opened (every import opens one) is stamped by its status alone when that is proof, so a
    miss does not hash megabytes of bytecode; a registry file the run read is stamped with its sha256 (rewritten
    with the same bytes, it still replays); a ``.pyc`` that changed lately (racy) is hashed too. At lookup a ``.pyc``
    whose status moved is a miss, whatever its bytes."""
    pyc = tmp_path / "m.cpython-311.pyc"
    card = tmp_path / "card.toml"
    pyc.write_bytes(b"bytecode")
    card.write_bytes(b"[memory]\n")
    later = int(os.stat(pyc).st_ctime_ns) + 10**10  # a run that started 10 s after both were written
    w = memorecord._World(later, memorecord.Recorder(str(tmp_path), str(tmp_path / "cache")), None)
    for path in (pyc, card):
        w.file(str(path), memo._stamp(os.stat(path)), True)
    digests = {Path(item[0]).name: item[4] for item in w.items}
    assert digests["m.cpython-311.pyc"] is None
    assert digests["card.toml"] == memo._digest(str(card))
    racy = memorecord._World(int(os.stat(pyc).st_ctime_ns), memorecord.Recorder(str(tmp_path), str(tmp_path)), None)
    racy.file(str(pyc), memo._stamp(os.stat(pyc)), True)
    assert racy.items[0][4] == memo._digest(str(pyc))
    # The status stamp holds while the file is untouched, and a rewrite with the same bytes is a miss.
    item = next(i for i in w.items if i[0] == str(pyc))
    assert memo._holds(item)
    pyc.write_bytes(b"bytecode")
    os.utime(pyc, ns=(10**9, 10**9))  # its status moved for certain (two writes may share a clock tick)
    assert not memo._holds(item)
