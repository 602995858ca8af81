"""Every example in a docstring runs (STYLE.md: public functions have a short example)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import assay

# Airflow's modules are imported by tests/airflow's own process only: Airflow fixes its home and
# database at its first import and adds an INFO handler on stdout to the root logger, which would
# print into the output other tests of this worker read. That process runs their examples.
AIRFLOW = "assay.integrations.airflow"
MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(assay.__path__, "assay.")
    if ".migrations" not in info.name and info.name != "assay.__main__" and not info.name.startswith(AIRFLOW)
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(
    name: str, tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
