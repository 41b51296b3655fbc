"""A drafted token is worth what the pass it rides costs: the speedup of drafting is tokens emitted per pass over the
priced pass, both at the same batch, never an acceptance rate alone.

The design's inference sketch (``inference-sketch.rs``, ``speculative_decode``) charges a draft a fixed cost and a
verification a fixed cost. Here each draft length is priced by the seed's pricer: every drafted token is one more
token-row through every weight (array, scale lanes), one more row of attention over the cache and of the recurrence
(vector units), one more state or log row written, and, for an MTP drafter, one more step of its draft block. At a
small batch the weights' stream dominates and drafts ride almost free; at a large batch the rows' arithmetic (or each
sequence's own bytes) grows until a longer draft costs more than its expected tokens bring, so the best draft length
depends on the batch (:func:`speculate`).

The expected tokens a sequence emits per pass are the seed's ``emitted_per_pass``, 1 + a₁ + a₁a₂ + … (Leviathan et
al. 2023, arXiv:2211.17192, with the bonus token). :func:`play_acceptance` checks that formula by playing the
accept/reject loop: draft *i* is accepted with its conditional acceptance, the loop stops at the first rejection,
and the verified (or, after all *k* were accepted, the bonus) token is always emitted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from passprice.bounds import INT_DIGITS, long_number, misspelt, shown_part
from passprice.cards import Card
from passprice.drafts import DraftMethod
from passprice.errors import InputError
from passprice.gguf_header import GGUFHeader
from passprice.registry import Root
from passprice.serving import (
    BadDraft,
    Draft,
    Serving,
    ServingCost,
    ServingRefusal,
    best_serving,
    emitted_per_pass,
    price_serving,
)
from passprice.servings import Resolved, ServingSpec

#: Draft lengths ``--tokens`` accepts at most (the seed's ``--draft-tokens`` bound).
MAX_TOKENS = 64

#: Passes of the accept/reject loop simulated at most for one draft length (about a second at 8 drafts; the
#: standard error of the mean is then below 0.001 tokens a pass).
MAX_PASSES = 10_000_000

#: Uniforms the accept/reject loops of one command draw at most (passes × drafts, summed over the draft lengths):
#: about ten seconds.
MAX_DRAWS = 1_000_000_000


def parse_tokens(text: str) -> tuple[int, ...]:
    """Draft lengths from the command line: ``1..8`` (inclusive), ``1-8``, ``1,2,4``, or one number; each from 1 to
    :data:`MAX_TOKENS`, in digits alone (:func:`passprice.bounds.misspelt`). Raises :class:`InputError` naming what
    is not a draft length."""
    out: list[int] = []
    if not text.isascii():  # int() would read Arabic-Indic and other Unicode digits as numbers
        raise InputError(f"--tokens: {shown_part(text)} is not ASCII digits (a draft length or a range like 1..8)")
    for part in text.split(","):
        shown = shown_part(part)  # a 5,000-digit part was echoed whole (issue 13): named by its length past 40
        problem = misspelt(part)
        if problem is not None:
            raise InputError(f"--tokens: {shown} {problem}: write draft lengths in digits alone (1..8, 1,2,4 or 3)")
        lo_text, sep, hi_text = part.partition("..")
        if not sep:
            lo_text, sep, hi_text = part.partition("-")
        if any(long_number(t) and len(t.lstrip("-").lstrip("0")) > INT_DIGITS for t in (lo_text, hi_text)):
            # int() reads 4,300 digits at most: such a length was "not a draft length", echoed whole (issue 13)
            raise InputError(f"--tokens: {shown}: draft lengths run from 1 to {MAX_TOKENS}, low to high")
        try:
            lo = int(lo_text)
            hi = int(hi_text) if sep else lo
        except ValueError:
            raise InputError(f"--tokens: {shown} is not a draft length or a range like 1..8") from None
        if 1 <= hi < lo <= MAX_TOKENS:
            raise InputError(f"--tokens: {shown} runs from high to low: write {hi}..{lo}")
        if lo < 1 or hi < lo or hi > MAX_TOKENS:
            raise InputError(f"--tokens: {shown}: draft lengths run from 1 to {MAX_TOKENS}, low to high")
        out.extend(k for k in range(lo, hi + 1) if k not in out)
    return tuple(out)


@attrs.frozen
class AcceptanceCheck:
    """The accept/reject loop played ``passes`` times: ``mean`` tokens emitted per pass and its ``stderr``
    (the exact standard deviation of one pass, :func:`emitted_sd`, over √passes), against ``expected``
    (``emitted_per_pass``)."""

    passes: int
    mean: float
    stderr: float
    expected: float

    @property
    def z(self) -> float:
        """(mean − expected) / stderr; 0 when both agree exactly (a loop with no randomness left)."""
        if self.stderr == 0:
            return 0.0 if self.mean == self.expected else math.inf
        return (self.mean - self.expected) / self.stderr


def emitted_sd(acceptance: Sequence[float]) -> float:
    """The standard deviation of tokens emitted in one pass. With pᵢ = a₁⋯aᵢ the chance at least *i* drafts are
    accepted, the accepted count A has E[A] = Σ pᵢ and E[A²] = Σ (2i − 1) pᵢ, and emitted = 1 + A."""
    run, mean, square = 1.0, 0.0, 0.0
    for i, a in enumerate(acceptance, start=1):
        run *= a
        mean += run
        square += (2 * i - 1) * run
    return math.sqrt(max(square - mean * mean, 0.0))


def play_acceptance(acceptance: Sequence[float], passes: int, seed: int = 0) -> AcceptanceCheck:
    """Play ``passes`` passes of the accept/reject loop with conditional acceptances ``acceptance`` (each in
    [0, 1]), from a seeded generator (NumPy PCG64), so the same arguments give the same result.

    Each pass draws one uniform per draft; draft *i* is accepted when its uniform is below aᵢ and every earlier draft
    was accepted; the pass emits the accepted drafts plus one token (the target's own after a rejection, the bonus
    token after *k* acceptances). Raises :class:`InputError` for no passes, more than :data:`MAX_PASSES`, a
    negative seed or an acceptance outside [0, 1]."""
    if passes < 1:
        raise InputError(f"--passes: {passes} passes simulate nothing; give at least 1")
    if passes > MAX_PASSES:
        raise InputError(
            f"--passes: {passes:,} passes is more than {MAX_PASSES:,} (a standard error below 0.001 tokens a pass "
            "already; more would run for minutes)"
        )
    if seed < 0:
        raise InputError(f"--seed: {seed} is negative; a seed is a whole number from 0")
    values = np.asarray(list(acceptance), dtype=float)
    if values.size and (not np.all(np.isfinite(values)) or values.min() < 0.0 or values.max() > 1.0):
        raise InputError(f"acceptance {list(acceptance)}: each must be a probability in [0, 1]")
    rng = np.random.default_rng(seed)
    # Every pass emits one token and its accepted drafts: counted in chunks, an exact integer sum (no array of
    # every pass held), so the mean is the same as an array's.
    accepted_drafts = 0
    chunk = 1 << 16
    for start in range(0, passes, chunk):
        n = min(chunk, passes - start)
        accepted = rng.random((n, values.size)) < values
        # Stop at the first rejection: a draft counts only while every draft before it was accepted.
        run = np.cumprod(accepted, axis=1) if values.size else np.zeros((n, 0), dtype=np.int64)
        accepted_drafts += int(run.sum())
    return AcceptanceCheck(
        passes=passes,
        mean=(passes + accepted_drafts) / passes,
        stderr=emitted_sd(values.tolist()) / math.sqrt(passes),
        expected=emitted_per_pass(values.tolist()),
    )


@attrs.frozen
class DraftRow:
    """One draft length ``tokens`` (0: no drafting): its priced pass ``cost`` or its ``refusal``, the expected
    ``emitted`` tokens per pass per sequence, the ``speedup`` of its tokens/s over the no-drafting row's (``None``
    when either is refused), and the Monte-Carlo check ``simulated``. Under a serving stack (issue 14): the
    ``expected`` price beside the limit (:class:`~passprice.stacks.Expected`) or its ``expected_refusal``, and
    ``expected_speedup``, its expected tokens/s over the no-drafting row's expected tokens/s."""

    tokens: int
    emitted: float | None
    cost: ServingCost | None = None
    refusal: ServingRefusal | None = None
    speedup: float | None = None
    simulated: AcceptanceCheck | None = None
    expected: Any = None
    expected_refusal: ServingRefusal | None = None
    expected_speedup: float | None = None

    @property
    def tokens_per_s(self) -> float | None:
        """The pass's tokens/s, or ``None`` when refused."""
        return self.cost.tokens_per_s if self.cost is not None else None


