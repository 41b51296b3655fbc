"""What a README-only newcomer hit (walkthrough 106: ``pip install .``, registries made with ``passprice init``).

1. Every source record named its stored excerpt in the checkout's ``tests/data/``, which neither the wheel's
   ``passprice/_data`` nor an ``init`` registry held: ``audit --source gpu-container-handbook-routing-derisk`` run
   outside the checkout sent the reader to ``sources/excerpts/cite70-excerpt.txt``, and ``check`` said 0 problems. The
   excerpts now live in ``sources/excerpts/`` (carried wherever ``sources/`` is), ``init`` copies each one its records
   name, ``audit`` names a built-in one as the built-in registry's, and ``check`` reports a record whose excerpt is
   not there (test_1_*).
2. ``lock`` and ``lock --update`` wrote a price resting on derived facts that no longer follow from their inputs
   (``fact set h200_sxm_141gb memory.bandwidth --value 4.89`` without ``fact recompute``: "replaces 996.1 -> 1,014.8",
   exit 0), a price ``diff`` calls not a price to publish, ``audit`` marks STALE and ``check`` fails: refused by name,
   exit 1, nothing written, with the command that writes them (test_2_*).
4. ``reproduce`` of a shipped lock in a fresh ``init`` registry advised on stdout to import a header file that was
   never kept, the working ``cp`` of passprice's own entry on stderr alone, and called the serving "no longer
   registered" in a registry that never had it: the ``cp`` now comes first on stdout, and the serving "is not
   registered here" (test_4_*).
6. The README tour's ``--plot`` commands exit 2 after the README's own ``pip install .``: the tour says they need
   ``pip install '.[plot]'`` (test_6_*).
8. ``price --card rtx5090`` said only "did you mean rtx_4090 …": it now says how to add a card of one's own
   (``facts/cards/NAME.toml``, the README's "A card of your own"); ``audit --help`` showed ``[TARGET] [SERVING]``
   while ``audit A B`` refused the second word: the usage line now shows ``[TARGET]`` alone (test_8_*).
9. Minor: ``best``'s headroom line names ``--memory-use``; a review's NOT LOCKED row "memory_s moved" beside tokens/s
   +0 % shows the memory_s figures; ``explain bindz`` offers ``binds`` alone (not "out of date already on BASE" and
   "source", the terms of the aliases "behind" and "kind"); ``sweep -o a.parquet`` wrote CSV: a suffix naming a data
   format passprice never writes is refused; the README said a dense model's ``routing`` is empty, where JSON
   writes ``null`` (test_9_*).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice.registry import Root

# --- 1. stored excerpts outside the checkout ------------------------------------------------------------------------


def _bundled() -> dict[str, str]:
    """pyproject.toml's force-include: each folder of the checkout → where the wheel puts it."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return dict(pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"])


def _named_excerpts() -> dict[str, str]:
    out = {}
    for path in sorted((REPO / "sources").glob("*.toml")):
        excerpt = tomllib.loads(path.read_text(encoding="utf-8"))["source"].get("excerpt")
        if excerpt is not None:
            out[path.stem] = excerpt
    return out


