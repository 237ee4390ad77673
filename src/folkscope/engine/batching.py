"""Plan forward passes: shared-prefix trees and token-budget batches.

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
    Up to three passes: a *global* pass (the longest prefix shared by every
    unit of the batch, e.g. the task description, run once), a *cluster*
    pass (one row per group of units sharing a longer prefix, e.g. a row's
    text shared by its answer orderings), and the *leaf* pass (the rest of
    every unit). Each pass continues the key/value cache of the previous one.

Cost model
----------
The footprint of a pass is ``rows * (past length + segment length)`` tokens
(memory grows with every cached key/value, not only with new tokens); a
batch's cost is its largest pass, and ``batch_tokens`` bounds it. The naive
path's footprint, ``rows * padded prompt length``, is the same measure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from folkscope.errors import ConfigError

__all__ = ["Batch", "Pass", "Unit", "lcp", "plan_batches"]

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
        ``len(tokens) - 1`` so the positions read stay in the leaf pass.
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
    """One forward pass: a segment of tokens per row, continuing a row of the previous pass.

    ``parents[i]`` is the row of the previous pass whose cache row ``i``
    extends (all zeros for the pass after the single-row global pass; empty
    for the first pass, which has no past).
    """

    segments: tuple[tuple[int, ...], ...]
    parents: tuple[int, ...] = ()

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
        Shared passes outermost first, then the leaf pass (always last).
    units : tuple of int
        Unit index of each leaf row.
    cuts : tuple of int
        For each leaf row, how many of the unit's leading tokens earlier passes
        ran: the unit's token ``p`` sits at index ``p - cut`` of its leaf segment.
    jobs : tuple of int
        Jobs with units in this batch, in order.
    complete : tuple of int
        Jobs whose last unit is in this batch.
    cost : int
        Largest pass footprint, in tokens.
    """

    passes: tuple[Pass, ...]
    units: tuple[int, ...]
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


@dataclass
class _Cluster:
    units: list[int]
    jobs: list[int]
    prefix: tuple[int, ...]  # tokens shared by every unit of the cluster
    max_leaf: int  # longest unit length beyond the prefix
    max_len: int
    partial_job: int | None = None  # set on a piece of a job too big for one batch

    @property
    def cost(self) -> int:
        return len(self.units) * (len(self.prefix) + self.max_leaf)


def _cluster_cost(n_units: int, plen: int, max_leaf_after: int) -> int:
    return n_units * (plen + max_leaf_after)


