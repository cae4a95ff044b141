"""Words around numbers, as the engine's `text.rs` writes them."""

from __future__ import annotations


def count_of(n: int, noun: str) -> str:
    """``1 request``, ``2,048 requests``: a count and its noun, plural unless the count is one."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
