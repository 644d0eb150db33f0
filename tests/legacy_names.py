"""Old top-level import names (``runners.x``) as aliases of ``procbench.runners.x``, for tests/parity only.

tests/parity/ must pass unchanged, and its files import ``runners.*`` as the project did before it had one
import name (docs/architecture.md "One import name").  Importing the checkout's ``runners/`` folder
under that name would load every module a second time: a second component registry and a second set of
classes, so ``isinstance`` and registrations would disagree.  The finder below makes ``runners.x`` the
very module object ``procbench.runners.x`` is.  Nothing outside tests/ installs it, and
tests/test_one_import_name.py checks that the project itself imports only ``procbench.*``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Sequence

LEGACY = ("dsl", "runners", "submissions", "leaderboard")
# Modules that moved into runners' sub-packages after tests/parity was written: old name -> home.
_MOVED = {
    "runners._types": "procbench.runners.runtime._types",
    "runners.registry": "procbench.runners.runtime.registry",
}


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: types.ModuleType) -> None:
        return None  # already executed under its one name


class _LegacyNames(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.partition(".")[0] not in LEGACY:
            return None
        head = next(
            (old for old in _MOVED if fullname == old or fullname.startswith(old + ".")), None
        )
        real = _MOVED[head] + fullname[len(head) :] if head else "procbench." + fullname
        if importlib.util.find_spec(real) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(real), is_package=False)


def install_legacy_names() -> None:
    if not any(isinstance(finder, _LegacyNames) for finder in sys.meta_path):
        sys.meta_path.insert(0, _LegacyNames())
