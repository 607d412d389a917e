#!/usr/bin/env python3
"""Session 40's last A/B: table formats (NF4, NVFP4) where the crossover
rule of 1941382 left the old batches, in two regimes of the matvec
(CostModel.cpp selectMatvec), training and zoo entries side by side.
The rules to test were set before the run; the zoo cells only accept or
reject them.

  split: the matvec splits K (N too short for 2 rows a warp unsplit);
         -b --tensor-core-min-batch=3 at M = 3, 4;
  wide:  the matvec runs 4 rows a warp (N fills the GPU with them);
         -b --tensor-core-min-batch=8 (the matvec) at M = 5, 6, 7.

  make-regime-ab.py split|wide OUT

Reuses session 39's make-flag-ab.py, given these entries.
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REGIMES = {"split": ("--tensor-core-min-batch=3", "3,4"),
           "wide": ("--tensor-core-min-batch=8", "5,6,7")}
# Training (Qwen2.5-7B, Llama-3-8B) first, then zoo ids (the test set).
TRAIN = {"split": [("qw7-qo", "single", [("w", 3584, 3584)]),
                   ("qw7-down", "single", [("w", 3584, 18944)])],
         "wide": [("l3-gate_up", "gate_up", [("gate_proj", 14336, 4096),
                                             ("up_proj", 14336, 4096)]),
                  ("qw7-gate_up", "gate_up", [("gate_proj", 18944, 3584),
                                              ("up_proj", 18944, 3584)])]}
ZOO = {"split": ["s3072x3072", "s2304x9216", "s3584x14336",
                 "qkv3072+1024x2x3072", "s2048x8192"],
       "wide": ["s11008x4096", "s14336x3584", "s32064x3072"]}


def main(regime, out):
    flag, batches = REGIMES[regime]
    os.environ.update(FLAG=flag, BATCHES=batches, FORMATS="nf4,nvfp4")
    spec = importlib.util.spec_from_file_location(
        "flagab", os.path.join(HERE, "..", "2026-12-06-s39", "make-flag-ab.py"))
    flagab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(flagab)
    zoo_entries = {e["id"]: e for e in flagab.zoo.derive(flagab.zoo.load_models())[0]}
    entries = [flagab.entry(*t) for t in TRAIN[regime]]
    entries += [zoo_entries[i] for i in ZOO[regime]]
    flagab.main(regime, out, entries)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
