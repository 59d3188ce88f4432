"""Request preconditions for the GCS emulator, which has none: without them two workers could both "create only if
absent" the same claim object, and a test of the sweep's work queue (trainer/sweep_claims.py) would pass on a race
that real GCS refuses.

Written from the Cloud Storage "Request preconditions" page (cloud.google.com/storage/docs/request-preconditions)
and the JSON API reference of ``objects.insert``, ``objects.delete``, ``objects.patch``, ``objects.rewrite`` and
``objects.copy`` (their ``ifGenerationMatch``, ``ifGenerationNotMatch``, ``ifMetagenerationMatch`` and
``ifMetagenerationNotMatch`` query parameters):

- ``ifGenerationMatch=G``: the request proceeds only if the target object's live generation is ``G``; ``0`` means
  "only if there is no live object".
- ``ifGenerationNotMatch=G``: only if the live generation is not ``G``; ``0`` means "only if there is a live
  object".
- ``ifMetagenerationMatch=M`` / ``ifMetagenerationNotMatch=M``: the same on the metageneration; there is none
  without a live object, so a match fails then.
- A precondition that does not hold fails a write (upload, delete, patch, rewrite, copy) with ``412 Precondition
  Failed`` (error reason ``conditionNotMet``) and changes nothing; on a read (metadata ``GET``, download) a failed
  ``...NotMatch`` answers ``304 Not Modified`` and a failed ``...Match`` 412, as the page's table says.
- The target of an upload is the ``name`` of the upload; of a rewrite or copy, the destination.

The emulator serves one request at a time (an ``http.server.HTTPServer``), so the check and the write it guards are
atomic, as GCS makes them; the lock below keeps them so if that ever changes. :func:`install` wraps the emulator's
route handlers in place (the route table is its public ``HANDLERS``); it changes no handler's code.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

_LOCK = threading.Lock()
_INSTALLED = "_tfcli_preconditions"
CONDITIONS = ("ifGenerationMatch", "ifGenerationNotMatch", "ifMetagenerationMatch", "ifMetagenerationNotMatch")
MESSAGE = "At least one of the pre-conditions you specified did not hold."


def _target(request: Any, handler: Callable[..., Any]) -> tuple[str, str] | None:
    """The bucket and object a request's preconditions are about (None: no object named)."""
    params = request.params or {}
    if "dest_object_id" in params:  # rewriteTo / copyTo: the destination
        return params["dest_bucket_name"], params["dest_object_id"]
    if "object_id" in params:
        return params["bucket_name"], params["object_id"]
    if "bucket_name" in params:  # an upload: the name is in the query, or in a multipart upload's metadata
        names = request.query.get("name")
        if names:
            return params["bucket_name"], names[0]
        data = request.data
        meta = data.get("meta") if isinstance(data, dict) else None
        if isinstance(meta, dict) and meta.get("name"):
            return params["bucket_name"], str(meta["name"])
    return None


def _live(storage: Any, bucket: str, name: str) -> tuple[int, int] | None:
    """The live object's (generation, metageneration); None when there is none."""
    from gcp_storage_emulator.exceptions import NotFound

    try:
        obj = storage.get_file_obj(bucket, name)
    except NotFound:
        return None
    return int(obj["generation"]), int(obj.get("metageneration", 1))


def failed(query: dict[str, list[str]], live: tuple[int, int] | None) -> str | None:
    """The first precondition in ``query`` that does not hold for ``live`` (None: they all hold)."""
    generation = live[0] if live is not None else 0
    for name in CONDITIONS:
        if name not in query:
            continue
        wanted = int(query[name][0])
        if name == "ifGenerationMatch":
            holds = generation == wanted
        elif name == "ifGenerationNotMatch":
            holds = generation != wanted
        elif live is None:
            holds = False
        else:
            holds = (live[1] == wanted) == (name == "ifMetagenerationMatch")
        if not holds:
            return name
    return None


def _guarded(handler: Callable[..., Any], method: str) -> Callable[..., Any]:
    @functools.wraps(handler)
    def guarded(request: Any, response: Any, storage: Any, *args: Any, **kwargs: Any) -> Any:
        with _LOCK:
            if any(name in request.query for name in CONDITIONS):
                target = _target(request, handler)
                broken = failed(request.query, _live(storage, *target)) if target is not None else None
                if broken is not None:
                    not_modified = method == "GET" and broken.endswith("NotMatch")
                    status = HTTPStatus.NOT_MODIFIED if not_modified else HTTPStatus.PRECONDITION_FAILED
                    response.status = status
                    if not not_modified:
                        error = {"domain": "global", "reason": "conditionNotMet", "message": MESSAGE}
                        error |= {"locationType": "parameter", "location": broken}
                        response.json({"error": {"code": 412, "message": MESSAGE, "errors": [error]}})
                    return None
            return handler(request, response, storage, *args, **kwargs)

    return guarded


def install() -> None:
    """Make the emulator (this process's ``gcp_storage_emulator``) check request preconditions; once is enough."""
    from gcp_storage_emulator import server
    from gcp_storage_emulator.handlers import objects

    if getattr(server, _INSTALLED, False):
        return
    for _regex, handlers in server.HANDLERS:
        for method, handler in list(handlers.items()):
            handlers[method] = _guarded(handler, method)
    objects.insert = _guarded(objects.insert, "POST")  # the route of a POST upload without the /upload prefix
    setattr(server, _INSTALLED, True)
