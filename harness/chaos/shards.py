"""Sharded campaigns: one campaign's examples split over N CI jobs, none repeated, none left out.

A campaign of ``E`` examples with seed ``S`` is a fixed list of *blocks*: block ``b`` is a Hypothesis run of
at most :data:`BLOCK_EXAMPLES` examples seeded by :func:`block_seed` ``(S, b)`` (block 0 by ``S`` itself, so a
campaign of 10 examples or fewer is one plain Hypothesis run). The blocks depend on ``S`` and ``E`` only, never
on the number of shards: shard ``I/N`` runs the blocks ``b`` with ``b % N == I - 1``, an unsharded campaign
runs them all in order, so the union of the N shards' examples is the unsharded campaign's example set
(:func:`shard_blocks` is a partition of :func:`campaign_blocks`). Seeded Hypothesis draws the same examples
for the same seed, so the partition holds for the schedules too, up to the first violation (a block that
finds one stops there and shrinks, as an unsharded campaign would).

Pure: no Spark, no Hypothesis.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Examples per block: a campaign of E examples has ceil(E / 10) blocks, the most shards that get work.
BLOCK_EXAMPLES = 10
MASK31 = (1 << 31) - 1


def block_seed(seed: int, index: int) -> int:
    """Hypothesis seed of block (or parallel worker) ``index``: ``seed`` itself for index 0."""
    return seed if index == 0 else (seed * 1_000_003 + index * 7_919) & MASK31


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``: ``1/2`` and ``2/2`` are the two halves of a campaign."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1 or not 1 <= self.index <= self.count:
            raise ValueError(f"shard {self.index}/{self.count}: give I/N with 1 <= I <= N (e.g. 1/4 ... 4/4)")

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"I/N"`` (``1/2``); ``ValueError`` naming the expected form otherwise."""
        try:
            index, count = (int(part) for part in text.strip().split("/"))
        except ValueError:
            raise ValueError(f"--shard {text!r}: give I/N, two whole numbers such as 1/4 (shard 1 of 4)") from None
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def owns(self, block: int) -> bool:
        """Whether block ``block`` (0-based) is this shard's."""
        return block % self.count == self.index - 1


@dataclass(frozen=True)
class Block:
    """Block ``index`` of a campaign: ``examples`` Hypothesis examples drawn with seed ``seed``."""

    index: int
    seed: int
    examples: int


def campaign_blocks(seed: int, examples: int) -> list[Block]:
    """Every block of a campaign of ``examples`` examples seeded ``seed``, in order (none empty)."""
    if examples < 1:
        raise ValueError("a campaign has at least 1 example")
    starts = range(0, examples, BLOCK_EXAMPLES)
    return [Block(i, block_seed(seed, i), min(BLOCK_EXAMPLES, examples - start)) for i, start in enumerate(starts)]


def shard_blocks(seed: int, examples: int, shard: Shard | None) -> list[Block]:
    """The blocks shard ``shard`` runs (all of them for ``None``); empty when the campaign has fewer blocks
    than ``shard.index``."""
    blocks = campaign_blocks(seed, examples)
    return blocks if shard is None else [b for b in blocks if shard.owns(b.index)]


def idle_shard_message(examples: int, shard: Shard) -> str:
    """Why shard ``shard`` of a campaign of ``examples`` examples has nothing to run, and what to give instead."""
    blocks = len(campaign_blocks(1, examples))
    return (
        f"shard {shard} has no examples: a campaign of {examples} example(s) is {blocks} block(s) of up to "
        f"{BLOCK_EXAMPLES}, split over at most {blocks} shard(s); give --examples {BLOCK_EXAMPLES * shard.count} "
        f"or more for {shard.count} shards"
    )
