// Ingest: move one chunk of trace spectra (trace-major, as the R2C along contiguous traces leaves them) into
// the frequency-major spectrum [w][il_pad][xl_pad], keeping only the band's bins. A shared-memory tile makes
// both the reads (along frequency) and the writes (along traces) coalesced.

#define TILE 32

extern "C" __global__ void band_transpose(const cpx* __restrict__ trace_spec,  // [n_traces][n_bins]
                                          cpx* __restrict__ spectrum,          // [n_w][n_il_pad][n_xl_pad]
                                          int n_traces, int n_bins, int first_bin, int n_w,
                                          int n_xl, int il_offset, int xl_offset, int n_il_pad, int n_xl_pad,
                                          float scale) {
    __shared__ cpx tile[TILE][TILE + 1];
    int w0 = blockIdx.x * TILE;
    int t0 = blockIdx.y * TILE;
    // read: threadIdx.x runs along frequency
    for (int r = threadIdx.y; r < TILE; r += blockDim.y) {
        int t = t0 + r, w = w0 + threadIdx.x;
        if (t < n_traces && w < n_w) tile[r][threadIdx.x] = trace_spec[(u64)t * n_bins + first_bin + w];
    }
    __syncthreads();
    // write: threadIdx.x runs along traces
    for (int r = threadIdx.y; r < TILE; r += blockDim.y) {
        int w = w0 + r, t = t0 + threadIdx.x;
        if (t < n_traces && w < n_w) {
            int il = il_offset + t / n_xl, xl = xl_offset + t % n_xl;
            spectrum[((u64)w * n_il_pad + il) * n_xl_pad + xl] = cpx_scale(tile[threadIdx.x][r], scale);
        }
    }
}

// Products: cut a request box out of a block of depth slices of the image (z-major, padded grid, complex
// after the inverse 2-D FFT; the real part is the image) into the box's [il][xl][z] layout.
extern "C" __global__ void gather_box(const cpx* __restrict__ slices,  // [n_z_block][n_il_pad][n_xl_pad]
                                      float* __restrict__ product,     // [b_il][b_xl][b_z]
                                      int z_block0, int n_z_block, int n_il_pad, int n_xl_pad,
                                      int il_offset, int xl_offset,
                                      int b_il0, int b_nil, int b_xl0, int b_nxl, int b_z0, int b_nz, float scale) {
    // one thread per (box trace, z in this block); z fastest so the product writes are contiguous
    int zlo = max(b_z0, z_block0), zhi = min(b_z0 + b_nz, z_block0 + n_z_block);
    int nz = zhi - zlo;
    if (nz <= 0) return;
    u64 n = (u64)b_nil * b_nxl * nz;
    for (u64 k = blockIdx.x * (u64)blockDim.x + threadIdx.x; k < n; k += (u64)gridDim.x * blockDim.x) {
        int dz = (int)(k % nz);
        u64 tr = k / nz;
        int i = (int)(tr / b_nxl), j = (int)(tr % b_nxl);
        int z = zlo + dz;
        int il = il_offset + b_il0 + i, xl = xl_offset + b_xl0 + j;
        cpx v = slices[((u64)(z - z_block0) * n_il_pad + il) * n_xl_pad + xl];
        product[((u64)i * b_nxl + j) * b_nz + (z - b_z0)] = v.re * scale;
    }
}
