"""The host facts that decide an episode's floating-point path, recorded beside every run's config.

Why: the simulation is deterministic on one machine (the same episode, config and seed give the
same row), but not across machines. numpy and OpenBLAS pick SIMD kernels by the CPU they find
(AVX-512 on one host, AVX2 on another), the last bits of a sum differ, and over a thousand
contact-rich steps the difference can change how many steps a placement takes or whether it
succeeds. Forcing the kernels by hand shows it: the same episode at the same commit times out
with this machine's default kernels and succeeds with ``NPY_DISABLE_CPU_FEATURES`` set to the
AVX-512 features or with ``OPENBLAS_CORETYPE=Haswell``, each time the same way. A row can only be
reproduced exactly on a host with the same dispatch, so the run says which dispatch it had.
"""

from __future__ import annotations

import ctypes
import glob
import os
import platform
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

# Environment variables that override the CPU dispatch of the libraries the simulation loop uses
# (numpy's SIMD loops, numpy's OpenBLAS, torch's ATen kernels, Mesa llvmpipe's vector width).
DISPATCH_OVERRIDES = ("NPY_DISABLE_CPU_FEATURES", "OPENBLAS_CORETYPE", "ATEN_CPU_CAPABILITY",
                      "LP_NATIVE_VECTOR_WIDTH")
# The kernels every x86_64 host with AVX2 chooses the same way: numpy's AVX-512 loops switched off
# (naming a feature a CPU lacks is harmless; numpy only turns features off) and OpenBLAS's Haswell
# kernels (what it picks on AVX2 Intel and Zen hosts). Processes started under these play an
# episode the same on an AVX-512 host as on an AVX2 one.
PORTABLE_DISPATCH = {
    "NPY_DISABLE_CPU_FEATURES": "AVX512F AVX512CD AVX512_KNL AVX512_KNM AVX512_SKX AVX512_CLX AVX512_CNL "
                                "AVX512_ICL AVX512_SPR",
    "OPENBLAS_CORETYPE": "Haswell",
}
# CPU flags whose presence changes which kernels run (the rest do not move results).
SIMD_FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "amx_tile")


def cpu_model_and_flags(cpuinfo: str | None = None) -> tuple[str, list[str]]:
    """The CPU's model name and which of :data:`SIMD_FLAGS` it has (from ``/proc/cpuinfo``)."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo") as f:
                cpuinfo = f.read()
        except OSError:
            return "unknown", []
    model, flags = "unknown", set()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and model == "unknown":
            model = value.strip()
        elif key == "flags" and not flags:
            flags = set(value.split())
    return model, [f for f in SIMD_FLAGS if f in flags]


def numpy_simd() -> list[str]:
    """The SIMD features numpy's loops dispatch to in this process (after any override)."""
    try:
        from numpy.core._multiarray_umath import __cpu_features__
    except ImportError:  # numpy >= 2 moved it
        from numpy._core._multiarray_umath import __cpu_features__
    return sorted(k for k, on in __cpu_features__.items() if on)


def openblas_core() -> str | None:
    """The kernel family numpy's bundled OpenBLAS chose (``SkylakeX``, ``Haswell`` ...), if any."""
    import numpy

    for lib in sorted(glob.glob(os.path.join(os.path.dirname(numpy.__file__) + ".libs", "libopenblas*.so*"))):
        try:
            handle = ctypes.CDLL(lib)
        except OSError:
            continue
        for name in ("openblas_get_corename64_", "openblas_get_corename", "scipy_openblas_get_corename"):
            fn = getattr(handle, name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return fn().decode()
    return None


def floating_point_host() -> dict[str, Any]:
    """What a reader needs to reproduce a row exactly: the CPU, the kernels chosen, the overrides set."""
    model, flags = cpu_model_and_flags()
    return {
        "model": model,
        "simd_flags": flags,
        "numpy_simd": numpy_simd(),
        "openblas_core": openblas_core(),
        "overrides": {k: os.environ[k] for k in DISPATCH_OVERRIDES if k in os.environ},
    }


@contextmanager
def portable_dispatch() -> Iterator[dict[str, str]]:
    """Set :data:`PORTABLE_DISPATCH` in ``os.environ`` for the processes started inside the block.

    Why a block and not this process: numpy and OpenBLAS read these variables once, when they are
    loaded, so they act on spawned workers only (the harness's pool uses the spawn context). Outside
    x86_64 the block changes nothing. Yields the variables it set."""
    pinned = dict(PORTABLE_DISPATCH) if platform.machine() in ("x86_64", "AMD64") else {}
    before = {k: os.environ.get(k) for k in pinned}
    os.environ.update(pinned)
    try:
        yield pinned
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