@attrs.frozen
class Speculation:
    """Each draft length priced at one batch (``batch``) or each at its own best batch (``batch`` ``None``):
    ``rows`` (no drafting first, then the requested lengths), the drafting ``method``, and ``best_tokens``, the draft
    length with the most tokens/s (0 when not drafting is fastest; ties to the shorter draft); ``stack``: the serving
    stack each row's expected price is made under, or ``None``."""

    method: DraftMethod
    batch: int | None
    rows: tuple[DraftRow, ...]
    stack: str | None = None

    @property
    def best_tokens(self) -> int | None:
        """The draft length with the most tokens/s, the shorter on ties; ``None`` when every row is refused."""
        best: DraftRow | None = None
        for row in self.rows:
            t = row.tokens_per_s
            if t is not None and (best is None or t > (best.tokens_per_s or 0.0)):
                best = row
        return best.tokens if best is not None else None

    def row(self, tokens: int) -> DraftRow:
        """The row of draft length ``tokens``. Raises :class:`KeyError` when it was not priced."""
        for r in self.rows:
            if r.tokens == tokens:
                return r
        raise KeyError(tokens)


def resolve_speculation(
    root: Root, spec: ServingSpec, method: str | None, head_rows: int | None, label: str
) -> tuple[Resolved, DraftMethod, int | None]:
    """What ``speculate`` prices: ``spec`` without its drafts (each draft length is priced by :func:`speculate`),
    resolved with the drafting method ``method`` (default: the one ``spec`` drafts with) loaded and held to its
    scope by :func:`~passprice.servings.resolve`, the one path every command resolves through; and the head rows
    (``head_rows``, default the spec's). ``label`` names the serving in an error.

    Raises :class:`InputError` when no drafting method is named (or it, or anything ``spec`` names, does not load),
    or the head rows pass the vocabulary; :class:`~passprice.scopes.OutOfScope` when the method's checkpoints do not
    list the one priced."""
    from passprice.servings import check_head_rows, resolve

    from_file = method is None and spec.draft is not None  # the serving file's own draft.method
    if method is None and spec.draft is not None:
        method = spec.draft.method
    if head_rows is None and spec.draft is not None:
        head_rows = spec.draft.head_rows
    if method is None:
        raise InputError(f"{label} names no drafting method: give --draft METHOD (the registered ones, each with the "
                         f"checkpoints it prices: {_methods_known(root)})")
    resolved = resolve(root, attrs.evolve(spec, draft=None), method_ref=method, method_ref_from_file=from_file)
    assert resolved.method is not None
    check_head_rows(resolved.header, head_rows)
    return resolved, resolved.method, head_rows


