"""The review of a change (``passprice diff``) is the subpackage ``passprice.review``, one module a part: the two
sides, what changed, what the change does to the locks, the verdict, the rendering. It was one module of 10,110
lines, ``diff.py``; what read the package's files by name or by glob must still see the review's modules.

1. The layout: ``diff.py`` is gone (no shim), the subpackage holds its parts, each importing only those before it
   (the first part never reaches a later one, so importing any of them imports no cycle), each opening with the one
   principle it holds, each name defined in one part only. The verdict's findings were split out of ``verdict.py``
   (3,956 lines) by what they ask of: the facts' quotes and sources, the measured runs, what records say beside
   their figures, HEAD's locks as ``check`` reads them; ``verdict.py`` keeps the :class:`Diff` and its assembly, and
   moved no name back under its old module (test_1_*).
2. The pricing model's walk (:func:`passprice.pins.pricing_modules`) names modules by their file in the package's
   own folder: a pricing module importing ``passprice.review.X`` would put a module ``review`` in its closure that has
   no ``review.py``, left out of the digest unsaid. None does, and the pricing modules are the ones they were before
   the split (test_2_*).
3. An edit below ``src/passprice/review/`` is passprice's own code changed, as an edit of ``diff.py`` was: named by
   :func:`passprice.sidecode.code_changes`, and it keeps HEAD from being priced with the running code
   (tests/test_slip_10.py runs the review of such an edit end to end) (test_3_*).
4. The entries the review keeps in the cache are keyed by its own modules too: :func:`passprice.cache.key` stamps the
   modules of the package's own folder only, which held ``diff.py`` but holds no module of ``review/`` (test_4_*).
"""

from __future__ import annotations

import ast
import importlib.util
import shutil
from pathlib import Path

import pytest

from passprice import cache, pins, sidecode
from passprice.sidecode import Code

PARTS = ("sides", "changes", "impacts", "quotes", "runs", "records", "headlocks", "verdict", "rendering")
REVIEW = pins.PACKAGE / "review"


def _review_imports(path: Path) -> set[str]:
    """The modules of ``passprice.review`` the module at ``path`` imports at its top level (its own parts, by name;
    ``__init__`` for the package's re-exported names)."""
    out: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            if node.module == "passprice.review":
                out |= {a.name if a.name in PARTS else "__init__" for a in node.names}
            elif node.module.startswith("passprice.review."):
                out.add(node.module.removeprefix("passprice.review."))
    return out


# --- 1. the layout --------------------------------------------------------------------------------------------------


def test_1_diff_py_is_gone_and_the_review_is_its_parts() -> None:
    assert not (pins.PACKAGE / "diff.py").exists()
    assert importlib.util.find_spec("passprice.diff") is None
    assert sorted(p.stem for p in REVIEW.glob("*.py")) == sorted(("__init__", *PARTS))


def test_1_each_part_imports_only_the_parts_before_it() -> None:
    for i, part in enumerate(PARTS):
        imported = _review_imports(REVIEW / f"{part}.py")
        assert imported <= set(PARTS[:i]), (part, sorted(imported))
    # the later parts do read the earlier ones: the order is the one the code has, not an empty claim
    assert _review_imports(REVIEW / "rendering.py") == {"changes", "impacts", "quotes", "records", "verdict"}
    assert _review_imports(REVIEW / "verdict.py") == set(PARTS[:PARTS.index("verdict")])
    assert _review_imports(REVIEW / "headlocks.py") == {"sides", "impacts"}
    assert _review_imports(REVIEW / "records.py") == {"sides", "changes", "impacts", "quotes", "runs"}
    assert _review_imports(REVIEW / "runs.py") == {"sides", "changes", "impacts", "quotes"}
    assert _review_imports(REVIEW / "quotes.py") == {"sides", "changes"}
    assert _review_imports(REVIEW / "changes.py") == {"sides"}


def _defined(path: Path) -> set[str]:
    """The names the module at ``path`` defines at its top level (functions, classes, assigned names)."""
    out: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
    return out


def test_1_each_part_states_its_principle_and_defines_its_own_names() -> None:
    seen: dict[str, str] = {}
    for part in PARTS:
        assert ast.get_docstring(ast.parse((REVIEW / f"{part}.py").read_text(encoding="utf-8"))), part
    for part in PARTS[PARTS.index("quotes"):PARTS.index("rendering")]:  # the parts verdict.py was split into
        for name in _defined(REVIEW / f"{part}.py"):
            assert name not in seen, (name, seen.get(name), part)
            seen[name] = part
    # the findings split out of verdict.py live in their parts only; the verdict keeps the Diff and its assembly
    assert {seen["_quotes_checked"], seen["copied_citations"], seen["_cut_keeping"]} == {"quotes"}
    assert {seen["runs_to_verify"], seen["measurements_added"], seen["stack_spans"]} == {"runs"}
    assert {seen["stale_descriptions"], seen["relabelled_stacks"], seen["added_records"]} == {"records"}
    assert {seen["unreproduced"], seen["_duplicates"]} == {"headlocks"}
    assert {seen["Diff"], seen["compare"], seen["_compare"], seen["diff"]} == {"verdict"}
    from passprice.review import verdict

    assert not hasattr(verdict, "copied_citations") and not hasattr(verdict, "_cut_keeping")  # no shim


