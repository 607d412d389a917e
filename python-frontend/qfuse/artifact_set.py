"""Artifact sets on the host: one artifact per chip in one file.

`qfuse-compile --chip=sm_80,sm_90,sm_90a` (the frontend's default) writes
{"format": "qfuse-artifact-set", "version": 1, "variants": [...]}, each
variant a complete artifact (docs/artifact.md, Artifact sets). The runtime
runs the variant for the device (qfuse_target_chip says which); the readers
here see a plain artifact as a set of one. The variants of one file come
from one module: they share the model, inputs, outputs and plan batch sizes,
and differ in kernels, tilings and weight layouts.
"""

SET_FORMAT = "qfuse-artifact-set"


def variants(meta):
    """The artifacts in `meta` (a parsed artifact file): the set's variants,
    or [meta] for a plain artifact."""
    if isinstance(meta, dict) and meta.get("format") == SET_FORMAT:
        return [v for v in meta.get("variants", []) if isinstance(v, dict)]
    return [meta]


def chips(meta):
    """The chips of the file's variants, in file order."""
    return [(v.get("target") or {}).get("chip") for v in variants(meta)]


def first_variant(meta):
    """Any variant, for what every variant shares (model, plan batches)."""
    found = variants(meta)
    return found[0] if found else {}


def variant_for_chip(meta, chip):
    """The variant compiled for `chip` (the one the runtime chose); a plain
    artifact is its own variant. KeyError when the file has none."""
    for variant in variants(meta):
        if (variant.get("target") or {}).get("chip") == chip:
            return variant
    raise KeyError(f"no variant for {chip} (the file has {', '.join(map(str, chips(meta)))})")


__all__ = ["SET_FORMAT", "chips", "first_variant", "variant_for_chip", "variants"]
