"""What walkthroughs 51-52 and left43 left, each fixed with a test: a fact whose value moved under its unchanged
citation gets a ``cites`` entry saying so; ``audit LOCK`` of a stack lock names the card facts its fit reads; a
review's ``sources_changed`` follows a card a stack's fit rests on; a serving re-pointed between routing records
named by a file path compares the two records' facts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke


def test_a_value_moved_under_its_unchanged_citation_is_cited_as_such() -> None:
    # Walkthrough 46's routing.hot_share 0.9 → 0.85, the same source and locator: no entry on the lock's cites line
    # (tests/test_walk46.py reviews the real change); here the cases of one fact: value moved, unit re-written only.
    from types import SimpleNamespace

    import attrs

    from passprice.registry import Root
    from passprice.review.impacts import _lock_cite
    from passprice.review.rendering import _cites
    from passprice.routing import load_routing

    old = load_routing(Root(REPO), "qwen3-30b-a3b-measured").facts()["routing.hot_share"]
    assert (old.value, old.source) == (0.9, "gpu-container-handbook-routing-derisk")
    moved = attrs.evolve(old, value=0.85, amount=0.85)
    cite = _lock_cite("routing.hot_share", old, moved)
    # not re-cited, not re-derived, value changed; no derivation to give another value; the figures kept whole (left47)
    assert cite is not None and cite[3:] == (False, None, True, None, (0.85, 0.9))
    said = _cites(SimpleNamespace(cites=(cite,), fitted=(), routing_record="qwen3-30b-a3b-measured"))  # type: ignore[arg-type]
    assert said == ("routing.hot_share (qwen3-30b-a3b-measured): value changed, citation unchanged: "
                    "gpu-container-handbook-routing-derisk, the definition of hot_frac_for_coverage: the fraction of "
                    "a layer's experts that capture 90% of its…")
    # a note re-written, the figure kept: nothing to check against the source
    assert _lock_cite("routing.hot_share", old, attrs.evolve(old, note="re-read")) is None
    # nor the same quantity written in another unit (4.8 TB/s as 4800 GB/s)
    from passprice.cards import load_card

    bandwidth = load_card(Root(REPO), "h200_sxm_141gb").facts()["memory.bandwidth"]
    assert (bandwidth.amount, bandwidth.unit) == (4.8, "TB/s")
    assert _lock_cite("memory.bandwidth", bandwidth, attrs.evolve(bandwidth, amount=4800, unit="GB/s")) is None



MEASURED = "qwen3-30b-a3b-measured"


@pytest.fixture(scope="module")
def by_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry cut to what one lock reads (the H200 card, Qwen3-30B-A3B's checkpoint, its routing records; no
    serving, stack or run, whose checks the review would make), with lock ``x`` (no registered serving) priced on
    the routing record ``extra/a.toml`` (the measured record's copy) named by its absolute path inside the root, as
    ``passprice lock --routing /ROOT/extra/a.toml`` writes it."""
    root = copy_root(tmp_path_factory.mktemp("walk53")).resolve()
    for folder, keep in (("locks", ""), ("registry/servings", ""), ("facts/stacks", ""), ("facts/drafts", ""),
                         ("registry/measurements", ""), ("facts/cards", "h200_sxm_141gb.toml"),
                         ("registry/checkpoints", "qwen3-30b-a3b-q4_k_m.toml")):
        for file in (root / folder).glob("*.toml"):
            if file.name != keep:
                file.unlink()
    (root / "extra").mkdir()
    shutil.copyfile(root / "facts/routing" / f"{MEASURED}.toml", root / "extra/a.toml")
    made = invoke("lock", "--card", "h200_sxm_141gb", "--checkpoint", "qwen3-30b-a3b-q4_k_m", "--batch", "64",
                  "--limit", "4096", "--routing", str(root / "extra/a.toml"), "--name", "x", root=root)
    assert made.exit_code == 0, made.output
    return root


