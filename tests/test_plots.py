"""sweep --plot, simulate --plot and audit --plot: each writes a PNG of the size it draws (read from the PNG's IHDR
chunk) or an SVG, the same data gives the same bytes, and other data gives another picture."""

from __future__ import annotations

import struct
from pathlib import Path
from types import SimpleNamespace

import pytest

from cli_helpers import bad, invoke
from passprice.plots import MAX_LINES, sweep_lines, throughput_series

pytest.importorskip("matplotlib")


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def draw(tmp_path: Path, name: str, *args: str) -> Path:
    out = tmp_path / name
    result = invoke(*args, "--plot", str(out))
    assert result.exit_code == 0, result.output
    assert f"plot -> {out}" in result.stderr
    return out


SWEEP = ("sweep", "r1-qwen7b-h200", "gemma3-270m-h100", "--positions", "2048", "-o")
SIMULATE = ("simulate", "r1-qwen7b-h200", "--synthetic", "200", "--rate", "200", "-o")


def test_sweep_plot(tmp_path: Path) -> None:
    a = draw(tmp_path, "a.png", *SWEEP, str(tmp_path / "a.csv"), "--batches", "1-512*2")
    assert png_size(a) == (800, 500)
    again = draw(tmp_path, "again.png", *SWEEP, str(tmp_path / "b.csv"), "--batches", "1-512*2")
    assert again.read_bytes() == a.read_bytes()
    other = draw(tmp_path, "other.png", *SWEEP, str(tmp_path / "c.csv"), "--batches", "1-64*2")
    assert other.read_bytes() != a.read_bytes() and png_size(other) == (800, 500)
    svg = draw(tmp_path, "a.svg", *SWEEP, str(tmp_path / "d.csv"), "--batches", "1-512*2")
    text = svg.read_text(encoding="utf-8")
    assert text.startswith("<?xml") and 'width="576pt" height="360pt"' in text


def test_sweep_lines_mark_each_best_batch() -> None:
    rows = [
        {"serving": "s", "card": "c", "position": 1.0, "draft_tokens": 0, "batch": b, "tokens_per_s": t, "refusal": ""}
        for b, t in ((1, 10.0), (2, 30.0), (4, 20.0))
    ] + [{"serving": "s", "card": "c", "position": 1.0, "draft_tokens": 0, "batch": 8, "tokens_per_s": "",
          "refusal": "NotResident"}]
    assert sweep_lines(rows) == {"s on c": [(1, 10.0), (2, 30.0), (4, 20.0)]}
    many = [dict(rows[0], card=f"c{i}") for i in range(MAX_LINES + 1)]
    with pytest.raises(Exception, match="at most 40"):
        sweep_lines(many)


def test_simulate_plot(tmp_path: Path) -> None:
    a = draw(tmp_path, "a.png", *SIMULATE, str(tmp_path / "a.txt"), "--seed", "7")
    assert png_size(a) == (800, 600)
    other = draw(tmp_path, "b.png", *SIMULATE, str(tmp_path / "b.txt"), "--seed", "8")
    assert other.read_bytes() != a.read_bytes() and png_size(other) == (800, 600)


def test_throughput_series_by_hand() -> None:
    # One request: first token at 1 s, its 10 further tokens evenly until 2 s; two bins of 1 s.
    record = SimpleNamespace(first_token=1.0, finished=2.0, request=SimpleNamespace(output=11))
    xs, ys = throughput_series([record], bins=2)
    assert xs == [0.5, 1.5] and ys == pytest.approx([0.0, 11.0])
    # Over four bins of 0.5 s: the first token and 5 tokens in the third bin, 5 in the fourth.
    _, ys = throughput_series([record], bins=4)
    assert ys == pytest.approx([0.0, 0.0, 12.0, 10.0])


def test_audit_plot(tmp_path: Path) -> None:
    a = draw(tmp_path, "a.png", "audit", "r1-qwen7b-h200")
    # Eight facts (R1-Distill-Qwen-7B's price does not rest on streams.rewrite): 0.45 in a bar, 1.6 in of title
    # and axis, at 100 dpi.
    assert png_size(a) == (800, round((0.45 * 8 + 1.6) * 100))
    other = draw(tmp_path, "b.png", "audit", "r1-qwen7b-h200", "--batch", "500")
    assert other.read_bytes() != a.read_bytes()


def test_a_plot_file_is_checked_before_any_work(tmp_path: Path) -> None:
    bad("audit", "r1-qwen7b-h200", "--plot", str(tmp_path / "a.jpg"), says="the file must end in .png or .svg")
    (tmp_path / "x.png").write_bytes(b"keep")
    bad("sweep", "r1-qwen7b-h200", "--plot", str(tmp_path / "x.png"), says="already exists; pass --force")
    assert (tmp_path / "x.png").read_bytes() == b"keep"


