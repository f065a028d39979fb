#!/usr/bin/env bash
# The CUDA backend's check on a real GPU, in one call on a fresh machine (see README, "CUDA"):
#   1. build with nvcc (sm_90 only, to save time) and run the whole test suite: on a GPU, the
#      kernel sweeps and network tests run every CUDA kernel on the device as well as in the
#      CPU emulator;
#   2. validate every CUDA kernel on every network against PyTorch run on the same GPU in FP32
#      (TF32 off), batch 4;
#   3. benchmark batch 1 and 32, eager, with transfers and as a CUDA Graph, against PyTorch
#      (cuDNN) eager FP32 and TF32 on the same weights; the largest layers alone, our FP32 and TF32
#      kernels against cuDNN's, and the int8 kernels on the same layers; int8 networks against our
#      FP32 on the device, and PyTorch's quantised models validated with every CUDA int8 kernel.
# Results (JSON, the summary with the ratios, the single-layer conv-*.json that the README's CUDA
# progression table is made from, the log) go to $OUT (or ./gpu-check-out).
# Without Debian packages on that machine, stage the dependencies first where they are installed:
#   tools/stage_deps.sh   (copies them into .device-deps/; take that folder along)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/gpu-check-out}
mkdir -p "$out"
log=$out/log.txt
work=$(mktemp -d)
models=(lab-cnn lenet5 resnet8 mobilenet-tiny)
# resnet8's largest layer at batch 32, and the lab's reference layer (issue 3's target problem).
layers=mb32ic16ih32oc16oh32kh3ph1,mb32ic64ih56oc64oh56kh3ph1
status=0
step() { echo "== $(date +%T) $*" | tee -a "$log"; }
run() { "$@" >>"$log" 2>&1 || { echo "FAILED ($?): $*" | tee -a "$log"; status=1; }; }

deps=$PWD/.device-deps/usr
[[ -d $deps ]] && export LD_LIBRARY_PATH=$deps/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
step "machine: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1), $(nproc) cores"
step configure and build
run cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCONVLAB_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  ${deps:+-DCMAKE_PREFIX_PATH=$deps}
run cmake --build build-gpu -j "$(nproc)"
[[ -x build-gpu/convlab ]] || { step "no binary: see $log"; exit 1; }
run build-gpu/convlab kernels

step "tests (every CUDA kernel on the device and in the emulator)"
(cd build-gpu && ctest -j "$(nproc)" -E torch_live_validation --output-on-failure --timeout 600) >>"$log" 2>&1 || status=1
grep -E "tests passed|tests failed|Failed|\*\*\*" "$log" | tail -15

step "validate against PyTorch on the GPU (FP32, TF32 off), batch 4"
for m in "${models[@]}"; do
  run python3 tools/export_torch.py --model "$m" --seed 7 --batch 4 --device cuda --out "$work/$m"
  run build-gpu/convlab validate --backend cuda --model "$m" --weights "$work/$m/weights.safetensors" \
    --input "$work/$m/input.safetensors" --expect "$work/$m/expect.safetensors" --kernel all --json "$work/validate-$m.json"
done
grep -E "PASS|FAIL|all pass" "$log" | tail -40

step "benchmark: convlab (eager, with transfers, graph) at batch 1 and 32"
for m in "${models[@]}"; do
  run build-gpu/convlab run --backend cuda --model "$m" --weights "$work/$m/weights.safetensors" --kernel all --per-layer \
    --batch 1,32 --warmup 10 --trials 100 --cuda-graph --explain --json "$work/run-$m.json"
done
# What fusing lab-cnn's pools into cuda.06's reductions saves at batch 1 (the run above fused them).
run build-gpu/convlab run --backend cuda --model lab-cnn --weights "$work/lab-cnn/weights.safetensors" --kernel cuda.auto \
  --batch 1 --warmup 10 --trials 100 --cuda-graph --no-fuse --json "$work/nofuse-lab-cnn.json"
run build-gpu/convlab conv --backend cuda --problem "${layers%%,*}" --kernel all --json "$work/conv-1.json"
run build-gpu/convlab conv --backend cuda --problem "${layers##*,}" --kernel all --json "$work/conv-2.json"
# The int8 kernels (cuda.20 __dp4a, cuda.21 mma.sync, cuda.22 direct) on the same two layers, checked against the int8 oracle.
run build-gpu/convlab conv --backend cuda --precision int8 --problem "${layers%%,*}" --kernel all --json "$work/conv-int8-1.json"
run build-gpu/convlab conv --backend cuda --precision int8 --problem "${layers##*,}" --kernel all --json "$work/conv-int8-2.json"
# Int8 networks on the device (convlab's own calibration) against our FP32 in the same run, and
# PyTorch's quantised models (tests/data, made on the CPU) validated with every CUDA int8 kernel.
for m in resnet8 mobilenet-tiny; do
  run build-gpu/convlab run --backend cuda --model "$m" --precision fp32,int8 --kernel all --batch 1,32 --warmup 10 \
    --trials 100 --json "$work/int8-run-$m.json"
  run build-gpu/convlab validate --backend cuda --precision int8 --model "$m" --kernel all \
    --weights "tests/data/$m/int8/quantized.safetensors" --input "tests/data/$m/int8/input.safetensors" \
    --expect "tests/data/$m/int8/expect.safetensors" --json "$work/int8-validate-$m.json"
done
step "benchmark: PyTorch (cuDNN) on the same weights"
run python3 tools/torch_gpu_bench.py --weights-dir "$work" --models "$(IFS=,; echo "${models[*]}")" --batches 1,32 \
  --layers "$layers" --out "$out/torch_gpu.json"

step summary
run python3 tools/gpu_summary.py --work "$work" --torch "$out/torch_gpu.json" --out "$out"
cat "$out/summary.txt" 2>/dev/null
# The README's CUDA progression table, from the reference layer's run (tools/progression_table.py):
# paste it with `tools/progression_table.py OUT/conv-2.json --torch OUT/torch_gpu.json --readme README.md`.
cp "$work"/conv-*.json "$out"/ 2>/dev/null
run python3 tools/progression_table.py "$work/conv-2.json" --torch "$out/torch_gpu.json"
rm -rf "$work"
exit $status
