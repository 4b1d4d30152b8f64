// Gazdag phase shift for v(z), the field held in registers across a whole block of depth levels.
//
// A CTA owns PS_LANES consecutive wavenumbers (one per lane) and all frequencies: its PS_WARPS warps take
// frequency groups of PS_G in turn, each thread carrying its PS_G components down through the block's
// segments (stretches of one velocity), multiplying by exp(i kz dz) and adding weight · dip · P into the
// shared k-domain image of each imaged level. The spectrum is read once and the field written back once per
// block; the k-domain images are written once, without global atomics.

#define PS_LANES 32
#define PS_WARPS 8
#define PS_G 8

// One stretch of depth: velocity (m/s), thickness (m), and the slot imaged at its bottom (−1: none).
struct Segment {
    double velocity;
    double thickness;
    int slot;
    int pad;
};

extern "C" __global__ void __launch_bounds__(PS_LANES * PS_WARPS)
phase_shift_block(cpx* __restrict__ field,           // [n_w][nk], carried down in place
                  cpx* __restrict__ kimg,            // [n_slots][nk], overwritten
                  const double* __restrict__ k2,     // [nk]
                  const double* __restrict__ omega,  // [n_w]
                  const float* __restrict__ weight,  // [n_w] imaging weight (1 or 2)
                  int n_w, int nk, const Segment* __restrict__ segs, int n_segs,
                  const float* __restrict__ slot_velocity, int n_slots, float dip_max, float dip_rolloff) {
    extern __shared__ cpx acc[];  // [n_slots][PS_LANES]
    int lane = threadIdx.x, warp = threadIdx.y;
    int k = blockIdx.x * PS_LANES + lane;
    for (int i = warp * PS_LANES + lane; i < n_slots * PS_LANES; i += PS_LANES * PS_WARPS) acc[i] = cpx_make(0, 0);
    __syncthreads();
    bool live = k < nk;
    double kk = live ? k2[k] : 0.0;
    float kkf = (float)kk;

    for (int w0 = warp * PS_G; w0 < n_w; w0 += PS_WARPS * PS_G) {
        cpx p[PS_G], f[PS_G];
        double om[PS_G];
        float wt[PS_G];
#pragma unroll
        for (int g = 0; g < PS_G; ++g) {
            int w = w0 + g;
            bool ok = live && w < n_w;
            p[g] = ok ? field[(u64)w * nk + k] : cpx_make(0, 0);
            om[g] = ok ? omega[w] : 0.0;
            wt[g] = ok ? weight[w] : 0.0f;
            f[g] = cpx_make(1, 0);
        }
        double cur_v = -1.0, cur_t = -1.0;
        for (int s = 0; s < n_segs; ++s) {
            Segment seg = segs[s];
            if (seg.thickness > 0.0) {
                if (seg.velocity != cur_v || seg.thickness != cur_t) {
#pragma unroll
                    for (int g = 0; g < PS_G; ++g) f[g] = phase_factor(om[g], kk, seg.velocity, seg.thickness);
                    cur_v = seg.velocity;
                    cur_t = seg.thickness;
                }
#pragma unroll
                for (int g = 0; g < PS_G; ++g) p[g] = cpx_mul(p[g], f[g]);
            }
            if (seg.slot >= 0) {
                cpx sum = cpx_make(0, 0);
                float sv = slot_velocity[seg.slot];
#pragma unroll
                for (int g = 0; g < PS_G; ++g) {
                    float w = wt[g];
                    if (dip_max > 0.0f) w *= dip_weight((float)om[g], kkf, sv, dip_max, dip_rolloff);
                    sum = cpx_add(sum, cpx_scale(p[g], w));
                }
                atomicAdd(&acc[seg.slot * PS_LANES + lane].re, sum.re);
                atomicAdd(&acc[seg.slot * PS_LANES + lane].im, sum.im);
            }
        }
#pragma unroll
        for (int g = 0; g < PS_G; ++g) {
            int w = w0 + g;
            if (live && w < n_w) field[(u64)w * nk + k] = p[g];
        }
    }
    __syncthreads();
    if (live) {
        for (int s = warp; s < n_slots; s += PS_WARPS) kimg[(u64)s * nk + k] = acc[s * PS_LANES + lane];
    }
}
