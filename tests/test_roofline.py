"""``passprice roofline``: ridge points, arithmetic intensity by batch, the batch at which the bind changes, and the
plot drawn from the same data (issue 7, part 2).

Ridge points are written out by hand from the card facts (``passprice facts h200_sxm_141gb``). The bind regions are
checked against the seed's pricer batch by batch, not against pixels; the picture itself is only checked to exist,
be a PNG (or SVG) and open.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import attrs
import pytest
from click.testing import CliRunner

from passprice.cli import cli
from passprice.registry import find_root
from passprice.roofline import PLOT_INSTALL, Coefficients, render, ridges, roofline
from passprice.serving import ServingBind, best_serving, max_batch, pass_shape, price_serving
from passprice.servings import load_spec, override, resolve

ROOT = find_root(Path(__file__).resolve().parent.parent)
ROOT_ARG = str(ROOT.path)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["--root", ROOT_ARG, *args])
    return result.exit_code, result.stdout, result.stderr


def short_chats():  # type: ignore[no-untyped-def]
    """DeepSeek-R1-Distill-Qwen-7B on the H200 with 1K contexts half used: the weights bind small batches, the
    integer array large ones."""
    return resolve(ROOT, override(load_spec(ROOT, "r1-qwen7b-h200"), limit=1024))


def test_ridges_are_rate_over_read_bandwidth() -> None:
    card = resolve(ROOT, load_spec(ROOT, "r1-qwen7b-h200")).card
    by = {r.datapath: r for r in ridges(card)}
    # H200: 4.8 TB/s, streams.read 0.9333; array 989.5 TMAC/s, vector 33.5 TMAC/s, scale 33.5 Tcycle/s.
    read = 4.8e12 * 0.9333
    assert by["array"].ridge == pytest.approx(989.5e12 / read, rel=1e-12)
    assert by["vector"].ridge == pytest.approx(33.5e12 / read, rel=1e-12)
    assert by["scale"].ridge == pytest.approx(33.5e12 / read, rel=1e-12)
    assert round(by["array"].ridge, 1) == 220.9
    code, out, _ = run("roofline", "h200_sxm_141gb", "--json")
    assert code == 0
    data = json.loads(out)
    assert [r["datapath"] for r in data["ridges"]] == ["array", "vector", "scale"]
    assert {r["share_path"] for r in data["ridges"]} == {"streams.read"}
    code, text, _ = run("roofline", "h200_sxm_141gb")
    assert "220.9 MAC/B" in text and "streams.read" in text


def test_the_bind_changes_where_the_coefficients_cross_and_pricing_agrees() -> None:
    r = short_chats()
    line = roofline(r.header, r.card, r.serving, "short chats")
    co = line.coefficients
    # The pass as lines: memory = shared + per-sequence × b, array = a × b; the array overtakes at shared / (a − m).
    per, bind = co.compute()
    assert bind is ServingBind.ARRAY and per == co.array_s > co.memory_per_sequence_s
    # By hand from this serving's pass: 975.6 µs of shared memory time over (8.683 − 7.089) µs a sequence.
    assert co.memory_shared_s == pytest.approx(975.6e-6, rel=1e-4)
    assert co.array_s == pytest.approx(8.683e-6, rel=1e-3)
    assert co.memory_per_sequence_s == pytest.approx(7.089e-6, rel=1e-3)
    assert co.crossing() == pytest.approx(612.12, abs=0.01)
    (change,) = line.changes
    assert (change.before, change.after) == (ServingBind.MEMORY, ServingBind.ARRAY)
    assert change.batch == co.predicted_change() == 613 and change.agrees
    # Priced, the batch before binds on memory and the change's on the array (the seed's price_serving).
    assert price_serving(r.header, r.card, attrs.evolve(r.serving, batch=612)).binds is ServingBind.MEMORY
    assert price_serving(r.header, r.card, attrs.evolve(r.serving, batch=613)).binds is ServingBind.ARRAY
    # Every batch that fits binds as its region says.
    shape = pass_shape(r.header, r.serving)
    assert line.max_batch == max_batch(r.header, r.card, r.serving) == 2321
    assert all(shape.cost(r.card, b, 0).binds is line.region_of(b).binds for b in range(1, line.max_batch + 1))
    assert [(g.binds, g.first, g.last) for g in line.regions] == [
        (ServingBind.MEMORY, 1, 612),
        (ServingBind.ARRAY, 613, 2321),
    ]


def test_intensity_crosses_the_ridge_where_the_bind_changes() -> None:
    r = short_chats()
    line = roofline(r.header, r.card, r.serving)
    ridge = {x.datapath: x.ridge for x in line.ridges}
    for p in line.points:
        # Work per read-equivalent byte at or past the array's ridge exactly when the array term reaches memory.
        if abs(p.array / ridge["array"] - 1) > 1e-9:
            assert (p.array >= ridge["array"]) == (p.binds is ServingBind.ARRAY), p.batch
        assert p.vector < ridge["vector"] and p.scale < ridge["scale"]
    # Intensity rises with the batch: the weights are read once for more rows.
    arrays = [p.array for p in line.points]
    assert arrays == sorted(arrays)
    # By hand at batch 8: qwen2 keeps no state rewritten in place, so its read-equivalent bytes are the weights
    # (one long read) plus each sequence's cache bytes weighted by streams.read / streams.append (0.9333 / 0.8646).
    price = price_serving(r.header, r.card, attrs.evolve(r.serving, batch=8))
    p = line.at(8)
    assert price.rewrite_bytes == 0
    assert p.bytes_moved == price.weight_bytes + 8 * price.sequence_bytes
    assert p.read_equivalent == pytest.approx(price.weight_bytes + 8 * price.sequence_bytes * 0.9333 / 0.8646)
    assert p.array == pytest.approx(price.array_macs / p.read_equivalent)
    assert p.array_moved == price.array_macs / p.bytes_moved
    assert p.vector_moved == price.vector_macs / p.bytes_moved


def test_plot_data_agrees_with_price_at_three_batches_and_marks_best_and_max() -> None:
    r = short_chats()
    line = roofline(r.header, r.card, r.serving)
    best = best_serving(r.header, r.card, r.serving)
    assert line.best.batch == best.batch == 613
    middle = next(p.batch for p in line.points if p.batch >= 300)
    for b in (1, middle, 613, line.max_batch):
        price = price_serving(r.header, r.card, attrs.evolve(r.serving, batch=b))
        point = line.at(b)
        assert line.region_of(b).binds is price.binds is point.binds
        assert point.tokens_per_s == price.tokens_per_s and point.pass_s == price.pass_s
    # The plot's batches run from 1 to the largest that fits, ascending, and include both marks.
    batches = [p.batch for p in line.points]
    assert batches == sorted(set(batches)) and batches[0] == 1 and batches[-1] == line.max_batch
    assert {line.best.batch, line.max_batch} <= set(batches)


def test_host_memory_regions_agree_with_pricing_every_batch() -> None:
    # Sequences past the card's room live in host memory: the split is not affine, so the regions come from pricing.
    r = resolve(ROOT, load_spec(ROOT, "qwen35-27b-h100-every8"))
    line = roofline(r.header, r.card, r.serving)
    shape = pass_shape(r.header, r.serving)
    assert line.host_memory and ServingBind.HOST in {g.binds for g in line.regions}
    for b in range(1, line.max_batch + 1):
        assert shape.cost_split(r.card, b, True).binds is line.region_of(b).binds, b
    assert all(c.predicted is None for c in line.changes)


def test_memory_binds_every_batch_when_the_arithmetic_never_catches_up() -> None:
    # 4K contexts: each sequence's own cache reads take longer than its arithmetic, so memory binds throughout.
    r = resolve(ROOT, load_spec(ROOT, "r1-qwen7b-h200"))
    line = roofline(r.header, r.card, r.serving)
    co = Coefficients.of(pass_shape(r.header, r.serving), r.card)
    assert co.crossing() is None and co.predicted_change() is None
    assert line.changes == () and [g.binds for g in line.regions] == [ServingBind.MEMORY]
    code, out, _ = run("roofline", "h200_sxm_141gb", "r1-qwen7b-h200")
    assert code == 0 and "never overtakes memory" in out


def test_roofline_json_and_text() -> None:
    code, out, _ = run("roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--limit", "1024", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["changes"] == [
        {
            "batch": 613,
            "before": "memory",
            "after": "array",
            "predicted": 613,
            "crossing": data["crossing"],
            "agrees": True,
        }
    ]
    assert data["best"]["batch"] == 613 and data["max_batch"] == 2321
    code, text, _ = run("roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--limit", "1024")
    assert "priced: batch 612 binds on memory, batch 613 on array = the coefficients' batch" in text
    assert "regions: memory 1–612; array 613–2,321" in text


def test_plot_png_is_written_and_opens(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from matplotlib import image

    target = tmp_path / "out" / "roofline.png"
    code, _, err = run("roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--limit", "1024", "--plot", str(target))
    assert code == 2 and "out does not exist (passprice does not create it)" in err  # a folder is never made
    target.parent.mkdir()
    code, _, err = run("roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--limit", "1024", "--plot", str(target))
    assert code == 0, err
    data = target.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    pixels = image.imread(str(target))
    assert pixels.shape[:2] == (640, 800)
    # Written atomically: nothing else left in the folder.
    assert [p.name for p in target.parent.iterdir()] == ["roofline.png"]
    # The same roofline draws the same bytes.
    r = short_chats()
    line = roofline(r.header, r.card, r.serving, "t")
    assert render(line, "png") == render(line, "png")
    # An existing picture is kept unless --force.
    code, _, err = run("roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--plot", str(target))
    assert code == 2 and "already exists" in err and target.read_bytes() == data
    code, _, _ = run("roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--plot", str(target), "--force")
    assert code == 0 and target.read_bytes() != data


def test_plot_svg(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    target = tmp_path / "roofline.svg"
    code, _, _ = run("roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--limit", "1024", "--plot", str(target))
    assert code == 0
    text = target.read_text()
    assert "<svg" in text and "tokens/s" in text and "batch (sequences per pass)" in text


def test_without_matplotlib_plot_says_how_to_install_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A module set to None in sys.modules makes its import fail, as if matplotlib were not installed.
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    target = tmp_path / "roofline.png"
    code, out, err = run("roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--plot", str(target))
    assert code == 2
    assert out == ""
    assert err.strip() == f"passprice: error: --plot needs matplotlib, an optional extra: {PLOT_INSTALL}"
    assert list(tmp_path.iterdir()) == []
    # Without --plot the command needs nothing optional.
    code, _, _ = run("roofline", "h200_sxm_141gb", "r1-qwen7b-h200")
    assert code == 0


def test_bad_input(tmp_path: Path) -> None:
    code, _, err = run("roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--plot", str(tmp_path / "x.jpg"))
    assert code == 2 and ".png or .svg" in err
    code, _, err = run("roofline", "h200_sxm_141gb", "--plot", str(tmp_path / "x.png"))
    assert code == 2 and "--plot draws a serving" in err
    code, _, err = run("roofline", "no_such_card")
    assert code == 2 and err.count("\n") == 1
    code, _, err = run("roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--card", "b200")
    assert code == 2
    assert list(tmp_path.iterdir()) == []
    # A serving the card cannot hold is a refusal (exit 1), named.
    code, out, _ = run("roofline", "h200_sxm_141gb", "deepseek-v3-mi300x", "--json")
    assert code == 1 and json.loads(out)["refusal"] == "NotResident"
    code, out, _ = run("roofline", "h200_sxm_141gb", "--checkpoint", "qwen3next-80b-a3b-like", "--json")
    assert code == 1 and json.loads(out)["refusal"] == "Routed"
