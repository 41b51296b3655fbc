"""What a lock locks is decided in the library (:mod:`passprice.locking`), not in the command line: its name, the
registered serving it locks, the lock ``--update`` keeps, and the refusal of a lock its own floors breach — called
directly on a copy of the registry, the figures read off the shipped lock files."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root
from passprice import locking
from passprice.errors import InputError
from passprice.facts import Provenance
from passprice.locks import read_lock
from passprice.registry import find_root
from passprice.servings import load_spec

R1 = "r1-qwen7b-h200"
GEMMA = "gemma3-270m-h100"


@pytest.mark.parametrize(
    ("output", "serving", "name", "expected"),
    [
        ("locks/x.lock.toml", R1, None, "x"),  # named after its file
        ("out/x.toml", R1, None, R1),  # a file not named NAME.lock.toml: the serving's name
        ("out/x.toml", None, None, "x"),  # no serving (--checkpoint/--card): the file's name less .toml
        ("out/x", None, None, "x"),  # ... or the file's name
        ("locks/x.lock.toml", R1, "given", "given"),  # --name wins
    ],
)
def test_a_lock_is_named_after_its_file_else_its_serving(
    output: str, serving: str | None, name: str | None, expected: str
) -> None:
    assert locking.lock_name(Path(output), serving, name) == expected


def test_an_updated_lock_keeps_its_name_and_the_serving_it_locks() -> None:
    root = find_root(REPO)
    old = read_lock(root.locks / f"{R1}-best.lock.toml", root.schema)
    assert locking.lock_name(Path("locks/other.lock.toml"), None, None, old) == f"{R1}-best"
    assert locking.locked_serving(root, None, False, old) == R1


def test_the_serving_locked_is_the_one_named_unless_an_option_overrides_it() -> None:
    root = find_root(REPO)
    assert locking.locked_serving(root, R1, overridden=False) == R1
    assert locking.locked_serving(root, R1, overridden=True) is None  # --batch 8 prices another serving
    assert locking.locked_serving(root, None, overridden=True) is None  # --checkpoint/--card alone


def test_update_needs_a_lock_that_reads_and_force_ignores_one_that_does_not(tmp_path: Path) -> None:
    root = find_root(copy_root(tmp_path))
    missing = root.locks / "none.lock.toml"
    with pytest.raises(InputError, match=r"none\.lock\.toml: no lock to update \(write one without --update\)"):
        locking.previous(root, missing, update=True, force=False)
    garbage = root.locks / "garbage.lock.toml"
    garbage.write_text("not = [toml\n", encoding="utf-8")
    assert locking.previous(root, garbage, update=False, force=True) is None
    with pytest.raises(InputError, match="already exists: `--update` re-locks it"):  # neither flag: refused early
        locking.previous(root, root.locks / f"{R1}.lock.toml", update=False, force=False)
    assert locking.previous(root, root.locks / "new.lock.toml", update=False, force=False) is None
    assert locking.previous(root, root.locks / f"{R1}.lock.toml", update=True, force=False).name == R1  # type: ignore[union-attr]


def test_the_embedded_facts_take_no_lock(tmp_path: Path) -> None:
    embedded = find_root(None, start=tmp_path)  # no registry at or above: the embedded default
    assert embedded.embedded
    with pytest.raises(InputError, match=r"read-only[^;]*; give -o FILE"):
        locking.default_output(embedded, R1)


def test_a_lock_written_prices_as_the_shipped_lock_and_force_reports_the_floors_it_loosens(tmp_path: Path) -> None:
    root = find_root(copy_root(tmp_path))
    output = root.locks / f"{R1}.lock.toml"
    shipped = tomllib.loads(output.read_text(encoding="utf-8"))
    old = locking.previous(root, output, update=False, force=True)
    assert old is not None
    written = locking.write(root, output, load_spec(root, R1), R1, locked=R1, old=old, force=True,
                            floor=Provenance.ASSUMED)
    assert written.lock.price["tokens_per_s"] == shipped["price"]["tokens_per_s"] == 996.0966124437687
    # The shipped lock floored memory.bandwidth at published; a floor of assumed everywhere loosens it.
    assert "memory.bandwidth" in {c.path for c in written.loosened}
    assert read_lock(output, root.schema).policy.floor is Provenance.ASSUMED


def test_a_lock_its_own_floors_breach_is_refused_and_not_written(tmp_path: Path) -> None:
    root = find_root(copy_root(tmp_path))
    output = tmp_path / "strict.lock.toml"
    with pytest.raises(locking.LockNotWritten) as caught:
        locking.write(root, output, load_spec(root, GEMMA), "strict", requires={"scale": Provenance.PUBLISHED})
    assert str(caught.value).startswith("lock strict refuses this price: scale is estimated, below the floor published")
    assert str(caught.value).endswith(f"; {output} not written (for these floors to accept it, strengthen scale to "
                                      "published or above with a citation that backs it, e.g. passprice fact set "
                                      "h100_sxm5_80gb scale --provenance published --source ID --locator LOCATOR … "
                                      "in a registry of your own; or floor it at its own provenance on purpose: "
                                      "--require scale=estimated)")
    out = caught.value.to_json()
    assert (out["refusal"], out["written"], out["path"]) == ("LockFloor", False, str(output))
    assert not output.exists()


def test_a_checkout_whose_code_is_not_the_running_code_is_named_by_check_lock_and_reproduce(tmp_path: Path) -> None:
    """The newcomer walkthrough: after `pip install .` (not editable), an edit to the checkout's formulas moved its
    pricing model, but `lock --update` rewrote the lock with the installed code, byte for byte, and `check` said
    "pricing model: same". Each now says, on one stderr line, that the running code is not the checkout's."""
    import shutil

    from cli_helpers import invoke
    from passprice.pins import checkout_model, pricing_model_digest

    root = copy_root(tmp_path)
    source = root / "src" / "passprice"
    shutil.copytree(REPO / "src" / "passprice", source, ignore=shutil.ignore_patterns("__pycache__"))
    assert checkout_model(root) is None  # the same code as the running package's
    serving = source / "serving.py"
    text = serving.read_text(encoding="utf-8")
    assert "SOFTMAX_MACS_PER_SCORE = 7.5" in text
    serving.write_text(text.replace("SOFTMAX_MACS_PER_SCORE = 7.5", "SOFTMAX_MACS_PER_SCORE = 8.5"), encoding="utf-8")
    theirs, ours = checkout_model(root) or ("", "")
    assert ours == pricing_model_digest() and theirs == pricing_model_digest(source) != ours
    warning = (
        f"passprice: warning: this checkout's src/passprice prices with pricing model {theirs[:19]}…, the passprice "
        f"running with {ours[:19]}… (installed from another copy): locks are written, checked and reproduced by the "
        "running code; `pip install -e .` here to use the checkout's (the checkout's digest is taken by the running "
        "passprice's rules, which an older passprice did not share: it matches the pricing_model its own locks "
        "record only when both passprices digest alike)\n"
    )
    own = str(root / "locks" / f"{R1}.lock.toml")  # the copy's lock: "-o locks/…" named the checkout's, from its folder
    note = f" (the running passprice's; this checkout's src/passprice prices with {theirs[:19]}…: see the warning)"
    reports = ((("check",), f"  pricing model: same{note}"), (("reproduce", R1), f"    pricing model  unchanged{note}"))
    for args, said in reports:
        result = invoke(*args, root=root)
        assert result.stderr.startswith(warning), (args, result.stderr)
        # the report itself says whose model was judged "same" (session 11's walkthrough read "pricing model: same"
        # on every lock, the warning above the report the only word of the other copy's code)
        assert said in result.stdout.splitlines(), (args, result.stdout)
    # writing a lock with the running code into this checkout is refused (session 9's walkthrough: it printed
    # "locked …", exit 0, wrote the same bytes, and the review still failed)
    before = Path(own).read_bytes()
    result = invoke("lock", R1, "--update", "-o", own, root=root)
    assert result.exit_code == 2, result.stderr
    assert result.stderr == (
        f"passprice: error: {source}: this checkout's code prices with pricing model {theirs[:19]}…, the passprice "
        f"running with {ours[:19]}… (installed from another copy): a lock written now would record the running "
        "code's prices, which this checkout's review does not use; run `pip install -e .` in this checkout, then "
        "run the same command again\n"
    )
    assert Path(own).read_bytes() == before
