"""How reported rows and fetch blocks are read while binding: rows, notes, paper links and dates, files to fetch."""

from __future__ import annotations

import re
from pathlib import Path

from procbench.dsl import model as m
from procbench.dsl import syntax as s
from procbench.dsl.binding import describe
from procbench.dsl.checker_state import CheckerState, texts

_PAPER_URL = re.compile(r"https://[^\s\"<>]{1,500}")  # a reported table's paper link
_PAPER_DATE = re.compile(
    r"(19|20)\d\d-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?"
)  # when its paper appeared


class ReportReads(CheckerState):
    """Readers of reported tables and fetch blocks."""

    # -- reported rows -----------------------------------------------------------------------
    def parse_rows(
        self, expr: s.Expr, where: str
    ) -> tuple[tuple[str, str, tuple[float | None, ...]], ...] | None:
        """(system, slice value or "", values) per row; a row on a slice is an object of value = [...]."""
        usage = 'rows = { "System" = [0.1, _, 0.3] } (one value or _ per column); on a slice { "System" = { value = [...] } }'
        if not isinstance(expr, s.ObjectExpr):
            self.error(expr.span, f"{where} is an object of rows", usage)
            return None
        rows = []
        for pair in expr.pairs:
            parts = (
                [(p.key, p.value) for p in pair.value.pairs]
                if isinstance(pair.value, s.ObjectExpr)
                else [("", pair.value)]
            )
            for value_name, listed in parts:
                if not isinstance(listed, s.ListExpr):
                    self.error(listed.span, f"row {pair.key!r} is a list of values", usage)
                    return None
                values: list[float | None] = []
                for v in listed.items:
                    if isinstance(v, s.Num):
                        values.append(float(v.value))
                    elif isinstance(v, s.Ref) and v.dotted == "_":
                        values.append(None)
                    else:
                        self.error(
                            v.span,
                            f"a reported value is a number (a fraction, like the metric) or _, got {describe(v)}",
                            usage,
                        )
                        return None
                rows.append((pair.key, value_name, tuple(values)))
                self.row_spans[(pair.key, value_name)] = listed.span
        return tuple(rows)

    def parse_notes(self, expr: s.Expr, where: str) -> tuple[tuple[str, str], ...] | None:
        found = texts(expr.pairs) if isinstance(expr, s.ObjectExpr) else None
        if not isinstance(expr, s.ObjectExpr) or found is None:
            self.error(
                expr.span,
                f"{where} maps a row's system to its note (text)",
                'e.g. notes = { "BERT" = "±0.01 over seeds" }',
            )
            return None
        self.note_spans.update({p.key: p.span for p in expr.pairs})
        return tuple(found.items())

    def after_TaskSpec_reported(
        self, tables: tuple[m.ReportedTable, ...]
    ) -> tuple[m.ReportedRow, ...]:
        out = []
        for table in tables:
            systems = {system for system, _, _ in table.rows}
            for system, _ in table.notes:
                if system not in systems:
                    self.unknown(
                        self.note_spans.get(system, m.span_of(table, "notes")),
                        "row in notes",
                        system,
                        sorted(systems),
                    )
            notes = dict(table.notes)
            if table.url and (not _PAPER_URL.fullmatch(table.url)):
                self.error(
                    m.span_of(table, "url"),
                    f"url is the paper's https link on one line, got {table.url[:80]!r}",
                    'e.g. url = "https://arxiv.org/abs/2011.08092"',
                )
            if table.date and not _PAPER_DATE.fullmatch(table.date):
                self.error(
                    m.span_of(table, "date"),
                    f"date is YYYY-MM or YYYY-MM-DD, got {table.date[:40]!r}",
                    'e.g. date = "2020-11" (the paper\'s)',
                )
            for system, value_name, values in table.rows:
                span = self.row_spans.get((system, value_name), m.span_of(table, "rows"))
                if len(values) != len(table.columns):
                    self.error(
                        span,
                        f"row {system!r} has {len(values)} values for {len(table.columns)} columns",
                        "one value (or _) per column",
                    )
                    continue
                if bool(value_name) != bool(table.slice):
                    self.error(
                        span,
                        f"row {system!r}: "
                        + (
                            "rows on a slice give { value = [...] } per slice value"
                            if table.slice
                            else "a row with slice values needs `slice = <slice name>`"
                        ),
                    )
                    continue
                pairs = tuple((c, v) for c, v in zip(table.columns, values) if v is not None)
                slice_ref = (table.slice, value_name) if table.slice else None
                note = "; ".join(n for n in (table.note, notes.get(system, "")) if n)
                out.append(
                    m.ReportedRow(
                        system,
                        table.split,
                        table.source,
                        pairs,
                        slice_ref,
                        note,
                        {**table.at, "value": span},
                        path=self.path,
                        url=table.url,
                        date=table.date,
                    )
                )
        return tuple(out)

    # -- fetch -------------------------------------------------------------------------------
    def after_TaskSpec_data(self, data: m.DataSpec) -> m.DataSpec:
        self.splits = data.splits
        self.source_paths = tuple(s.path for s in data.sources)
        return data

    def _files_from_sources(self, b: m.FetchBlock) -> tuple[str, ...]:
        """A block without ``files`` fetches what the data block reads under its ``into``: paths are said once."""
        if b.files:
            return b.files
        into = b.into if not b.into or b.into.endswith("/") else b.into + "/"
        files = tuple(
            dict.fromkeys(path[len(into) :] for path in self.source_paths if path.startswith(into))
        )
        if (
            not files and not self.errors
        ):  # after an error in the data block its paths are unknown: no second error
            self.error(
                m.span_of(b),
                f"this fetch block lists no files and no data source reads a path under into = {b.into!r}",
                'list them: files = ["path/relative/to/the/origin"]',
            )
        return files

    def after_TaskSpec_fetch(self, blocks: tuple[m.FetchBlock, ...]) -> tuple[m.FetchSpec, ...]:
        if not blocks:
            return ()
        from procbench.dsl import lock

        origins = []
        for b in blocks:
            if bool(b.url) == bool(b.hub_repo):
                self.error(
                    m.span_of(b),
                    'a fetch block needs exactly one origin: `url = "..."` or `hub_repo = "..."`',
                )
                return ()
            files = self._files_from_sources(b)
            if not files:
                return ()
            origins.append(
                lock.FetchOrigin(
                    name=b.name,
                    url=b.url,
                    hub_repo=b.hub_repo,
                    revision=b.revision,
                    repo_type=b.repo_type,
                    into=b.into,
                    files=files,
                    splits=b.splits,
                )
            )
        for problem in lock.path_problems(origins):
            self.error(
                m.span_of(blocks[0], "files"),
                problem,
                "paths stay under the data root: no '..', no absolute paths",
            )
        if self.errors:
            return ()
        where = lock.lock_path(Path(self.path))
        if (
            not where.is_file() and not lock.collecting()
        ):  # only `data fetch` needs it; a spec copied to try something out still checks
            self.warn(
                m.span_of(blocks[0]),
                f"no lock file {where.name} beside the spec: `procbench data fetch` cannot verify the files",
                f"run `procbench data lock {Path(self.path).stem}` with the data in place",
            )
            return ()
        try:
            return lock.read_lock(where, tuple(origins), self.splits)
        except lock.LockError as exc:
            lines = str(exc).splitlines()
            detail = "; ".join(line.strip() for line in lines[1:4]) + (
                f"; ... ({len(lines) - 4} more)" if len(lines) > 4 else ""
            )
            self.error(
                m.span_of(blocks[0]),
                lines[0] + (f" ({detail})" if detail else ""),
                f"run `procbench data lock {Path(self.path).stem}` with the data in place",
            )
            return ()
