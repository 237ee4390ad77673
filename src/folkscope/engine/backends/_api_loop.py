"""The one asyncio loop, in a daemon thread, on which every web-API backend in the process sends requests.

Why it exists
-------------
litellm caches its async HTTP clients per event loop, so a loop per call or
per backend would leave clients bound to dead loops. The loop outlives any
one backend and is closed, with every client on it, at interpreter exit.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import threading
from typing import Any

log = logging.getLogger(__name__)


class _LoopThread:
    """One asyncio loop in a daemon thread, shared by every backend in the process.

    litellm caches its async HTTP clients per event loop; a loop per call or
    per backend would leave clients bound to dead loops, so there is one,
    closed at interpreter exit.
    """

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _registered = False
    clients: list[Any] = []

    @classmethod
    def get(cls) -> asyncio.AbstractEventLoop:
        with cls._lock:
            if cls._loop is None or cls._thread is None or not cls._thread.is_alive():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="folkscope-api-loop", daemon=True)
                thread.start()
                cls._loop, cls._thread = loop, thread
            if not cls._registered:  # after litellm's own exit hook, so this one runs first (LIFO)
                atexit.register(cls.shutdown)
                cls._registered = True
            return cls._loop

    @classmethod
    def close_client(cls, client: Any) -> None:
        """Close an async HTTP client on the loop it was used on."""
        if client in cls.clients:
            cls.clients.remove(client)
        loop = cls._loop
        if loop is None or not loop.is_running():
            return
        try:
            asyncio.run_coroutine_threadsafe(client.close(), loop).result(timeout=5)
        except Exception:  # closing is best effort
            log.debug("could not close a web-API client", exc_info=True)

    @classmethod
    def shutdown(cls) -> None:
        """At exit: close every client (ours and litellm's cached ones) on the loop, then stop it."""
        for client in list(cls.clients):
            cls.close_client(client)
        with cls._lock:
            loop, thread = cls._loop, cls._thread
            cls._loop = cls._thread = None
        if loop is None or thread is None:
            return
        try:
            from litellm.llms.custom_httpx.async_client_cleanup import (
                close_litellm_async_clients,
            )

            asyncio.run_coroutine_threadsafe(close_litellm_async_clients(), loop).result(timeout=5)
        except Exception:
            log.debug("could not close litellm's clients", exc_info=True)

        async def cancel_rest() -> None:  # e.g. litellm's logging worker, requests left by a closed stream
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        try:
            asyncio.run_coroutine_threadsafe(cancel_rest(), loop).result(timeout=5)
        except Exception:
            log.debug("could not cancel pending web-API tasks", exc_info=True)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        if not thread.is_alive():
            loop.close()
