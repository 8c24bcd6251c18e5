"""The floating-point host a run records (``experiments.loop.host``): rows reproduce per host only, so the
config must say which CPU dispatch they ran with, and a resume on another dispatch keeps the record."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from experiments.loop.config import ExperimentConfig
from experiments.loop.host import DISPATCH_OVERRIDES, cpu_model_and_flags, floating_point_host
from experiments.loop.results import write_config_json

CPUINFO = """processor\t: 0
model name\t: Example CPU @ 2.0GHz
flags\t\t: fpu sse4_2 avx avx2 fma avx512f avx512bw rdrand
processor\t: 1
model name\t: Example CPU @ 2.0GHz
flags\t\t: fpu sse4_2 avx avx2 fma avx512f avx512bw rdrand
"""


def test_cpuinfo_parsed_to_model_and_the_flags_that_move_results():
    model, flags = cpu_model_and_flags(CPUINFO)
    assert model == "Example CPU @ 2.0GHz"
    assert flags == ["sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw"]  # fpu, rdrand do not move results
    assert cpu_model_and_flags("") == ("unknown", [])


def _host_in_subprocess(**env) -> dict:
    """``floating_point_host()`` of a fresh process whose environment has only the overrides in ``env``
    (the ones this machine's own environment sets, e.g. ``OPENBLAS_CORETYPE``, are taken out)."""
    code = "import json; from experiments.loop.host import floating_point_host; print(json.dumps(floating_point_host()))"
    clean = {k: v for k, v in os.environ.items() if k not in DISPATCH_OVERRIDES}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**clean, **env}, cwd=os.path.dirname(os.path.dirname(__file__)))
    return json.loads(out.stdout)


def test_a_dispatch_override_shows_in_the_record():
    """A process told to skip AVX2 loops reports them off and names the override; one told nothing
    reports the host's own dispatch (read from the real numpy and OpenBLAS of this environment)."""
    plain = _host_in_subprocess()  # no override, even where the machine's environment sets one
    assert plain["openblas_core"]  # numpy's wheel bundles OpenBLAS and names its kernel family
    assert plain["overrides"] == {}
    if "AVX2" in plain["numpy_simd"]:
        limited = _host_in_subprocess(NPY_DISABLE_CPU_FEATURES="AVX2 FMA3 AVX512F AVX512CD AVX512_SKX "
                                      "AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR", OPENBLAS_CORETYPE="Sandybridge")
        assert "AVX2" not in limited["numpy_simd"]
        assert limited["openblas_core"].lower() == "sandybridge"
        assert limited["overrides"]["OPENBLAS_CORETYPE"] == "Sandybridge"


def test_resume_on_another_host_keeps_the_previous_record(tmp_path):
    cfg = ExperimentConfig.from_flat(tasks=("counting",), out=tmp_path)
    write_config_json(tmp_path, cfg)
    doc = json.loads((tmp_path / "config.json").read_text())
    assert doc["cpu"] == json.loads(json.dumps(floating_point_host()))
    write_config_json(tmp_path, cfg)  # same config, commit and host: one record
    assert not (tmp_path / "config.1.json").exists()
    doc["cpu"] = {**doc["cpu"], "openblas_core": "SomeOtherCore"}  # as if the rows so far ran elsewhere
    (tmp_path / "config.json").write_text(json.dumps(doc))
    write_config_json(tmp_path, cfg)
    assert json.loads((tmp_path / "config.1.json").read_text())["cpu"]["openblas_core"] == "SomeOtherCore"
