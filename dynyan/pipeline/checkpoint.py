"""Checkpoints of a replay that lose nothing.

A checkpoint is one pickle file, ``<dir>/checkpoint.pkl``, holding the view's
``snapshot()`` together with the ``seq`` of the last event applied to it, the
number of events applied so far, a fingerprint of the module source (a resume
with another query is refused) and the stream's id (a resume on another stream
is refused). It is written atomically: a temporary file in the same directory,
``fsync``, ``os.replace`` over the previous checkpoint, ``fsync`` of the
directory. A crash at any instant leaves either the old or the new checkpoint,
never a torn one, and since state and ``last_seq`` travel in the same file,
resuming applies exactly the events with ``seq > last_seq``: each once.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import pickle
import sys
import time
from pathlib import Path

from ..errors import PipelineError

FORMAT = "dynyan-checkpoint"
VERSION = 1
FILENAME = "checkpoint.pkl"


def source_fingerprint(source: str | bytes) -> str:
    """Short SHA-256 of a module's source text."""
    if isinstance(source, str):
        source = source.encode()
    return hashlib.sha256(source).hexdigest()[:16]


def module_fingerprint(module_or_view) -> str:
    """Fingerprint of the generated module a View (class or instance) comes from."""
    obj = module_or_view
    if not inspect.ismodule(obj):
        cls = obj if inspect.isclass(obj) else type(obj)
        obj = sys.modules.get(cls.__module__)
        if obj is None:
            raise PipelineError(f"cannot find the module of {cls.__qualname__}")
    source = getattr(obj, "__dynyan_source__", None)
    if source is None:
        path = getattr(obj, "__file__", None)
        if path and Path(path).is_file():
            source = Path(path).read_bytes()
        else:
            try:
                source = inspect.getsource(obj)
            except (OSError, TypeError) as exc:
                raise PipelineError(
                    f"cannot read the source of module {obj.__name__} to fingerprint it"
                ) from exc
    return source_fingerprint(source)


def checkpoint_path(directory: str | Path) -> Path:
    return Path(directory) / FILENAME


def save_checkpoint(
    directory: str | Path,
    *,
    state,
    last_seq: int,
    events: int,
    fingerprint: str,
    stream_id: str,
) -> Path:
    """Atomically replace ``<directory>/checkpoint.pkl`` with this state."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    payload = {
        "format": FORMAT,
        "version": VERSION,
        "fingerprint": fingerprint,
        "stream_id": stream_id,
        "last_seq": last_seq,
        "events": events,
        "saved_at": time.time(),
        "state": state,
    }
    target = directory / FILENAME
    tmp = directory / f".{FILENAME}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            pickle.dump(payload, fh, protocol=pickle.HIGHEST_PROTOCOL)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(directory)
    return target


def load_checkpoint(
    directory: str | Path,
    *,
    fingerprint: str | None = None,
    stream_id: str | None = None,
) -> dict | None:
    """The checkpoint in ``directory`` (None if there is none), checked against query and stream."""
    path = checkpoint_path(directory)
    if not path.exists():
        return None
    try:
        with open(path, "rb") as fh:
            payload = pickle.load(fh)
    except Exception as exc:
        raise PipelineError(f"cannot read checkpoint {path}: {exc}") from exc
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise PipelineError(f"{path} is not a dynyan checkpoint")
    if payload.get("version") != VERSION:
        raise PipelineError(
            f"{path} has checkpoint format version {payload.get('version')}, expected {VERSION}"
        )
    if fingerprint is not None and payload["fingerprint"] != fingerprint:
        raise PipelineError(
            f"checkpoint {path} was written by another query module "
            f"(fingerprint {payload['fingerprint']}, this one is {fingerprint}); "
            "refusing to resume: use another --checkpoint directory or drop --resume"
        )
    if stream_id is not None and payload["stream_id"] != stream_id:
        raise PipelineError(
            f"checkpoint {path} belongs to another stream (id {payload['stream_id']}, "
            f"this one is {stream_id}); refusing to resume"
        )
    return payload


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)
