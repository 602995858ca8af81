"""The import-linter contracts (pyproject.toml) name the CLI's modules one by one: import-linter has
no wildcard for ``assay._cli_*`` siblings of ``assay.cli``. A command module missing from a list
would be outside the rule that list states (nothing imports the CLI, the CLI is the top layer), so
every ``_cli_*.py`` module must be named in each of them."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import assay

SOURCE = Path(assay.__file__).parent
CONTRACTS = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["tool"]["importlinter"][
    "contracts"
]
# where each contract lists the CLI's modules
LISTS = {
    "layers": "layers",
    "leaves": "forbidden_modules",
    "no-cli-web": "forbidden_modules",
    "web-not-cli": "forbidden_modules",
}


def _cli_modules() -> set[str]:
    return {f"assay.{path.stem}" for path in SOURCE.glob("_cli_*.py")} | {"assay.cli"}


def test_the_cli_has_command_modules() -> None:
    assert {"assay._cli_common", "assay._cli_check"} < _cli_modules()


@pytest.mark.parametrize("contract", sorted(LISTS))
def test_every_cli_module_is_named_in_the_contract(contract: str) -> None:
    found = next(c for c in CONTRACTS if c["id"] == contract)
    named = {
        name.strip()
        for entry in found[LISTS[contract]]
        for part in entry.split(":")
        for name in part.split("|")
        if name.strip().startswith(("assay.cli", "assay._cli_"))
    }
    assert named == _cli_modules()
