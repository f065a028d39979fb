#!/usr/bin/env bash
# Regenerates the golden references under tests/data with tools/export_torch.py (needs python3
# with torch). Per model: weights.safetensors (seed 2024, shared by both batches), and b1/, b3/ each
# holding input.safetensors and expect.safetensors, and model.onnx: the same network through
# PyTorch's ONNX export (export_torch.py --onnx; the kept layers named graph outputs), checked
# against b1 on the CPU and on the GPU emulators. Layer outputs above 4096 floats are left out so
# that the whole set stays small (about 2.5 MiB); the logits and the deep layers are kept.
# int8: resnet8 (residual adds) and mobilenet-tiny (depthwise, ReLU6) quantised by PyTorch
# (export_torch.py --quantize int8) in int8/: quantized.safetensors and a batch of 1 (layer outputs up
# to 8192 floats: enough for the deep layers to be judged on their own inputs). onnx-padded: the
# asymmetric-padding set (tools/make_padded_onnx.py).
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for model in lab-cnn lenet5 resnet8 mobilenet-tiny; do
  dir=tests/data/$model
  rm -rf "$dir"
  for batch in 1 3; do
    onnx=(); [[ $batch == 1 ]] && onnx=(--onnx)  # model.onnx: the same network through PyTorch's ONNX export
    "$python" tools/export_torch.py --model "$model" --seed 2024 --input-seed $((100 + batch)) --batch "$batch" \
      --max-tap-elems 4096 "${onnx[@]}" --out "$tmp/$model-$batch"
    mkdir -p "$dir/b$batch"
    mv "$tmp/$model-$batch/input.safetensors" "$tmp/$model-$batch/expect.safetensors" "$dir/b$batch/"
  done
  mv "$tmp/$model-1/weights.safetensors" "$tmp/$model-1/model.onnx" "$dir/"
done
for model in resnet8 mobilenet-tiny; do
  "$python" tools/export_torch.py --model "$model" --seed 2024 --input-seed 101 --batch 1 --quantize int8 \
    --max-tap-elems 8192 --out "$tmp/$model-int8"
  mkdir -p "tests/data/$model/int8"
  mv "$tmp/$model-int8/"{quantized,input,expect}.safetensors "tests/data/$model/int8/"
done
# A PyTorch CNN padding unevenly (F.pad before its convs), through ONNX: tests/data/onnx-padded.
"$python" tools/make_padded_onnx.py --out tests/data/onnx-padded
du -sh tests/data
