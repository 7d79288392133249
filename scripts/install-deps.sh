#!/bin/sh
# Install minirt's build and test dependencies from Debian's packages when any is missing (run as root).
# With --models, also the Python tooling used to export the model tests (Debian's torch/torchvision, CPU) and
# tools/dump_torch.py's onnx module.
set -eu
need=""
command -v cmake >/dev/null 2>&1 || need="$need cmake"
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
command -v cc >/dev/null 2>&1 || need="$need gcc libc6-dev"
command -v make >/dev/null 2>&1 || need="$need make"
command -v strace >/dev/null 2>&1 || need="$need strace"
command -v protoc-c >/dev/null 2>&1 || need="$need protobuf-c-compiler"
[ -f /usr/include/protobuf-c/protobuf-c.h ] || need="$need libprotobuf-c-dev"
pkg-config --exists openblas 2>/dev/null || need="$need libopenblas-dev"
pkg-config --exists criterion 2>/dev/null || need="$need libcriterion-dev"
pkg-config --exists json-c 2>/dev/null || need="$need libjson-c-dev"
[ -f /usr/include/onnx/onnx.proto ] || need="$need libonnx-dev"
if [ "${1:-}" = "--models" ]; then
    /usr/bin/python3 -c "import torch, torchvision, numpy, onnx" >/dev/null 2>&1 ||
        need="$need python3-torch python3-torchvision python3-numpy python3-onnx"
fi
if [ -n "$need" ]; then
    echo "installing:$need"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $need >/dev/null
fi
