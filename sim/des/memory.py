"""Freed memory kept for the next block: glibc's malloc told not to hand it back at once.

A block's pass makes a hundred-odd arrays the size of the block and frees them.
glibc maps arrays above a threshold one by one and unmaps them when freed, and
returns the free memory at the top of its heap to the system once it passes
another; both thresholds adapt to the largest block freed so far, and the
pass's arrays keep falling on the wrong side of them, so each block faults its
pages in again (3,000-3,500 minor faults per 5,000 rollouts of one agent, a
tenth of its CPU).  ``keep_freed_memory`` sets both once per process
(``mallopt``): arrays below 32 MB come from the heap, which keeps up to 64 MB
free for the next block.  Elsewhere than glibc it does nothing.
"""

from __future__ import annotations

import ctypes
from functools import cache

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
"""The two parameters' numbers in glibc's malloc.h."""
_HEAP_BELOW_BYTES = 32 << 20
_KEPT_FREE_BYTES = 64 << 20


@cache
def keep_freed_memory() -> bool:
    """Keep freed memory in the heap for what the process allocates next; True where the
    allocator took the settings (glibc), False where it has no ``mallopt``."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):
        return False
    mapped = mallopt(_M_MMAP_THRESHOLD, _HEAP_BELOW_BYTES)
    kept = mallopt(_M_TRIM_THRESHOLD, _KEPT_FREE_BYTES)
    return bool(mapped) and bool(kept)
