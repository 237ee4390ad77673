"""Plan forward passes: a shared-prefix tree per batch, batches under a token budget.

Why one module: the planner is one algorithm (order, cut, tree, levels, widths)
whose steps share one vocabulary and one cost model; it is plain data in and
out and tested as a whole against brute force.

Plain data in, plain data out (no model here), so the planner is tested on
its own, the way vLLM tests its scheduler.

Vocabulary
----------
unit
    One leaf of work: a token sequence to run (prompt, then the candidate's
    tokens but its last) whose first ``shareable`` tokens may be computed in
    a shared pass. A request becomes one or more units (one per multi-token
    candidate; all single-token candidates of a prompt share one unit).
job
    The units of one request; a job is never split across batches unless it
    alone exceeds the budget, so a batch's jobs complete together.
batch
    Consecutive jobs in lexicographic order of their tokens, so neighbours
    share the longest prefixes. A batch runs the prefix tree (radix tree) of
    its units: every prefix worth sharing is a *node*, run once as one row of
    a pass, continuing the key/value cache of its parent node; each unit is a
    *leaf* row that continues its deepest shared node. Nodes are levelled
    from the bottom (leaves last, a survey row's text in the level above its
    answer orderings, and so on), so rows of one pass play the same part and
    have similar lengths; a level is cut into several passes when that pads
    less than it costs to run another pass. A parent may sit in any earlier
    pass, not only the one before.
global prefix
    The prefix shared by every unit planned together (e.g. a task
    description). Every batch starts with it as a pass of its own, so a
    backend can keep its key/value cache from one batch to the next.

Cost model
----------
The footprint of a pass is ``rows * (past width + segment width)`` tokens:
memory grows with every cached key/value, not only with new tokens, and a
row's past is as wide as the widest past in its pass. A batch's cost is its
largest pass footprint, and ``batch_tokens`` bounds it. The naive path's
footprint, ``rows * padded prompt length``, is the same measure. Run time is
modelled as padded tokens plus ``pass_overhead`` tokens per pass (reading
the weights once per forward pass costs about as much as running a few dozen
tokens).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from folkscope.errors import ConfigError

__all__ = ["DEFAULT_BATCH_TOKENS", "Batch", "Parent", "Pass", "Unit", "lcp", "plan_batches", "trie_tokens"]

#: the token budget of one forward pass where none is given and none is estimated from the device's memory
DEFAULT_BATCH_TOKENS = 4096

#: (pass index, row) of the node a row continues; None for a row with no past
Parent = tuple[int, int] | None


@dataclass(frozen=True)
class Unit:
    """A token sequence to run, whose first ``shareable`` tokens may be shared.

    Parameters
    ----------
    job : int
        The request this unit belongs to.
    tokens : tuple of int
        Everything this unit feeds the model.
    shareable : int
        Leading tokens that may be computed in an earlier pass; at most
        ``len(tokens) - 1`` so the positions read stay in the leaf row.
    """

    job: int
    tokens: tuple[int, ...]
    shareable: int

    def __post_init__(self) -> None:
        if not 0 <= self.shareable < len(self.tokens):
            raise ConfigError(
                f"Unit.shareable must be in [0, len(tokens)), got {self.shareable} for {len(self.tokens)} tokens",
                parameter="shareable",
                value=self.shareable,
            )


@dataclass(frozen=True)
class Pass:
    """One forward pass: a segment of tokens per row, each continuing a row of an earlier pass.

    ``parents[i]`` is the ``(pass, row)`` whose key/value cache row ``i``
    extends, or None for a row that starts from nothing. Segments are never
    empty.
    """

    segments: tuple[tuple[int, ...], ...]
    parents: tuple[Parent, ...]

    @property
    def rows(self) -> int:
        return len(self.segments)

    @property
    def width(self) -> int:
        return max((len(s) for s in self.segments), default=0)

    @property
    def tokens(self) -> int:
        """Tokens actually run (padding excluded)."""
        return sum(len(s) for s in self.segments)


@dataclass(frozen=True)
class Batch:
    """A planned batch.

    Attributes
    ----------
    passes : tuple of Pass
        In run order; every parent is in an earlier pass.
    units : tuple of int
        The units of the batch.
    leaves : tuple of (int, int)
        For each unit, the ``(pass, row)`` of its leaf row.
    cuts : tuple of int
        For each unit, how many of its leading tokens its ancestors ran: the
        unit's token ``p`` sits at index ``p - cut`` of its leaf segment.
    jobs : tuple of int
        Jobs with units in this batch, in order.
    complete : tuple of int
        Jobs whose last unit is in this batch.
    cost : int
        Largest pass footprint, in tokens.
    """

    passes: tuple[Pass, ...]
    units: tuple[int, ...]
    leaves: tuple[tuple[int, int], ...]
    cuts: tuple[int, ...]
    jobs: tuple[int, ...]
    complete: tuple[int, ...]
    cost: int

    @property
    def tokens_run(self) -> int:
        return sum(p.tokens for p in self.passes)

    @property
    def tokens_padded(self) -> int:
        return sum(p.rows * p.width for p in self.passes)


def lcp(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two sequences.

    >>> lcp((1, 2, 3), (1, 2, 4, 5))
    2
    """
    n = min(len(a), len(b))
    i = 0
    # compare in strides first: shared prefixes are long (task descriptions, row texts)
    step = 64
    while i + step <= n and a[i : i + step] == b[i : i + step]:
        i += step
    while i < n and a[i] == b[i]:
        i += 1
    return i


