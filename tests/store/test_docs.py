"""The examples in the store's docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "assay.store",
    "assay.store.database",
    "assay.store.metrics",
    "assay.store.records",
    "assay.store.schema",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0
