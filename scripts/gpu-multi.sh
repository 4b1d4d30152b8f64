#!/usr/bin/env bash
# One job over the several GPUs of one host: the checks and figures of docs/cluster.md and section 5 of
# docs/benchmarks.md.
#
#   scripts/gpu-multi.sh BIN OUT [SCALE_SIZE] [SCALE_STEPS]
#     BIN         the seisimage binary            OUT  folder for logs, manifests and results
#     SCALE_SIZE  the scaling volume, IxXxS (default 2048x2048x1000, 16 GB)
#     SCALE_STEPS its depth steps of 10 m (default 400)
#   LARGE_SIZE (environment) the volume of the part `large` (default 2048x2048x4000, 68 GB)
#
# Correctness, for phase shift (v(z)) and split-step (a 3-D model from functions at the four corners) on a
# 384 x 384 x 750 volume, for 2, 4 and 8 ranks as far as there are GPUs: the products of `run --gpus N`, of
# N processes started with the launcher's variables (meeting through the id file, then through
# NCCL_COMM_ID), of `mpirun -np N` where Open MPI is installed, and of N ranks as two emulated nodes (a
# host id for each half, sockets between them) equal those of one GPU within relative L2 1e-5; `--gpus N`
# twice with compute.deterministic writes identical files. A rank killed with SIGKILL mid-run, under `--gpus` and as a separate
# process, ends every rank, leaving no manifest.
#
# Scaling, on the scaling volume on 1, 2, 4, 8 GPUs: `validate` of the split-step job with its 3-D model
# from functions at the four corners; that job, the same job with a v(z) table, and phase shift with the
# table, as ranks (the input read once, a slab per rank); the 3-D job as shards (`--shard I/N`, one GPU
# each, every process reading the whole file, then `reduce`) and in frequency bands (device memory limited
# to 4 GB); phase shift on a volume beyond one GPU's memory (LARGE_SIZE, one GPU in bands, then all).
# With compute.deterministic, phase shift on 1 GPU and on all, twice each: identical files, and its cost.
# SEISIMAGE_SCALING_JOBS="big big-ps" runs only those of the three scaling jobs. Every job's one-GPU
# products are the reference of its other runs, kept until the end. With SEISIMAGE_BASE=OTHER_BIN, each
# scaling run is repeated right after with that binary (labels "base-...") and compared with it, so that
# two builds are timed on the same host in one session. Summary lines go to stdout.
set -uo pipefail
here=$(dirname "$(realpath "$0")")
bin=$(realpath "$1"); out=$(mkdir -p "$2" && realpath "$2")
scale_size=${3:-2048x2048x1000}; scale_steps=${4:-400}
large_size=${LARGE_SIZE:-2048x2048x4000}
base=${SEISIMAGE_BASE:+$(realpath "$SEISIMAGE_BASE")}
export NCCL_NVLS_ENABLE=0
status=0
fail() { echo "FAILED: $*"; status=1; }
# No run may hang the script: each is given up after this long.
limit=${SEISIMAGE_RUN_LIMIT:-180}
# The parts to run (all by default): SEISIMAGE_PARTS="scaling shards" runs only those two.
parts=" ${SEISIMAGE_PARTS:-correctness scaling deterministic shards bands large killed} "
wanted() { [[ $parts == *" $1 "* ]] && { [[ $1 == correctness || $1 == large ]] || scaling_job; }; }
now() { date +%s.%N; }
since() { python3 -c "print(f'{$(now) - $1:.2f}')"; }
summary() { python3 "$here/stage_summary.py" "$@"; } # label manifest
compare() { python3 "$here/compare_products.py" "$@"; } # a b [--identical]

