"""A step of a serving engine is priced as the seed prices a pass — the weights once, each sequence's own bytes, the
arithmetic of every token-row — only its sequences sit at different positions and some of them carry prompt rows.

Pricing each step with a fresh :func:`~passprice.serving.pass_shape` over a context mix of one class per sequence
would walk the decode step again every step. Instead :meth:`StepPricer.of` decomposes the pass once per serving:

- what a step **shares**: the weights, streamed once (the decode pass's stream; a step of prompt rows alone streams
  the verifying model once, its head only when some row needs logits), and a shared prefix read once;
- what each **decoding sequence** pays whatever its position: :func:`~passprice.serving.pass_shape` of the serving
  at no context (contexts ``uniform(0, 0)``, contiguous), where every attention term is exactly zero, so its state,
  log, conv ring, written rows, norms, projections and head are the seed's own arithmetic;
- per **attention group** — the full layers, and the windowed layers by window (DESIGN.md, Sliding windows) — what a
  sequence pays per cached position it reads (bytes; scores, softmax and weighted sum) and per position it holds
  (:class:`AttentionGroup`), the seed's attention formulas with the position factored out.

A step then costs O(sequences) arithmetic, vectorized with NumPy (:meth:`StepPricer.price`). A step of ``B``
identical decoding sequences at position ``p`` equals the seed's pass at batch ``B`` and position ``p`` (every term,
to rounding: the sums are grouped differently), which the tests check on a windowed and a hybrid checkpoint.

**Prompt rows** (prefill, DESIGN.md: a prompt of P tokens is P token-rows). A chunk of ``c`` prompt rows of one
sequence, ``L`` positions already cached, is priced with the decode pass's terms and facts, as ``c`` rows of a pass
that verifies one token and drafts none, state flushed every pass (:func:`pass_shape` of that serving at no
context): every row multiplies every weight of the verifying model, reads its embedding row, writes its key and
value, runs its norms, its recurrence update and its conv taps; the chunk reads the sequence's cache of ``L``
positions once (one read serves every row of the pass, as the seed's drafts share it), and reads and writes back
its recurrent state once (only the chunk's final state is kept: no candidate prefix is rolled back); row ``t`` of
the prompt scores ``t`` earlier positions (``min(t, window − 1)`` in a windowed layer, which with the row's own
attends ``window``: :func:`~passprice.architectures.windowed_reads`), as a decoding row at position
``t`` does. Two modelling choices: the head multiplies only a prompt's **last** row, whose logits give the first
output token (serving engines compute no logits for the other prompt positions unless prompt log-probabilities are
asked for); and a drafting serving's draft (MTP) layers are left out of prompt rows (they add one block in 65 to
``qwen35-27b-like``'s prompt work). So a one-row chunk that ends its prompt costs exactly a decode pass without
drafts, and a long chunk multiplies every weight by many rows for one stream of them: prefill binds on arithmetic
where decode binds on memory.

**A mixture of experts** (DESIGN.md extension, issue 15): every row of a step, decoding or prompt, routes through the
main layers' experts together, so a step streams the expected distinct experts of all its rows (a 2,048-row chunk
reads nearly every expert); an MTP block's experts route each drafting step's one row a decoding sequence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from passprice import ggml
from passprice.architectures import window_reach, windowed_held_array, windowed_reads_array
from passprice.cards import Card
from passprice.cost import Pricing, Terms, binding_index, pass_seconds, pass_terms
from passprice.decode import DecodeRefusal, Deployment, StageKind, decode_step
from passprice.facts import Fact, Provenance
from passprice.gguf_header import GGUFHeader
from passprice.serving import (
    COST_PATHS,
    SOFTMAX_MACS_PER_SCORE,
    VALUE_BLOCK,
    AttentionMath,
    BadContexts,
    ContextMix,
    MissingTensor,
    PassShape,
    Serving,
    ServingBind,
    StateFlush,
    Step,
    array_passes,
    is_float,
    lane_cycles,
    pass_shape,
    rested_on,
)

if TYPE_CHECKING:
    from passprice.routing import Router

#: The card facts a step's price may rest on: those of a pass held in card memory (the simulator keeps every sequence
#: in card memory); which of them it does is :func:`~passprice.serving.rested_on`'s to say.
STEP_PATHS = COST_PATHS


@attrs.frozen
class AttentionGroup:
    """The attention layers that read the same positions: the full layers (``window`` ``None``) or the windowed
    layers of one ``window``. Per cached position (bytes, multiply-adds, cycles):

    ``read``: bytes a decode pass of one sequence reads (a draft layer once per drafting step, as the seed reads
    it); ``vector``, ``array``, ``scale``: a decode pass's softmax, scores and weighted sum over all its rows
    (seed: ``SOFTMAX_MACS_PER_SCORE × heads`` plus ``ops / 2`` on the vector units, or ``ops`` on the array with
    ``heads × (1 + value / VALUE_BLOCK)`` lane cycles, times the stage's rows); ``held``: bytes a sequence holds.
    ``prompt_read``, ``prompt_vector``, ``prompt_array``, ``prompt_scale``: the same for one prompt row through the
    verifying layers (no draft layers, one row)."""

    window: int | None
    read: float = 0.0
    vector: float = 0.0
    array: float = 0.0
    scale: float = 0.0
    held: float = 0.0
    prompt_read: float = 0.0
    prompt_vector: float = 0.0
    prompt_array: float = 0.0
    prompt_scale: float = 0.0


@attrs.frozen
class StepRows:
    """What one step carries (arrays, one element a sequence; positions and rows in token positions).

    Decoding sequences: ``decode_positions`` (cached positions each one's pass reads, float: a drafting serving
    advances by its expected emitted tokens) and ``decode_shared`` (positions of a shared prefix it reads with the
    batch instead of alone; 0 for none). Prompt chunks: ``prompt_starts`` (positions cached before the chunk),
    ``prompt_rows`` (rows in the chunk, ≥ 1), ``prompt_last`` (the chunk ends its prompt: its last row needs
    logits), ``prompt_shared`` (as ``decode_shared``). ``shared_once``: positions of shared prefixes the step
    streams once, summed over the distinct prefixes its sequences read that way."""

    decode_positions: np.ndarray
    decode_shared: np.ndarray
    prompt_starts: np.ndarray
    prompt_rows: np.ndarray
    prompt_last: np.ndarray
    prompt_shared: np.ndarray
    shared_once: float = 0.0

    @classmethod
    def build(
        cls,
        decode_positions: Sequence[float] | np.ndarray = (),
        prompt_starts: Sequence[int] | np.ndarray = (),
        prompt_rows: Sequence[int] | np.ndarray = (),
        prompt_last: Sequence[bool] | np.ndarray = (),
        decode_shared: Sequence[float] | np.ndarray | None = None,
        prompt_shared: Sequence[float] | np.ndarray | None = None,
        shared_once: float = 0.0,
    ) -> StepRows:
        """A step from lists; missing shared arrays are zeros. Raises :class:`ValueError` for arrays of unequal
        lengths, a chunk of no rows, or a negative position."""
        dp = np.asarray(decode_positions, dtype=float)
        ps = np.asarray(prompt_starts, dtype=float)
        pr = np.asarray(prompt_rows, dtype=float)
        pl = np.asarray(prompt_last, dtype=bool)
        ds = np.zeros_like(dp) if decode_shared is None else np.asarray(decode_shared, dtype=float)
        sh = np.zeros_like(ps) if prompt_shared is None else np.asarray(prompt_shared, dtype=float)
        if not (len(ps) == len(pr) == len(pl) == len(sh)) or len(ds) != len(dp):
            raise ValueError("a step's arrays must have one element a sequence")
        if (pr < 1).any() or (ps < 0).any() or (dp < 0).any():
            raise ValueError("a prompt chunk holds at least one row, and positions are >= 0")
        return cls(dp, ds, ps, pr, pl, sh, float(shared_once))


@attrs.frozen
class StepCost:
    """One step on a card, every quantity in base units, totals over the step's sequences (a :class:`ServingCost`
    gives ``sequence_bytes`` and ``rewrite_bytes`` per sequence; here they are summed).

    ``weight_bytes``: streamed once and shared (weights, embedding rows, a prefix read once); ``sequence_bytes``:
    each sequence's own cache and state bytes read and written; ``rewrite_bytes``: of those, read and written back
    in place; ``array_macs``, ``vector_macs``, ``scale_cycles``: the work of every row. The five terms' seconds
    (``host_s`` is 0: the simulator holds every sequence in card memory), ``pass_s`` the largest, which the step
    ``binds`` on (ties to the last, as the seed). ``decode_rows``, ``prompt_rows``: token-rows carried;
    ``emitted``: tokens the step emits (expected, with drafts), each decoding sequence's and one per finished
    prompt."""

    weight_bytes: float
    sequence_bytes: float
    rewrite_bytes: float
    array_macs: float
    vector_macs: float
    scale_cycles: float
    memory_s: float
    host_s: float
    array_s: float
    vector_s: float
    scale_s: float
    pass_s: float
    binds: ServingBind
    decode_rows: int
    prompt_rows: int
    emitted: float


@attrs.frozen
class StepSums:
    """What a step's price reads of the rows it carries, summed over its sequences: floats for one step, or arrays
    of one element a step (floats shared by every step) for many steps priced at once (:meth:`StepPricer.price_many`).

    ``decode``: decoding sequences; ``chunks``: prompt chunks; ``prompt_rows``: their rows; ``lasts``: chunks that
    end their prompt; ``shared_once``: positions of shared prefixes streamed once. ``groups``: per attention group
    (:attr:`StepPricer.groups`, in order) the positions its decoding rows score (Σ position, or Σ min(position,
    window − 1)), those its decoding sequences read alone (less a prefix read with the batch), those its prompt rows
    score (:func:`_window_sum` in a windowed group), and those its prompt chunks read."""

    decode: Any
    chunks: Any
    prompt_rows: Any
    lasts: Any
    shared_once: Any
    groups: tuple[tuple[Any, Any, Any, Any], ...]


@attrs.frozen
class _Totals:
    """A step's totals (bytes, multiply-adds, cycles) and its five terms, floats or arrays."""

    weight_bytes: Any
    sequence_bytes: Any
    rewrite_bytes: Any
    array_macs: Any
    vector_macs: Any
    scale_cycles: Any
    terms: Terms


