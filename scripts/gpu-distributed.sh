#!/usr/bin/env bash
# Frequency bands and ranks on a machine with one CUDA device and NCCL, in one go: the GPU tests of the
# decomposition (bands on one GPU, the NCCL ranks on emulated hosts, failure and signal of one rank), then
# the benchmark of docs/benchmarks.md section 4: one GPU at once against the same job forced into bands,
# and the job over 1, 2 and 4 ranks sharing the one GPU as emulated hosts.
#
#   scripts/gpu-distributed.sh BIN TESTS OUT [SIZE]
#     BIN    the seisimage binary            TESTS  folder with the test executables (it), or - to skip them
#     OUT    folder for logs and results     SIZE   the benchmark volume, IxXxS (default 1024x1024x1000)
#
# Several ranks share one GPU only as emulated hosts: each gets its own NCCL_HOSTID, and NCCL talks over
# sockets on the loopback interface. NVLink multicast stays off. Summary lines go to stdout; everything
# else to OUT.
set -uo pipefail
here=$(dirname "$(realpath "$0")")
bin=$(realpath "$1"); tests=$2; out=$(mkdir -p "$3" && realpath "$3"); size=${4:-1024x1024x1000}
export NCCL_NVLS_ENABLE=0 SEISIMAGE_BIN=$bin
status=0
# SEISIMAGE_PARTS="bands" or "ranks" runs one of the two parts; SEISIMAGE_ROUNDS sets the repeats (2).
parts=" ${SEISIMAGE_PARTS:-bands ranks} "; rounds=${SEISIMAGE_ROUNDS:-2}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"

# TESTS=- skips the tests (when the whole suite has just run on the GPU).
if [ "$tests" != "-" ]; then
  echo "== GPU tests: bands, parity, ranks"
  SEISIMAGE_GPU_TESTS=1 "$tests/it" --test-threads=1 --nocapture imaging_bands gpu_parity cli_distributed \
    >"$out/tests.log" 2>&1 || status=1
  grep -E "relative L2|ranks in|^test |test result" "$out/tests.log"
fi

echo "== benchmark volume $size"
work=$out/work
"$bin" bench -q --size "$size" --depth-steps 300 --workdir "$work" --json "$out/bench.json" >"$out/bench.txt" 2>&1 || status=1
job=$work/bench.toml

summary() { python3 "$here/stage_summary.py" "$@"; } # label manifest

run_job() { # label extra-args...
  local label=$1; shift
  "$bin" run "$job" --backend cuda --set "output.dir=\"$out/$label\"" "$@" >"$out/$label.log" 2>&1 || { status=1; tail -n 3 "$out/$label.log"; return; }
  summary "$label" "$out/$label/manifest.json"
}

if [[ $parts == *" bands "* ]]; then
  echo "== one GPU: at once, then forced into bands (device memory limited), spectrum pinned or on disk"
  for ((round = 1; round <= rounds; round++)); do
    run_job "whole-$round"
    for gb in 3 1.5; do
      run_job "bands-$gb-$round" --set "compute.device_memory_gb=$gb"
    done
    run_job "disk-1.5-$round" --set compute.device_memory_gb=1.5 --set compute.host_memory_gb=1 \
      --set "compute.scratch_dir=\"$work\""
  done
fi

if [[ $parts == *" ranks "* ]]; then
  echo "== ranks sharing the one GPU as emulated hosts"
  for n in 1 2 4; do
    for ((round = 1; round <= rounds; round++)); do
      label=ranks-$n-$round
      pids=()
      start=$(date +%s.%N)
      for ((r = 0; r < n; r++)); do
        RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r SEISIMAGE_RUN_ID=$label NCCL_HOSTID=emulated-$r NCCL_NET=Socket \
          NCCL_SOCKET_IFNAME=lo "$bin" run "$job" --backend cuda --set "output.dir=\"$out/$label\"" \
          >"$out/$label-rank$r.log" 2>&1 &
        pids+=($!)
      done
      for p in "${pids[@]}"; do wait "$p" || status=1; done
      end=$(date +%s.%N)
      echo "$label: all ranks done in $(python3 -c "print(f'{$end - $start:.2f}')") s"
      [ -f "$out/$label/manifest.json" ] && summary "$label" "$out/$label/manifest.json"
    done
  done
fi
for f in "$out"/*/*.h5 "$out"/*/*.png; do rm -f "$f"; done
rm -rf "$work"
tar czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")"
echo "status $status (logs and manifests packed in $out.tar.gz)"
exit $status
