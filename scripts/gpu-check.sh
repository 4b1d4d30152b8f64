#!/usr/bin/env bash
# The checks a change to the GPU code needs, on a machine with a CUDA device: every integration test with
# the GPU backend on, the demo job on the GPU, the RMS demo as a velocity scan, and `seisimage bench` for
# each method and for a scan of 5. Optionally a second
# binary is benchmarked alternately with the first, for comparing two builds (ratios from one session).
#
#   scripts/gpu-check.sh BIN TESTS OUT [BASELINE_BIN]
#     BIN    the seisimage binary to check        TESTS  folder with the test executables (it, limits)
#     OUT    folder for logs and bench JSON        BASELINE_BIN  an earlier build to compare with
set -uo pipefail
bin=$1; tests=$2; out=$3; base=${4:-}
mkdir -p "$out"
status=0
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"

echo "== integration tests with the GPU backend"
# The command-line tests run the binary being checked, not the path they were built beside.
SEISIMAGE_BIN=$(realpath "$bin") SEISIMAGE_GPU_TESTS=1 "$tests/it" --test-threads=1 >"$out/tests-it.log" 2>&1 || status=1
tail -n 3 "$out/tests-it.log"
grep -E "^test .*FAILED|panicked" "$out/tests-it.log" | head -20

echo "== demo on the GPU"
"$bin" run configs/demo.toml --backend cuda --set "output.dir=\"$out/demo\"" >"$out/demo.log" 2>&1 || status=1
tail -n 2 "$out/demo.log"

echo "== the RMS demo as a velocity scan on the GPU (its stages: ingest once, scan-copy per member)"
"$bin" run configs/demo-rms.toml --backend cuda --set "output.dir=\"$out/demo-rms-scan\"" \
  --set "velocity.scale=[0.9, 0.95, 1.0, 1.05, 1.1]" >"$out/demo-rms-scan.log" 2>&1 || status=1
tail -n 2 "$out/demo-rms-scan.log"

echo "== bench"
work=$(mktemp -d)
"$bin" bench -q --scales 5 --workdir "$work/scan" >"$out/bench-scan.txt" 2>&1 || status=1
grep -A12 "^velocity scan" "$out/bench-scan.txt"
bench() { # label binary method json
  "$2" bench -q --method "$3" --workdir "$work/$1-$3" --json "$out/bench-$1-$3-$4.json" \
    >"$out/bench-$1-$3-$4.txt" 2>&1 || status=1
  grep -E "without that wait|naive path|^\| ingest" "$out/bench-$1-$3-$4.txt" | sed "s/^/$1 $3 #$4: /"
}
for round in 1 2; do
  for method in phase-shift stolt split-step; do
    bench new "$bin" "$method" "$round"
    [ -n "$base" ] && bench base "$base" "$method" "$round"
  done
done
rm -rf "$work"
exit $status
