"""`python3 -m qfuse tune`: a user's own tuning database, measured on their GPU.

For a model config, an encoding and the batch sizes it will run at:

1. the model's distinct linear shapes (q/k/v/o, gate and up fused with
   silu_mul as the compile's default fusion runs them, down, lm_head);
2. per (shape, batch) the candidate tilings, listed by the compiler
   (`qfuse-compile --list-tilings`: the one definition of the candidate
   space, the default first, the rest ranked, `--list-top` per kernel
   family);
3. one artifact per candidate, and a run of `qfuse-bench --check` per
   artifact (checked against the C++ reference, timed against cuBLAS fp16
   in the same process);
4. the fastest candidate whose checks pass, per (shape, batch), into a JSON
   database in the format of bench/tuning-db.json, merged into the output
   file's entries. Compiles of that model pick it up (tools.py,
   `--tuning-db auto`).

Where qfuse-bench and a CUDA device are both here, steps 3 and 4 run now.
Elsewhere step 3 is prepared: WORK/ holds the artifacts, manifest.json,
runs.txt and run.sh (the exact qfuse-bench commands, within a time budget),
and `tune --select RESULTS` reads the results back.

Steps 1 and 2 are tune_candidates.py, step 3 tune_prepare.py (WORK/) and
tune_measure.py (the runs here), step 4 tune_select.py; this module gathers
their names.
"""
import os

from .tools import USER_TUNING_DB
from .tune_candidates import (DEFAULT_TOP, TuneError, default_ir,  # noqa: F401
                              linear_shapes, list_tilings, parse_batch_sizes, tiling_label, variant_ir,
                              weight_type)
from .tune_measure import gpu_problem, run_all  # noqa: F401
from .tune_prepare import (DEFAULT_BUDGET_S, MANIFEST, RESULTS_ARCHIVE, RUN_COST,  # noqa: F401
                           RUNS, SCRIPT, prepare, run_seconds, write_script)
from .tune_select import best_entries, select  # noqa: F401


def default_database(config_path):
    """Where `tune` writes for a model, and compiles of it look: beside its
    config.json."""
    return os.path.join(os.path.dirname(os.path.abspath(config_path)), USER_TUNING_DB)


__all__ = ["TuneError", "best_entries", "default_database", "default_ir", "gpu_problem",
           "linear_shapes", "list_tilings", "parse_batch_sizes", "prepare", "run_all", "select", "tiling_label",
           "variant_ir"]
