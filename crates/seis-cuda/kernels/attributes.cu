// Complex-trace attributes of a product box on the device, one for one with src/attributes.rs: each trace of
// the box (nz levels, contiguous) is padded into a complex row of nfft values, transformed by cuFFT, kept to
// its analytic spectrum, transformed back, and the attribute of the levels kept is written over the start of
// the product buffer, [trace][kept level], for the copy back to the host.

// Row t of `z` is trace t of `product`, padded with zeros.
extern "C" __global__ void attr_load(const float* __restrict__ product, int nz, int traces, cpx* __restrict__ z,
                                     int nfft) {
    u64 n = (u64)traces * nfft;
    for (u64 p = blockIdx.x * (u64)blockDim.x + threadIdx.x; p < n; p += (u64)gridDim.x * blockDim.x) {
        int t = (int)(p / nfft), k = (int)(p % nfft);
        z[p] = cpx_make(k < nz ? product[(u64)t * nz + k] : 0.0f, 0.0f);
    }
}

// The analytic spectrum: negative frequencies dropped, positive ones doubled, zero and Nyquist kept; the
// inverse transform's 1/nfft folded in.
extern "C" __global__ void attr_analytic(cpx* __restrict__ z, int nfft, int traces) {
    u64 n = (u64)traces * nfft;
    float inv = 1.0f / (float)nfft;
    for (u64 p = blockIdx.x * (u64)blockDim.x + threadIdx.x; p < n; p += (u64)gridDim.x * blockDim.x) {
        int k = (int)(p % nfft);
        float w = (k == 0 || 2 * k == nfft) ? 1.0f : (2 * k < nfft ? 2.0f : 0.0f);
        z[p] = cpx_scale(z[p], w * inv);
    }
}

// The attribute `kind` (ATTR_*) of levels keep0 .. keep0 + nkeep of each analytic row, into out[t][j].
extern "C" __global__ void attr_output(const cpx* __restrict__ z, int nfft, int nz, int traces, int keep0,
                                       int nkeep, int kind, float frequency_scale, float* __restrict__ out) {
    const float PI_F = 3.14159265358979f;
    u64 n = (u64)traces * nkeep;
    for (u64 p = blockIdx.x * (u64)blockDim.x + threadIdx.x; p < n; p += (u64)gridDim.x * blockDim.x) {
        int t = (int)(p / nkeep), k = keep0 + (int)(p % nkeep);
        const cpx* row = z + (u64)t * nfft;
        cpx v = row[k];
        float r;
        if (kind == ATTR_ENVELOPE) {
            r = hypotf(v.re, v.im);
        } else if (kind == ATTR_PHASE) {
            r = atan2f(v.im, v.re) * (180.0f / PI_F);
        } else if (kind == ATTR_COS_PHASE) {
            float e = hypotf(v.re, v.im);
            r = e > 0.0f ? v.re / e : 0.0f;
        } else if (kind == ATTR_FREQUENCY && nz >= 2) {
            // The phase turned between the neighbours (one neighbour at the ends of the trace).
            cpx a, b;
            float span;
            if (k == 0) {
                a = row[1], b = row[0], span = 1.0f;
            } else if (k == nz - 1) {
                a = row[k], b = row[k - 1], span = 1.0f;
            } else {
                a = row[k + 1], b = row[k - 1], span = 2.0f;
            }
            float turn = atan2f(a.im * b.re - a.re * b.im, a.re * b.re + a.im * b.im);
            r = turn / (2.0f * PI_F * span) * frequency_scale;
        } else {
            r = 0.0f;
        }
        out[p] = r;
    }
}
