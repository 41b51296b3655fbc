"""Round 22 of hostile input (#13, #16): the result memo, the caches behind it, the review over hostile histories.

Each test keeps the input that broke main's code, asserting the output a fresh run prints (for a stale result) or the
exit status and the one error line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from tests.cli_helpers import REPO, bad, copy_root, invoke

from passprice import schema

R1 = "r1-qwen7b-h200"


def _settled(path: Path) -> None:
    """Wait until ``path``'s change time is older than the racy window (:data:`passprice.memo.TRUST_NS`)."""
    ctime = path.stat().st_ctime_ns
    window = 3.2 if ctime % 1_000_000_000 == 0 else 0.25
    time.sleep(window)


def test_a_module_edited_to_the_same_size_with_its_mtime_put_back_serves_no_object_the_old_code_built(
    tmp_path: Path,
) -> None:
    # Round 22: the cache of validated files and built objects keyed the package's code by each module's size and
    # modification time. facts.py's unit table edited ("T": 10**12 -> 20**12, the same size) and its modification time
    # put back (cp -p, rsync -t, tar, or a file system keeping whole seconds) served the card built by the old code:
    # `price` printed the old 1.004 ms pass, a fresh run (--no-cache) another.
    root = copy_root(tmp_path)
    checkout = tmp_path / "checkout"
    shutil.copytree(REPO / "src" / "passprice", checkout / "src" / "passprice",
                    ignore=shutil.ignore_patterns("__pycache__", "pricing_model.json"))
    shutil.copytree(REPO / "schema", checkout / "schema")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PASSPRICE_")}
    env.update(PYTHONPATH=str(checkout / "src"), PASSPRICE_CACHE_DIR=str(tmp_path / "cache"), PASSPRICE_NO_MEMO="1")
    module = checkout / "src" / "passprice" / "facts.py"

    def price(*extra: str, **more: str) -> bytes:
        done = subprocess.run([sys.executable, "-m", "passprice", "price", R1, "--no-lock", *extra], cwd=root,
                              env={**env, **more}, capture_output=True, timeout=300)
        assert done.returncode == 0, done.stderr.decode()
        return done.stdout

    _settled(module)
    before = price()
    assert price() == before  # the card and its pass shape now come from the cache
    text = module.read_text()
    assert text.count('"T": 10**12') == 1
    st = module.stat()
    module.write_text(text.replace('"T": 10**12', '"T": 20**12'))
    os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (module.stat().st_size, module.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    fresh = price(PASSPRICE_NO_CACHE="1")
    assert fresh != before
    assert price() == fresh  # changed lately: its bytes are in the key
    _settled(module)
    assert price() == fresh  # settled: its change time is in the key


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


def _console(root: Path, env: dict[str, str], *args: str, replay: bool = False) -> subprocess.CompletedProcess[bytes]:
    """``passprice ARGS`` as the console script starts it (the memo first), in ``root``; ``replay``: with
    ``passprice.cli`` unimportable, so only a replay succeeds (tests/test_memo.py's rule)."""
    patch = "sys.modules['passprice.cli'] = None" if replay else ""
    return subprocess.run([sys.executable, "-c", CHILD.format(patch=patch), *args], cwd=root, env=env,
                          capture_output=True, timeout=300)


def test_a_lock_copied_into_the_cache_folder_inside_the_registry_is_no_stale_check(tmp_path: Path) -> None:
    # Round 22: with the cache folder inside the registry (PASSPRICE_CACHE_DIR=locks), the stamp named the cache's own
    # folders (locks/memo, locks/documents …) without entering them, entries and all. A lock copied into locks/memo
    # is one `check` fails on ("not a folder passprice reads", status 2), but the replay printed the kept "all holds",
    # status 0. Since leftovers 27b such a cache folder is refused outright: nothing is kept there to replay.
    root = copy_root(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PASSPRICE_")}
    env["PASSPRICE_CACHE_DIR"] = str(root / "locks")
    for _ in range(2):
        done = _console(root, env, "check")
        assert done.returncode == 2 and done.stdout == b"", done.stderr.decode()
        assert done.stderr.decode().startswith(f"passprice: error: PASSPRICE_CACHE_DIR={root / 'locks'}: the cache ")
    assert sorted(p.name for p in (root / "locks").iterdir() if not p.name.endswith(".lock.toml")) == []


@pytest.mark.parametrize(
    ("line", "column"),
    [
        ("a" + ".a" * 16_000 + " = 1", 1),  # 32 KB: tomllib took 1 GB and 5 s of CPU
        ("[a" + ".a" * 200_000 + "]", 2),  # 400 KB in a table header: minutes
        ("[[a" + ' . "a"' * 20_000 + "]]", 3),  # quoted parts, spaces around the dots
    ],
)
def test_a_dotted_key_of_thousands_of_parts_is_refused_before_tomllib_reads_it(
    tmp_path: Path, line: str, column: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Round 22: tomllib keeps every prefix of a dotted key it defines, so a key of n parts costs it n²: a 32 KB card
    # of `a.a.a… = 1` ran `passprice facts` to 1 GB and 5 s of CPU, a 400 KB `[a.a.a…]` for minutes.
    monkeypatch.setenv("PASSPRICE_MAX_FILE_BYTES", str(64 << 20))  # issue 13: 400 KB is past the 256 KiB cap
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "deep.toml"
    card.write_text(f"x = 1\n{line}\n")
    bad("facts", "deep", root=root, says=f"deep.toml: not valid TOML: a dotted key of more than 64 parts "
        f"(at line 2, column {column})")
    done = invoke("check", root=root)
    assert done.exit_code == 2 and done.stdout.endswith("check FAILED\n")
    assert "facts/cards/deep.toml: not valid TOML: a dotted key of more than 64 parts" in done.stderr


def test_the_key_parts_bound_is_64() -> None:
    assert schema.deep_key("a" + ".a" * 63 + " = 1\n") is None
    assert schema.deep_key("x = 1\n  a" + ".a" * 64 + " = 1\n") == (2, 3)
    # Dots in values are no key's parts unless they run past the bound: a version, a locator, a URL.
    assert schema.deep_key('v = "4.8"\nlocator = "table 4.3.2.1, https://a.b.c/d.e"\n' * 50) is None
    assert schema.toml_loads('a.b."c.d" = 1\n') == {"a": {"b": {"c.d": 1}}}
    with pytest.raises(tomllib.TOMLDecodeError, match="more than 64 parts"):
        schema.toml_loads("a" + ".a" * 64 + " = 1\n")