def test_1_the_package_re_exports_what_callers_import() -> None:
    import passprice.review as review
    from passprice.review import impacts, rendering, sides, verdict

    assert review.diff is verdict.diff and review.render is rendering.render
    assert review.Checkout is sides.Checkout and review.recomputed_prices is impacts.recomputed_prices
    assert sorted(review.__all__) == sorted(n for n in vars(review) if not n.startswith("_") and n not in PARTS)


# --- 2. the pricing model's walk ------------------------------------------------------------------------------------


def test_2_no_pricing_module_imports_the_review() -> None:
    modules = pins.pricing_modules()
    assert "review" not in modules and "diff" not in modules
    for name in modules:  # every import statement, at top level or inside a function, as the walk notes them
        tree = ast.parse((pins.PACKAGE / f"{name}.py").read_text(encoding="utf-8"))
        imported: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                pins._note_import(node, imported)
        assert "review" not in imported and "diff" not in imported, name
        assert "locks" in imported or name != "reproduce"  # the walk's notes, not an empty set


def test_2_the_pricing_modules_are_the_ones_before_the_split() -> None:
    # pins.pricing_modules() of the commit before the split, read there: the split moved no pricing module
    before = [
        "addedfacts", "architectures", "audit", "batching", "bounds", "cache", "cachefolder", "calibrate", "cards",
        "check", "checkpointcite", "checkpoints", "cost", "decode", "derivations", "digests", "drafts", "edit",
        "enforce", "entryshape", "factparts", "facts", "filestamps", "fits", "ggml", "ggml_types", "gguf_header",
        "gguf_records", "gitconfig", "gitread", "lineage", "locks", "measurements", "memo", "memorecord",
        "modelhistory", "pins", "plaintoml", "quotecolumn", "report", "reproduce", "roofline", "routing", "rowcite",
        "scaffold",
        "scopes", "serving", "servingfile", "servings", "settings", "snapshot", "sources", "speculate", "stackfits",
        "stackreach", "stacks", "stale", "synthetic", "textchange", "trace", "typemix", "unkept", "validate",
    ]
    assert list(pins.pricing_modules()) == before


# --- 3. an edit below review/ is passprice's own code changed -------------------------------------------------------


def _copy(at: Path) -> Path:
    folder = at / "src" / "passprice"
    shutil.copytree(pins.PACKAGE, folder, ignore=shutil.ignore_patterns("__pycache__", "pricing_model.json", "_data"))
    return folder


def test_3_an_edit_below_review_is_named_as_passprice_s_own_code(tmp_path: Path) -> None:
    base, head = _copy(tmp_path / "base"), _copy(tmp_path / "head")
    verdict = head / "review" / "verdict.py"
    verdict.write_text(verdict.read_text(encoding="utf-8") + "\n# a quieter verdict\n", encoding="utf-8")
    (head / "review" / "extra.py").write_text("X = 1\n", encoding="utf-8")

    def own(folder: Path) -> Code:
        return Code(folder, "sha256:" + "0" * 64, True, False)

    assert sidecode.code_changes(own(base), own(base)) == ()
    assert sidecode.code_changes(own(base), own(head)) == ("src/passprice/review/extra.py",
                                                           "src/passprice/review/verdict.py")
    # and HEAD is not priced with the running code, whose review/ differs from its own
    assert {"review/extra.py", "review/verdict.py"} <= set(sidecode._unpinned_changes(head))
    assert not {rel for rel in sidecode._unpinned_changes(base) if rel.startswith("review/")}


# --- 4. the review's kept entries are keyed by its own code ---------------------------------------------------------


def test_4_an_edit_of_a_review_module_misses_what_the_review_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice.review import impacts

    def keys() -> tuple[str, str]:  # the lock pins' entry, and a commit's code digest's (its self is not read)
        return impacts._pins_key(), impacts._CommitCode._key(None, "4b825dc6")  # type: ignore[arg-type]

    impacts._review_stamp.cache_clear()
    before, stamp = keys(), impacts._review_stamp()
    assert [part.split(":")[0] for part in stamp.split(",")] == sorted(["__init__.py", *(f"{p}.py" for p in PARTS)])
    real = cache.file_stamp
    monkeypatch.setattr(cache, "file_stamp",
                        lambda path, now: "edited" if Path(path).name == "verdict.py" else real(path, now))
    impacts._review_stamp.cache_clear()
    try:
        assert "verdict.py:edited" in impacts._review_stamp()
        after = keys()  # an edit of verdict.py: neither entry kept before it is read
        assert after[0] != before[0] and after[1] != before[1]
    finally:
        monkeypatch.undo()
        impacts._review_stamp.cache_clear()
    assert keys() == before and impacts._review_stamp() == stamp


def test_4_every_cache_key_stamps_the_subpackages_modules_too() -> None:
    """The code stamp in every kept entry's key (:func:`passprice.cache._code_stamp`) names the review's modules,
    not the package folder's alone: a checkout's edit of ``review/verdict.py`` misses every entry kept before it."""
    stamp = cache._code_stamp()
    names = [part.split(":")[0] for part in stamp.split(",")]
    assert {f"review/{p}.py" for p in PARTS} | {"review/__init__.py"} <= set(names)
    assert "cache.py" in names and "cli/app.py" in names
    assert not any(name.startswith("__pycache__") or name.count("/") > 1 for name in names)
