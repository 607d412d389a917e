"""Files written whole or not at all (the Python side of runtime/include/qfuse/
runtime/AtomicFile.h).

Every file the frontend writes (emitted IR, artifacts, safetensors, configs,
JSON reports, SVGs, tuning databases) is written under a temporary name in
the same directory, "<path>.partial-<pid>-<n>", flushed to disk and renamed
over <path> only when complete. A write that fails part-way (a full disk, an
exception, Ctrl-C) leaves nothing at <path> that looks finished, and an
earlier file there is unchanged.

    with atomic_open("report.json", "w") as f:     # a file object
        json.dump(entries, f)
    write_text("model.mlir", text)
    write_json("db.json", db, indent=1)
    with atomic_path("model.qfa") as tmp:          # for a tool writing a path
        subprocess.run(["qfuse-compile", "in.mlir", "-o", tmp], check=True)
"""
import contextlib
import itertools
import json
import os

_counter = itertools.count()


def partial_path(path):
    """The temporary name beside `path` (unique in this process)."""
    return f"{os.fspath(path)}.partial-{os.getpid()}-{next(_counter)}"


def _sync_directory(path):
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # not every file system syncs directories; the file is in place
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path):
    """Yields a temporary path beside `path`; when the block ends normally
    the file written there (which must exist) is renamed over `path`, and
    otherwise removed."""
    path = os.fspath(path)
    partial = partial_path(path)
    try:
        yield partial
        os.replace(partial, path)
        _sync_directory(path)
    finally:
        if os.path.lexists(partial):
            os.remove(partial)


def write_error(error, path):
    """`error` (an OSError writing the temporary of `path`) as one naming
    `path` and saying that nothing was written there."""
    return OSError(error.errno, f"writing {path} failed: {error.strerror or error}; "
                   f"nothing was written to {path} (an earlier file there is "
                   "unchanged)")


class _Writer:
    """The temporary's file object, whose write errors name the final path."""

    def __init__(self, f, path):
        self._f, self._path = f, path

    def write(self, data):
        try:
            return self._f.write(data)
        except OSError as e:
            raise write_error(e, self._path) from None

    def __getattr__(self, name):
        return getattr(self._f, name)


@contextlib.contextmanager
def atomic_open(path, mode="w", **kwargs):
    """open() of the temporary beside `path` (mode "w" or "wb" and open's
    keyword arguments), flushed to disk and renamed over `path` when the
    block ends normally. Write errors name `path`."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open: mode {mode!r}, expected 'w' or 'wb'")
    path = os.fspath(path)
    with atomic_path(path) as partial:
        with open(partial, mode, **kwargs) as f:
            yield _Writer(f, path)
            try:
                f.flush()
                os.fsync(f.fileno())
            except OSError as e:
                raise write_error(e, path) from None


def write_text(path, text):
    with atomic_open(path, "w") as f:
        f.write(text)


def write_bytes(path, data):
    with atomic_open(path, "wb") as f:
        f.write(data)


def write_json(path, value, trailing_newline=True, **dump_kwargs):
    """json.dump(value) to `path`; the whole text is made first, so a value
    that cannot be written as JSON leaves nothing behind."""
    text = json.dumps(value, **dump_kwargs)
    write_text(path, text + ("\n" if trailing_newline else ""))


__all__ = ["atomic_open", "atomic_path", "partial_path", "write_bytes", "write_error",
           "write_json", "write_text"]
