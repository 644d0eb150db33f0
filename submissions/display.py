"""Stored text shown in another medium: a terminal, a Markdown document (issue #17).

Names, file names and failure reasons are stored verbatim (``procbench.submissions.details`` refuses control
and invisible characters in new names, but older rows, split names and reasons quoting a file may
hold anything).  Whatever prints or embeds them escapes them here, once per medium:

* :func:`for_terminal`: control characters (ESC and the C1 range start terminal escape sequences),
  invisible and text-direction characters become visible ``\\x1b``, ``\\u202e`` escapes;
* :func:`for_markdown`: that, plus Markdown and HTML syntax escaped, so a name stays one table cell
  of plain text (no ``|`` splitting the row, no link, image, emphasis or raw HTML).
"""

from __future__ import annotations

import unicodedata

# Categories escaped for a terminal: controls (Cc: C0, DEL, C1), formatting (Cf: zero-width, bidi
# overrides), surrogates, private use, unassigned, and the Unicode line and paragraph separators.
_ESCAPED = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# ASCII punctuation that means something inline in (GitHub-flavoured) Markdown or in HTML, and `$`
# (math on the Hugging Face Hub); CommonMark lets any ASCII punctuation be backslash-escaped.
_MARKDOWN = frozenset(
    "\\`*_{}[]<>#+!|~&$:"
)  # ( ) need no escape: they make a link only after an (escaped) ]


def _escape(c: str) -> str:
    code = ord(c)
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )


def for_terminal(text: object, *, newlines: bool = False) -> str:
    """``text`` safe to print: every control or invisible character shown as an escape.

    ``newlines=True`` keeps ``\\n`` and ``\\t`` (multi-line text such as a failure's reason);
    ``\\r`` is always escaped (it would let a line overwrite what came before it).
    """
    keep = "\n\t" if newlines else ""
    return "".join(
        _escape(c) if c not in keep and unicodedata.category(c) in _ESCAPED else c
        for c in str(text)
    )


def for_markdown(text: object) -> str:
    """``text`` as literal inline Markdown (a table cell, a heading): one line, no markup, no HTML."""
    flat = " ".join(str(text).split())  # newlines (and runs of spaces) would end a table row
    return "".join("\\" + c if c in _MARKDOWN else c for c in for_terminal(flat))
