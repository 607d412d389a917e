"""A progress bar on stderr, drawn only when stderr is a terminal."""
import sys
import threading
import time


class Progress:
    """Counted (`update(done)` against `total`) or, with total=None, a
    spinner with the elapsed time (`with Progress("compiling"):`)."""

    def __init__(self, label, total=None, stream=None, enabled=None):
        self.label = label
        self.total = total
        self.stream = stream or sys.stderr
        self.enabled = (self.stream.isatty() if enabled is None else enabled)
        self.start = time.monotonic()
        self._thread = None
        self._stop = threading.Event()

    def update(self, done):
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.start
        if self.total:
            width = 30
            filled = int(width * done / self.total)
            bar = "#" * filled + "-" * (width - filled)
            text = f"\r{self.label} [{bar}] {done}/{self.total} {elapsed:5.1f}s"
        else:
            spinner = "|/-\\"[int(elapsed * 4) % 4]
            text = f"\r{self.label} {spinner} {elapsed:5.1f}s"
        self.stream.write(text)
        self.stream.flush()

    def __enter__(self):
        if self.enabled and self.total is None:
            def spin():
                while not self._stop.wait(0.25):
                    self.update(0)
            self._thread = threading.Thread(target=spin, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread:
            self._thread.join()
        if self.enabled:
            self.stream.write("\r" + " " * 70 + "\r")
            self.stream.flush()
        return False
