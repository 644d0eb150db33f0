"""A viewer without a browser: one page of the site over Streamlit's own websocket protocol (issue #19).

Why: on a small machine, 20 Chromium tabs opened at once spend most of the CPU running Streamlit's frontend, so the
browser crowd of ``make bench-site`` measures the browser more than the server.  This client asks the server for a
page exactly as a browser tab's first load does, and only parses what comes back, so 20 of them show what the server
alone does with 20 viewers.

What a first load says, as Streamlit 1.67's frontend sends it (and as its server reads it):

* the websocket is ``/_stcore/stream``, subprotocol ``streamlit`` first; the browser adds the XSRF cookie's token
  second, but the server checks that token only before reading a login cookie (the site has no login), so it is left
  out.  ``Origin`` is the server's own address: the server accepts a same-origin connection (and one with no Origin).
* one ``BackMsg.rerun_script`` whose ``ClientState`` names the page by its URL path (``page_name="board"``) with an
  empty ``page_script_hash`` (a new tab does not know the hashes yet; the server's page manager resolves the name
  against the ``url_path`` of the ``st.navigation`` pages), the URL's query string without ``?``, no widget states,
  no cached message hashes (a new tab's message cache is empty, so the server sends every message whole), and the
  browser's context (time zone, locale, URL).

The server answers with ``ForwardMsg``: ``new_session``, then ``delta`` messages (elements and blocks), then
``script_finished``.  Times are seconds from the start of the connection (the browser's figures start earlier, at
navigation, and include loading the page's HTML and scripts).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect
from websockets.typing import Origin, Subprotocol

STREAM = "/_stcore/stream"
TIMEOUT_S = 240.0
# The largest message read: a board of the 10 000-submission store arrives in about 0.35 MB, so this leaves
# room for far larger stores while keeping what a misbehaving server could make the bench hold bounded.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
# The element that is a page's main content, by the name of its field in ``Element``'s ``type`` oneof.
TABLE = "dataframe"  # st.dataframe: Element.dataframe (a Dataframe proto: arrow_data, or lazy_data.initial_chunk)


class StreamError(RuntimeError):
    """The server answered, but not with the page: an exception element, an unknown page, or a script that did not run."""


@dataclass(frozen=True)
class Session:
    """One first load of a page, in seconds from the start of the connection."""

    first_delta_s: float  # the first ``delta`` message: something to draw
    content_s: float  # the first element that is the page's main content, with its data
    finished_s: float  # ``script_finished`` (successfully): the page is complete
    messages: int
    received_bytes: int
    content: Element  # that element, as received (for a table: its Arrow data)


def client_state(path: str, url: str) -> ClientState:
    """The ``ClientState`` of a new tab's first load of ``path`` (``board?task=openpi&split=test``) on the site at ``url``."""
    page, _, query = path.partition("?")
    state = ClientState(query_string=query, page_script_hash="", page_name=page.strip("/"))
    state.context_info.timezone = "UTC"
    state.context_info.timezone_offset = 0
    state.context_info.locale = "en-US"
    state.context_info.url = f"{url}/{path}"
    state.context_info.is_embedded = False
    state.context_info.color_scheme = "light"
    return state


def _is_content(element: Element, content: str) -> bool:
    if element.WhichOneof("type") != content:
        return False
    if content == TABLE:  # the table with its rows, not an empty frame
        table = element.dataframe
        return bool(table.arrow_data.data) or (
            table.HasField("lazy_data") and bool(table.lazy_data.initial_chunk.data)
        )
    return True


async def session(
    url: str, path: str, *, content: str = TABLE, timeout_s: float = TIMEOUT_S
) -> Session:
    """Load ``path`` of the site at ``url`` once, as a new browser tab does, and close; raise :class:`StreamError` if it is not shown."""
    parts = urlsplit(url)
    started = time.monotonic()
    first_delta = content_at = None
    content_element = Element()
    messages = received = 0
    async with asyncio.timeout(timeout_s):
        async with connect(
            f"ws://{parts.netloc}{STREAM}",
            origin=Origin(f"{parts.scheme}://{parts.netloc}"),
            subprotocols=[Subprotocol("streamlit")],
            max_size=MAX_MESSAGE_BYTES,
            proxy=None,
        ) as socket:
            await socket.send(BackMsg(rerun_script=client_state(path, url)).SerializeToString())
            async for frame in socket:
                now = time.monotonic() - started
                if not isinstance(frame, bytes):
                    raise StreamError(
                        f"{path}: the server sent a text frame (Streamlit sends binary protobufs only)"
                    )
                messages, received = messages + 1, received + len(frame)
                msg = ForwardMsg.FromString(frame)
                kind = msg.WhichOneof("type")
                if kind == "page_not_found":
                    raise StreamError(f"{path}: the server found no such page (page_not_found)")
                if kind == "delta":
                    first_delta = now if first_delta is None else first_delta
                    if msg.delta.WhichOneof("type") == "new_element":
                        element = msg.delta.new_element
                        if element.WhichOneof("type") == "exception":
                            raise StreamError(
                                f"{path}: the page shows an exception: {element.exception.type}: {element.exception.message}"[
                                    :500
                                ]
                            )
                        if content_at is None and _is_content(element, content):
                            content_at, content_element = now, element
                elif kind == "script_finished":
                    status = msg.script_finished
                    if status == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                        continue  # the script reran itself; the page comes with the next run
                    if status != ForwardMsg.FINISHED_SUCCESSFULLY:
                        raise StreamError(
                            f"{path}: the script did not finish ({ForwardMsg.ScriptFinishedStatus.Name(status)})"
                        )
                    if first_delta is None or content_at is None:
                        raise StreamError(
                            f"{path}: the script finished without the page's {content}"
                        )
                    return Session(
                        first_delta, content_at, now, messages, received, content_element
                    )
    raise StreamError(f"{path}: the server closed the connection before the script finished")


async def _together(url: str, path: str, count: int, content: str) -> list[Session]:
    return list(await asyncio.gather(*(session(url, path, content=content) for _ in range(count))))


def crowd(url: str, path: str, count: int, *, content: str = TABLE) -> Sequence[Session]:
    """``count`` first loads of ``path`` at once (all connections opened together), from a thread of its own.

    The thread keeps this usable from code that already runs an event loop (Playwright's sync API does).
    """
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, _together(url, path, count, content)).result()
