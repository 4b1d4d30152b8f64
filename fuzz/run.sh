#!/usr/bin/env bash
# Run the fuzz targets one after another for SECONDS each (default 600) and print, per target, the
# executions, executions per second, coverage (libFuzzer's cov: edges and ft: features), corpus size, and
# what was found (files in artifacts/<target>/).
#
#   fuzz/run.sh [SECONDS] [TARGET...]        all targets when none is named
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`). cargo-fuzz uses nightly-only compiler flags; on a stable
# toolchain RUSTC_BOOTSTRAP=1 (set here) lets it run. The HDF5 build needs CMake, found through $CMAKE or
# PATH. Set CARGO_TARGET_DIR to keep the sanitizer build away from the normal one.
#
# Corpora start from the SEG-Y fixtures of tests/data/segyio and the job files of configs/ (copied here at
# run time), the hand-made seeds
# of fuzz/seeds/<target>/ and the regression inputs of tests/data/fuzz/<target>/; they grow in
# fuzz/corpus/<target>/ (not in git) and carry over from one run to the next. Logs go to fuzz/logs/.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
seconds=${1:-600}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(segy_open segy_headers sample_decode npy_read hdf5_open job_config)
fi

export RUSTC_BOOTSTRAP=1
# Scratch files on a RAM disk where there is one: each execution writes its input to a file.
if [ -z "${SEISIMAGE_FUZZ_SCRATCH:-}" ] && [ -d /dev/shm ]; then
    export SEISIMAGE_FUZZ_SCRATCH=/dev/shm
fi

cd "$here"
cargo fuzz build -O

seed() {
    local target=$1 corpus=$here/corpus/$1
    mkdir -p "$corpus"
    case $target in
        segy_open | segy_headers)
            for f in "$root"/tests/data/segyio/*.sgy "$root"/tests/data/segyio/*.su "$root"/tests/data/segyio/multiformats/*.sgy; do
                cp -n "$f" "$corpus/fixture-$(basename "$f")"
            done
            ;;
        job_config) cp -n "$root"/configs/*.toml "$corpus/" ;;
    esac
    for dir in "$here/seeds/$target" "$root/tests/data/fuzz/$target"; do
        [ -d "$dir" ] && find "$dir" -maxdepth 1 -type f -exec cp -n {} "$corpus/" \;
    done
    true
}

options() {
    local target=$1
    # One allocation over 64 MiB is a finding: no input of at most 256 KiB (the largest fixtures but one)
    # justifies it. An input that runs over 10 s is saved as a timeout.
    local opts=(-max_total_time="$seconds" -malloc_limit_mb=64 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1)
    case $target in
        segy_open) opts+=(-max_len=262144 -dict="$here/dict/segy.dict") ;;
        # The file header and 64 trace headers: what the target parses.
        segy_headers) opts+=(-max_len=18960 -dict="$here/dict/segy.dict") ;;
        # Nesting deep enough to matter takes room: let inputs grow to 64 KiB.
        npy_read) opts+=(-max_len=65536 -dict="$here/dict/npy.dict") ;;
        job_config) opts+=(-max_len=65536 -dict="$here/dict/job.dict") ;;
        # The HDF5 library keeps caches for the life of the process, which the leak checker reports.
        hdf5_open) opts+=(-detect_leaks=0) ;;
    esac
    echo "${opts[@]}"
}

mkdir -p "$here/logs"
summary=()
for target in "${targets[@]}"; do
    seed "$target"
    mkdir -p "$here/artifacts/$target"
    before=$(find "$here/artifacts/$target" -type f | wc -l)
    log=$here/logs/$target.log
    echo "== $target: $seconds s" >&2
    # shellcheck disable=SC2046
    cargo fuzz run -O "$target" "$here/corpus/$target" -- $(options "$target") >"$log" 2>&1 || true
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([^ ]*\).*/\1/p' <<<"$last")
    found=$(($(find "$here/artifacts/$target" -type f | wc -l) - before))
    summary+=("$(printf '%-14s %10s %8s %6s %6s %14s %6s' "$target" "${runs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$found")")
done

printf '%-14s %10s %8s %6s %6s %14s %6s\n' target execs exec/s cov ft corpus found
printf '%s\n' "${summary[@]}"
echo "logs: $here/logs/, findings: $here/artifacts/<target>/"