gpus=$(nvidia-smi -L | wc -l)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
# The numbers of GPUs to run on besides one (SEISIMAGE_GPU_COUNTS="4": only 4), as far as there are GPUs.
counts=()
for n in ${SEISIMAGE_GPU_COUNTS:-2 4 8}; do [ "$n" -le "$gpus" ] && counts+=("$n"); done
[ ${#counts[@]} -gt 0 ] || { echo "one GPU only: nothing to do"; exit 1; }
work=$out/work
mkdir -p "$work"

# write_job FILE INPUT METHOD STEPS ROI NIxNX [VELOCITY]: a job of INPUT (lines 1..NI x 1..NX) with its
# products in npy; VELOCITY is "table" (v(z)) or "functions" (a 3-D model from the four corners), by default
# the table for phase shift and the functions for split-step.
write_job() {
  local file=$1 input=$2 method=$3 steps=$4 roi=$5 ni nx velocity
  IFS=x read -r ni nx _ <<<"$6"
  if [ "${7:-$([ "$method" = phase-shift ] && echo table || echo functions)}" = table ]; then
    velocity='kind = "table"
depths = [0.0, 3000.0]
velocities = [1800.0, 3200.0]'
  else
    velocity="kind = \"functions\""
    for corner in "1 1 1800 3000" "$ni 1 1900 3200" "1 $nx 2000 3300" "$ni $nx 2100 3500"; do
      read -r il xl top bottom <<<"$corner"
      velocity+="
[[velocity.functions]]
iline = $il
xline = $xl
depths = [0.0, 3000.0]
velocities = [$top.0, $bottom.0]"
    done
  fi
  cat >"$file" <<EOT
[input]
path = "$input"

[velocity]
$velocity

[imaging]
method = "$method"
dz = 10.0
zmax = $((steps * 10)).0
fmax = 60.0

[output]
dir = "unset"
inlines = [$((ni / 2))]
depth_slices = [$((steps * 5)).0]

[[output.roi]]
name = "box"
iline = [$((ni / 2 - roi / 2 + 1)), $((ni / 2 + roi / 2))]
xline = [$((nx / 2 - roi / 2 + 1)), $((nx / 2 + roi / 2))]
formats = ["npy"]
EOT
}

# ranks JOB OUTPUT N [VAR=VALUE ...]: N processes with the launcher's variables, each seeing one GPU;
# `node_env RANK N` prints more variables for a rank.
node_env() { :; }
ranks() {
  local job=$1 dir=$2 n=$3 r pids=()
  shift 3
  for ((r = 0; r < n; r++)); do
    env RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r SEISIMAGE_RUN_ID="$(basename "$dir")" CUDA_VISIBLE_DEVICES=$r \
      $(node_env "$r" "$n") "$@" timeout "$limit" "$bin" --quiet run "$job" --set "output.dir=\"$dir\"" >"$dir.rank$r.log" 2>&1 &
    pids+=($!)
  done
  local ok=0
  for p in "${pids[@]}"; do wait "$p" || ok=1; done
  return $ok
}

# The scaling jobs on their volume, written once: split-step with the 3-D model ($job), split-step and phase
# shift with v(z).
job=$work/big.toml
scaling_job() {
  [ -f "$job" ] && return
  local sni snx start
  IFS=x read -r sni snx _ <<<"$scale_size"
  start=$(now)
  "$bin" --quiet synth --model diffractor --size "$scale_size" "$work/big.sgy" || fail "synth $scale_size"
  echo "synth $scale_size: $(since "$start") s"
  write_job "$job" "$work/big.sgy" split-step "$scale_steps" 256 "${sni}x${snx}"
  write_job "$work/big-vz.toml" "$work/big.sgy" split-step "$scale_steps" 256 "${sni}x${snx}" table
  write_job "$work/big-ps.toml" "$work/big.sgy" phase-shift "$scale_steps" 256 "${sni}x${snx}"
}

# scaled LABEL JOB ARGS...: JOB with ARGS, its time from start to end and its stages; then the same with
# the base binary, if given, as base-LABEL.
scaled() {
  local label=$1 file=$2 start b name
  shift 2
  for b in "$bin" ${base:+"$base"}; do
    name=$label
    [ "$b" = "$bin" ] || name=base-$label
    start=$(now)
    timeout "$limit" "$b" --quiet run "$file" --set "output.dir=\"$work/$name\"" "$@" >"$work/$name.log" 2>&1 ||
      { fail "$name: $(tail -n 2 "$work/$name.log")"; continue; }
    echo "$name: $(since "$start") s end to end"
    summary "$name" "$work/$name/manifest.json"
  done
}

# validated LABEL JOB: how long `validate` of JOB takes (with the base binary too, if given).
validated() {
  local b start name
  for b in "$bin" ${base:+"$base"}; do
    name=$1
    [ "$b" = "$bin" ] || name=base-$1
    start=$(now)
    timeout "$limit" "$b" --quiet validate "$2" >"$work/$name.validate.log" 2>&1 || fail "validate $name"
    echo "$name: validate in $(since "$start") s"
  done
}

# check LABEL DIR REFERENCE: the products of DIR against REFERENCE.
check() {
  local result
  result=$(compare "$2" "$3" 2>&1) || fail "$1"
  echo "$1: $result"
}

if wanted correctness; then
  echo "== correctness: 384 x 384 x 750, 300 depth steps"
  port=29500
  "$bin" --quiet synth --model diffractor --size 384x384x750 "$work/small.sgy" || fail "synth"
  for method in phase-shift split-step; do
    small=$work/small-$method.toml
    write_job "$small" "$work/small.sgy" "$method" 300 384 384x384
    one=$work/$method-1
    CUDA_VISIBLE_DEVICES=0 "$bin" --quiet run "$small" --backend cuda --set "output.dir=\"$one\"" >"$one.log" 2>&1 ||
      fail "$method on one GPU: $(tail -n 2 "$one.log")"
    for n in "${counts[@]}"; do
      d=$work/$method-$n-gpus
      timeout "$limit" "$bin" --quiet run "$small" --gpus "$n" --set "output.dir=\"$d\"" >"$d.log" 2>&1 || fail "$method --gpus $n"
      check "$method, --gpus $n against one GPU" "$d" "$one"
      # Twice with compute.deterministic: the same files (without it phase shift's last bits vary).
      for again in det det-again; do
        timeout "$limit" "$bin" --quiet run "$small" --gpus "$n" --set compute.deterministic=true \
          --set "output.dir=\"$d-$again\"" >"$d-$again.log" 2>&1 || fail "$method --gpus $n, $again"
      done
      result=$(compare "$d-det-again" "$d-det" --identical 2>&1) || fail "$method --gpus $n twice"
      echo "$method, --gpus $n twice (compute.deterministic): $result"

      d=$work/$method-$n-idfile
      ranks "$small" "$d" "$n" || fail "$method, $n processes meeting through the id file"
      check "$method, $n processes meeting through the id file" "$d" "$one"

      d=$work/$method-$n-commid
      ranks "$small" "$d" "$n" NCCL_COMM_ID=127.0.0.1:$((port += 1)) || fail "$method, $n processes, NCCL_COMM_ID"
      check "$method, $n processes meeting through NCCL_COMM_ID" "$d" "$one"

      if command -v mpirun >/dev/null; then
        d=$work/$method-$n-mpirun
        timeout "$limit" mpirun --allow-run-as-root --oversubscribe -np "$n" -x NCCL_NVLS_ENABLE "$bin" --quiet run "$small" \
          --backend cuda --set "output.dir=\"$d\"" >"$d.log" 2>&1 || fail "$method, mpirun -np $n"
        check "$method, mpirun -np $n" "$d" "$one"
      fi

      # Two emulated nodes: each half of the ranks has its own host id, and NCCL connects them by sockets.
      node_env() { echo "NCCL_HOSTID=node-$(($1 * 2 / $2)) LOCAL_RANK=$(($1 % ($2 / 2))) NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo"; }
      d=$work/$method-$n-nodes
      ranks "$small" "$d" "$n" || fail "$method, $n ranks as two emulated nodes"
      node_env() { :; }
      check "$method, $n ranks as two emulated nodes" "$d" "$one"
    done
  done
fi

if wanted scaling; then
  echo "== scaling volume $scale_size, $scale_steps depth steps: split-step (3-D model, v(z)), phase shift (v(z))"
  validated big "$job"
  for kind in ${SEISIMAGE_SCALING_JOBS:-big big-vz big-ps}; do
    CUDA_VISIBLE_DEVICES=0 scaled "$kind-1" "$work/$kind.toml" --backend cuda
    for n in "${counts[@]}"; do
      scaled "$kind-$n" "$work/$kind.toml" --gpus "$n"
      check "$kind, --gpus $n against one GPU" "$work/$kind-$n" "$work/$kind-1"
      [ -z "$base" ] || check "base-$kind, --gpus $n against this build" "$work/base-$kind-$n" "$work/$kind-$n"
    done
  done
fi

if wanted deterministic; then
  echo "== compute.deterministic: phase shift (v(z)) on the scaling volume, twice each, on 1 GPU and on ${counts[-1]}"
  n=${counts[-1]}
  ps=$work/big-ps.toml
  for run in 1 2; do
    CUDA_VISIBLE_DEVICES=0 scaled "det-1-$run" "$ps" --backend cuda --set compute.deterministic=true
    scaled "det-$n-$run" "$ps" --gpus "$n" --set compute.deterministic=true
    CUDA_VISIBLE_DEVICES=0 scaled "free-1-$run" "$ps" --backend cuda
  done
  for label in "det-1" "det-$n"; do
    result=$(compare "$work/$label-2" "$work/$label-1" --identical 2>&1) || fail "$label twice"
    echo "$label twice: $result"
  done
  result=$(compare "$work/free-1-2" "$work/free-1-1" --identical 2>&1)
  echo "without it, 1 GPU twice: $result"
  check "deterministic against not, 1 GPU" "$work/det-1-1" "$work/free-1-1"
fi

if wanted shards; then
  echo "== the whole file in each process: shards on one GPU each, then reduce"
  for n in "${counts[@]}"; do
    start=$(now)
    pids=()
    for ((i = 1; i <= n; i++)); do
      CUDA_VISIBLE_DEVICES=$((i - 1)) timeout "$limit" "$bin" --quiet run "$job" --backend cuda --shard "$i/$n" \
        --set "output.dir=\"$work/shards-$n\"" >"$work/shards-$n.$i.log" 2>&1 &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || fail "shards of $n"; done
    migrated=$(since "$start")
    "$bin" --quiet reduce "$job" --shards "$n" --set "output.dir=\"$work/shards-$n\"" >"$work/shards-$n.reduce.log" 2>&1 ||
      fail "reduce of $n shards: $(tail -n 2 "$work/shards-$n.reduce.log")"
    echo "shards-$n: every shard done in $migrated s, reduced at $(since "$start") s end to end"
    check "scaling job, $n shards against one GPU" "$work/shards-$n" "$work/big-1"
  done
fi

if wanted bands; then
  echo "== frequency bands: device memory limited to 4 GB"
  CUDA_VISIBLE_DEVICES=0 scaled bands-1 "$job" --backend cuda --set compute.device_memory_gb=4
  for n in "${counts[@]}"; do
    scaled "bands-$n" "$job" --gpus "$n" --set compute.device_memory_gb=4
    check "banded job, --gpus $n against one GPU" "$work/bands-$n" "$work/big-1"
  done
fi

if wanted large; then
  echo "== beyond one GPU's memory: $large_size, phase shift, $scale_steps depth steps"
  IFS=x read -r lni lnx _ <<<"$large_size"
  start=$(now)
  "$bin" --quiet synth --model diffractor --size "$large_size" "$work/large.sgy" || fail "synth $large_size"
  echo "synth $large_size: $(since "$start") s"
  write_job "$work/large.toml" "$work/large.sgy" phase-shift "$scale_steps" 256 "${lni}x${lnx}"
  CUDA_VISIBLE_DEVICES=0 scaled large-1 "$work/large.toml" --backend cuda
  n=${counts[-1]}
  scaled "large-$n" "$work/large.toml" --gpus "$n"
  check "large, --gpus $n against one GPU" "$work/large-$n" "$work/large-1"
  rm -f "$work/large.sgy"
fi

if wanted killed; then
  echo "== a rank killed mid-run (SIGKILL, 8 s in)"
  n=${counts[0]}
  d=$work/killed-gpus
  start=$(now)
  "$bin" run "$job" --gpus "$n" --set "output.dir=\"$d\"" >"$d.log" 2>&1 &
  launcher=$!
  sleep 8
  victim=$(pgrep -P "$launcher" | tail -n 1)
  kill -9 "$victim"
  timeout 120 tail --pid="$launcher" -f /dev/null
  wait "$launcher"
  code=$?
  echo "--gpus $n, rank pid $victim killed at 8 s: the command ended at $(since "$start") s with exit code $code;" \
    "manifest: $([ -f "$d/manifest.json" ] && echo present || echo none)"
  [ $code -ne 0 ] && [ ! -f "$d/manifest.json" ] || fail "killed rank under --gpus"

  # Separate processes: the others see the killed rank gone (its process note, on this host), whether it
  # had met them or not.
  d=$work/killed-ranks
  start=$(now)
  pids=()
  for ((r = 0; r < n; r++)); do
    RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r SEISIMAGE_RUN_ID=killed CUDA_VISIBLE_DEVICES=$r \
      "$bin" run "$job" --set "output.dir=\"$d\"" --set compute.rank_timeout_s=30 >"$d.rank$r.log" 2>&1 &
    pids+=($!)
  done
  sleep 8
  kill -9 "${pids[$((n - 1))]}"
  for ((r = 0; r < n - 1; r++)); do
    timeout 120 tail --pid="${pids[$r]}" -f /dev/null || { fail "rank $r still running 120 s after"; kill -9 "${pids[$r]}"; }
    wait "${pids[$r]}"
    code=$?
    echo "rank $r of $n processes, rank $((n - 1)) killed at 8 s: ended at $(since "$start") s with exit code $code;" \
      "its last line: $(tail -n 1 "$d.rank$r.log")"
  done
  [ ! -f "$d/manifest.json" ] || fail "a manifest after a killed rank"
fi

# SEISIMAGE_KEEP=1 keeps the volumes and products, for another call of the script on the same OUT.
[ -n "${SEISIMAGE_KEEP:-}" ] ||
  find "$work" \( -name '*.sgy' -o -name '*.npy' -o -name '*.png' -o -name '*.partial' \) -delete
tar czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")"
echo "status $status (logs and manifests packed in $out.tar.gz)"
exit $status
