#!/usr/bin/env bash
# Installs the Debian packages fxtrace builds and tests with, when missing.
# Usage: scripts/install-deps.sh   (as root, or with sudo available)
set -euo pipefail

packages=(cmake make gcc g++ clang libclang-rt-dev pkg-config python3 libzstd-dev zlib1g-dev zstd gzip
          scdoc man-db bsdextrautils systemd dpkg-dev file libtracefs-dev libtraceevent-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing: ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "error: installing ${missing[*]} needs root (or sudo)" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
