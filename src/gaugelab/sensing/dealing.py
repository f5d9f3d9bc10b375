"""How a sensing experiment's runs are dealt over jobs, in whole seeds. Torch-free, so that a job
with nothing to train (its reruns all taken, or no chaotic cell) starts without importing it."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from functools import cache
from typing import TypeVar

T = TypeVar("T")


def deal(cells: Sequence[T], shards: int, *, seed: Callable[[T], Hashable],
         method: Callable[[T], Hashable]) -> list[list[T]]:
    """Split cells into ``shards`` jobs, each holding whole seeds, as near equal in size as whole
    seeds allow (more shards than seeds leave the rest empty).

    A batch streams the measurement matrix of every seed it holds at every step, however few of
    its runs use it, so a seed cut between two jobs would be streamed by both: no job shares a
    seed with another. Within a job the methods are interleaved seed by seed (each method's first
    cell, then each one's second, ...). Under the portable numerics which job a run lands in never
    changes its record (testbed.Layout).
    """
    seeds = list(dict.fromkeys(seed(c) for c in cells))
    rank, taken = [], {}  # rank: how many cells of the same seed and method come before
    for c in cells:
        key = (seed(c), method(c))
        rank.append(taken.get(key, 0))
        taken[key] = rank[-1] + 1
    ordered = [cells[i] for i in sorted(range(len(cells)), key=lambda i: (seeds.index(seed(cells[i])), rank[i]))]
    sizes = [sum(1 for c in cells if seed(c) == s) for s in seeds]
    ends = _balanced_cuts(sizes, shards)
    return [ordered[sum(sizes[:start]) : sum(sizes[:end])] for start, end in zip([0, *ends], ends)]


def _balanced_cuts(sizes: list[int], shards: int) -> list[int]:
    """Where to cut a row of seeds (their cell counts) into ``shards`` contiguous groups, the
    largest group as small as possible, earlier groups the larger on ties: the end index of each
    group (groups past the last seed are empty)."""
    @cache
    def best(i: int, k: int) -> tuple[int, tuple[int, ...]]:  # seeds i.. in k groups: (largest, ends)
        if k == 1 or i == len(sizes):
            return sum(sizes[i:]), (len(sizes),) * k
        options = []
        for end in range(len(sizes), i, -1):  # the first group as long as possible first
            rest, ends = best(end, k - 1)
            options.append((max(sum(sizes[i:end]), rest), (end, *ends)))
        return min(options, key=lambda o: o[0])

    return list(best(0, shards)[1])
