#!/bin/bash
# One job over several GPUs and nodes: one rank per GPU, the ranks talking through NCCL.
#
#   mkdir -p logs        # Slurm writes the log there and does not make the folder
#   sbatch --nodes=2 --ntasks-per-node=8 configs/slurm-gpus.sh job.toml
#
# srun starts the ranks; each reads its rank from Slurm (SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_LOCALID)
# and uses the GPU Slurm bound to it. The job's output folder must be on a file system every node sees:
# rank 0 publishes NCCL's id there, and rank 0 alone writes the products and manifest.json.
#SBATCH --job-name=seisimage-gpus
#SBATCH --gpus-per-task=1
#SBATCH --cpus-per-task=16
#SBATCH --mem-per-gpu=64G
#SBATCH --time=02:00:00
#SBATCH --output=logs/%x-%j.log
#SBATCH --signal=TERM@120

set -u
job=${1:?usage: sbatch --nodes=N --ntasks-per-node=G slurm-gpus.sh JOB}
# --kill-on-bad-exit: Slurm ends the other tasks when one fails (seisimage's ranks also stop each other).
srun --kill-on-bad-exit=1 seisimage run "$job" --backend cuda
exit $?
