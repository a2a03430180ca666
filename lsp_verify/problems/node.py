"""The Node families, in the order the collector asks them (see the package's docstring).

The test runners' and linters' matchers read blocks they recognise by their own markers and
go before the generic families; a bare Node stack (`NodeStackMatcher`) is what is left of a
stack once they have claimed theirs, so it goes after them, just before the generic
`path:line:col:` matcher.
"""

from __future__ import annotations

from .ava import AvaMatcher
from .eslint import BiomeMatcher, EslintMatcher
from .matcher import Locator, Matcher
from .mocha import MochaMatcher
from .nodestack import NodeStackMatcher
from .nodetest import NodeTestMatcher
from .tap import TapMatcher

__all__ = [
    "AvaMatcher",
    "BiomeMatcher",
    "EslintMatcher",
    "MochaMatcher",
    "NodeStackMatcher",
    "NodeTestMatcher",
    "TapMatcher",
    "node_matchers",
]


def node_matchers(locator: Locator, runners: bool) -> list[Matcher]:
    """The runners' and linters' matchers (`runners`), else the bare stack's."""
    if not runners:
        return [NodeStackMatcher(locator)]
    return [
        MochaMatcher(locator),
        NodeTestMatcher(locator),
        TapMatcher(locator),
        AvaMatcher(locator),
        EslintMatcher(locator),
        BiomeMatcher(locator),
    ]