def _pick(condition: Any, yes: Any, no: Any) -> Any:
    """``yes`` where ``condition`` holds, else ``no``: Python's conditional for a bool, ``numpy.where`` for an
    array of them (either picks one of the two doubles, unchanged)."""
    if isinstance(condition, np.ndarray):
        if condition.all():
            return yes
        return np.where(condition, yes, no) if condition.any() else no
    return yes if condition else no


def _nothing(value: Any) -> bool:
    """Whether ``value`` is the float 0.0 (not an array): a sum a step adds only as exact zeros."""
    return isinstance(value, float) and value == 0.0


def _distinct(router: Router, tokens: Any) -> Any:
    """:meth:`Router.distinct` of ``tokens`` (a float, or an array of them): an array is evaluated one distinct value
    at a time on Python floats, so every element is the double a single step gets (NumPy's ``power`` may round
    differently from the C library's ``pow``)."""
    if not isinstance(tokens, np.ndarray):
        return router.distinct(tokens)
    values, where = np.unique(tokens, return_inverse=True)
    return np.array([router.distinct(float(v)) for v in values], dtype=float)[where]


def _window_sum(starts: np.ndarray, rows: np.ndarray, window: int) -> np.ndarray:
    """Σ over t from ``starts`` to ``starts + rows − 1`` of min(t, window − 1) (:func:`~passprice.architectures.
    windowed_reads`, its cap :func:`~passprice.architectures.window_reach`), elementwise, in closed form: the cached
    positions a windowed layer's prompt rows score."""
    w = float(window_reach(window))
    last = starts + rows - 1.0
    top = np.minimum(last, w)
    below = np.where(top >= starts, (starts + top) * (top - starts + 1.0) / 2.0, 0.0)
    above = np.maximum(last - np.maximum(starts, w + 1.0) + 1.0, 0.0) * w
    result: np.ndarray = below + above
    return result


