//! The CUDA backend (cudarc, dynamically loaded): device discovery, pinned staging, cuFFT, NVRTC kernels.
