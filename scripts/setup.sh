#!/usr/bin/env bash
# One-shot set-up for a fresh Debian/Ubuntu machine (CPU only).
#
# Why each step exists:
#  * SAPIEN creates a Vulkan render system even for state-only simulation. Debian 12's own
#    lavapipe (Mesa 22) is rejected by SAPIEN, so Mesa 25 comes from bookworm-backports.
#  * torch must be installed first and pinned (constraints.txt), otherwise pip resolves a
#    multi-GB CUDA build for any package that depends on torch.
#  * numpy<2: mplib 0.1.1 (pinned by mani-skill 3.0.1) segfaults under numpy 2.
#  * --robomme PATH (optional): also install the benchmark's own envs from a clone of
#    RoboMME/robomme_benchmark at PATH (python -m envs.official.install: checks the path first,
#    then pip install --no-deps -e PATH), for --backend robomme.
set -euo pipefail
ROBOMME_SRC=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --robomme) [[ $# -ge 2 ]] || { echo "error: --robomme needs a path (a clone of RoboMME/robomme_benchmark)" >&2; exit 2; }
               ROBOMME_SRC=$2; [[ "$ROBOMME_SRC" = /* ]] || ROBOMME_SRC="$PWD/$ROBOMME_SRC"; shift 2 ;;
    *) echo "error: unknown argument '$1' (known: --robomme PATH)" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."

need_vulkan() {
  # lavapipe from Mesa >= 25 is what SAPIEN accepts.
  local v
  v=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)
  [[ -z "$v" ]] && return 0
  [[ "${v%%.*}" -lt 25 ]] && return 0
  dpkg-query -W libvulkan1 >/dev/null 2>&1 || return 0
  return 1
}

if need_vulkan; then
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  if grep -q bookworm /etc/os-release 2>/dev/null && [[ ! -f /etc/apt/sources.list.d/backports.sources ]]; then
    # Reuse the mirror already configured on this machine; never hard-code one.
    uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || echo "")
    if [[ -n "$uri" ]]; then
      printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$uri" \
        | $SUDO tee /etc/apt/sources.list.d/backports.sources >/dev/null
    fi
  fi
  $SUDO apt-get update -qq </dev/null
  if grep -q bookworm /etc/os-release 2>/dev/null; then
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -t bookworm-backports mesa-vulkan-drivers libvulkan1 </dev/null
  else
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mesa-vulkan-drivers libvulkan1 </dev/null
  fi
fi

PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
[[ -d .venv ]] || "$PY" -m venv .venv
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1
python -m pip install -q -c constraints.txt "torch==2.13.0" </dev/null
python -m pip install -q -c constraints.txt -e ".[dev]" </dev/null
if [[ -n "$ROBOMME_SRC" ]]; then
  python -m envs.official.install "$ROBOMME_SRC" </dev/null
fi