def test_a_sweep_whose_picture_cannot_be_drawn_writes_no_output(tmp_path: Path) -> None:
    # A position past the limit only: every row refused (BadContexts), so there is nothing to draw: neither -o FILE
    # nor the picture is written, and a file -o would replace (--force) is left as it was.
    out, png = tmp_path / "x.csv", tmp_path / "x.png"
    args = ("sweep", "r1-qwen7b-h200", "--batches", "1", "--positions", "5000", "-o", str(out), "--plot", str(png))
    bad(*args, says="every row of the sweep is refused; there is nothing to draw")
    assert not out.exists() and not png.exists()
    out.write_text("keep", encoding="utf-8")
    bad(*args, "--force", says="every row of the sweep is refused")
    assert out.read_text(encoding="utf-8") == "keep" and not png.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.csv"]  # no temporary file left either


def test_a_line_of_many_batches_is_thinned_and_keeps_its_best_batch() -> None:
    from passprice.plots import BINS_PER_OCTAVE, MAX_POINTS, SweepLines

    # tokens/s = b / (1 + (b / 3000)^2): the best batch is 3000 (1,500 tokens/s), between two that tie below it.
    batches = list(range(1, 20_001))
    rates = [b / (1 + (b / 3000) ** 2) for b in batches]
    lines = SweepLines()
    for start in range(0, len(batches), 4096):  # a block at a time, as the sweep writes them
        lines.add("s", "c", 512.0, 0, batches[start : start + 4096], rates[start : start + 4096])
    (label, points), = lines.lines().items()
    assert label == "s on c"
    assert len(points) <= 15 * BINS_PER_OCTAVE < MAX_POINTS  # 2^14 < 20,000 < 2^15: 15 octaves of bins at most
    assert max(points, key=lambda p: (p[1], -p[0])) == (3000, 1500.0)
    assert points == sorted(points) and set(points) <= set(zip(batches, rates, strict=True))
    # A line of at most MAX_POINTS points is drawn through every one of them, as before.
    few = SweepLines()
    few.add("s", "c", 512.0, 0, batches[:MAX_POINTS], rates[:MAX_POINTS])
    assert few.lines() == {"s on c": list(zip(batches[:MAX_POINTS], rates[:MAX_POINTS], strict=True))}


def test_throughput_series_counts_an_answer_given_at_once_in_its_bin() -> None:
    # First and last token both at 1 s (no time between): all 3 tokens in the bin of 1 s, the last of two bins.
    record = SimpleNamespace(first_token=1.0, finished=1.0, request=SimpleNamespace(output=3))
    xs, ys = throughput_series([record], bins=2)
    assert xs == [0.25, 0.75] and ys == pytest.approx([0.0, 6.0])


def test_distinct_points_keeps_a_point_a_cell_and_the_extremes() -> None:
    from passprice.plots import distinct_points

    # 4 cells a side over 0 … 4: (0, 0) and (0.1, 0.1) share cell (0, 0), (3.9, 3.9) and (4, 4) cell (3, 3), whose
    # point kept is (4, 4), the maximum, so the axes' limits are every point's; the order given is kept.
    x, y, counts = distinct_points([0.0, 0.1, 3.9, 4.0, 2.0], [0.0, 0.1, 3.9, 4.0, 2.0], cells=4)
    assert x.tolist() == [0.0, 4.0, 2.0] and y.tolist() == [0.0, 4.0, 2.0] and counts.tolist() == [2, 2, 1]
    # All on one spot: one point standing for all.
    x, y, counts = distinct_points([1.0] * 3, [2.0] * 3)
    assert (x.tolist(), y.tolist(), counts.tolist()) == ([1.0], [2.0], [3])
    assert [len(a) for a in distinct_points([], [])] == [0, 0, 0]


def fake_simulation(requests: int) -> SimpleNamespace:
    """A simulation of ``requests`` requests spread over the picture (finishing over 0.5 … 10.5 s, latencies 0 …
    9.99 s) under both policies, for simulation_picture."""
    records = [SimpleNamespace(first_token=10 * i / requests, finished=10 * i / requests + 0.5,
                               e2e=(i * 7919 % 1000) / 100, request=SimpleNamespace(output=10))
               for i in range(requests)]
    outcomes = [SimpleNamespace(policy=SimpleNamespace(value=name), records=records, makespan=10.5)
                for name in ("static", "continuous")]
    return SimpleNamespace(title="t", outcomes=outcomes)


def test_an_svg_of_many_dots_draws_them_as_one_image_each_policy() -> None:
    from passprice.plots import MAX_VECTOR_DOTS, simulation_picture

    few = simulation_picture(fake_simulation(100), "svg")  # type: ignore[arg-type]
    many = simulation_picture(fake_simulation(MAX_VECTOR_DOTS), "svg")  # type: ignore[arg-type]
    # 100 dots a policy as marks (<use>, as the ticks are), against 4,000 a policy as an image each: the picture of
    # 8,000 dots has fewer marks than the one of 200.
    assert b"<image" not in few and few.count(b"<use") >= 200 and many.count(b"<image") == 2
    assert many.count(b"<use") < few.count(b"<use")
    assert simulation_picture(fake_simulation(MAX_VECTOR_DOTS), "svg") == many  # type: ignore[arg-type]