#: The most drafting methods whose scope the "names no drafting method" line spells out; the rest are named.
SCOPES_SHOWN = 20


def _methods_known(root: Root) -> str:
    """The registered drafting methods, each with the checkpoints it lists (``qwen35-mtp for qwen35-27b-like``): a
    method prices only those (``OutOfScope``), so the line says which fits before a try does (walkthrough 15 was
    offered two methods for a checkpoint neither applies to); ``for any`` when it lists none. A method that does not
    load, and any past :data:`SCOPES_SHOWN`, is named alone; ``none`` when there are none. Raises nothing."""
    from passprice.drafts import load_draft_method

    names = root.names(root.drafts)
    shown = []
    for i, name in enumerate(names):
        if i >= SCOPES_SHOWN:
            shown.append(name)
            continue
        try:
            scope = load_draft_method(root, name).checkpoints
        except InputError:  # a SchemaError too: named, its problem left to the command that reads it
            shown.append(name)
            continue
        shown.append(f"{name} for {', '.join(scope) if scope else 'any'}")
    return "; ".join(shown) or "none"


def with_draft(serving: Serving, method: DraftMethod, tokens: int, head_rows: int | None) -> Serving:
    """``serving`` drafting ``tokens`` with ``method`` (its first ``tokens`` acceptance figures; fewer when the
    method has fewer, which the pricer refuses as ``BadDraft``), or not drafting when ``tokens`` is 0."""
    if tokens == 0:
        return attrs.evolve(serving, draft=None)
    return attrs.evolve(serving, draft=Draft(tokens, method.first(tokens), head_rows, method.name))


