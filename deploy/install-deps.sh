#!/usr/bin/env bash
# Installs the Debian packages nasd builds, runs and is tested with (see README: Dependencies).
# Idempotent; skips apt entirely when everything is already there.
set -euo pipefail
PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libtirpc-dev rpcbind nfs-common liburing-dev libboost-dev libjemalloc-dev libssl-dev libspdlog-dev libisal-dev
  libgtest-dev libgmock-dev
  libnfs-dev libnfs-utils
  libfuse3-dev fuse3
  nfs-ganesha nfs-ganesha-vfs
  tshark gnuplot-nox iperf3 iproute2 nftables
  libmnl-dev iputils-arping
  clang libclang-rt-14-dev
  prometheus-cpp-dev libcivetweb-dev
  libcurl4-openssl-dev nlohmann-json3-dev etcd-server etcd-client
  chromium chromium-driver
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
# tshark asks whether non-root users may capture; answer for it.
echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
