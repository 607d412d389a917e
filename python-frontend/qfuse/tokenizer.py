"""A model directory's tokenizer through the C API (host only, no GPU): encode,
decode, the chat format, stop ids and streaming decode (docs/text-generation.md)."""
import ctypes
import os

from .c_library import Handle, QfuseError, load_library


def _text(lib, pointer, length, what):
    """The UTF-8 text a C call returned (pointer, length), or its error."""
    if not pointer:
        raise QfuseError(f"{what}: {lib.error()}")
    return ctypes.string_at(pointer, length.value).decode("utf-8")



class Tokenizer(Handle):
    """A model directory's tokenizer.json through the C API (host only, no GPU).

        tok = Tokenizer("DIR")
        ids = tok.encode("Hello")                 # BOS as tokenizer_config.json says
        text = tok.decode(ids, skip_special=True)
        prompt = tok.chat("Hi", system="Be brief.")   # the model's chat format
        stops = tok.stop_ids(chat=True)
        stream = tok.stream()                     # stream.push(id) -> text
    """

    _close = "qfuse_tokenizer_close"

    def __init__(self, model_dir, library=None):
        self.lib = library or load_library()
        self.model_dir = os.fspath(model_dir)
        self.handle = self.lib.lib.qfuse_tokenizer_open(os.fsencode(self.model_dir))
        if not self.handle:
            raise QfuseError(f"tokenizer {self.model_dir}: {self.lib.error()}")


    def encode(self, text, add_special=True):
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        capacity = len(data) + 16
        while True:
            out = (ctypes.c_int32 * capacity)()
            n = self.lib.lib.qfuse_tokenizer_encode(self.handle, data, len(data),
                                                    int(add_special), out, capacity)
            if n < 0:
                raise QfuseError(f"encode: {self.lib.error()}")
            if n <= capacity:
                return list(out[:n])
            capacity = n

    def decode(self, ids, skip_special=False):
        ids = [int(i) for i in ids]
        array = (ctypes.c_int32 * max(len(ids), 1))(*ids)
        length = ctypes.c_size_t()
        return _text(self.lib, self.lib.lib.qfuse_tokenizer_decode(
            self.handle, array, len(ids), int(skip_special), ctypes.byref(length)),
            length, "decode")

    def chat(self, user, system=None):
        """The prompt text in the model's chat format (encode it with
        add_special=False: it holds BOS where the format has one)."""
        length = ctypes.c_size_t()
        return _text(self.lib, self.lib.lib.qfuse_tokenizer_chat(
            self.handle, system.encode("utf-8") if system is not None else None,
            user.encode("utf-8"), ctypes.byref(length)), length, "chat")

    def stop_ids(self, chat=False):
        out = (ctypes.c_int32 * 64)()
        n = self.lib.lib.qfuse_tokenizer_stop_ids(self.handle, int(chat), out, 64)
        if n < 0:
            raise QfuseError(f"stop_ids: {self.lib.error()}")
        if n > 64:
            out = (ctypes.c_int32 * n)()
            n = self.lib.lib.qfuse_tokenizer_stop_ids(self.handle, int(chat), out, n)
        return list(out[:n])

    def stream(self):
        return TextStream(self)


class TextStream(Handle):
    """Streaming decode: push(id) returns the text that became complete."""

    _close = "qfuse_text_stream_close"

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer  # kept alive while the stream is
        self.lib = tokenizer.lib
        self.handle = self.lib.lib.qfuse_text_stream_open(tokenizer.handle)
        if not self.handle:
            raise QfuseError(f"stream: {self.lib.error()}")

    def push(self, token):
        length = ctypes.c_size_t()
        return _text(self.lib, self.lib.lib.qfuse_text_stream_push(
            self.handle, int(token), ctypes.byref(length)), length, "stream push")

    def finish(self):
        length = ctypes.c_size_t()
        return _text(self.lib, self.lib.lib.qfuse_text_stream_finish(
            self.handle, ctypes.byref(length)), length, "stream finish")



__all__ = ["TextStream", "Tokenizer"]