def speculate(
    header: GGUFHeader,
    card: Card,
    serving: Serving,
    method: DraftMethod,
    tokens: Sequence[int],
    batch: int | None = None,
    head_rows: int | None = None,
    passes: int = 100_000,
    seed: int = 0,
    stack: Any = None,
) -> Speculation:
    """Tokens/s and speedup over no drafting of ``serving`` on ``card`` drafting each of ``tokens`` with
    ``method``: every row priced at ``batch`` sequences (seed ``price_serving``), or, with ``batch`` ``None``, each at
    its own best batch (seed ``best_serving``). A row the pricer refuses (``BadDraft`` for a draft longer than the
    method's figures, ``NotResident`` when the longer draft's states no longer fit …) carries its refusal. Each
    priced draft row carries :func:`play_acceptance` of its acceptances (``passes`` passes from ``seed``).

    Speedup = tokens/s(k) / tokens/s(0), with tokens/s = batch × ``emitted_per_pass`` / pass seconds (seed
    ``ServingCost::tokens_per_s``). With a serving ``stack`` (issue 14), each priced row also carries its expected
    price under the stack beside the limit (:func:`~passprice.stacks.price_expected`, at the same batch, or at the
    stack's own best batch among those its facts hold on) or the stack's refusal of it (``StackLacks``,
    ``BeyondStack``: a draft adds token-rows a pass), and the expected speedup over not drafting under the stack.
    Raises :class:`InputError` for a batch below 1, or when the loops would draw more than :data:`MAX_DRAWS`
    uniforms (``passes`` × the drafts of every length the method has figures for)."""
    if batch is not None and batch < 1:
        raise InputError(f"--batch: {batch} sequences price nothing; give at least 1")
    draws = passes * sum(k for k in tokens if k <= len(method.acceptance))
    if draws > MAX_DRAWS:
        raise InputError(
            f"--passes: {passes:,} passes of {len(tokens)} draft length{'s' if len(tokens) != 1 else ''} draw "
            f"{draws:,} uniforms, more than {MAX_DRAWS:,} (about ten seconds); give fewer passes or draft lengths"
        )
    rows: list[DraftRow] = []
    base: float | None = None
    expected_base: float | None = None
    for k in (0, *(t for t in tokens if t != 0)):
        drafted = with_draft(serving, method, k, head_rows)
        acceptance = [a.value for a in drafted.draft.acceptance] if drafted.draft is not None else []
        emitted = emitted_per_pass(acceptance) if len(acceptance) == k else None
        try:
            if batch is None:
                cost = best_serving(header, card, drafted)
            else:
                cost = price_serving(header, card, attrs.evolve(drafted, batch=batch))
        except ServingRefusal as e:
            rows.append(DraftRow(k, emitted, refusal=e))
            continue
        if k == 0:
            base = cost.tokens_per_s
        under: dict[str, Any] = {}
        if stack is not None:
            from passprice.stacks import price_expected

            at = drafted if batch is None else attrs.evolve(drafted, batch=batch)
            try:
                expected = price_expected(header, card, at, stack, "best" if batch is None else "price")
            except ServingRefusal as e:
                under = {"expected_refusal": e}
            else:
                tps = expected.expected.tokens_per_s
                if k == 0:
                    expected_base = tps
                under = {"expected": expected, "expected_speedup": tps / expected_base if expected_base else None}
        rows.append(
            DraftRow(
                k,
                emitted,
                cost=cost,
                speedup=cost.tokens_per_s / base if base else None,
                simulated=play_acceptance(acceptance, passes, seed + k) if k else None,
                **under,
            )
        )
    return Speculation(method, batch, tuple(rows), stack.name if stack is not None else None)


