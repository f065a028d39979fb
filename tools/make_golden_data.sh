#!/usr/bin/env bash
# Regenerates the golden references under tests/data with tools/export_torch.py (needs python3
# with torch). Per model: weights.safetensors (seed 2024, shared by both batches), and b1/, b3/ each
# holding input.safetensors and expect.safetensors. Layer outputs above 4096 floats are left out
# so that the whole set stays small (about 1.2 MiB); the logits and the deep layers are kept.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for model in lab-cnn lenet5 resnet8 mobilenet-tiny; do
  dir=tests/data/$model
  rm -rf "$dir"
  for batch in 1 3; do
    "$python" tools/export_torch.py --model "$model" --seed 2024 --input-seed $((100 + batch)) --batch "$batch" \
      --max-tap-elems 4096 --out "$tmp/$model-$batch"
    mkdir -p "$dir/b$batch"
    mv "$tmp/$model-$batch/input.safetensors" "$tmp/$model-$batch/expect.safetensors" "$dir/b$batch/"
  done
  mv "$tmp/$model-1/weights.safetensors" "$dir/"
done
du -sh tests/data