def test_1_every_named_excerpt_is_in_a_folder_the_wheel_carries() -> None:
    named = _named_excerpts()
    assert len(named) == 23  # 21, the H200 product page's (tests/test_cite102.py), the SN40L deck's (test_walk117.py)
    bundled = _bundled()
    for source_id, excerpt in named.items():
        top = excerpt.split("/", 1)[0]
        # carried into the package's registry at the same path below it: the path the record names there too
        assert bundled.get(top) == f"passprice/_data/{top}", (source_id, excerpt)
        assert (REPO / excerpt).is_file(), (source_id, excerpt)
    assert sorted({e.rsplit("/", 1)[0] for e in named.values()}) == ["sources/excerpts"]
    assert not list((REPO / "tests" / "data").glob("cite*-excerpt.txt"))  # moved, not copied


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel-like layout: passprice's modules in a folder of their own with ``_data`` holding what
    pyproject.toml's force-include bundles (not the checkout: ``embedded_root`` finds the package's ``_data``)."""
    site = tmp_path_factory.mktemp("site")
    shutil.copytree(REPO / "src" / "passprice", site / "passprice",
                    ignore=shutil.ignore_patterns("__pycache__", "_data", "pricing_model.json"))
    for folder, target in _bundled().items():
        if (REPO / folder).is_dir():
            shutil.copytree(REPO / folder, site / target)
    return site


def _run(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site), "PASSPRICE_CACHE_DIR": str(site.parent / f"{site.name}-cache")}
    env.pop("PASSPRICE_ROOT", None)
    return subprocess.run([sys.executable, "-c", "import sys; from passprice.entry import main; main()", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_1_audit_outside_any_registry_names_the_built_in_excerpt(installed: Path, tmp_path: Path) -> None:
    where = _run(installed, tmp_path, "audit", "--source", "gpu-container-handbook-routing-derisk")
    assert where.returncode == 0, where.stderr
    file = installed / "passprice" / "_data" / "sources" / "excerpts" / "cite70-excerpt.txt"
    line = ("  stored excerpt: the built-in registry's sources/excerpts/cite70-excerpt.txt (the lines quoted from the "
            f"text read; its file: {file})")  # tests/test_walk128.py: its absolute path, as the README promises
    assert line in where.stdout.splitlines(), where.stdout
    # before: "  stored excerpt: sources/excerpts/cite70-excerpt.txt (the text read, from the registry's top folder)"
    assert "tests/data/" not in where.stdout.split("read:", 1)[0]
    assert (installed / "passprice" / "_data" / "sources" / "excerpts" / "cite70-excerpt.txt").is_file()


def test_1_an_init_registry_holds_every_excerpt_its_records_name(installed: Path, tmp_path: Path) -> None:
    made = _run(installed, tmp_path, "init", "demo", "--examples")
    assert made.returncode == 0, made.stderr
    demo = tmp_path / "demo"
    for source_id, excerpt in _named_excerpts().items():
        assert (demo / excerpt).read_bytes() == (REPO / excerpt).read_bytes(), source_id
    audit = _run(installed, demo, "audit", "--source", "azure-ai-benchmarking-guide")
    assert audit.returncode == 0, audit.stderr
    assert ("  stored excerpt: sources/excerpts/github-sources-excerpt.txt (the lines quoted from the text read, "
            "from the registry's top "
            "folder)") in audit.stdout.splitlines()
    # check reads the registry as init made it, every excerpt there; then one taken away is a problem by name
    (demo / "sources" / "excerpts" / "cite73-excerpt.txt").unlink()
    checked = _run(installed, demo, "check")
    assert checked.returncode == 2, checked.stdout
    assert checked.stderr.splitlines() == [
        "passprice: error: sources/nvidia-l40s-datasheet.toml: source.excerpt: sources/excerpts/cite73-excerpt.txt "
        "is not a file of this registry: put the document there (source.excerpt is read from the registry's top "
        "folder), or correct source.excerpt"
    ]
    assert "1 problem" in checked.stdout


@pytest.mark.parametrize("make", ["gone", "folder", "link"])
def test_1_check_reports_an_excerpt_that_is_not_there(tmp_path: Path, make: str) -> None:
    root = copy_root(tmp_path)
    excerpt = root / "sources" / "excerpts" / "cite70-excerpt.txt"
    excerpt.unlink()
    if make == "folder":
        excerpt.mkdir()
    elif make == "link":
        (root / "elsewhere.txt").write_text("== x\n", encoding="utf-8")
        excerpt.symlink_to(root / "elsewhere.txt")
    said = {
        "gone": "is not a file of this registry: put the document there (source.excerpt is read from the "
                "registry's top folder), or correct source.excerpt",
        "folder": "is a folder, not a regular file of this registry",
        "link": "passes through a symbolic link (sources/excerpts/cite70-excerpt.txt)",
    }[make]
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    # the three records naming it, one line each, naming the file and the key
    ids = ("gpu-container-handbook-routing-derisk", "mlcommons-inference-results-v6.0", "nvidia-cuda-programming-guide")
    for source_id in ids:
        prefix = f"passprice: error: sources/{source_id}.toml: source.excerpt: sources/excerpts/cite70-excerpt.txt "
        assert [line for line in lines if line.startswith(prefix)] != [], (source_id, lines)
        assert any(line.startswith(prefix) and said in line for line in lines), lines
    assert len(lines) == 3, lines
    audit = invoke("audit", "--source", "gpu-container-handbook-routing-derisk", root=root)
    assert audit.exit_code == 0, audit.output  # the record still reads: the audit says the excerpt is not there
    (line,) = [line for line in audit.stdout.splitlines() if line.startswith("  stored excerpt: ")]
    assert line.startswith("  stored excerpt: sources/excerpts/cite70-excerpt.txt (the lines quoted from the text "
                           "read, from the registry's top folder), but sources/excerpts/cite70-excerpt.txt ")
    assert said in line


def test_1_init_copies_an_excerpt_wherever_a_record_puts_it(tmp_path: Path) -> None:
    from passprice.scaffold import plan

    root = copy_root(tmp_path)
    record = root / "sources" / "nvidia-l40s-datasheet.toml"
    record.write_text(record.read_text(encoding="utf-8").replace(
        'excerpt = "sources/excerpts/cite73-excerpt.txt"', 'excerpt = "notes/l40s.txt"'), encoding="utf-8")
    (root / "notes").mkdir()
    (root / "notes" / "l40s.txt").write_text("== nvidia-l40s-datasheet - -\n", encoding="utf-8")
    (root / "schema").symlink_to(REPO / "schema")
    files = plan(Root(root), requirement="passprice").files
    assert files["notes/l40s.txt"] == b"== nvidia-l40s-datasheet - -\n"
    assert files["sources/excerpts/cite70-excerpt.txt"] == (REPO / "sources/excerpts/cite70-excerpt.txt").read_bytes()
    assert "sources/excerpts/cite73-excerpt.txt" not in files  # named by no record now
    # one not there is left out (check names it), not a refusal of init
    (root / "notes" / "l40s.txt").unlink()
    assert "notes/l40s.txt" not in plan(Root(root), requirement="passprice").files


def _git(folder: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    subprocess.run(["git", *args], cwd=folder, env=env, check=True, capture_output=True)


def test_1_a_review_finds_the_excerpts_of_each_revision(tmp_path: Path) -> None:
    # A revision's side holds only the files passprice reads: the excerpts, named by the records, are written there
    # (empty, as a source.path document is), so check on each side finds them; one removed is named on HEAD.
    root = copy_root(tmp_path)
    shutil.copytree(REPO / "schema", root / "schema")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "registry")
    same = invoke("diff", "main", "HEAD", root=root)
    assert same.exit_code in (0, 1) and "source.excerpt" not in same.output, same.output
    (root / "sources" / "excerpts" / "cite73-excerpt.txt").unlink()
    _git(root, "commit", "-q", "-am", "an excerpt removed")
    gone = invoke("diff", "main~1", "HEAD", root=root)
    assert gone.exit_code == 2, gone.output
    assert ("passprice: error: on HEAD: sources/nvidia-l40s-datasheet.toml: source.excerpt: "
            "sources/excerpts/cite73-excerpt.txt is not a file of this registry") in gone.stderr, gone.stderr
    assert len(gone.stderr.splitlines()) == 1


# --- 2. no lock on stale derived facts -------------------------------------------------------------------------------

LOCK = "r1-qwen7b-h200"
_SET = ("fact", "set", "h200_sxm_141gb", "memory.bandwidth", "--value", "4.89", "--unit", "TB/s", "--provenance",
        "published", "--source", "nvidia-h200-datasheet", "--locator",
        "Technical Specifications table, H200 SXM column: 'GPU Memory Bandwidth 4.8TB/s'")
# streams.read = 4.48 TB/s / memory.bandwidth: 4.48 / 4.89 = 0.91616 -> 0.9162 (4 digits); 4.48 / 4.8 = 0.9333
_STALE = ("streams.read, streams.append are stale derived facts: input memory.bandwidth 4.8 TB/s when derived, "
          "4.89 TB/s now — priced on their written values (streams.read 0.9333, recomputed 0.9162; streams.append "
          "0.8646, recomputed 0.8487); `passprice check` names each")


def test_2_lock_update_on_stale_derived_facts_is_refused_by_name(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    assert invoke(*_SET, root=root).exit_code == 0
    lock = root / "locks" / f"{LOCK}.lock.toml"
    before = lock.read_bytes()
    result = invoke("lock", "--update", "-o", str(lock), root=root)
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    assert result.stderr == (
        f"passprice: refused: StaleFacts: lock {LOCK}: its price rests on derived facts that do not follow from their "
        f"inputs, not a price to publish: {_STALE}; run `passprice fact recompute h200_sxm_141gb`, then lock again; "
        f"{lock} not written\n")
    assert lock.read_bytes() == before
    # the same facts, in the same words, as audit marks them STALE
    audit = invoke("audit", LOCK, root=root)
    assert f"STALE: {_STALE}" in audit.stdout.splitlines()
    # a new lock too, and --json: the refusal's name, the facts (as audit --json's stale) and the fix
    refused = invoke("lock", LOCK, "--name", "fresh", "--json", root=root)
    assert refused.exit_code == 1
    document = json.loads(refused.stdout)
    assert (document["refusal"], document["lock"], document["written"]) == ("StaleFacts", "fresh", False)
    assert [(f["path"], f["kind"], f["expected"], f["value"]) for f in document["stale"]] == [
        ("streams.read", "stale", "0.9162", "0.9333"), ("streams.append", "stale", "0.8487", "0.8646")]
    assert document["fix"] == ["run `passprice fact recompute h200_sxm_141gb`"]
    assert not (root / "locks" / "fresh.lock.toml").exists()
    # as it says: recompute, then lock again (4.48 / 4.89 moves the price 996.1 -> 996.2 tokens/s)
    assert invoke("fact", "recompute", "h200_sxm_141gb", root=root).exit_code == 0
    done = invoke("lock", "--update", "-o", str(lock), root=root)
    assert done.exit_code == 0, done.output
    assert "  replaces  996.1 -> 996.2 tokens/s" in done.stdout


def test_2_the_fix_names_each_record_its_stale_facts_are_in() -> None:
    from passprice.derivations import Finding
    from passprice.locking import stale_fixes
    from passprice.stale import Stale

    def found(path: str) -> tuple[str, Finding, str]:
        return path, Finding(path, "stale", f"{path} is stale"), "1"

    stale = Stale((found("streams.read"), found("draft.acceptance.1"), found("routing.hot_share"),
                   found("streams.append")))
    assert stale_fixes(stale, "my h200", "eagle3", "qwen3-code") == [
        "run `passprice fact recompute 'my h200'`",
        "run `passprice fact recompute eagle3 --draft`",
        "edit routing record qwen3-code's routing.hot_share by hand",
    ]


# --- 4. reproduce in a registry that never had the lock's checkpoint -------------------------------------------------


def test_4_reproduce_in_a_fresh_registry_says_the_working_fix_first(tmp_path: Path) -> None:
    from passprice.registry import embedded_root

    made = invoke("init", str(tmp_path / "fresh"))
    assert made.exit_code == 0, made.output
    fresh = tmp_path / "fresh"
    handed = tmp_path / "q.lock.toml"
    shutil.copy(REPO / "locks" / "qwen3-30b-a3b-h200.lock.toml", handed)
    result = invoke("reproduce", str(handed), root=fresh)
    assert result.exit_code == 1, result.output
    entry = embedded_root().path / "registry" / "checkpoints" / "qwen3-30b-a3b-q4_k_m.toml"  # the checkout, or _data
    target = fresh / "registry" / "checkpoints" / "qwen3-30b-a3b-q4_k_m.toml"
    lines = result.stdout.splitlines()
    assert lines[1] == ("  cannot be reproduced here: the pinned checkpoint qwen3-30b-a3b-q4_k_m is not in this "
                        f"registry; passprice's own registry holds it: cp {entry} {target}, and run this again")
    (checkpoint,) = [line for line in lines if line.startswith("    checkpoint ")]
    assert checkpoint.startswith(
        "    checkpoint     qwen3-30b-a3b-q4_k_m: no entry of that name in this registry; passprice's own registry "
        f"holds the pinned content 5cda2d34b241…: copy its entry into this registry (cp {entry} {target}) and run "
        "this again; or import the header")
    serving = "    serving        serving qwen3-30b-a3b-h200 is not registered here (priced as the lock embeds it)"
    assert serving in lines
    assert "no longer registered" not in result.stdout
    data = json.loads(invoke("reproduce", str(handed), "--json", root=fresh).stdout)
    assert data["checkpoint"]["packaged"] == f"cp {entry} {target}"
    # as it says
    shutil.copy(entry, target)
    again = invoke("reproduce", str(handed), root=fresh)
    assert "    checkpoint     qwen3-30b-a3b-q4_k_m: content 5cda2d34b241… as pinned" in again.stdout.splitlines()


# --- 6. the tour's pictures need the plot extra ----------------------------------------------------------------------


def test_6_the_tour_says_its_plots_need_the_plot_extra() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index("## A tour")
    block = readme[readme.index("```sh\n", start):readme.index("\n```\n", readme.index("```sh\n", start))]
    plots = [line for line in block.splitlines() if " --plot " in line]
    assert len(plots) == 2
    assert "pip install '.[plot]' first" in plots[0]  # the first --plot line says it, where a reader stops
    after = " ".join(readme[readme.index("\n```\n", start):].split())
    assert after.startswith("``` The two `--plot` commands draw with matplotlib, the optional `plot` extra, which "
                            "`pip install .` leaves out: install it with `pip install '.[plot]'`")
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["optional-dependencies"]["plot"] == ["matplotlib>=3.7"]
    assert "matplotlib" not in " ".join(pyproject["project"]["dependencies"])


def test_6_a_plot_without_matplotlib_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError, as not installed
    picture = tmp_path / "roofline.png"
    result = invoke("roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--plot", str(picture))
    assert result.exit_code == 2, result.output
    assert "pip install '.[plot]'" in result.stderr, result.stderr
    assert not picture.exists()


# --- 8. a card not registered; audit's usage ------------------------------------------------------------------------


def test_8_a_card_not_registered_says_how_to_add_one(tmp_path: Path) -> None:
    own = ("; a card not registered is a file of your own: copy the closest registered card's file to "
           "facts/cards/rtx5090.toml and set its facts (README, 'A card of your own')")
    result = invoke("price", "--checkpoint", "gemma3-270m-q4_k_m", "--card", "rtx5090")
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("passprice: error: card 'rtx5090': not found in facts/cards; did you mean rtx_4090 or "
                           "rtx_3090 or rtx_4080? (registered: a100_pcie_80gb, ")
    assert line.endswith(own), line
    assert "A card of your own" in (REPO / "README.md").read_text(encoding="utf-8")
    # a name like no card: the same advice
    assert invoke("facts", "zz9", root=copy_root(tmp_path)).stderr.rstrip("\n").endswith(
        own.replace("rtx5090", "zz9"))
    # a name that is a record of another kind says that instead (a serving given as a card)
    other = invoke("price", "--checkpoint", "gemma3-270m-q4_k_m", "--card", "r1-qwen7b-h200")
    assert "a card not registered" not in other.stderr and "r1-qwen7b-h200 is a registered serving" in other.stderr
    # another kind keeps its own line
    assert "a card not registered" not in invoke("price", "no-such-serving").stderr


def test_8_audit_s_usage_shows_the_one_target_it_takes() -> None:
    usage = invoke("audit", "--help").stdout.splitlines()[0]
    assert usage.endswith(" audit [OPTIONS] [TARGET]"), usage
    two = invoke("audit", "r1-qwen7b-h200", "gemma3-270m-h100")
    assert two.exit_code == 2
    assert "audit takes one TARGET (a lock or a serving), not also 'gemma3-270m-h100'" in two.stderr
    # the other pricing commands still show SERVING
    assert invoke("price", "--help").stdout.splitlines()[0].endswith(" price [OPTIONS] [SERVING]")


# --- 9. minor ---------------------------------------------------------------------------------------------------------


def test_9_best_s_headroom_line_names_memory_use() -> None:
    best = invoke("best", "r1-qwen7b-h200")
    (line,) = [x for x in best.stdout.splitlines() if x.startswith("  headroom ")]
    assert "(seek the best batch within a share of card memory with `--memory-use 0.9`, price a smaller batch" in line
    # as it says: the best batch within 90 % of card memory (520 sequences, not 580)
    capped = invoke("best", "r1-qwen7b-h200", "--memory-use", "0.9")
    assert "  batch 520 sequences (all in card memory); each carries 1 token-row through a pass and emits 1 token" in (
        capped.stdout.splitlines())


def test_9_a_not_locked_row_shows_the_figure_that_moved() -> None:
    from passprice.locks import FIGURES
    from passprice.review import PriceSide
    from passprice.unlocked import ServingMove, text_lines

    price = json.loads(invoke("price", "r1-qwen7b-h200", "--no-lock", "--json").stdout)
    before = {k: price[k] for k in FIGURES}
    before["memory_s"] = 0.5 * before["pass_s"]  # a pass bound elsewhere: its memory time moves, tokens/s does not
    after = {**before, "memory_s": 0.6 * before["pass_s"]}
    move = ServingMove("s", "h200_sxm_141gb", PriceSide(before), PriceSide(after), ("memory.bandwidth",), ("facts",))
    lines = text_lines([move])
    assert "  s (card h200_sxm_141gb): NOT LOCKED, memory_s moved" in lines
    # (the price did not move, said so since tests/test_walk117.py)
    said = "(+0 %: memory_s moved, the price did not)"
    assert any(x.startswith("    tokens/s ") and x.endswith(said) for x in lines), lines
    assert f"    moved     memory_s {before['memory_s']!r} → {after['memory_s']!r} (+20 %)" in lines
    # a row whose tokens/s moved shows no such line (tokens/s says it)
    moved = ServingMove("s", "h200_sxm_141gb", PriceSide(before),
                        PriceSide({**before, "tokens_per_s": 2 * before["tokens_per_s"]}))
    assert not any(x.startswith("    moved ") for x in text_lines([moved]))


def test_9_explain_offers_only_the_closest_terms() -> None:
    said = invoke("explain", "bindz").stderr
    assert said == ("passprice: error: explain: 'bindz' is not a term passprice defines; did you mean binds? "
                    "(passprice explain lists them)\n")
    # an alias matched is shown with the term it is explained under
    assert "did you mean roofline (ridge)?" in invoke("explain", "roflin").stderr
    assert invoke("explain", "roofline").stdout.startswith("ridge: ")


@pytest.mark.parametrize("name", ["a.parquet", "a.xlsx", "a.tsv", "rows.jsonl", "a.PARQUET"])
def test_9_sweep_refuses_a_suffix_naming_a_format_it_does_not_write(tmp_path: Path, name: str) -> None:
    out = tmp_path / name
    result = invoke("sweep", "r1-qwen7b-h200", "--batches", "1-2", "-o", str(out))
    assert result.exit_code == 2, result.output
    suffix = "." + name.rsplit(".", 1)[1].lower()
    assert (f"-o would write a sweep's rows (CSV or JSON) into a file whose name ends in {suffix} (a name that says "
            ) in result.stderr and "which passprice does not write): name it .csv or .json" in result.stderr
    assert not out.exists()
    # a suffix naming no format took the command's own (CSV); since tests/test_bound111.py only with --format
    text = tmp_path / "rows.txt"
    assert invoke("sweep", "r1-qwen7b-h200", "--batches", "1-2", "-o", str(text)).exit_code == 2
    assert invoke("sweep", "r1-qwen7b-h200", "--batches", "1-2", "-o", str(text), "--format", "csv").exit_code == 0
    assert text.read_text(encoding="utf-8").startswith("card,serving,checkpoint,routing,")


def test_9_a_dense_model_s_routing_is_empty_in_csv_and_null_in_json(tmp_path: Path) -> None:
    rows = json.loads(invoke("sweep", "r1-qwen7b-h200", "--batches", "1", "--format", "json").stdout)
    assert rows[0]["routing"] is None
    csv_text = invoke("sweep", "r1-qwen7b-h200", "--batches", "1").stdout
    assert csv_text.splitlines()[1].split(",")[3] == ""
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert "`routing` (the routing record; for a dense model empty in CSV, `null` in JSON)" in readme
