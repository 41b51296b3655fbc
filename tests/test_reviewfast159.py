"""A stack of the shipped registry as shipped is not fitted again (``stackfits.shipped_stack``, the table
``src/passprice/shipped_stacks.json`` that ``docs/make.py`` writes): ``check``'s look at the stacks and a review's
re-fit of its private copy take "no finding, the file is its own re-fit" from the table while every input the fit
reads is byte for byte the shipped one, under the same pricing code, NumPy and architecture. A cold one-fact review
solved 18 fits and re-fitted one stack again in its copy, NumPy imported, though nothing they read had moved (issue 13's
2 s bound; docs/PERFORMANCE.md). Anything the fit reads edited, or another pricing code: fitted as ever. With the
cache bypassed (``--no-cache``) the table answers too since tests/test_cheapcheck174.py: it is the package's file, not
the cache folder's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice import calibrate, pins, stackfits
from passprice.measurements import load_runs
from passprice.registry import find_root
from passprice.review import impacts
from passprice.stacks import load_stack, stack_path

STACKS = ("llamacpp-cuda-2405", "lmdeploy-turbomind-2312")
H200 = "facts/cards/h200_sxm_141gb.toml"  # a card no run of either stack's fit prices (vllm-cuda-2601's runs do)
RTX4090 = "facts/cards/rtx_4090.toml"  # a card of llamacpp-cuda-2405's runs, none of lmdeploy-turbomind-2312's
RUNS = "registry/measurements/lmdeploy-turbomind-a100.toml"


def _fitting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record each stack :func:`calibrate.verify_stack` or :func:`calibrate.calibrate` fits from now on."""
    fitted: list[str] = []
    verify, fit = calibrate.verify_stack, calibrate.calibrate

    def verifying(root: object, stack: calibrate.Stack, runs: object = None) -> list[object]:
        fitted.append(f"verify {stack.name}")
        return verify(root, stack, runs)  # type: ignore[arg-type]

    def calibrating(root: object, name: str, runs: object = None) -> object:
        fitted.append(f"calibrate {name}")
        return fit(root, name, runs)  # type: ignore[arg-type]

    monkeypatch.setattr(calibrate, "verify_stack", verifying)
    monkeypatch.setattr(calibrate, "calibrate", calibrating)
    return fitted


def _shipped(root: Path) -> dict[str, bool]:
    r = find_root(str(root))
    runs = load_runs(r)
    return {name: stackfits.shipped_stack(r, load_stack(r, name), runs) for name in STACKS}


def test_the_table_is_current_for_the_checkout() -> None:
    """Both shipped stacks are in the table and the checkout's registry matches it: a pricing module edited since
    the table was written fails here (as a lock's digest does) until ``docs/make.py``'s ``shipped`` is run again."""
    table = json.loads(stackfits.SHIPPED_STACKS.read_text(encoding="utf-8"))
    assert sorted(table["stacks"]) == list(STACKS)
    assert table["numpy"].startswith("numpy-") and table["numpy"].endswith(".dist-info")
    stale = ("src/passprice/shipped_stacks.json is stale: python -c \"import sys; sys.path.insert(0, 'docs'); "
             "import make; make.shipped()\"")  # fmt: skip
    assert table["pricing_model"] == pins.pricing_model_digest(), stale
    # Where NumPy or the machine is not the table's (another NumPy release installed, an arm64 machine), every stack
    # misses and is fitted, never served: the table is current for the checkout, and of no use here.
    here = stackfits._shipped_solver()
    assert here is not None
    same_solver = (here[1], here[2]) == (table["numpy"], table["machine"])
    assert _shipped(REPO) == dict.fromkeys(STACKS, same_solver), stale


