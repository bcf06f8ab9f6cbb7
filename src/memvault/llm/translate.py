"""A search request translated into the other language by the configured LLM, for finding
memory written in English from a request in Chinese and the reverse.

An LLM call takes from a fraction of a second to many, so it is kept off every path that
must stay quick: each translation is made once, on a thread of its own, and kept (a bounded
cache of the latest requests). A search may wait for it a bounded time (``wait``); the
context block a hook asks for never waits: it uses a translation already made, and asks
for one it lacks so that a later request of the same words has it. Long texts (a pasted
log, a long prompt) are not translated: the lexicon covers their words, and the call
would cost the most for them.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as WaitedTooLong

from memvault.llm.provider import LLM, LLMError

log = logging.getLogger("memvault.llm")

MAX_CHARS = 600  # longer texts are not translated
CACHE = 1024  # translations kept, the least recently used dropped first
MAX_TOKENS = 300
CALL_SECONDS = 10.0  # one attempt's timeout: a translation later than that is of no use
QUEUED = 64  # requests waiting for a translation; more are not translated
IDLE_SECONDS = 60.0  # the thread ends after this long without work (and starts again)
SYSTEM = (
    "You translate a software developer's request to a memory search engine. Translate"
    " the request into {language}. Keep code names, file names, paths, commands and error"
    " messages exactly as written. Answer with the translation only, on one line."
)


class Translator:
    """Translations of requests, made in the background by the LLM ``open_llm`` gives
    (called once, on the translation thread: an SDK's import is slow; None means no LLM,
    and no translation is ever asked for again). ``in_chinese`` tells a request's
    language (True, False, or None for neither: such a text is not translated)."""

    def __init__(
        self,
        open_llm: Callable[[], LLM | None],
        in_chinese: Callable[[str], bool | None],
    ) -> None:
        self._open_llm = open_llm
        self._in_chinese = in_chinese
        self._llm: LLM | None = None
        self._opened = False
        self._off = False
        self._lock = threading.Lock()
        self._done: OrderedDict[str, str] = OrderedDict()
        self._pending: dict[str, Future[str]] = {}
        self._queue: queue.Queue[tuple[str, Future[str]]] = queue.Queue(QUEUED)
        self._thread: threading.Thread | None = None

    def translation(self, text: str, *, wait: float = 0.0) -> str | None:
        """The translation of ``text`` when it is made within ``wait`` seconds (0: only
        one made already); asked for in the background when it is not. None when there
        is none (yet): no LLM, a text too long or of neither language, a failed call."""
        key = text.strip()
        if self._off or not key or len(key) > MAX_CHARS or self._in_chinese(key) is None:
            return None
        with self._lock:
            if key in self._done:
                self._done.move_to_end(key)
                return self._done[key] or None
            future = self._pending.get(key)
            if future is None:
                if self._thread is None:
                    # A daemon thread: a call in flight never holds the process open at exit.
                    self._thread = threading.Thread(
                        target=self._run, name="memvault-translate", daemon=True
                    )
                    self._thread.start()
                future = Future()
                try:
                    self._queue.put_nowait((key, future))
                except queue.Full:
                    return None
                self._pending[key] = future
        if wait <= 0:
            return None
        try:
            return future.result(timeout=wait) or None
        except WaitedTooLong:
            return None

    def _run(self) -> None:
        while True:
            try:
                key, future = self._queue.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                key, future = "", None
            if future is not None:
                future.set_result(self._translate(key))
            if future is None or self._off:
                # Ends when idle, or for good without an LLM: a closed memory keeps no
                # thread. Under the lock that queues work, so none is left unserved.
                with self._lock:
                    if self._queue.empty():
                        self._thread = None
                        return

    def _translate(self, key: str) -> str:
        answer: str | None = None
        try:
            llm = self._llm_once()
            if llm is not None:
                language = "English" if self._in_chinese(key) else "Simplified Chinese"
                answer = " ".join(
                    llm.complete(SYSTEM.format(language=language), key, max_tokens=MAX_TOKENS)
                    .strip()
                    .split()
                )
            else:
                answer = ""
        except LLMError as error:  # not kept: a later request asks again (the breaker
            # keeps a provider that is down from being asked for each)
            log.info("request not translated: %s", error)
        except Exception:
            log.exception("request not translated")
        with self._lock:
            self._pending.pop(key, None)
            if answer is not None:
                self._done[key] = answer
                while len(self._done) > CACHE:
                    self._done.popitem(last=False)
        return answer or ""

    def _llm_once(self) -> LLM | None:
        if not self._opened:
            self._opened = True
            try:
                self._llm = self._open_llm()
            except LLMError as error:
                log.warning("requests are not translated: %s", error)
            if self._llm is None:
                self._off = True
        return self._llm
