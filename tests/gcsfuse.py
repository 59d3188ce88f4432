"""A GCS FUSE mount over the GCS emulator: a real FUSE file system (libfuse 3 through ``mfusepy``) that publishes,
caches and goes stale where gcsfuse does, so that what a trainer pod writes under ``/results`` reaches the bucket
when (and only when) the real mount would put it there.

Written from gcsfuse's ``docs/semantics.md`` (v3), ``internal/fs/fs.go`` and ``internal/fs/inode/file.go``, and the
GKE "Cloud Storage FUSE CSI driver" and "caching" pages, for the mount tfcli's pods get (``implicit-dirs``, the
default caches, streaming writes):

- **Writes** (semantics.md "Streaming Writes - Default Write Path", "Staged Writes"): a new file is written
  locally and becomes an object only when it is closed (the kernel's ``FLUSH`` on ``close(2)``: fs.go ``FlushFile``
  syncs the inode). ``fsync`` does not finalize a new file ("FSync operation does not finalize the object ... Only
  finalized objects are visible"); Python's ``flush()`` is a ``write(2)`` and reaches no one. A file that already
  was an object is staged whole (downloaded on open for writing) and written back as a new generation on close or
  fsync. A rename publishes the file first, then copies the object to its new name and deletes the old one
  (gcsfuse's rename of a file in a flat bucket). No empty placeholder object is made on create (since 1.2). A read
  of a file being streamed finalizes it ("Read Operations During Write"), and so does the close of any handle of
  it, a reader's too (``FlushFile`` syncs the inode, not the handle).
- **Preconditions** (semantics.md "Concurrency", "Stale File Handle Errors"): a write-back is conditional on the
  generation the file was opened at (0: must not exist); another writer's newer generation, a delete or a rename
  in between make the close or fsync fail with ``ESTALE``. The emulator has no preconditions, so this mount checks
  the generation itself just before it uploads.
- **Reads**: an open file reads the generation its inode was looked up at (file.go reads with ``Generation`` set;
  a 404 for it is a ``FileClobberedError``, which fs.go turns into ``ESTALE``): once another writer replaced or
  deleted the object, the reader holding the old generation gets ``ESTALE``.
- **Metadata cache** (semantics.md "Stat caching", "Type caching"; GKE caching page): every mount keeps its own
  stat cache of positive and negative lookups for ``ttl`` seconds (``metadata-cache:ttl-secs``, 60 by default; on
  A2-mega/ultra and A3 machines, infinite unless set: pass ``ttl=None``). So ``stat``/``open`` of another writer's
  file show the generation and size this mount last looked up, and a name first looked up before it existed stays
  absent, until the entry expires. Directory listings are not cached (the list cache, ``kernel-list-cache-ttl-secs``,
  is off by default): ``readdir`` lists the bucket, and, as upstream, the listed objects refresh the stat cache. The
  mount's own writes update its cache at once (close-to-open consistency within one mount).
- **Directories** (``implicit-dirs``, the CSI volume's ``mountOptions``): a folder exists when an object ``dir/``
  does or any object lies under it; ``mkdir`` makes ``dir/``; ``rmdir`` of a non-empty folder is ``ENOTEMPTY``.

The kernel caches nothing here (``attr_timeout=0``, ``entry_timeout=0``, ``direct_io``): every answer is this
mount's, so the cache above is the only one. Run as ``python tests/gcsfuse.py BUCKET MOUNTPOINT [--ttl S]``
(``STORAGE_EMULATOR_HOST`` set); :func:`mounted` (tests/gcsfuse_mount.py) starts one and unmounts it. It needs
``/dev/fuse``, root (the mount is made without ``fusermount``) and libfuse 3 (``libfuse3-3``; .ci/run installs it).
"""

from __future__ import annotations

import argparse
import errno
import os
import stat
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import mfusepy as fuse
from gcsfuse_mount import DAEMONS as DAEMONS
from gcsfuse_mount import lose as lose
from gcsfuse_mount import mounted as mounted

NEGATIVE_TTL = 5.0  # metadata-cache:negative-ttl-secs, gcsfuse's default