def test_an_unread_card_edited_fits_nothing_and_finds_what_a_fit_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one-fact review's edit (the H200's memory bandwidth): no fit re-run for check or for the copy's re-fit, and
    what the table says is what fitting afresh says (no problem; the re-fit writes the file as it is)."""
    monkeypatch.chdir(tmp_path)
    folder = copy_root(tmp_path)
    card = folder / H200
    card.write_text(card.read_text(encoding="utf-8").replace("value = 4.8\n", "value = 4.9\n", 1), encoding="utf-8")
    root = find_root(str(folder))
    before = {name: stack_path(root, name).read_bytes() for name in STACKS}
    fitted = _fitting(monkeypatch)
    taken = stackfits.review_stacks(root)
    for name in STACKS:
        impacts._refit_stack(root, load_stack(root, name))
    assert fitted == []
    assert taken == ([], [])
    assert {name: stack_path(root, name).read_bytes() for name in STACKS} == before
    # Afresh (the table left out, nothing cached): the same findings, and the re-fit writes the same bytes.
    monkeypatch.setenv("PASSPRICE_NO_CACHE", "1")
    monkeypatch.setattr(stackfits, "_SHIPPED", [(("", "", ""), {})])
    assert stackfits.review_stacks(find_root(str(folder))) == taken
    for name in STACKS:
        impacts._refit_stack(root, load_stack(root, name))
    assert sorted(fitted) == sorted([f"verify {n}" for n in STACKS] + [f"calibrate {n}" for n in STACKS])
    assert {name: stack_path(root, name).read_bytes() for name in STACKS} == before


def test_what_the_fit_reads_edited_is_fitted_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    folder = copy_root(tmp_path)
    assert _shipped(folder) == dict.fromkeys(STACKS, True)
    # A file the registry's loaders do not read (a review's side writes it empty): still the shipped stack.
    (folder / "facts/stacks/README.md").write_text("", encoding="utf-8")
    assert _shipped(folder) == dict.fromkeys(STACKS, True)
    # The card the stack's runs price: that stack is fitted again, the other not.
    card = folder / RTX4090
    text = card.read_text(encoding="utf-8")
    card.write_text(text + "# edited\n", encoding="utf-8")
    assert _shipped(folder) == {"llamacpp-cuda-2405": False, "lmdeploy-turbomind-2312": True}
    card.write_text(text, encoding="utf-8")
    # A measured run's figure: every stack (any run may move between stacks), and the finding is the fit's.
    runs = folder / RUNS
    runs.write_text(runs.read_text(encoding="utf-8").replace("tokens_per_s = 100.02\n", "tokens_per_s = 150.02\n", 1),
                    encoding="utf-8")
    assert _shipped(folder) == dict.fromkeys(STACKS, False)
    problems, _ = stackfits.review_stacks(find_root(str(folder)))
    assert len(problems) == 1 and "lmdeploy-turbomind-2312.toml" in problems[0] and "stale" in problems[0]
    assert "100.02" in problems[0] and "150.02" in problems[0]
    runs.write_text(runs.read_text(encoding="utf-8").replace("= 150.02\n", "= 100.02\n", 1), encoding="utf-8")
    assert _shipped(folder) == dict.fromkeys(STACKS, True)
    # Other pricing code than the table's: fitted. The cache bypassed: still the table's (it is the package's file,
    # its key checked as ever: tests/test_cheapcheck174.py).
    monkeypatch.setattr(stackfits, "_shipped_solver", lambda: ("sha256:" + "0" * 64, "numpy-2.4.6.dist-info", "x"))
    assert _shipped(folder) == dict.fromkeys(STACKS, False)
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PASSPRICE_NO_CACHE", "1")
    assert _shipped(folder) == dict.fromkeys(STACKS, True)


def test_a_one_fact_review_is_the_same_with_and_without_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The review the table is for: its markdown, exit status and standard error byte for byte those of a review that
    fits every stack (the table left out), each with a cache folder of its own."""
    import shutil

    base, head = tmp_path / "base", tmp_path / "head"
    for side in (base, head):
        for name in ("facts", "registry", "locks", "sources"):
            shutil.copytree(REPO / name, side / name)
    card = head / H200
    card.write_text(card.read_text(encoding="utf-8").replace("value = 4.8\n", "value = 4.9\n", 1), encoding="utf-8")
    fitted = _fitting(monkeypatch)
    outputs = []
    for shipped in (True, False):
        monkeypatch.setenv("PASSPRICE_CACHE_DIR", str(tmp_path / f"cache-{shipped}"))
        if not shipped:
            monkeypatch.setattr(stackfits, "_SHIPPED", [(("", "", ""), {})])
        result = invoke("diff", str(base), str(head), "--format", "markdown", root=head)
        outputs.append((result.exit_code, result.stdout, result.stderr))
        assert (fitted == []) == shipped, fitted
    assert outputs[0] == outputs[1]
    assert outputs[0][0] == 1 and "h200_sxm_141gb:streams.read (stale)" in outputs[0][2]