def speculation_json(result: Speculation) -> dict[str, Any]:
    """The ``--json`` object of ``passprice speculate``: the method, the batch (``null``: each row's best), the best
    draft length, and one object per draft length with its price's fields (base units) or its refusal."""
    rows = []
    for r in result.rows:
        entry: dict[str, Any] = {"tokens": r.tokens, "emitted_per_pass": r.emitted}
        if r.refusal is not None:
            entry.update(r.refusal.to_json())
        elif r.cost is not None:
            c = r.cost
            entry.update(
                {
                    "batch": c.batch,
                    "tokens_per_s": c.tokens_per_s,
                    "speedup": r.speedup,
                    "pass_s": c.pass_s,
                    "binds": c.binds.value,
                    "terms": {b.value: s for b, s in c.terms().items()},
                    "provenance": c.provenance.value,
                    "weakest": list(c.weakest),
                }
            )
            if r.simulated is not None:
                entry["simulated"] = attrs.asdict(r.simulated)
            if result.stack is not None:
                entry.update(_expected_entry(r))
        rows.append(entry)
    out: dict[str, Any] = {
        "method": result.method.name,
        "batch": result.batch,
        "best_tokens": result.best_tokens,
        "rows": rows,
    }
    if result.stack is not None:
        out["stack"] = result.stack
    return out


def _expected_entry(r: DraftRow) -> dict[str, Any]:
    """A row's expected price under the stack for ``--json``: ``expected`` (batch, tokens/s, pass seconds, binding
    term, provenance, the ratio to the limit's tokens/s, the speedup over not drafting under the stack) or
    ``expected_refusal`` (the refusal's object)."""
    if r.expected_refusal is not None:
        return {"expected": None, "expected_refusal": r.expected_refusal.to_json()}
    e = r.expected.expected
    return {
        "expected": {
            "batch": e.batch,
            "tokens_per_s": e.tokens_per_s,
            "ratio": r.expected.ratio,
            "speedup": r.expected_speedup,
            "pass_s": e.pass_s,
            "fixed_s": r.expected.fixed_s,
            "binds": e.binds.value,
            "provenance": e.provenance.value,
        },
        "expected_refusal": None,
    }