def _head_work(
    header: GGUFHeader, stage_tensors: tuple[str, ...], s: Serving
) -> tuple[float, float, float, dict[str, float]]:
    """(array MACs, vector MACs, lane cycles, float-matrix MACs by type) of one row through the head's tensors, by
    the seed's matrix rules: array-read types ``elements × passes × words`` and their block scales, float matrices
    on the vector units (and counted by type, for a card's float-matrix rate), a bias (fewer than two dimensions)
    two vector multiply-adds an element."""
    words = float(s.activation_words)
    array = vector = scale = 0.0
    floats: dict[str, float] = {}
    for name in stage_tensors:
        t = header.tensor(name)
        if t is None:
            raise MissingTensor(name)
        ty = ggml.ggml_type(t.type_id)
        elems = float(ggml.elements(t.dims))
        passes = array_passes(ty)
        if len(t.dims) < 2:
            vector += 2.0 * elems
        elif passes is not None:
            array += elems * passes * words
            lane = lane_cycles(ty, s.scaling)
            assert lane is not None
            scale += elems / ty.block_elems * lane * words
        elif is_float(ty):
            vector += elems
            floats[ty.name] = floats.get(ty.name, 0.0) + elems
    return array, vector, scale, floats


@attrs.frozen
class StepPricer:
    """A serving decomposed for pricing steps (see the module's docstring).

    ``shape``: the seed's pass of the serving (its weights stream, embedding rows, rows and emitted tokens per
    sequence, on-chip bytes, the draft facts); ``zero``: the same pass at no context (position-independent parts
    per decoding sequence); ``prompt``: one prompt row's pass at no context (no drafts, flushed every pass);
    ``groups``: the attention groups; ``head_bytes`` and ``head_array``, ``head_vector``, ``head_scale``: the
    verifying head's stream and one row's work through it (``head_floats``: its float-matrix MACs by type);
    ``state_bytes``: the recurrent state a prompt chunk writes back once (all recurrent layers); ``kv_page``
    (``None``: contiguous) and ``limit`` (positions each sequence is allowed; a contiguous cache holds it all).
    Under a serving stack (issue 14): ``pricing`` (its rates), ``stack_facts`` (its facts a step rests on) and
    ``calibrated`` (where its facts hold, :class:`~passprice.stacks.Held`: a step outside is refused)."""

    card: Card
    shape: PassShape
    zero: PassShape
    prompt: PassShape
    groups: tuple[AttentionGroup, ...]
    head_bytes: float
    head_array: float
    head_vector: float
    head_scale: float
    state_bytes: float
    head_floats: tuple[tuple[str, float], ...]
    kv_page: int | None
    limit: int
    pricing: Pricing | None = None
    stack_facts: tuple[tuple[str, Fact], ...] = ()
    calibrated: Any = None
    _rates: Pricing = attrs.field(init=False, eq=False, repr=False,
                                  default=attrs.Factory(lambda self: self._limit(), takes_self=True))

    def _limit(self) -> Pricing:
        return self.pricing if self.pricing is not None else Pricing.limit(self.card)

    @classmethod
    def of(cls, header: GGUFHeader, card: Card, s: Serving, stack: Any = None) -> StepPricer:
        """Decompose ``s`` on ``card`` (``s.batch``, ``s.host_memory`` and ``s.shared_prefix`` are not used: a step
        says its sequences, every one in card memory, and its shared prefixes). With a serving ``stack`` (issue 14)
        every step is priced at the stack's rates, fixed costs and serial terms, and the card's memory less what the
        runtime reserves. Raises what :func:`~passprice.serving.pass_shape` raises for ``s``, and
        :class:`~passprice.stacks.StackLacks`."""
        base = attrs.evolve(s, shared_prefix=0, prefix_read_once=False)
        shape = pass_shape(header, base)
        nothing = ContextMix.uniform(0.0, 0)
        zero = pass_shape(header, attrs.evolve(base, contexts=nothing, kv_page=None))
        one_row = attrs.evolve(base, contexts=nothing, kv_page=None, draft=None, flush=StateFlush())
        prompt = pass_shape(header, one_row)
        k = s.draft.tokens if s.draft is not None else 0
        groups = attention_groups(header, s, k)
        try:
            plain = decode_step(header, Deployment(1, s.kv_bytes, s.state_bytes, 2.0, speculative=False))
        except DecodeRefusal as e:  # pragma: no cover - pass_shape above refused it first
            raise Step(e) from None
        head = next(st for st in plain.stages if st.kind is StageKind.HEAD and st.layer is None)
        head_array, head_vector, head_scale, head_floats = _head_work(header, head.tensors, s)
        state = sum(float(plain.recurrence.state) * s.state_bytes for st in plain.stages
                    if st.kind is StageKind.RECURRENCE) if plain.recurrence is not None else 0.0
        return cls(
            card=card,
            shape=shape,
            zero=zero,
            prompt=prompt,
            groups=groups,
            head_bytes=float(head.weight_bytes),
            head_array=head_array,
            head_vector=head_vector,
            head_scale=head_scale,
            state_bytes=state,
            head_floats=tuple(head_floats.items()),
            kv_page=s.kv_page,
            limit=s.contexts.longest(),
            **cls._stack(stack, card, shape),
        )

    @staticmethod
    def _stack(stack: Any, card: Card, shape: PassShape) -> dict[str, Any]:
        if stack is None:
            return {}
        from passprice.stacks import expected_pricing, held

        pricing, used = expected_pricing(stack, card, shape)
        return {"pricing": pricing, "stack_facts": used, "calibrated": held(stack, card.name)[0]}

    @property
    def capacity(self) -> float:
        """Card memory the steps may fill (bytes): the card's, less a stack's reserved memory."""
        return self.pricing.capacity if self.pricing is not None else self.card.memory.capacity.value

    # --- what a sequence holds -------------------------------------------------------------------------------------

    def cached(self, length: np.ndarray | float) -> np.ndarray:
        """Positions a sequence of ``length`` cached positions holds in each full layer: its pages
        (⌈length / page⌉ × page) with a paged cache, its whole ``limit`` with a contiguous one (seed: a contiguous
        cache holds its limit)."""
        n = np.asarray(length, dtype=float)
        if self.kv_page is None:
            return np.full_like(n, float(self.limit))
        page = float(self.kv_page)
        result: np.ndarray = np.ceil(n / page) * page
        return result

    def held(self, length: np.ndarray | float, shared: np.ndarray | float = 0.0) -> np.ndarray:
        """Bytes each sequence holds at ``length`` cached positions (arrays elementwise): its state, log and conv
        ring (the seed's at no context) and every attention group's positions — full layers its pages less the
        ``shared`` prefix positions held once for all, windowed layers at most their window (seed:
        ``min(position + page / 2, window)`` becomes ``min(pages, window)`` for one sequence)."""
        cached = self.cached(length)
        shared_positions = np.asarray(shared, dtype=float)
        out = np.full_like(cached, self.zero.held_per_sequence)
        for g in self.groups:
            if g.window is None:
                out = out + g.held * np.maximum(cached - shared_positions, 0.0)
            else:
                out = out + g.held * windowed_held_array(cached, g.window)
        return out

    def prefix_held(self, positions: float) -> float:
        """Bytes a shared prefix of ``positions`` (whole pages) holds once: its full layers' positions."""
        return sum(g.held * positions for g in self.groups if g.window is None)

    @property
    def weights_held(self) -> float:
        """Bytes held whatever the sequences: the weights and the embedding table (the seed's ``held_shared``)."""
        return self.shape.held_shared

    @property
    def row_on_chip(self) -> float:
        """On-chip bytes one token-row takes through a layer (the seed's ``on_chip_per_sequence`` of one row)."""
        return self.prompt.on_chip_per_sequence

    def rows_on_chip(self) -> int:
        """The most token-rows a step can carry: ⌊on-chip capacity / a row's bytes⌋ (the seed refuses a pass
        whose rows overflow on-chip memory, :class:`~passprice.serving.OnChipOverflow`)."""
        return math.floor(self.card.on_chip.capacity.value / max(self.row_on_chip, 1.0))

    # --- what a step costs -----------------------------------------------------------------------------------------

    @property
    def rates(self) -> Pricing:
        """What every step is priced against: a stack's :class:`~passprice.cost.Pricing`, else the card's limit
        (computed once a pricer, not once a step)."""
        return self._rates

    def sums(self, step: StepRows) -> StepSums:
        """What :meth:`price` reads of ``step``, summed over its sequences (floats). Raises :class:`ValueError` for
        a step that carries nothing."""
        pos = step.decode_positions
        d = float(len(pos))
        starts, rows = step.prompt_starts, step.prompt_rows
        chunks = float(len(rows))
        if d == 0.0 and chunks == 0.0:
            raise ValueError("a step carries at least one sequence")
        groups: list[tuple[float, float, float, float]] = []
        for g, (prompt_attended, prompt_read) in zip(self.groups, self.chunk_sums(starts, rows, step.prompt_shared),
                                                     strict=True):
            if g.window is None:
                attended = float(pos.sum())
                read_positions = float((pos - step.decode_shared).sum())
            else:
                attended = read_positions = float(windowed_reads_array(pos, g.window).sum())
            groups.append((attended, read_positions, float(prompt_attended.sum()), float(prompt_read.sum())))
        return StepSums(d, chunks, float(rows.sum()), float(step.prompt_last.sum()), step.shared_once, tuple(groups))

    def chunk_sums(
        self, starts: np.ndarray, rows: np.ndarray, shared: np.ndarray
    ) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        """Per attention group, one element a prompt chunk (``starts``: positions cached before it, ``rows``, its
        ``shared`` prefix positions read with the batch): the positions its rows score and those it reads —
        what :meth:`sums` adds over a step's chunks (a step of one chunk gets the chunk's element itself)."""
        out = []
        for g in self.groups:
            if g.window is None:
                out.append((rows * starts + rows * (rows - 1.0) / 2.0, starts - shared))
            else:
                out.append((_window_sum(starts, rows, g.window), windowed_reads_array(starts, g.window)))
        return tuple(out)

    def price(self, step: StepRows) -> StepCost:
        """The pass of ``step`` on the card: shared stream once, every sequence's own bytes, every row's work;
        the five terms as the seed's ``PassShape::cost`` computes them, with sums over sequences for its products
        by the batch. Raises :class:`ValueError` for a step that carries nothing, and under a serving stack
        :class:`~passprice.stacks.BeyondStack` for a step outside where its facts hold (its token-rows, or a position
        a row reads). Raises :class:`~passprice.serving.BadContexts` for a row at or past :attr:`limit`: a decoding
        sequence at position ``p`` reads ``p`` positions and writes row ``p``, a prompt chunk writes rows ``start`` to
        ``start + rows − 1``, and a sequence allowed ``limit`` positions holds rows 0 to ``limit − 1`` — the pass
        pricer's rule (:func:`~passprice.serving.pass_shape` refuses a class at position ≥ limit). A trace never
        reaches it: a request of ``prompt + output`` ≤ limit decodes at most at position ``limit − 2``
        (:mod:`passprice.simulate`)."""
        self._below_limit(step)
        sums = self.sums(step)
        d, prompt_rows, lasts = sums.decode, sums.prompt_rows, sums.lasts
        if self.calibrated is not None:
            self._within(step, d, prompt_rows)
        t = self._totals(sums)
        terms = t.terms
        memory_s, host_s, array_s, vector_s, scale_s = terms.as_tuple()
        binding_s, binds = terms.binding(tuple(ServingBind))
        pass_s = pass_seconds(self._rates, terms, binding_s)
        return StepCost(
            weight_bytes=t.weight_bytes,
            sequence_bytes=t.sequence_bytes,
            rewrite_bytes=t.rewrite_bytes,
            array_macs=t.array_macs,
            vector_macs=t.vector_macs,
            scale_cycles=t.scale_cycles,
            memory_s=memory_s,
            host_s=host_s,
            array_s=array_s,
            vector_s=vector_s,
            scale_s=scale_s,
            pass_s=pass_s,
            binds=binds,
            decode_rows=int(d) * self.shape.rows_per_sequence,
            prompt_rows=int(prompt_rows),
            emitted=d * self.shape.emitted_per_sequence + lasts,
        )

    def _below_limit(self, step: StepRows) -> None:
        """Raises :class:`~passprice.serving.BadContexts` when a row of ``step`` lies at or past :attr:`limit`
        (:meth:`price`): the last decode position, or the last row a prompt chunk writes."""
        limit = self.limit
        if limit <= 0:
            return
        pos, starts = step.decode_positions, step.prompt_starts
        if len(pos) and pos.max() >= limit:
            what, last = "decodes at position", float(pos.max())
        elif len(starts) and (starts + step.prompt_rows).max() > limit:
            what, last = "writes prompt row", float((starts + step.prompt_rows).max()) - 1.0
        else:
            return
        raise BadContexts(
            f"a step {what} {last:,.0f}, not below the limit {limit:,}: a pass at a position writes that "
            f"position's row, and a sequence allowed {limit:,} positions holds rows 0 to {limit - 1:,}; "
            "end the request one token earlier (prompt + output at most the limit) or raise --limit"
        )

    def price_many(self, sums: StepSums) -> tuple[np.ndarray, np.ndarray]:
        """The seconds and binding terms of many steps at once, from their sums (arrays of one element a step, or
        floats shared by every step; :mod:`passprice.stretch` makes them): ``(pass_s, bind)``, ``bind`` the index
        into :data:`~passprice.cost.TERMS` of each step's binding term, the last of equal maxima as
        :meth:`price` picks it. Each step's figures are :meth:`price`'s bit for bit: the same operations on the same
        doubles, elementwise."""
        t = self._totals(sums)
        terms = t.terms.as_tuple()
        try:
            stacked = np.array(terms, dtype=float)  # every term an array of the steps (the usual case)
        except ValueError:  # some term a float shared by every step
            stacked = np.empty(0)
        if stacked.ndim != 2:
            steps = max(np.size(x) for x in terms)
            stacked = np.empty((len(terms), steps))
            for row, term in zip(stacked, terms, strict=True):
                row[...] = term
        steps = stacked.shape[1]
        binding_s = stacked.max(axis=0)
        pass_s = pass_seconds(self._rates, t.terms, binding_s)
        if np.shape(pass_s) != (steps,):  # a term shared by every step
            pass_s = np.broadcast_to(pass_s, (steps,))
        return pass_s, binding_index(stacked)

    def price_one(self, sums: StepSums) -> tuple[float, int]:
        """The seconds and binding term of one step from its sums (floats): ``(pass_s, bind)`` as
        :meth:`price_many` gives them for that step (the same formula on the same doubles), without NumPy."""
        terms = self._totals(sums).terms
        binding_s, bind = terms.binding(range(5))
        return float(pass_seconds(self._rates, terms, binding_s)), bind

    def _totals(self, sums: StepSums) -> _Totals:
        """The step's totals and terms from its sums: the one formula :meth:`price` and :meth:`price_many` share,
        written with ``+ - * /`` so a float and an array of steps give the same doubles."""
        sh, zero, pr = self.shape, self.zero, self.prompt
        d, chunks, prompt_rows, lasts = sums.decode, sums.chunks, sums.prompt_rows, sums.lasts
        decoding = d > 0.0

        # Decoding sequences: their position-independent parts, then each attention group's positions.
        read = d * zero.read_bytes
        write = d * zero.write_bytes
        rewrite = d * zero.rewrite_bytes
        array = d * zero.array_macs
        vector = d * zero.vector_macs
        scale = d * zero.scale_cycles
        # Prompt chunks: the state read, written back once, and rewritten once a chunk; everything else a row; the
        # head for last rows only. (A step without chunks adds exact zeros here, which are left out: x + 0.0 is x.)
        prompts = not _nothing(chunks)
        if prompts:
            read += chunks * pr.read_bytes
            write += (pr.write_bytes - self.state_bytes) * prompt_rows + self.state_bytes * chunks
            rewrite += chunks * pr.rewrite_bytes
            array += (pr.array_macs - self.head_array) * prompt_rows + self.head_array * lasts
            vector += (pr.vector_macs - self.head_vector) * prompt_rows + self.head_vector * lasts
            scale += (pr.scale_cycles - self.head_scale) * prompt_rows + self.head_scale * lasts
        shared_once_bytes: Any = 0.0
        for g, (attended, read_positions, prompt_attended, prompt_read) in zip(self.groups, sums.groups, strict=True):
            if g.window is None and not _nothing(sums.shared_once):
                shared_once_bytes += _pick(decoding, g.read, g.prompt_read) * sums.shared_once
            if prompts:
                read += g.read * read_positions + g.prompt_read * prompt_read
                vector += g.vector * attended + g.prompt_vector * prompt_attended
                array += g.array * attended + g.prompt_array * prompt_attended
                scale += g.scale * attended + g.prompt_scale * prompt_attended
            else:
                read += g.read * read_positions
                vector += g.vector * attended
                array += g.array * attended
                scale += g.scale * attended

        # The shared stream: the decode pass's when any sequence decodes, else the verifying model's once (its head
        # only when some chunk ends a prompt); embedding rows for every row; a prefix read once.
        if decoding is True or (isinstance(decoding, np.ndarray) and decoding.all()):
            weights = sh.weight_bytes  # what _pick picks when every step decodes (the other side is not needed)
        else:
            weights = _pick(decoding, sh.weight_bytes, pr.weight_bytes - _pick(lasts > 0.0, 0.0, self.head_bytes))
        weight_bytes = weights + shared_once_bytes + d * sh.embed_bytes
        if prompts:
            weight_bytes += prompt_rows * pr.embed_bytes
        for e in sh.experts:
            # DESIGN.md extension (issue 15): a mixture of experts' main layers route every decoding row and every
            # prompt row of the step together; an MTP block each drafting step's one row a decoding sequence.
            tokens = d * e.rows + (0.0 if e.draft else prompt_rows) if prompts else d * e.rows
            weight_bytes += e.bytes * e.reads * _distinct(e.router, tokens)
        sequence_bytes = read + write
        # Float matrices by type (issue 14), counted as the vector work above counts them.
        head_floats = dict(self.head_floats)
        floats: dict[str, Any] = {}
        for ty, macs in zero.float_macs:
            floats[ty] = floats.get(ty, 0.0) + d * macs
        for ty, macs in pr.float_macs if prompts else ():
            head = head_floats.get(ty, 0.0)
            floats[ty] = floats.get(ty, 0.0) + (macs - head) * prompt_rows + head * lasts
        # The one cost formula (passprice.cost) with the step's totals as one sequence's: every sequence is in card
        # memory, so the host link is idle.
        terms = pass_terms(
            self._rates,
            batch=1.0,
            card_sequences=1.0,
            host_sequences=0.0,
            shared_bytes=weight_bytes,
            read_bytes=read,
            write_bytes=write,
            rewrite_bytes=rewrite,
            array_macs=array,
            vector_macs=vector,
            scale_cycles=scale,
            float_macs=tuple(floats.items()),
        )
        return _Totals(weight_bytes, sequence_bytes, rewrite, array, vector, scale, terms)

    def _within(self, step: StepRows, decoding: float, prompt_rows: float) -> None:
        """Raises :class:`~passprice.stacks.BeyondStack` for a step outside where the stack's facts hold: its
        token-rows (each decoding sequence's rows, every prompt row), or the last position a row reads."""
        n = self.shape.rows_per_sequence
        total = decoding * n + prompt_rows
        bounds = self.calibrated
        if not bounds.rows[0] <= total <= bounds.rows[1]:
            what = f"{total:,.0f} token-rows a step ({decoding:,.0f} decoding × {n}, {prompt_rows:,.0f} prompt)"
            bounds.check_rows(total, what, "runs of such steps")
        ends = [*step.decode_positions.tolist(), *(step.prompt_starts + step.prompt_rows - 1.0).tolist()]
        bounds.check_position(max(ends))
        bounds.check_position(min([*step.decode_positions.tolist(), *step.prompt_starts.tolist()]))

    # --- what it rests on ------------------------------------------------------------------------------------------

    def rests_on(self) -> tuple[tuple[str, Fact], ...]:
        """The facts every step's price rests on, by path: the card's (no host link) and the draft's."""
        return rested_on(self.shape, self.card, False, self.pricing) + self.stack_facts

    def provenance(self) -> Provenance:
        """The weakest provenance of :meth:`rests_on` (a step's price is as strong as the weakest fact)."""
        return max((f.provenance for _, f in self.rests_on()), default=Provenance.PUBLISHED)

    def describe(self) -> dict[str, Any]:
        """The decomposition for ``--json``: groups and per-sequence and per-row figures, base units."""
        return {
            "groups": [attrs.asdict(g) for g in self.groups],
            "weights_held_bytes": self.weights_held,
            "row_on_chip_bytes": self.row_on_chip,
            "kv_page": self.kv_page,
            "limit": self.limit,
        }