def test_a_serving_re_pointed_between_records_named_by_path_compares_their_facts(by_path: Path,
                                                                                  tmp_path: Path) -> None:
    # Walk52 compared two records' facts only by name (facts/routing/NAME.toml): a lock whose serving names its
    # record by a file path re-pointed to another read `routing record A → B` and `changed` nothing more. HEAD:
    # the lock re-locked on extra/b.toml, the same record with hot_share 0.9 → 0.85 under the same citation.
    from passprice.registry import Root
    from passprice.review import diff, render

    head = tmp_path / "head"
    shutil.copytree(by_path, head)
    a, b = by_path / "extra/a.toml", head / "extra/b.toml"
    record = a.read_text(encoding="utf-8")
    assert record.count("\nvalue = 0.9\n") == 1
    b.write_text(record.replace("\nvalue = 0.9\n", "\nvalue = 0.85\n"), encoding="utf-8")
    relocked = invoke("lock", "--card", "h200_sxm_141gb", "--checkpoint", "qwen3-30b-a3b-q4_k_m", "--batch", "64",
                      "--limit", "4096", "--routing", str(b), "--name", "x", "--force", root=head)
    assert relocked.exit_code == 0, relocked.output
    review = diff(Root(head), str(by_path), str(head))
    (row,) = json.loads(render(review, "json"))["locks"]
    assert row["rerouted"] == {"base": str(a), "head": str(b)}
    assert row["changed"] == ["routing.hot_share"]  # was [] (only facts/routing/NAME.toml was read)
    assert [(c["path"], c["recited"], c["value_changed"]) for c in row["cites"]] == [
        ("routing.hot_share", False, True)]
    lines = render(review, "text").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  x (locks/"))
    assert lines[at + 1] == f"    changed   routing record {a} → {b}, routing.hot_share ({b}), serving"


def test_a_stack_locks_audit_names_the_card_facts_its_fit_reads_and_their_sources() -> None:
    # `audit locks/r1-qwen7b-h200-llamacpp.lock.toml` named "111 runs on 11 cards … citing xiongjiedai-gpu-benchmarks"
    # and not that the fit rests on those cards' datasheet facts (walk51's `audit --fact` follows them).
    from passprice.audit import calibrated_on
    from passprice.registry import Root
    from passprice.stacks import load_stack

    (c,) = calibrated_on(Root(REPO), load_stack(Root(REPO), "llamacpp-cuda-2405"))
    assert (c.runs, len(c.cards), c.source) == (111, 11, "xiongjiedai-gpu-benchmarks")
    assert c.card_paths == ("memory.bandwidth", "streams.read", "streams.append", "array", "vector", "scale")
    assert c.card_facts == 66  # 11 cards × the 6 facts a run's limit reads
    # by hand from the two A100 cards: the PCIe card's bandwidth and both shares' figure `bandwidth` (3), the SXM4's
    # bandwidth (1); their scale, array and vector cite the Ampere whitepaper (array and vector since cite83, which
    # made the datasheet's 8 facts 4), their shares' dot and triad the Azure guide
    # (cite90: the datasheet's 4 cite NVIDIA's Chinese edition of it, the H100 PCIe's 2 share peaks the H100 product
    # page)
    assert dict(c.card_sources)["nvidia-a100-80gb-datasheet-zh"] == 4
    assert (dict(c.card_sources)["nvidia-h100-datasheet"], dict(c.card_sources)["nvidia-h100-product-page"]) == (2, 2)
    assert dict(c.card_sources)["nvidia-ampere-whitepaper"] == 6
    assert c.cards_line() == (
        "the fit reads the 11 cards' memory.bandwidth, streams.read, streams.append, array, vector, scale (66 facts), "
        "citing nvidia-ada-whitepaper (17), nvidia-ampere-ga102-whitepaper (10), passprice-card-review (8), "
        "xytpai-nvbench (8) and 12 more sources")  # 11 until cite90
    # the GA102 whitepaper's 11 until trace109: the A40's scale cites the A40 datasheet's rows (tests/test_trace109.py)
    assert {"source": "nvidia-a40-datasheet", "facts": 4} in c.to_json()["card_facts"]["sources"]
    # 10 more before cite74: the L40S scale's clock cites a deviceQuery run since
    data = c.to_json()["card_facts"]
    assert (data["facts"], len(data["sources"])) == (66, 16)  # 15 until cite90
    assert {"source": "alvarobartt-cuda-device-query", "facts": 1} in data["sources"]
    assert data["sources"][2] == {"source": "passprice-card-review", "facts": 8}
    assert {"source": "nvidia-a100-80gb-datasheet-zh", "facts": 4} in data["sources"]


def test_a_source_change_follows_a_stack_fit_through_the_card_its_runs_are_priced_on(tmp_path: Path) -> None:
    # The L40S datasheet's record names another document (a revision's address): its card facts the llama.cpp
    # stack's runs on the L40S read (memory.bandwidth, and the stream shares derived from it) re-fit the stack, and
    # the lock made under it (r1-qwen7b-h200-llamacpp) moves. The review's sources_changed named neither (it followed
    # runs and routing records only); `audit --source` does since walk51. In process, HEAD the checkout's registry.
    from passprice.locks import read_lock
    from passprice.registry import Root
    from passprice.sourcechange import source_changes

    base = tmp_path / "base"
    (base / "sources").mkdir(parents=True)
    record = (REPO / "sources/nvidia-l40s-datasheet.toml").read_text(encoding="utf-8")
    url = 'url = "https://resources.nvidia.com/en-us-l40s/l40s-datasheet-28413"'
    assert record.count(url) == 1
    (base / "sources/nvidia-l40s-datasheet.toml").write_text(record.replace(url, url.replace("28413", "20000")),
                                                             encoding="utf-8")
    lock = "locks/r1-qwen7b-h200-llamacpp.lock.toml"
    (change,) = source_changes(Root(base), Root(REPO), ["nvidia-l40s-datasheet"], (lambda _: None, lambda _: None),
                               [(lock, read_lock(REPO / lock))])
    assert change.locks == ("r1-qwen7b-h200-llamacpp",)  # was () on the cards' fit
    assert dict(change.fitted) == {"llamacpp-cuda-2405": 9}  # its 9 priced facts (not range.*: read off the runs)
    # the L40S card's facts a run's limit reads that cite the datasheet (its shares cite benchmarks)
    assert change.on_cards == (("llamacpp-cuda-2405", "l40s", ("memory.bandwidth", "array", "vector", "scale")),)
    assert ("the measured runs of stack llamacpp-cuda-2405 (9 fitted facts rest on them, priced on card l40s, whose "
            "memory.bandwidth, array, vector, scale rest on it)") in change.to_verify
    assert change.to_json()["fitted_on_cards"] == [
        {"stack": "llamacpp-cuda-2405", "card": "l40s", "paths": ["memory.bandwidth", "array", "vector", "scale"]}]


def test_a_card_fact_re_cited_to_an_added_source_is_among_the_sources_to_verify(
    by_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Session 38 (walk53) left: HEAD adds sources/nvidia-h200-datasheet-2025.toml and re-cites the H200 card's
    # memory.bandwidth to it (the same figure and locator); the fact's line asked it, but `sources_changed` was []
    # (only ids BASE registers were compared) and lock x, which prices on that fact, was named under no source.
    # (The H200's memory facts cite NVIDIA's H200 product page since cite102: the added records are the page's.)
    from passprice.registry import Root
    from passprice.review import diff, render

    head = tmp_path / "head"
    shutil.copytree(by_path, head)
    record = (head / "sources/nvidia-h200-product-page.toml").read_text(encoding="utf-8")
    page = 'url = "https://www.nvidia.com/en-us/data-center/h200/"'
    title = 'title = "NVIDIA H200 GPU product page (Specifications table)"'
    (head / "sources/nvidia-h200-product-page-2025.toml").write_text(
        record.replace(page, page.replace("h200/", "h200-r2025/")).replace(title, title.replace("page", "page, 2025")),
        encoding="utf-8")
    card = head / "facts/cards/h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    row = ('locator = "Specifications table, H200 SXM column (a row: its label, the H200 SXM figure, the H200 NVL '
           "figure): ")
    cited = f'source = "nvidia-h200-product-page"\n{row}' + "'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'\""
    assert text.count(cited) == 1
    # and memory.capacity to another added source: each is named, every stack's fits read once for both (they were
    # read once a source: 88 ms each, 9.1 s of a review adding 238 sources re-cited to; attack68)
    capacity = f'source = "nvidia-h200-product-page"\n{row}' + "'GPU Memory"
    assert text.count(capacity) == 2
    text = text.replace(capacity, capacity.replace('page"', 'page-2026"'), 1)
    (head / "sources/nvidia-h200-product-page-2026.toml").write_text(
        record.replace(page, page.replace("h200/", "h200-r2026/")), encoding="utf-8")
    card.write_text(text.replace(cited, cited.replace('page"', 'page-2025"')), encoding="utf-8")
    from passprice import lineage

    reads = []
    monkeypatch.setattr(lineage, "stack_fits", lambda root: reads.append(root) or ())
    review = diff(Root(head), str(by_path), str(head))
    assert len(reads) == 1
    change, other = json.loads(render(review, "json"))["sources_changed"]  # was []
    assert (other["id"], other["citing"], other["locks"]) == (
        "nvidia-h200-product-page-2026", ["h200_sxm_141gb:memory.capacity"], ["x"])
    assert change["id"] == "nvidia-h200-product-page-2025" and change["added"] is True
    assert change["changed"] == [
        "title: NVIDIA H200 GPU product page, 2025 (Specifications table)",
        "url: https://www.nvidia.com/en-us/data-center/h200-r2025/"]
    assert (change["citing"], change["locks"]) == (["h200_sxm_141gb:memory.bandwidth"], ["x"])
    assert change["to_verify"] == (
        "source nvidia-h200-product-page-2025 is added by this change and facts that cited another source are "
        "re-cited to it (title: NVIDIA H200 GPU product page, 2025 (Specifications table); url: "
        "https://www.nvidia.com/en-us/data-center/h200-r2025/): does it state "
        "h200_sxm_141gb:memory.bandwidth, which cites it? The locked price of x rests on them (a lock pins the id, "
        "not the document).")
    text = render(review, "text")
    assert "; 2 added sources that facts now cite, to verify (under 1 locked price);" in text.splitlines()[1]
    section = ("\n\nsources added that facts now cite\n  nvidia-h200-product-page-2025: to verify: "
               f"{change['to_verify']}\n")
    assert section in text
