#!/bin/bash
# Run one seisimage job file per array task, each on the CPUs of one node (no GPU).
#
#   mkdir -p logs        # Slurm writes the logs there and does not make the folder
#   ls jobs/*.toml > jobs.txt
#   sbatch --array=1-$(wc -l < jobs.txt) configs/slurm-array-cpu.sh jobs.txt
#
# Each task takes line $SLURM_ARRAY_TASK_ID of the list. Adapt the partition, account and limits to your site.
#SBATCH --job-name=seisimage-cpu
#SBATCH --cpus-per-task=32
#SBATCH --mem=64G
#SBATCH --time=02:00:00
#SBATCH --output=logs/%x-%A_%a.log
# Ask Slurm for SIGTERM 120 s before the time limit: seisimage then stops between steps, removes its
# temporary files and exits 143, so a half-written product never looks finished.
#SBATCH --signal=TERM@120

set -u
list=${1:?usage: sbatch --array=1-N slurm-array-cpu.sh LIST_OF_JOB_FILES}
job=$(sed -n "${SLURM_ARRAY_TASK_ID}p" "$list")
[ -n "$job" ] || { echo "no job on line $SLURM_ARRAY_TASK_ID of $list"; exit 2; }

# --backend cpu: the migration uses every CPU Slurm granted (--cpus-per-task; compute.threads = 0 takes them
# all, and Slurm's cgroup keeps the task to them).
# The log (--output above) names the job, its input, method and products, shows progress with the time
# left, and ends with where the products are; add --quiet to keep only warnings and errors.
srun seisimage run "$job" --backend cpu
status=$?
# 0: done; 1: failed (bad input, a full disk: see the log); 2: the job file or command line is wrong (do not
# resubmit unchanged); 130/143: interrupted (resubmit).
exit $status
