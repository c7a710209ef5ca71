"""A sweep's points resolved and hashed a group at a time: the points that set the same paths.

A sweep's points mostly set the same paths (every point of a grid sets every
axis), each a key of a section (``inference.decode_tps``).  For such a group
what ``Points.scenario`` and ``Points.hash`` work out point by point is worked
out once: which sections each point replaces, where their texts go in the
hashed text and the digest of the text before them.  A point then costs its
sections (each distinct one validated once, as ``Points`` does), the rules
across sections and the digest of the text from its first replaced section on,
written from the sections' texts (each distinct one written once) and the
base's text between them.  A point the group path cannot do (a path that is
not a section's key, a value its section or the rules refuse, a section whose
text it cannot write) is left to ``Points``, which gives its error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from models.scenario import Scenario
from models.scenario_hash import HASH_DIGITS, HashAgainstBase
from sim.sweep.points import Points, own_keys


@dataclass(frozen=True)
class _Plan:
    """How a group of points that set ``paths`` is resolved and hashed."""

    sections: tuple[tuple[str, tuple[str, ...]], ...]
    """Each section set, in hashed order, with its paths."""
    head: Any
    """The digest of the hashed text before the first section set."""
    after: tuple[str, ...]
    """The hashed text after each section set, up to the next."""


class PointGroups:
    """``Points.scenario`` and ``Points.hash`` of many points at a time (the same scenarios
    and hashes)."""

    def __init__(self, points: Points) -> None:
        self.points = points
        self._plans: dict[tuple[str, ...], _Plan | None] = {}
        self._texts: dict[int, tuple[object, str]] = {}

    def resolve(self, batch: list[dict[str, Any]]) -> list[tuple[Scenario, str] | None]:
        """Each point's scenario and hash, or None for a point left to ``Points``."""
        found: list[tuple[Scenario, str] | None] = [None] * len(batch)
        hasher = self.points.hasher
        if hasher is None:
            return found
        groups: dict[tuple[str, ...], list[int]] = {}
        for index, assignments in enumerate(batch):
            groups.setdefault(tuple(assignments), []).append(index)
        for paths, indices in groups.items():
            plan = self._plan(paths, hasher)
            if plan is None:
                continue
            for index in indices:
                found[index] = self._point(batch[index], plan, hasher)
        return found

    def _point(
        self, assignments: dict[str, Any], plan: _Plan, hasher: HashAgainstBase
    ) -> tuple[Scenario, str] | None:
        sections: dict[str, Any] = {}
        texts: list[str] = []
        try:
            for (name, paths), after in zip(plan.sections, plan.after, strict=True):
                section = self.points.section(name, {path: assignments[path] for path in paths})
                sections[name] = section
                texts.append(self._text(name, section, hasher))
                texts.append(after)
            scenario = self.points.assembled(sections)
        except Exception:  # left to Points, which gives the whole scenario's message
            return None
        digest = plan.head.copy()
        digest.update("".join(texts).encode())
        return scenario, digest.hexdigest()[:HASH_DIGITS]

    def _text(self, name: str, section: object, hasher: HashAgainstBase) -> str:
        known = self._texts.get(id(section))
        if known is not None and known[0] is section:
            return known[1]
        text = hasher.section_text(name, section)
        if text is None:
            raise _Unwritten(name)
        if len(self._texts) >= _KEPT_TEXTS:
            self._texts.clear()
        self._texts[id(section)] = (section, text)
        return text

    def _plan(self, paths: tuple[str, ...], hasher: HashAgainstBase) -> _Plan | None:
        if paths not in self._plans:
            self._plans[paths] = _plan_of(paths, self.points.base_raw, hasher)
        return self._plans[paths]


def _plan_of(
    paths: tuple[str, ...], base_raw: dict[str, Any], hasher: HashAgainstBase
) -> _Plan | None:
    """The group's plan, if each path is a key of a section table of the base."""
    if not paths or own_keys(paths) is None:
        return None
    by_section: dict[str, list[str]] = {}
    for path in paths:
        by_section.setdefault(path.split(".", 1)[0], []).append(path)
    if not all(isinstance(base_raw.get(name), dict) for name in by_section):
        return None
    around = hasher.around(by_section)
    if around is None:
        return None
    head, after = around
    sections = tuple((name, tuple(by_section[name])) for name in hasher.in_key_order(by_section))
    return _Plan(sections, head, after)


class _Unwritten(Exception):
    """A section whose hashed text the group path cannot write."""


_KEPT_TEXTS = 4096
"""Texts of distinct sections a ``PointGroups`` keeps (then it starts again)."""
