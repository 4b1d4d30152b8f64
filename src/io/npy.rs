//! NumPy `.npy` arrays (version 1.0, little-endian float32, C order) for sub-volumes and slices.
