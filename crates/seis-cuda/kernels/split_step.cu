// Split-step Fourier for v(x, y, z), as src/imaging/split_step.rs does: per depth step each frequency plane
// gets, in the wavenumber domain, the reference phase shift (with the evanescent cut, the dip filter and the
// 1/nk normalisation of the inverse FFT that follows), and in space the thin lens exp(iω (s − s0) dz); the
// lens pass also forms the image of the level (Σ_ω weight · Re P) in the same read of the planes.

// In the wavenumber domain: planes[w][k] *= phase_factor(ω_w, |k|², v_ref, dz) · dip · norm.
extern "C" __global__ void split_step_shift(cpx* __restrict__ planes, const double* __restrict__ k2,
                                            const double* __restrict__ omega, int n_w, int nk, double v_ref,
                                            double dz, float norm, float dip_max, float dip_rolloff) {
    u64 n = (u64)n_w * nk;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) {
        int k = (int)(i % nk);
        double om = omega[i / nk], kk = k2[k];
        float dip = dip_max > 0.0f ? dip_weight((float)om, (float)kk, (float)v_ref, dip_max, dip_rolloff) : 1.0f;
        planes[i] = cpx_mul(planes[i], cpx_scale(phase_factor(om, kk, v_ref, dz), dip * norm));
    }
}

// In space: the thin lens (when `lens` is given: (s − s0) dz per point) and, when `image` is given, the
// level's image Σ_ω weight · Re P written as (value, 0) for the gather. One thread per point, looping over
// frequency, so each plane element is read and written once.
extern "C" __global__ void split_step_lens_image(cpx* __restrict__ planes, const float* __restrict__ lens,
                                                 const double* __restrict__ omega, const float* __restrict__ weight,
                                                 int n_w, int nk, cpx* __restrict__ image) {
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < nk; k += gridDim.x * blockDim.x) {
        float l = lens ? lens[k] : 0.0f;
        float sum = 0.0f;
        for (int w = 0; w < n_w; ++w) {
            cpx p = planes[(u64)w * nk + k];
            if (lens) {
                p = cpx_mul(p, cpx_expi((float)omega[w] * l));
                planes[(u64)w * nk + k] = p;
            }
            sum += weight[w] * p.re;
        }
        if (image) image[k] = cpx_make(sum, 0.0f);
    }
}
