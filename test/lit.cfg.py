# -*- Python -*-
# lit configuration for the qfuse regression tests.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "QFUSE"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
# .test: checks of the sources themselves (test/Scripts).
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.qfuse_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
llvm_config.use_default_substitutions()
# The source tree, for the tests that run its scripts.
config.substitutions.append(("%qfuse_src", config.qfuse_src_root))
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.qfuse_tools_dir, config.llvm_tools_dir]
tools = ["qfuse-opt", "qfuse-compile", "qfuse-cpu-check"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# ptxas checks run where the CUDA toolkit is installed; elsewhere lit reports
# them UNSUPPORTED (REQUIRES: ptxas) rather than passing silently.
import shutil

ptxas = None
for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
    if root and os.access(os.path.join(root, "bin", "ptxas"), os.X_OK):
        ptxas = os.path.join(root, "bin", "ptxas")
        break
ptxas = ptxas or shutil.which("ptxas")
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
else:
    lit_config.note("ptxas not found: tests that assemble PTX are UNSUPPORTED")

# qfuse-sim (docs/gpu-sim.md): the CUDA driver, cuBLAS and cuSOLVER on the
# CPU. Where it and qfuse-bench are built, %sim runs a command over it and
# the tests under Sim/ run compiled kernels against the C++ reference;
# elsewhere they are UNSUPPORTED (REQUIRES: gpu-sim).
sim_lib = os.path.join(config.qfuse_obj_root, "sim", "lib")
qfuse_bench = os.path.join(config.qfuse_tools_dir, "qfuse-bench")
if os.path.exists(os.path.join(sim_lib, "libcuda.so.1")) and os.access(qfuse_bench, os.X_OK):
    config.available_features.add("gpu-sim")
    config.substitutions.append(("%sim", "env LD_LIBRARY_PATH=" + sim_lib))
    llvm_config.add_tool_substitutions(["qfuse-bench"], tool_dirs)
else:
    lit_config.note("qfuse-sim or qfuse-bench not built: tests that run kernels on it are UNSUPPORTED")
