// Stolt (f-k) migration for a constant velocity: resample each wavenumber's spectrum column from frequency
// onto a regular kz grid (ω = (v/2) sqrt(kz² + |k|²), with the Jacobian), as src/imaging/stolt.rs does.
// The spectrum has been multiplied by exp(+iω t_c) beforehand (centring the record on t = 0).
//
// One thread per (wavenumber, kz line sample r): it sums every kz sample m ≡ r (mod n_kz) of the column's
// range, so the wrap of kz beyond the grid's Nyquist needs no atomics. The phase −ω t_c and the interpolation
// position are computed in double precision: both grow with ω · t and would lose digits in float.
// STOLT_REACH and the sinc's quarter turns come from formulas.rs through the prelude.

// Interpolation taps at fractional position u: the first index and up to 8 weights (formulas.rs).
__device__ __forceinline__ int interpolation_taps(double u, int sinc, float w[8]) {
    double base = floor(u);
    float frac = (float)(u - base);
    if (!sinc) {
        w[0] = 1.0f - frac;
        w[1] = frac;
        return (int)base;
    }
    float s_frac = sinpif(frac);
    float s_q, c_q;
    sincospif(frac / 4.0f, &s_q, &c_q);
    const float cos_n[8] = SINC_QUARTER_COS;
    const float sin_n[8] = SINC_QUARTER_SIN;
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        float x = frac + 3.0f - (float)j;
        float sign = (j % 2 == 0) ? -1.0f : 1.0f;
        float sinc_x = (x == 0.0f) ? 1.0f : sign * s_frac / (3.14159265358979324f * x);
        w[j] = sinc_x * 0.5f * (1.0f + c_q * cos_n[j] - s_q * sin_n[j]);
        sum += w[j];
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) w[j] /= sum;
    return (int)base - 3;
}

extern "C" __global__ void stolt_remap(const cpx* __restrict__ spectrum,  // [n_w][nk], centred
                                       cpx* __restrict__ line,            // [n_kz][nk], overwritten
                                       const double* __restrict__ k2s,    // [nk]
                                       int n_w, int nk, int n_kz, double w_first, double w_step, double v,
                                       double dkz, double t_centre, int sinc, float dip_max, float dip_rolloff) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= nk) return;
    double k2 = k2s[k];
    double s = 2.0 / v;
    double lo = w_first - STOLT_REACH * w_step;
    double hi = w_first + ((double)n_w - 1.0 + STOLT_REACH) * w_step;
    double jacobian_scale = 0.5 * v * dkz / w_step;
    bool any = hi * s > sqrt(k2);
    long long m_first = 0, m_last = -1;
    if (any) {
        double lo0 = lo > 0.0 ? lo : 0.0;
        double a = lo0 * s, b = hi * s;
        m_first = (long long)ceil(sqrt(fmax(0.0, a * a - k2)) / dkz);
        m_last = (long long)floor(sqrt(fmax(0.0, b * b - k2)) / dkz);
    }
    for (int r = blockIdx.y; r < n_kz; r += gridDim.y) {
        cpx out = cpx_make(0, 0);
        if (any && m_last >= m_first) {
            // first m ≥ m_first with m ≡ r (mod n_kz)
            long long m = m_first + ((((long long)r - m_first) % n_kz) + n_kz) % n_kz;
            for (; m <= m_last; m += n_kz) {
                double kz = (double)m * dkz;
                double omega = 0.5 * v * sqrt(kz * kz + k2);
                double u = (omega - w_first) / w_step;
                float w[8];
                int first = interpolation_taps(u, sinc, w);
                int taps = sinc ? 8 : 2;
                cpx value = cpx_make(0, 0);
                for (int j = 0; j < taps; ++j) {
                    int i = first + j;
                    if (i >= 0 && i < n_w) value = cpx_add(value, cpx_scale(spectrum[(u64)i * nk + k], w[j]));
                }
                float dip = dip_max > 0.0f ? dip_weight((float)omega, (float)k2, (float)v, dip_max, dip_rolloff) : 1.0f;
                double radius = sqrt(kz * kz + k2);
                float obliquity = radius == 0.0 ? 0.0f : (float)(kz / radius);
                float factor = (float)(2.0 * jacobian_scale) * obliquity * dip;
                double sp, cp;
                sincos(-omega * t_centre, &sp, &cp);
                out = cpx_add(out, cpx_mul(value, cpx_make(factor * (float)cp, factor * (float)sp)));
            }
        }
        line[(u64)r * nk + k] = out;
    }
}
