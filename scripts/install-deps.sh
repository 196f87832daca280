#!/usr/bin/env bash
# Installs the Debian 12 packages linkem needs to build, test and run. Idempotent: does
# nothing when everything is present. Needs root (or sudo) for apt-get.
set -euo pipefail
case ${1:-} in
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
esac
(($# == 0)) || { echo "install-deps.sh: takes no arguments (allowed: --help), not '$*'" >&2; exit 2; }

packages=(
  # toolchain
  cmake ninja-build g++ pkg-config clang-format
  # libraries
  libgtest-dev libgmock-dev googletest libbenchmark-dev nlohmann-json3-dev libcli11-dev
  libdpdk-dev dpdk dpdk-dev libpcap-dev libzmq3-dev cppzmq-dev
  # tests and plots: real traffic through network namespaces (dpdk-dev has dpdk-testpmd,
  # the baseline of the data-plane benchmark), sweep plots
  iproute2 iputils-ping iperf3 ethtool gnuplot-nox
  # the bufferbloat measurement's latency probe (scripts/queues-veth.sh)
  irtt
  # the GUI's desktop files: validators (ctest packaging.desktop_files) and the icon renderer
  # (scripts/render-icons.sh)
  desktop-file-utils appstream librsvg2-bin
  # the Debian packages (cpack, ctest packaging.debs): dpkg-shlibdeps, man pages from
  # --help, lintian, systemd-analyze for the unit
  dpkg-dev help2man lintian systemd
  # the demo's check of linkemd's telemetry (scripts/demo-check.py)
  python3-zmq
  # the Python example client and its test (examples/python/, tests/ctl)
  python3
  # capture: tshark reads linkemd's pcapng and runs linkem.lua in the tests (docs/capture.md)
  tshark
  # the GUI: Qt 6 Widgets and Charts (Qt6Charts' CMake package needs Qt6OpenGL's, which is in
  # libqt6opengl6-dev; the charts draw without OpenGL)
  qt6-base-dev qt6-charts-dev libqt6opengl6-dev
  # linkem-gui's screenshot under a real X server (scripts/gui-screenshot.sh, ctest gui.end_to_end)
  xvfb xauth
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