def speculation_text(result: Speculation, title: str) -> str:
    """``passprice speculate`` for people: one row a draft length, tokens/s, speedup, emitted per pass and its
    Monte-Carlo check, pass time, the bind and the term behind it; refused lengths with their refusal."""
    from passprice.tables import si, text_table, titled

    rows = []
    for r in result.rows:
        if r.cost is None:
            name = r.refusal.name if r.refusal is not None else "refused"
            rows.append([str(r.tokens), "–", "", "", "", "", "", f"refused: {name}", "", ""])
            continue
        c = r.cost
        sim = "" if r.simulated is None else f"{r.simulated.mean:.4f} ± {r.simulated.stderr:.4f}"
        mark = "← best" if r.tokens == result.best_tokens else ""
        rows.append(
            [
                str(r.tokens),
                f"{c.tokens_per_s:,.1f}",
                f"{r.speedup:.3f}×" if r.speedup is not None else "–",
                f"{r.emitted:.4f}" if r.emitted is not None else "",
                sim,
                f"{c.batch:,}",
                si(c.pass_s, "s"),
                c.binds.value,
                c.provenance.value,
                mark,
            ]
        )
    where = f"at batch {result.batch:,}" if result.batch is not None else "each at its own best batch"
    lines = [
        # the method's title between dashes: a title holding parentheses nested in them (leftovers 28)
        f"{title}: drafting with {titled(result.method.name, result.method.title)} — {where}",
        "",
        text_table(
            [
                "draft",
                "tokens/s",
                "speedup",
                "emitted/pass",
                "simulated (± s.e.)",
                "batch",
                "pass",
                "binds",
                "provenance",
                "best",
            ],
            rows,
            right=(0, 1, 2, 3, 4, 5, 6),
        ),
        "",
    ]
    best = result.best_tokens
    if best is not None:
        lines.append(f"  best draft length: {best}" + (" (no drafting)" if best == 0 else ""))
    figures = len(result.method.acceptance)
    too_long = [r.tokens for r in result.rows if isinstance(r.refusal, BadDraft) and r.tokens > figures]
    if too_long:
        lines.append(
            f"  {', '.join(str(k) for k in too_long)}: refused (BadDraft): {result.method.name} gives acceptance "
            f"figures for {figures} draft{'s' if figures != 1 else ''}, so a longer draft would be priced on a guess"
        )
    for r in result.rows:
        if r.refusal is not None and r.tokens not in too_long:
            lines.append(f"  {r.tokens}: refused ({r.refusal.name}): {r.refusal}")
    if result.stack is not None:
        lines += ["", _expected_table(result)]
    simulated = [r.simulated for r in result.rows if r.simulated is not None]
    if simulated:
        lines.append(
            f"  simulated: the accept/reject loop played {simulated[0].passes:,} passes a row (seeded), "
            "against emitted_per_pass = 1 + a1 + a1·a2 + …"
        )
    return "\n".join(lines)


def _expected_table(result: Speculation) -> str:
    """The rows under the serving stack (issue 14): each draft length's expected tokens/s, its ratio to the limit's,
    its speedup over not drafting under the stack, batch, pass, bind and provenance, or the stack's refusal."""
    from passprice.tables import si, text_table

    rows = []
    refusals: dict[tuple[str, str], list[int]] = {}  # one line a refusal, naming the draft lengths it refuses
    for r in result.rows:
        if r.cost is None:
            continue
        if r.expected is None:
            name = r.expected_refusal.name if r.expected_refusal is not None else "refused"
            rows.append([str(r.tokens), "–", "", "", "", "", f"refused: {name}", ""])
            if r.expected_refusal is not None:
                refusals.setdefault((name, str(r.expected_refusal)), []).append(r.tokens)
            continue
        e = r.expected.expected
        rows.append(
            [
                str(r.tokens),
                f"{e.tokens_per_s:,.1f}",
                f"{r.expected.ratio:.4g}",
                f"{r.expected_speedup:.3f}×" if r.expected_speedup is not None else "–",
                f"{e.batch:,}",
                si(e.pass_s, "s"),
                e.binds.value,
                e.provenance.value,
            ]
        )
    table = text_table(
        ["draft", "expected tokens/s", "× limit", "speedup", "batch", "pass", "binds", "provenance"],
        rows,
        right=(0, 1, 2, 3, 4, 5),
    )
    lines = [f"  {', '.join(map(str, ks))}: refused under the stack ({name}): {text}"
             for (name, text), ks in refusals.items()]
    return "\n".join([f"under stack {result.stack}: the expected price of each draft length beside the limit's", "",
                      table, *lines])