def attention_groups(header: GGUFHeader, s: Serving, k: int) -> tuple[AttentionGroup, ...]:
    """The attention groups of ``s`` with ``k`` drafted tokens: the seed's attention terms of
    :func:`~passprice.serving.pass_shape`, their position factored out, summed by window (full layers first)."""
    step = decode_step(header, Deployment(1, s.kv_bytes, s.state_bytes, 2.0, speculative=k > 0))
    blocks = header.meta_int("block_count") or 0
    drafts = header.meta_int("nextn_predict_layers") or 0
    n = float(1 + k)
    kf = float(k)
    acc: dict[int | None, dict[str, float]] = {}
    for st in step.stages:
        if st.kind is not StageKind.ATTENTION:
            continue
        draft = st.layer is not None and st.layer >= max(blocks - drafts, 0)
        rows = kf if draft else n
        per_position = st.state_write
        split = st.split
        heads = float(split.q) if split is not None else 1.0
        value_width = float(split.value) if split is not None else 0.0
        score = SOFTMAX_MACS_PER_SCORE * heads
        products = st.ops / 2.0
        if s.attention is AttentionMath.VECTOR:
            vector, array, scale = score + products, 0.0, 0.0
        else:
            vector, array, scale = score, 2.0 * products, heads * (1.0 + value_width / VALUE_BLOCK)
        g = acc.setdefault(st.window, dict.fromkeys(
            ("read", "vector", "array", "scale", "held", "prompt_read", "prompt_vector", "prompt_array",
             "prompt_scale"), 0.0))
        g["read"] += per_position * (kf if draft else 1.0)
        g["vector"] += vector * rows
        g["array"] += array * rows
        g["scale"] += scale * rows
        g["held"] += per_position
        if not draft:
            g["prompt_read"] += per_position
            g["prompt_vector"] += vector
            g["prompt_array"] += array
            g["prompt_scale"] += scale
    order = sorted(acc, key=lambda w: -1 if w is None else w)
    return tuple(AttentionGroup(w, **acc[w]) for w in order)
