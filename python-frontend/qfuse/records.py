"""Bench records read back by the tuning and cost-model scripts.

The large sweeps under bench/results are kept as `<name>.json.xz` (the tree
is copied whole to the GPU machine, which takes 64 MiB at most); new runs
write plain `<name>.json`. Readers take either.

    for path in record_paths("bench/results/**", "tune-*"):
        run = read_json(path)
"""
import glob
import json
import lzma
import os


def read_json(path):
    """The JSON document at `path`, xz-decompressed where it ends in .xz."""
    opener = lzma.open if os.fspath(path).endswith(".xz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def record_paths(directory, stem_pattern):
    """Every `<stem>.json` and `<stem>.json.xz` under `directory` (a glob
    pattern; `**` recurses), sorted."""
    paths = []
    for suffix in (".json", ".json.xz"):
        paths += glob.glob(os.path.join(directory, stem_pattern + suffix),
                           recursive=True)
    return sorted(paths)
