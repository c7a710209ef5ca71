"""``choose`` against numpy's ``Generator.choice``: the same indices, and the stream left
where numpy leaves it."""

from __future__ import annotations

import numpy as np
import pytest

from models.distributions.choosing import choose

PROBABILITIES = {
    "one": [1.0],
    "two": [0.85, 0.15],
    "tools": [0.35, 0.25, 0.3, 0.1],
    "a zero inside and at the end": [0.2, 0.0, 0.5, 0.3, 0.0],
    "not normalised by a hair": [0.1, 0.2, 0.3, 0.4 + 1e-12],
    "many (searched)": list(np.linspace(1.0, 2.0, 40) / np.linspace(1.0, 2.0, 40).sum()),
}


@pytest.mark.parametrize("name", PROBABILITIES)
@pytest.mark.parametrize("size", [0, 1, 257, 30_000])
def test_choose_gives_numpys_choices(name: str, size: int) -> None:
    p = np.asarray(PROBABILITIES[name])
    ours, numpys = np.random.default_rng(11), np.random.default_rng(11)
    mine = choose(ours, p, size)
    theirs = numpys.choice(len(p), size, p=p)
    assert mine.dtype == theirs.dtype
    assert mine.tolist() == theirs.tolist()
    assert ours.random() == numpys.random()


def test_uniforms_on_a_bound_go_to_the_next_choice() -> None:
    """searchsorted's side right: a uniform equal to a cumulative probability is past it."""

    class OnTheBounds:
        def random(self, size: int) -> np.ndarray:
            return np.array([0.0, 0.25, 0.5, 0.75])[:size]

    p = np.array([0.25, 0.25, 0.25, 0.25])
    assert choose(OnTheBounds(), p, 4).tolist() == [0, 1, 2, 3]  # type: ignore[arg-type]
