"""A contract type import-linter lacks: no private name of an external package.

import-linter sees an external package as one module (``langgraph``), so its ``forbidden``
contract cannot name ``langgraph._internal``. This contract reads the import statements grimp
recorded instead: any import whose dotted path, or a name it imports, has a segment starting
with ``_`` inside one of ``packages`` is broken (``from langgraph._internal._constants import
CONFIG_KEY_DURABILITY``, ``from langgraph.pregel import _loop``). Registered in pyproject.toml
under ``[tool.importlinter] contract_types``.
"""

from __future__ import annotations

import re

import grimp
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck

_FROM = re.compile(r"^\s*from\s+([\w.]+)\s+import\s+\(?([^)#]*)")
_IMPORT = re.compile(r"^\s*import\s+([\w.]+)")


def private_parts(line: str) -> list[str]:
    """Return the private segments an import statement reaches (``_internal``, ``_loop``)."""
    names: list[str] = []
    if match := _FROM.match(line):
        names += match.group(1).split(".")
        names += [part.split(" as ")[0].strip() for part in match.group(2).split(",")]
    elif match := _IMPORT.match(line):
        names += match.group(1).split(".")
    return [name for name in names if name.startswith("_") and not name.startswith("__")]


class NoPrivateNamesContract(Contract):
    """No module of the project imports a private module or name of ``packages``."""

    type_name = "no_private_names"

    packages = fields.ListField(subfield=fields.StringField())

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        """Read every recorded import of the external ``packages``."""
        watched = {str(package) for package in self.packages}  # type: ignore[attr-defined]
        broken: list[dict[str, object]] = []
        for imported in sorted(watched & graph.modules):
            for importer in sorted(graph.find_modules_that_directly_import(imported)):
                for detail in graph.get_import_details(importer=importer, imported=imported):
                    private = private_parts(detail["line_contents"])
                    if private:
                        broken.append({**detail, "private": private})
        return ContractCheck(kept=not broken, metadata={"broken": broken})

    def render_broken_contract(self, check: ContractCheck) -> None:
        """Name each import and the private segment it reaches."""
        for item in check.metadata["broken"]:
            output.print_error(
                f"{item['importer']}:{item['line_number']}: {item['line_contents']} "
                f"(private: {', '.join(item['private'])})",  # type: ignore[arg-type]
                bold=False,
            )
            output.new_line()
