#!/usr/bin/env bash
# Copies the runtime's header-only dependencies (nlohmann-json, CLI11) and the
# googletest sources from this machine's Debian packages into a folder that
# git ignores, for a machine without a package registry (the GPU machine):
#
#   runtime/tools/vendor-headers.sh            # -> build-vendor/
#   cmake ... -DQFUSE_THIRD_PARTY_DIR=$PWD/build-vendor   (the default)
#
# Install the packages first: scripts/install-deps.sh.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
dest="${1:-$root/build-vendor}"

mkdir -p "$dest/include"
for dir in /usr/include/nlohmann /usr/include/CLI; do
  if [ ! -d "$dir" ]; then
    echo "vendor-headers: $dir is missing (apt-get install nlohmann-json3-dev libcli11-dev)" >&2
    exit 1
  fi
  rm -rf "$dest/include/$(basename "$dir")"
  cp -r "$dir" "$dest/include/"
done
if [ -d /usr/src/googletest ]; then
  rm -rf "$dest/googletest"
  cp -r /usr/src/googletest "$dest/googletest"
fi
echo "vendor-headers: wrote $(du -sh "$dest" | cut -f1) to $dest"
