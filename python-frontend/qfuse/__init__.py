"""qfuse: the Python frontend of the qfuse compiler.

- `qfuse.encodings`: encoding names ("int4-g128", "nf4", ...) -> #qf.enc text
- `qfuse.ir`: a builder for qf dialect IR text
- `qfuse.config`: a Hugging Face config.json, validated (limits: testdata/model-configs)
- `qfuse.model`: a validated config -> the IR of a whole decode step
- `qfuse.encoding_check`: an EncodingPlan checked by the compiler's parser before emit
- `qfuse.decode_step`: the decode step's linear layers, as the benchmarks run them
- `qfuse.tools`: qfuse-opt / qfuse-compile
- `qfuse.report`: the roofline report (table, SVG)
- `qfuse.runtime`: ctypes bindings over the runtime's C API (the library in
  `qfuse.c_library`, the tokenizer in `qfuse.tokenizer`)
- `qfuse.gptq`: the GPTQ block kernels of a model's shapes (compile-gptq)
- `qfuse.quantizer`: GPTQ of a model on the GPU through the C API's
  qfuse_quantize, else the qfuse-quantize tool (`qfuse.quantize(...)`)
- `qfuse.tune`: a model's tuning database measured on the user's GPU (its steps
  in tune_candidates, tune_prepare, tune_measure, tune_select)
- `qfuse.torch_import`: a torch model as a model directory (save_checkpoint)
- `qfuse.safetensors`: the safetensors format with the standard library

Command line: python3 -m qfuse {emit,compile,compile-gptq,report,run,bench,generate,
quantize,tune,encodings} (cli.py; each command in a cli_<command>.py).
"""
__version__ = "0.1.0"

from .encodings import EncodingError, EncodingPlan, encoding_attr, encoding_text  # noqa: F401
from .gptq import GptqError, gptq_ir  # noqa: F401
from .model import ConfigError, ModelConfig, emit_decode_step_only, emit_model  # noqa: F401
from .quantizer import QuantizeError, quantize  # noqa: F401
from .torch_import import save_checkpoint  # noqa: F401

__all__ = ["ConfigError", "EncodingError", "EncodingPlan", "GptqError", "ModelConfig",
           "QuantizeError", "encoding_attr", "encoding_text", "emit_decode_step_only",
           "emit_model", "gptq_ir", "quantize", "save_checkpoint"]
