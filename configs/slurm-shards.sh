#!/bin/bash
# Split one job into N shares of its frequencies, one per array task, on CPUs or GPUs, then sum them.
#
#   mkdir -p logs        # Slurm writes the logs there and does not make the folder
#   sbatch --array=1-8 configs/slurm-shards.sh job.toml            # the shares, one per task
#   sbatch --dependency=afterok:JOBID --kill-on-invalid-dep=yes configs/slurm-shards.sh job.toml reduce 8
#
# or both at once:
#   id=$(sbatch --parsable --array=1-8 configs/slurm-shards.sh job.toml)
#   sbatch --dependency=afterok:$id --kill-on-invalid-dep=yes configs/slurm-shards.sh job.toml reduce 8
#
# --kill-on-invalid-dep=yes: when a share fails, Slurm cancels the reduce instead of leaving it pending
# forever (a dependency that can no longer be met).
#
# Each task writes OUTPUT/shard-I-of-N.partial; the reduce task checks that the N files belong to the job
# and sums them into the products and manifest.json. Adapt the partition, account and limits to your site.
#SBATCH --job-name=seisimage-shards
#SBATCH --cpus-per-task=32
#SBATCH --mem=64G
#SBATCH --time=04:00:00
#SBATCH --output=logs/%x-%A_%a.log
#SBATCH --signal=TERM@120

set -u
job=${1:?usage: sbatch --array=1-N slurm-shards.sh JOB  |  sbatch slurm-shards.sh JOB reduce N}
if [ "${2:-}" = "reduce" ]; then
  srun seisimage reduce "$job" --shards "${3:?the number of shares}"
else
  srun seisimage run "$job" --shard "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT"
fi
# 0: done; 1: failed (see the log); 2: the job, the command line or the shares are wrong (a reduce with a
# share missing or from another job); 130/143: interrupted (resubmit the task).
exit $?