def trie_tokens(sequences: Iterable[Sequence[int]]) -> int:
    """Tokens in the prefix trie of ``sequences``: the fewest any plan must run to see them all.

    Sorted lexicographically, each sequence adds the tokens beyond its
    longest common prefix with the sequence before it.

    >>> trie_tokens([(1, 2, 3), (1, 2, 4), (1, 2, 3), (5,)])
    5
    """
    total, prev = 0, ()
    for seq in sorted({tuple(s) for s in sequences}):
        total += len(seq) - lcp(prev, seq)
        prev = seq
    return total


@dataclass(frozen=True)
class _Item:
    """Consecutive units kept in one batch: a whole job, or a piece of a job too big for one batch."""

    units: tuple[int, ...]
    job: int
    complete: bool
    longest: int


def plan_batches(
    units: Sequence[Unit],
    *,
    batch_tokens: int,
    share_prefixes: bool = True,
    min_shared: int = 8,
    pass_overhead: int = 48,
) -> list[Batch]:
    """Group units into batches that fit ``batch_tokens``, sharing prefixes.

    Parameters
    ----------
    units : sequence of Unit
        The units of all jobs; a job's units are kept together.
    batch_tokens : int
        Budget for the largest pass footprint of a batch (see module docs).
    share_prefixes : bool, default True
        False gives single-pass batches of whole units sorted by length (the
        baseline without key/value reuse).
    min_shared : int, default 8
        A prefix is run as a node of its own only if that saves at least
        this many tokens (a row costs padding and bookkeeping).
    pass_overhead : int, default 48
        Cost of one more forward pass, in tokens; a level of the tree is cut
        into passes of similar widths when that saves more padding than this.

    Returns
    -------
    list of Batch
        Every unit appears in exactly one batch. The plan is a pure function
        of its inputs, so a resumed run rebuilds the same batches.

    Examples
    --------
    Two questions about each of two survey rows: the description is run once,
    each row once, then each question's tokens once per row (``pass_overhead=0``:
    at these tiny sizes a pass per level would not pay otherwise):

    >>> desc, rows, questions = (1, 2, 3, 4, 5, 6, 7, 8), [(20,) * 10, (30,) * 10], [(7, 8), (9, 8)]
    >>> prompts = [desc + row + q for row in rows for q in questions]
    >>> units = [Unit(job, p, len(p) - 1) for job, p in enumerate(prompts)]
    >>> (batch,) = plan_batches(units, batch_tokens=1000, pass_overhead=0)
    >>> for p in batch.passes:
    ...     print(p.segments, p.parents)
    ((1, 2, 3, 4, 5, 6, 7, 8),) (None,)
    ((20, 20, 20, 20, 20, 20, 20, 20, 20, 20), (30, 30, 30, 30, 30, 30, 30, 30, 30, 30)) ((0, 0), (0, 0))
    ((7, 8), (9, 8), (7, 8), (9, 8)) ((1, 0), (1, 0), (1, 1), (1, 1))
    >>> batch.tokens_run, sum(len(u.tokens) for u in units)
    (36, 80)
    """
    if batch_tokens < 1:
        raise ConfigError(
            f"batch_tokens must be >= 1, got {batch_tokens}", parameter="batch_tokens", value=batch_tokens
        )
    if min_shared < 1:
        raise ConfigError(f"min_shared must be >= 1, got {min_shared}", parameter="min_shared", value=min_shared)
    if pass_overhead < 0:
        raise ConfigError(
            f"pass_overhead must be >= 0, got {pass_overhead}", parameter="pass_overhead", value=pass_overhead
        )
    by_job: dict[int, list[int]] = {}
    for i, unit in enumerate(units):
        by_job.setdefault(unit.job, []).append(i)
    if not share_prefixes:
        return _plan_flat(units, by_job, batch_tokens)
    if not units:
        return []

    keys = [u.tokens[: u.shareable] for u in units]
    for members in by_job.values():
        members.sort(key=lambda m: (keys[m], m))
    # lexicographic order puts shared prefixes next to each other (a job sorts by its first key)
    order = sorted(by_job, key=lambda j: (keys[by_job[j][0]], j))
    # the prefix of everything planned together: the lcp of a set is that of its extremes
    first, last = min(keys), max(keys)
    n_global = lcp(first, last)
    glob = first[:n_global] if n_global >= min_shared else ()

    items = [item for job in order for item in _items(units, job, by_job[job], batch_tokens)]
    # tokens the item shares with the one before it: cutting a batch there runs them twice
    links = [0] + [lcp(keys[items[i - 1].units[-1]], keys[items[i].units[0]]) for i in range(1, len(items))]
    batches: list[Batch] = []
    start = 0
    while start < len(items):
        # the leaf level dominates a batch's cost: rows * longest unit estimates it
        stop, rows, longest = start, 0, 0
        while stop < len(items):
            rows_next, longest_next = rows + len(items[stop].units), max(longest, items[stop].longest)
            if stop > start and rows_next * longest_next > batch_tokens:
                break
            rows, longest, stop = rows_next, longest_next, stop + 1
        if stop < len(items):  # end the batch at the weakest link among its last quarter
            lowest = start + max(1, -(-3 * (stop - start) // 4))
            stop = min(range(lowest, stop + 1), key=lambda c: (links[c], -c))
        while True:  # padding can make the real cost exceed the estimate: give back the last item
            batch = _Tree(units, items[start:stop], glob, min_shared).plan(pass_overhead)
            if batch.cost <= batch_tokens or stop - start == 1:
                break
            stop -= 1
        batches.append(batch)
        start = stop
    return batches


def _items(units: Sequence[Unit], job: int, members: list[int], budget: int) -> list[_Item]:
    """A job as one item, or in pieces (by units) when it alone exceeds the budget."""

    def size(ms: Sequence[int]) -> int:
        return max(len(units[m].tokens) for m in ms)

    if len(members) * size(members) <= budget:
        return [_Item(tuple(members), job, True, size(members))]
    pieces: list[list[int]] = [[]]
    for m in members:
        trial = [*pieces[-1], m]
        if pieces[-1] and len(trial) * size(trial) > budget:
            pieces.append([m])
        else:
            pieces[-1] = trial
    return [_Item(tuple(p), job, k == len(pieces) - 1, size(p)) for k, p in enumerate(pieces)]


class _Tree:
    """The prefix tree of one batch's units and the passes that run it."""

    def __init__(self, units: Sequence[Unit], items: Sequence[_Item], glob: tuple[int, ...], min_shared: int) -> None:
        self.units = units
        self.items = items
        members = sorted(
            (u for it in items for u in it.units), key=lambda u: (units[u].tokens[: units[u].shareable], u)
        )
        self.members = members
        # node 0 is the empty root; a node is a prefix length shared by the units below it
        self.depth = [0]
        self.children: list[list[int]] = [[]]
        self.attached: list[list[int]] = [[]]  # units whose shareable key ends at this node
        self.rep = [members[0]]  # a unit below the node, to read its tokens from
        self._build()
        self.forced = self._force(len(glob)) if glob else -1
        self.min_shared = min_shared

    def _node(self, depth: int, rep: int) -> int:
        self.depth.append(depth)
        self.children.append([])
        self.attached.append([])
        self.rep.append(rep)
        return len(self.depth) - 1

    def _build(self) -> None:
        """Radix tree of the sorted keys: each key adds the part beyond its lcp with the previous one."""
        units = self.units
        stack = [0]
        prev: tuple[int, ...] | None = None
        for u in self.members:
            key = units[u].tokens[: units[u].shareable]
            shared = 0 if prev is None else lcp(prev, key)
            popped = -1
            while self.depth[stack[-1]] > shared:
                popped = stack.pop()
            top = stack[-1]
            if self.depth[top] < shared:  # the branch point lies inside the popped node's edge: split it
                mid = self._node(shared, u)
                self.children[top][self.children[top].index(popped)] = mid
                self.children[mid].append(popped)
                stack.append(mid)
                top = mid
            if len(key) > shared:
                node = self._node(len(key), u)
                self.children[top].append(node)
                stack.append(node)
                top = node
            self.attached[top].append(u)
            prev = key

    def _force(self, depth: int) -> int:
        """The node at ``depth`` on the path every unit shares (made if it falls inside an edge)."""
        (child,) = self.children[0]  # every key starts with the global prefix, so the root has one child
        if self.depth[child] == depth:
            return child
        mid = self._node(depth, self.rep[child])
        self.children[0] = [mid]
        self.children[mid] = [child]
        return mid

    def _anchors(self, excluded: set[int]) -> tuple[dict[int, int], dict[int, int]]:
        """Which nodes run as rows of their own, and the nearest such ancestor (0: none) of each row.

        A node runs on its own when it is where the units branch and that
        saves ``min_shared`` tokens; ``excluded`` nodes never do (their tokens
        are run by each of their children instead).
        """
        node_anchor: dict[int, int] = {}
        unit_anchor: dict[int, int] = {}
        todo = [(0, 0)]
        while todo:
            v, anchor = todo.pop()
            for u in self.attached[v]:
                unit_anchor[u] = anchor
            for c in self.children[v]:
                branches = len(self.children[c]) + len(self.attached[c])
                edge = self.depth[c] - self.depth[anchor]
                worth = branches >= 2 and (branches - 1) * edge >= self.min_shared and c not in excluded
                if c == self.forced or worth:
                    node_anchor[c] = anchor
                    todo.append((c, c))
                else:
                    todo.append((c, anchor))
        return node_anchor, unit_anchor

    def _segment(self, anchor: int, node: int) -> tuple[int, ...]:
        return self.units[self.rep[node]].tokens[self.depth[anchor] : self.depth[node]]

    def _levels(self, excluded: set[int]) -> list[list[tuple[str, int, tuple[int, ...], int]]]:
        """Rows by level, levelled from the bottom: leaves last, each node one level above its highest child.

        A row is ``(kind, id, segment, anchor)``, kind ``"node"`` or ``"unit"``.
        """
        node_anchor, unit_anchor = self._anchors(excluded)
        height: dict[int, int] = {}
        for v in sorted(node_anchor, key=lambda v: -self.depth[v]):  # children before their anchors
            height[v] = max(height.get(v, 1), 1)
            a = node_anchor[v]
            if a:
                height[a] = max(height.get(a, 1), height[v] + 1)
        top = max(height.values(), default=0)
        levels: list[list[tuple[str, int, tuple[int, ...], int]]] = [[] for _ in range(top + 1)]
        for v, a in node_anchor.items():
            levels[top - height[v]].append(("node", v, self._segment(a, v), a))
        for u in self.members:
            a = unit_anchor[u]
            levels[top].append(("unit", u, self.units[u].tokens[self.depth[a] :], a))
        for level in levels:
            level.sort(key=lambda r: (len(r[2]), r[0], r[1]))
        return levels

    def _modelled(self, levels: list[list[tuple[str, int, tuple[int, ...], int]]], overhead: int) -> int:
        """Modelled run time, in tokens: padded tokens plus ``overhead`` per pass (the global pass is free: kept)."""
        total = 0
        for level in levels:
            if len(level) == 1 and level[0][1] == self.forced:
                continue
            lengths = [len(r[2]) for r in level]
            for group in _split_by_width(lengths, overhead):
                total += len(group) * lengths[group[-1]] + overhead
        return total

    def plan(self, pass_overhead: int) -> Batch:
        """Lay the tree out in passes, dropping whole levels of nodes while that lowers the modelled time."""
        excluded: set[int] = set()
        levels = self._levels(excluded)
        best = self._modelled(levels, pass_overhead)
        while True:
            trials = []
            for level in levels[:-1]:
                drop = {r[1] for r in level if r[1] != self.forced}
                if drop:
                    trial = self._levels(excluded | drop)
                    trials.append((self._modelled(trial, pass_overhead), len(trials), drop, trial))
            if not trials:
                break
            cost, _, drop, trial = min(trials, key=lambda t: t[:2])
            if cost >= best:
                break
            best, levels = cost, trial
            excluded |= drop
        return self._batch(levels, pass_overhead)

    def _batch(self, levels: list[list[tuple[str, int, tuple[int, ...], int]]], pass_overhead: int) -> Batch:
        passes: list[Pass] = []
        where: dict[int, tuple[int, int]] = {}  # node -> (pass, row)
        leaf_of: dict[int, tuple[int, int]] = {}
        cut_of: dict[int, int] = {}
        for level in levels:
            for group in _split_by_width([len(r[2]) for r in level], pass_overhead):
                rows = [level[i] for i in group]
                k = len(passes)
                for row, (kind, ident, _, a) in enumerate(rows):
                    if kind == "node":
                        where[ident] = (k, row)
                    else:
                        leaf_of[ident] = (k, row)
                        cut_of[ident] = self.depth[a]
                passes.append(Pass(tuple(r[2] for r in rows), tuple(where[r[3]] if r[3] else None for r in rows)))

        order = [u for it in self.items for u in it.units]
        jobs = tuple(dict.fromkeys(it.job for it in self.items))
        complete = tuple(it.job for it in self.items if it.complete)
        return Batch(
            tuple(passes),
            tuple(order),
            tuple(leaf_of[u] for u in order),
            tuple(cut_of[u] for u in order),
            jobs,
            complete,
            _cost(passes),
        )


def _split_by_width(lengths: Sequence[int], overhead: int) -> list[list[int]]:
    """Cut rows sorted by length into runs minimising padded tokens plus ``overhead`` per run.

    Cuts fall only between distinct lengths (an exact dynamic programme over
    them), so the work is quadratic in the number of distinct lengths, not rows.

    >>> _split_by_width([5, 5, 6, 100, 100], overhead=10)
    [[0, 1, 2], [3, 4]]
    >>> _split_by_width([5, 5, 6, 100, 100], overhead=1000)
    [[0, 1, 2, 3, 4]]
    """
    if not lengths:
        return []
    # runs of equal length: (first index, end index, length)
    runs: list[tuple[int, int, int]] = []
    for i, n in enumerate(lengths):
        if runs and runs[-1][2] == n:
            runs[-1] = (runs[-1][0], i + 1, n)
        else:
            runs.append((i, i + 1, n))
    best = [0.0] + [float("inf")] * len(runs)
    cut = [0] * (len(runs) + 1)
    for j in range(1, len(runs) + 1):
        width = runs[j - 1][2]
        for i in range(j):
            cost = best[i] + (runs[j - 1][1] - runs[i][0]) * width + overhead
            if cost < best[j]:
                best[j], cut[j] = cost, i
    groups: list[list[int]] = []
    j = len(runs)
    while j:
        i = cut[j]
        groups.append(list(range(runs[i][0], runs[j - 1][1])))
        j = i
    return groups[::-1]


def _cost(passes: Sequence[Pass]) -> int:
    """Largest pass footprint: rows times (widest past + width); a row's past is its parent's whole cache."""
    cached: list[int] = []  # cache width of each pass (its past plus its own width)
    cost = 0
    for p in passes:
        past = max((cached[a[0]] for a in p.parents if a is not None), default=0)
        cached.append(past + p.width)
        cost = max(cost, p.rows * (past + p.width))
    return cost


def _plan_flat(units: Sequence[Unit], by_job: dict[int, list[int]], budget: int) -> list[Batch]:
    """Baseline: whole units, jobs sorted by length, one pass per batch."""

    def longest(members: Sequence[int]) -> int:
        return max(len(units[m].tokens) for m in members)

    order = sorted(by_job, key=lambda j: (longest(by_job[j]), j))
    batches: list[Batch] = []
    rows: list[int] = []
    jobs: list[int] = []
    complete: list[int] = []

    def flush() -> None:
        if rows:
            segs = tuple(units[u].tokens for u in rows)
            cost = len(rows) * max(len(s) for s in segs)
            n = len(rows)
            batch = Batch(
                (Pass(segs, (None,) * n),),
                tuple(rows),
                tuple((0, r) for r in range(n)),
                (0,) * n,
                tuple(jobs),
                tuple(complete),
                cost,
            )
            batches.append(batch)
            rows.clear()
            jobs.clear()
            complete.clear()

    for job in order:
        members = by_job[job]
        if len(members) * longest(members) > budget:  # too big alone: its own batches, split by units
            flush()
            for u in members:
                if rows and (len(rows) + 1) * longest([*rows, u]) > budget:
                    if not jobs:
                        jobs.append(job)
                    flush()
                rows.append(u)
            jobs.append(job)
            complete.append(job)
            flush()
            continue
        if rows and (len(rows) + len(members)) * longest([*rows, *members]) > budget:
            flush()
        rows.extend(members)
        jobs.append(job)
        complete.append(job)
    flush()
    return batches
