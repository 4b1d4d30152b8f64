// Ingest: move one chunk of trace spectra (trace-major, as the R2C along contiguous traces leaves them) into
// the frequency-major spectrum [w][il_pad][xl_pad], keeping only the band's bins and applying the record's
// start-time delay exp(−iω t0). A shared-memory tile makes both the reads (along frequency) and the writes
// (along traces) coalesced. The host launches CTAs BAND_TILE threads wide (any height).

extern "C" __global__ void band_transpose(const cpx* __restrict__ trace_spec,  // [n_traces][n_bins]
                                          cpx* __restrict__ spectrum,          // [n_w][n_il_pad][n_xl_pad]
                                          const cpx* __restrict__ delay,       // [n_w]
                                          int n_traces, int n_bins, int first_bin, int n_w, int n_xl,
                                          int first_il, int n_il_pad, int n_xl_pad) {
    __shared__ cpx tile[BAND_TILE][BAND_TILE + 1];
    int w0 = blockIdx.x * BAND_TILE;
    int t0 = blockIdx.y * BAND_TILE;
    for (int r = threadIdx.y; r < BAND_TILE; r += blockDim.y) {  // threadIdx.x runs along frequency
        int t = t0 + r, w = w0 + threadIdx.x;
        if (t < n_traces && w < n_w) tile[r][threadIdx.x] = trace_spec[(u64)t * n_bins + first_bin + w];
    }
    __syncthreads();
    for (int r = threadIdx.y; r < BAND_TILE; r += blockDim.y) {  // threadIdx.x runs along traces
        int w = w0 + r, t = t0 + threadIdx.x;
        if (t < n_traces && w < n_w) {
            int il = first_il + t / n_xl, xl = t % n_xl;
            spectrum[((u64)w * n_il_pad + il) * n_xl_pad + xl] = cpx_mul(tile[threadIdx.x][r], delay[w]);
        }
    }
}

// Multiply every plane w of a [n_w][nk] array by factor[w].
extern "C" __global__ void scale_planes(cpx* __restrict__ planes, const cpx* __restrict__ factor, int n_w, int nk) {
    u64 n = (u64)n_w * nk;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        planes[i] = cpx_mul(planes[i], factor[i / nk]);
    }
}

// Products: cut a request box out of imaged planes. Plane `slot` of `planes` holds depth level
// slot_level[slot] on the padded grid; its real part times `scale` is the image there. The levels of the box
// that these planes hold are added into the box's [il][xl][z] layout (products start at zero; a job run in
// frequency bands adds every band's share), other levels are left alone.
extern "C" __global__ void gather_box(const cpx* __restrict__ planes,  // [n_slots][n_il_pad][n_xl_pad]
                                      const int* __restrict__ slot_level, int n_slots, int n_il_pad,
                                      int n_xl_pad, float* __restrict__ product,  // [b_nil][b_nxl][b_nz]
                                      int b_il0, int b_nil, int b_xl0, int b_nxl, int b_z0, int b_nz,
                                      float scale) {
    u64 plane = (u64)n_il_pad * n_xl_pad;
    u64 n = (u64)b_nil * b_nxl;
    // blockIdx.y picks the slot; threads run along the box's crosslines, so plane reads are coalesced
    for (int slot = blockIdx.y; slot < n_slots; slot += gridDim.y) {
        int z = slot_level[slot] - b_z0;
        if (z < 0 || z >= b_nz) continue;
        for (u64 p = blockIdx.x * (u64)blockDim.x + threadIdx.x; p < n; p += (u64)gridDim.x * blockDim.x) {
            int i = (int)(p / b_nxl), j = (int)(p % b_nxl);
            cpx v = planes[slot * plane + (u64)(b_il0 + i) * n_xl_pad + (b_xl0 + j)];
            product[p * b_nz + z] += v.re * scale;
        }
    }
}

// Products of a run over several ranks, on rank 0: its own box plus the other ranks' (received one after
// another, `stride` values apart), added rank after rank, so that the sum depends on how the frequencies were
// shared only through float rounding, and is the same from run to run.
extern "C" __global__ void sum_ranks(float* __restrict__ own, const float* __restrict__ others, u64 n, int n_others,
                                     u64 stride) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        float s = own[i];
        for (int p = 0; p < n_others; ++p) s += others[p * stride + i];
        own[i] = s;
    }
}