@dataclass
class Object:
    """What a lookup found: an object's generation and size, or a folder (generation 0)."""

    generation: int
    size: int
    folder: bool = False
    mtime: float = field(default_factory=time.time)


@dataclass
class Staged:
    """A file open for writing in this mount: its whole content here until it is published."""

    data: bytearray
    generation: int  # the object's generation when staged (0: a new file)
    dirty: bool = False
    new: bool = True  # written through the streaming path: fsync does not finalize it
    handles: int = 0


@dataclass
class Handle:
    path: str
    generation: int  # for a reader: the generation it reads
    content: bytes | None = None
    counted: bool = True  # in its staged file's ``handles`` (a reader opened before the file was staged is not)


class GcsFuse(fuse.Operations):  # type: ignore[misc]
    """The mount: a bucket on the emulator, with gcsfuse's publication, cache and staleness (module docstring)."""

    use_ns = True

    def __init__(self, bucket: Any, ttl: float | None = 60.0) -> None:
        self.bucket = bucket
        self.ttl = ttl
        self.mutex = threading.RLock()
        self.cache: dict[str, tuple[float, Object | None]] = {}
        self.staged: dict[str, Staged] = {}
        self.handles: dict[int, Handle] = {}
        self.next_handle = 1

    # -- the metadata cache -------------------------------------------------------------------------------------

    def _remember(self, path: str, found: Object | None) -> None:
        ttl = self.ttl if found is not None else min(NEGATIVE_TTL, self.ttl if self.ttl is not None else NEGATIVE_TTL)
        self.cache[path] = (float("inf") if ttl is None else time.monotonic() + ttl, found)

    def _lookup(self, path: str) -> Object | None:
        """The object or folder at ``path`` as this mount sees it: from the cache while the entry lives."""
        if path == "/":
            return Object(0, 0, folder=True)
        if path in self.staged:
            return Object(self.staged[path].generation, len(self.staged[path].data))
        cached = self.cache.get(path)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        name = path.lstrip("/")
        blob = self.bucket.get_blob(name)
        found: Object | None = None
        if blob is not None:
            found = Object(int(blob.generation), int(blob.size or 0), mtime=blob.updated.timestamp())
        elif self.bucket.get_blob(name + "/") is not None or any(self._under(name)):
            found = Object(0, 0, folder=True)
        self._remember(path, found)
        return found

    def _under(self, name: str) -> Any:
        """An object under the folder ``name`` (implicit-dirs: that makes the folder exist)."""
        return self.bucket.list_blobs(prefix=name + "/", max_results=1)

    # -- publication ---------------------------------------------------------------------------------------------

    def _publish(self, path: str) -> None:
        """Write a staged file back as a new generation, if the object is still the one it was staged from."""
        staged = self.staged[path]
        name = path.lstrip("/")
        current = self.bucket.get_blob(name)
        if (int(current.generation) if current is not None else 0) != staged.generation:
            raise fuse.FuseOSError(errno.ESTALE)  # clobbered: another writer, a delete or a rename came first
        blob = self.bucket.blob(name)
        blob.upload_from_string(bytes(staged.data))
        blob.reload()
        staged.generation, staged.dirty, staged.new = int(blob.generation), False, False
        self._remember(path, Object(staged.generation, len(staged.data)))

    # -- the operations ------------------------------------------------------------------------------------------

    def getattr(self, path: str, fh: int | None = None) -> dict[str, Any]:
        with self.mutex:
            found = self._lookup(path)
        if found is None:
            raise fuse.FuseOSError(errno.ENOENT)
        ns = int(found.mtime * 1e9)
        mode = (stat.S_IFDIR | 0o755) if found.folder else (stat.S_IFREG | 0o644)
        attributes = {"st_mode": mode, "st_nlink": 2 if found.folder else 1, "st_size": found.size}
        return {**attributes, "st_mtime": ns, "st_ctime": ns, "st_atime": ns, "st_uid": os.getuid(), "st_gid": 0}

    def readdir(self, path: str, fh: int) -> list[str]:
        prefix = "" if path == "/" else path.lstrip("/") + "/"
        with self.mutex:
            blobs = self.bucket.list_blobs(prefix=prefix, delimiter="/")
            names = {".", ".."}
            for blob in blobs:
                if blob.name != prefix:
                    names.add(blob.name[len(prefix) :])
                    found = Object(int(blob.generation), int(blob.size or 0), mtime=blob.updated.timestamp())
                    self._remember("/" + blob.name, found)
            for sub in blobs.prefixes:
                names.add(sub[len(prefix) :].rstrip("/"))
            names.update(p[len(path.rstrip("/")) + 1 :] for p in self.staged if os.path.dirname(p) == path)
        return sorted(names)

    def _handle(self, path: str, generation: int, *, counted: bool = True) -> int:
        number, self.next_handle = self.next_handle, self.next_handle + 1
        self.handles[number] = Handle(path, generation, counted=counted)
        return number

    def create(self, path: str, mode: int, fi: Any = None) -> int:
        with self.mutex:
            parent = self._lookup(os.path.dirname(path))
            if parent is None or not parent.folder:
                raise fuse.FuseOSError(errno.ENOENT)
            existing = self._lookup(path)
            staged = self.staged.setdefault(path, Staged(bytearray(), existing.generation if existing else 0))
            staged.handles += 1
            return self._handle(path, staged.generation)

    def open(self, path: str, flags: int) -> int:
        with self.mutex:
            found = self._lookup(path)
            if found is None:
                raise fuse.FuseOSError(errno.ENOENT)
            if flags & os.O_ACCMODE == os.O_RDONLY and path not in self.staged:
                return self._handle(path, found.generation, counted=False)
            staged = self.staged.get(path)
            if staged is None:  # an existing object opened for writing: staged whole (the legacy write path)
                data = bytearray() if flags & os.O_TRUNC else bytearray(self._content(path, found.generation))
                staged = self.staged[path] = Staged(data, found.generation, new=False)
            staged.handles += 1
            return self._handle(path, staged.generation)

    def _content(self, path: str, generation: int) -> bytes:
        """The object's bytes at ``generation``; ``ESTALE`` once that generation is gone."""
        blob = self.bucket.get_blob(path.lstrip("/"))
        if blob is None or int(blob.generation) != generation:
            raise fuse.FuseOSError(errno.ESTALE)
        data: bytes = blob.download_as_bytes()
        return data

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        with self.mutex:
            handle = self.handles[fh]
            staged = self.staged.get(handle.path)
            if staged is not None:
                if staged.new and staged.dirty:  # "Read Operations During Write": a read finalizes a streamed file
                    self._publish(handle.path)
                return bytes(staged.data[offset : offset + size])
            current = self.bucket.get_blob(handle.path.lstrip("/"))  # every read checks the generation
            if current is None or int(current.generation) != handle.generation:
                raise fuse.FuseOSError(errno.ESTALE)
            if handle.content is None:
                handle.content = self._content(handle.path, handle.generation)
            return handle.content[offset : offset + size]

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        with self.mutex:
            staged = self.staged[self.handles[fh].path]
            if offset > len(staged.data):
                staged.data.extend(b"\0" * (offset - len(staged.data)))
            staged.data[offset : offset + len(data)] = data
            staged.dirty = True
            return len(data)

    def truncate(self, path: str, length: int, fh: int | None = None) -> int:
        with self.mutex:
            staged = self.staged.get(path)
            if staged is None:
                found = self._lookup(path)
                if found is None:
                    raise fuse.FuseOSError(errno.ENOENT)
                data = self._content(path, found.generation) if length else b""
                staged = self.staged[path] = Staged(bytearray(data), found.generation, new=False)
            del staged.data[length:]
            staged.data.extend(b"\0" * (length - len(staged.data)))
            staged.dirty = True
            if staged.handles == 0:  # truncate(2) of a closed file: published at once
                self._publish(path)
                del self.staged[path]
            return 0

    def flush(self, path: str, fh: int) -> int:
        """``close(2)``: the file is published (finalized) now."""
        with self.mutex:
            handle = self.handles[fh]
            staged = self.staged.get(handle.path)
            if staged is not None and (staged.dirty or staged.generation == 0):
                self._publish(handle.path)
            return 0

    def fsync(self, path: str, datasync: int, fh: int) -> int:
        """A new file's fsync finalizes nothing (streaming writes); a staged existing file is written back."""
        with self.mutex:
            staged = self.staged.get(self.handles[fh].path)
            if staged is not None and staged.dirty and not staged.new:
                self._publish(self.handles[fh].path)
            return 0

    def release(self, path: str, fh: int) -> int:
        with self.mutex:
            handle = self.handles.pop(fh)
            staged = self.staged.get(handle.path)
            if staged is not None and handle.counted:  # a reader's close leaves a writer's staging in place
                staged.handles -= 1
                if staged.handles <= 0:
                    del self.staged[handle.path]
            return 0

    def unlink(self, path: str) -> int:
        with self.mutex:
            self.staged.pop(path, None)
            blob = self.bucket.get_blob(path.lstrip("/"))
            if blob is not None:
                blob.delete()
            self._remember(path, None)
            return 0

    def rename(self, old: str, new: str) -> int:
        with self.mutex:
            found = self._lookup(old)
            if found is None:
                raise fuse.FuseOSError(errno.ENOENT)
            if found.folder:
                raise fuse.FuseOSError(errno.EIO)  # rename-dir-limit is 0 by default: folders are not renamed
            if old in self.staged and self.staged[old].dirty:
                self._publish(old)  # "Rename Operation Syncs the File"
            source = self.bucket.get_blob(old.lstrip("/"))
            if source is None:
                raise fuse.FuseOSError(errno.ESTALE)
            self.bucket.copy_blob(source, self.bucket, new.lstrip("/"))
            source.delete()
            staged = self.staged.pop(old, None)
            self._remember(old, None)
            self.cache.pop(new, None)
            moved = self._lookup(new)
            if staged is not None and moved is not None:
                staged.generation = moved.generation
                self.staged[new] = staged
                for handle in self.handles.values():
                    if handle.path == old:
                        handle.path, handle.generation = new, moved.generation
            return 0

    def mkdir(self, path: str, mode: int) -> int:
        with self.mutex:
            if self._lookup(path) is not None:
                raise fuse.FuseOSError(errno.EEXIST)
            self.bucket.blob(path.lstrip("/") + "/").upload_from_string(b"")
            self._remember(path, Object(0, 0, folder=True))
            return 0

    def rmdir(self, path: str) -> int:
        with self.mutex:
            prefix = path.lstrip("/") + "/"
            inside = [blob for blob in self.bucket.list_blobs(prefix=prefix, max_results=2) if blob.name != prefix]
            if inside or any(os.path.dirname(p) == path for p in self.staged):
                raise fuse.FuseOSError(errno.ENOTEMPTY)
            marker = self.bucket.get_blob(prefix)
            if marker is not None:
                marker.delete()
            self._remember(path, None)
            return 0

    def chmod(self, path: str, mode: int) -> int:
        return 0  # gcsfuse ignores modes (file-mode/dir-mode are mount options)

    def chown(self, path: str, uid: int, gid: int) -> int:
        return 0

    def utimens(self, path: str, times: tuple[int, int] | None = None) -> int:
        return 0

    def statfs(self, path: str) -> dict[str, int]:
        return {"f_bsize": 4096, "f_frsize": 4096, "f_blocks": 1 << 30, "f_bfree": 1 << 30, "f_bavail": 1 << 30,
                "f_files": 1 << 20, "f_ffree": 1 << 20, "f_namemax": 1024}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bucket")
    parser.add_argument("mountpoint")
    parser.add_argument("--ttl", type=float, default=60.0, help="metadata-cache:ttl-secs; negative: never expires")
    options = parser.parse_args()
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    bucket = storage.Client(project="test", credentials=AnonymousCredentials()).bucket(options.bucket)
    ttl = None if options.ttl < 0 else options.ttl
    fuse.FUSE(GcsFuse(bucket, ttl), options.mountpoint, foreground=True, allow_other=True, default_permissions=False,
              attr_timeout=0, entry_timeout=0, negative_timeout=0, direct_io=True, hard_remove=True)  # fmt: skip


if __name__ == "__main__":
    main()