def _families(clusters: list[_Cluster], min_shared: int) -> list[list[_Cluster]]:
    """Split sorted clusters into runs that share a long prefix (tight, recursively)."""

    def split(run: list[_Cluster]) -> list[list[_Cluster]]:
        if len(run) < 3:
            return [run]
        links = [lcp(run[i - 1].prefix, run[i].prefix) for i in range(1, len(run))]
        weakest = min(links)
        typical = sorted(links)[len(links) // 2]
        if weakest >= min_shared and weakest * 2 >= typical:
            return [run]
        # cut at the weakest links and look inside each piece again
        out: list[list[_Cluster]] = []
        start = 0
        for i, link in enumerate(links, start=1):
            if link == weakest:
                out.extend(split(run[start:i]))
                start = i
        out.extend(split(run[start:]))
        return out

    return split(clusters) if clusters else []


def plan_batches(
    units: Sequence[Unit],
    *,
    batch_tokens: int,
    share_prefixes: bool = True,
    min_shared: int = 8,
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
        Shared prefixes shorter than this are not worth a pass of their own.

    Returns
    -------
    list of Batch
        Every unit appears in exactly one batch. The plan is a pure function
        of its inputs, so a resumed run rebuilds the same batches.
    """
    if batch_tokens < 1:
        raise ConfigError(f"batch_tokens must be >= 1, got {batch_tokens}", parameter="batch_tokens", value=batch_tokens)
    by_job: dict[int, list[int]] = {}
    for i, unit in enumerate(units):
        by_job.setdefault(unit.job, []).append(i)
    if not share_prefixes:
        return _plan_flat(units, by_job, batch_tokens)

    # 1. one prefix per job: the tokens all its units may share
    job_prefix: dict[int, tuple[int, ...]] = {}
    for job, members in by_job.items():
        first = units[members[0]]
        prefix = first.tokens[: first.shareable]
        for m in members[1:]:
            other = units[m]
            prefix = prefix[: lcp(prefix, other.tokens[: other.shareable])]
        job_prefix[job] = prefix
    # 2. lexicographic order puts shared prefixes next to each other
    order = sorted(by_job, key=lambda j: job_prefix[j])

    # 3. greedy clusters of adjacent jobs, merged while that saves tokens and fits the budget
    def new_cluster(job: int) -> _Cluster:
        prefix = job_prefix[job]
        members = by_job[job]
        lengths = [len(units[m].tokens) for m in members]
        return _Cluster(list(members), [job], prefix, max(lengths) - len(prefix), max(lengths))

    clusters: list[_Cluster] = []
    for job in order:
        cand = new_cluster(job)
        if clusters:
            cur = clusters[-1]
            shared = lcp(cur.prefix, cand.prefix)
            n, n_new = len(cur.units), len(cand.units)
            merged_saving = (n + n_new - 1) * shared
            separate_saving = (n - 1) * len(cur.prefix) + (n_new - 1) * len(cand.prefix)
            max_len = max(cur.max_len, cand.max_len)
            merged_cost = _cluster_cost(n + n_new, shared, max_len - shared)
            if shared > 0 and merged_saving > separate_saving and merged_cost <= batch_tokens:
                cur.units.extend(cand.units)
                cur.jobs.extend(cand.jobs)
                cur.prefix = cur.prefix[:shared]
                cur.max_len = max_len
                cur.max_leaf = max_len - shared
                continue
        clusters.append(cand)

    # 4. within a family sharing a long prefix, sort by length so batches pad little;
    #    runs of clusters that share nothing worth keeping are sorted by length together
    ordered: list[_Cluster] = []
    loose: list[_Cluster] = []

    def by_length(group: list[_Cluster]) -> list[_Cluster]:
        return sorted(group, key=lambda c: (c.max_len, len(c.units)))

    for family in _families(clusters, min_shared):
        if len(family) == 1:
            loose.extend(family)
            continue
        ordered.extend(by_length(loose))
        loose = []
        ordered.extend(by_length(family))
    ordered.extend(by_length(loose))

    # 5. pack clusters into batches under the budget
    batches: list[Batch] = []
    current: list[_Cluster] = []

    def cost_of(group: list[_Cluster]) -> int:
        n_c = len(group)
        n_u = sum(len(c.units) for c in group)
        max_p = max(len(c.prefix) for c in group)
        max_leaf = max(c.max_len - len(c.prefix) for c in group)
        return max(n_c * max_p, n_u * (max_p + max_leaf))

    for cluster in ordered:
        if cluster.cost > batch_tokens:
            if current:
                batches.append(_build(units, current, min_shared))
                current = []
            batches.extend(_split_oversized(units, cluster, batch_tokens, min_shared))
            continue
        if current and cost_of([*current, cluster]) > batch_tokens:
            batches.append(_build(units, current, min_shared))
            current = []
        current.append(cluster)
    if current:
        batches.append(_build(units, current, min_shared))
    return batches


def _split_oversized(units: Sequence[Unit], cluster: _Cluster, budget: int, min_shared: int) -> list[Batch]:
    """A cluster too big for one batch: split at job boundaries, a too-big job at unit boundaries."""
    out: list[Batch] = []
    pieces: list[_Cluster] = []
    for job in cluster.jobs:
        members = [u for u in cluster.units if units[u].job == job]
        chunk: list[int] = []
        for u in members:
            trial = [*chunk, u]
            longest = max(len(units[m].tokens) for m in trial)
            if chunk and len(trial) * longest > budget:
                pieces.append(_piece(units, chunk, job, final=False))
                chunk = []
            chunk.append(u)
        pieces.append(_piece(units, chunk, job, final=True))
    group: list[_Cluster] = []
    for piece in pieces:
        trial = [*group, piece]
        longest = max(c.max_len for c in trial)
        if group and sum(len(c.units) for c in trial) * longest > budget:
            out.append(_build(units, group, min_shared))
            group = []
        group.append(piece)
    if group:
        out.append(_build(units, group, min_shared))
    return out


def _piece(units: Sequence[Unit], members: list[int], job: int, *, final: bool) -> _Cluster:
    first = units[members[0]]
    prefix = first.tokens[: first.shareable]
    for m in members[1:]:
        prefix = prefix[: lcp(prefix, units[m].tokens[: units[m].shareable])]
    longest = max(len(units[m].tokens) for m in members)
    return _Cluster(list(members), [job] if final else [], prefix, longest - len(prefix), longest, partial_job=job)


def _build(units: Sequence[Unit], clusters: list[_Cluster], min_shared: int) -> Batch:
    """Turn clusters into passes: global prefix, cluster prefixes (if worth it), leaves."""
    prefixes = [c.prefix for c in clusters]
    glob = prefixes[0]
    for p in prefixes[1:]:
        glob = glob[: lcp(glob, p)]
    g = len(glob)
    n_units = sum(len(c.units) for c in clusters)
    use_global = g >= min_shared and n_units > 1
    if not use_global:
        g = 0
    # cluster pass only if it saves tokens beyond the global prefix and no first-pass row would be empty
    saving = sum((len(c.units) - 1) * (len(c.prefix) - g) for c in clusters)
    use_clusters = saving >= min_shared and (g > 0 or all(len(c.prefix) > 0 for c in clusters))
    passes: list[Pass] = []
    if use_global:
        passes.append(Pass((glob,)))
    if use_clusters:
        parents = (0,) * len(clusters) if use_global else ()
        passes.append(Pass(tuple(c.prefix[g:] for c in clusters), parents))
    leaf_segments: list[tuple[int, ...]] = []
    leaf_parents: list[int] = []
    leaf_units: list[int] = []
    cuts: list[int] = []
    for row, cluster in enumerate(clusters):
        cut = len(cluster.prefix) if use_clusters else g
        for u in cluster.units:
            leaf_segments.append(units[u].tokens[cut:])
            leaf_parents.append(row if use_clusters else 0)
            leaf_units.append(u)
            cuts.append(cut)
    passes.append(Pass(tuple(leaf_segments), tuple(leaf_parents) if passes else ()))
    jobs: list[int] = []
    complete: list[int] = []
    for cluster in clusters:
        if cluster.partial_job is not None and cluster.partial_job not in jobs:
            jobs.append(cluster.partial_job)
        for job in cluster.jobs:
            if job not in jobs:
                jobs.append(job)
            complete.append(job)
    cost = max(p.rows * (_past(passes, k) + p.width) for k, p in enumerate(passes))
    return Batch(tuple(passes), tuple(leaf_units), tuple(cuts), tuple(jobs), tuple(complete), cost)


def _past(passes: list[Pass], k: int) -> int:
    return sum(p.width for p in passes[:k])


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
            batches.append(Batch((Pass(segs),), tuple(rows), (0,) * len(rows), tuple(jobs), tuple(complete), cost))
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
