"""Arithmetic written over temporaries: the same numbers as the plain expression, fewer arrays.

A cost formula over every turn of a block makes a temporary at each step of
its plain expression; each one is a fresh array of the block's size, and
allocating and touching those is most of what the formula costs.  These
functions do one step of such an expression (the same operation on the same
operands, so the same bits) and write the result over the left operand when
it is a temporary the caller made (never an input) and has the result's shape;
otherwise they make a new array, as the plain expression would.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

_FLOAT = np.dtype(np.float64)


def total(terms: Iterable[np.ndarray]) -> np.ndarray:
    """``terms`` added in order, as ``sum`` adds them (starting from zero)."""
    added: np.ndarray = np.zeros(())
    for term in terms:
        added = add_to(added, term)
    return added


def add_to(sum_so_far: np.ndarray, term: np.ndarray | float) -> np.ndarray:
    """``sum_so_far + term``, over ``sum_so_far`` where it fits."""
    return _over(np.add, sum_so_far, term)


def subtract_from(difference_so_far: np.ndarray, term: np.ndarray | float) -> np.ndarray:
    """``difference_so_far - term``, over ``difference_so_far`` where it fits."""
    return _over(np.subtract, difference_so_far, term)


def multiply_by(product_so_far: np.ndarray, factor: np.ndarray | float) -> np.ndarray:
    """``product_so_far * factor``, over ``product_so_far`` where it fits."""
    return _over(np.multiply, product_so_far, factor)


def divide_by(quotient_so_far: np.ndarray, divisor: np.ndarray | float) -> np.ndarray:
    """``quotient_so_far / divisor``, over ``quotient_so_far`` where it fits."""
    return _over(np.divide, quotient_so_far, divisor)


def positive_part(margin: np.ndarray) -> np.ndarray:
    """``np.maximum(0.0, margin)``, over ``margin`` where it fits."""
    if type(margin) is np.ndarray and margin.dtype == _FLOAT:
        return np.maximum(0.0, margin, out=margin)
    return np.maximum(0.0, margin)


def _over(operation: np.ufunc, left: np.ndarray, right: np.ndarray | float) -> np.ndarray:
    owned = type(left) is np.ndarray and left.dtype == _FLOAT
    if owned and getattr(right, "shape", ()) in ((), left.shape):
        return operation(left, right, out=left)
    return operation(left, right)
