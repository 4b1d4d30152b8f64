// Gazdag phase shift for v(z), the field held in registers across a whole block of depth levels.
//
// A CTA owns PS_LANES consecutive wavenumbers (one per lane) and all frequencies: its PS_WARPS warps take
// frequency groups of PS_G in turn, each thread carrying its PS_G components down through the block's
// segments (stretches of one velocity), multiplying by exp(i kz dz) and adding dip · P into the shared
// k-domain image of each imaged level. The spectrum is read once and the field written back once per block;
// the k-domain images are written once, without global atomics. The field arrives already multiplied by the
// imaging weights (1 or 2, exact), so imaging is a plain sum.
//
// With `ordered` (compute.deterministic) each warp adds into k-domain images of its own, summed warp after
// warp at the end, instead of into shared ones by atomics in the order the warps arrive: repeated runs then
// give the same bits. It takes PS_WARPS times the shared memory per level.
//
// PS_LANES and PS_WARPS (the host launches CTAs of that shape) and the Segment records the host fills come
// from the prelude.

#define PS_G 8

// Float is exact enough for exp(i kz dz) over a step (a phase error below 3e-5 rad) except where kz² is
// within this fraction of (2ω/v)² of zero: there the double path of phase_factor decides, as on the CPU.
#define PS_GUARD 1e-4f

// exp(i kz dz) for one stretch: in float where that is exact enough (see PS_GUARD), else as phase_factor.
__device__ __forceinline__ cpx phase_factor_stretch(float om_f, const double* om, float k2_f, double k2,
                                                    const Segment& seg) {
    if (seg.flags & SEG_EXACT) return phase_factor(*om, k2, seg.velocity, seg.thickness);
    float s = om_f * seg.slowness2;
    float s2 = s * s;
    float a = s2 - k2_f;
    if (fabsf(a) <= PS_GUARD * s2) return phase_factor(*om, k2, seg.velocity, seg.thickness);
    if (a <= 0.0f) return cpx_make(0.0f, 0.0f);
    float sn, cs;
    // kz = a / sqrt(a) with the hardware reciprocal root; the phase in units of π, reduced exactly
    sincospif(a * rsqrtf(a) * seg.phase_scale, &sn, &cs);
    return cpx_make(cs, sn);
}

// Three CTAs per multiprocessor (at most 85 registers a thread): enough warps in flight to hide the latency
// of the sin/cos chains.
extern "C" __global__ void __launch_bounds__(PS_LANES * PS_WARPS, 3)
phase_shift_block(cpx* __restrict__ field,           // [n_w][nk], weighted, carried down in place
                  cpx* __restrict__ kimg,            // [n_slots][nk], overwritten
                  const double* __restrict__ k2,     // [nk]
                  const double* __restrict__ omega,  // [n_w]
                  int n_w, int nk, const Segment* __restrict__ segs, int n_segs,
                  const float* __restrict__ slot_velocity, int n_slots, float dip_max, float dip_rolloff,
                  int ordered) {
    extern __shared__ cpx acc[];  // [n_slots][PS_LANES], or [PS_WARPS][n_slots][PS_LANES] when ordered
    int lane = threadIdx.x, warp = threadIdx.y;
    int k = blockIdx.x * PS_LANES + lane;
    int n_acc = n_slots * PS_LANES * (ordered ? PS_WARPS : 1);
    for (int i = warp * PS_LANES + lane; i < n_acc; i += PS_LANES * PS_WARPS) acc[i] = cpx_make(0, 0);
    __syncthreads();
    bool live = k < nk;
    double kk = live ? k2[k] : 0.0;
    float kkf = (float)kk;

    for (int w0 = warp * PS_G; w0 < n_w; w0 += PS_WARPS * PS_G) {
        // Per thread only the field, the factors and ω in float live in registers; ω in double (for the
        // rare exact path) is read from memory (L1) when needed. Components past the band stay zero.
        cpx p[PS_G], f[PS_G];
        float om_f[PS_G];
#pragma unroll
        for (int g = 0; g < PS_G; ++g) {
            int w = w0 + g;
            bool ok = live && w < n_w;
            p[g] = ok ? field[(u64)w * nk + k] : cpx_make(0, 0);
            om_f[g] = ok ? (float)omega[w] : 0.0f;
            f[g] = cpx_make(1, 0);
        }
        for (int s = 0; s < n_segs; ++s) {
            const Segment seg = segs[s];
            if (seg.flags & SEG_NEW_FACTORS) {
                bool any = false;
#pragma unroll
                for (int g = 0; g < PS_G; ++g) {
                    // A component once evanescent stays zero: it needs no factor.
                    if (p[g].re == 0.0f && p[g].im == 0.0f) continue;
                    f[g] = phase_factor_stretch(om_f[g], omega + w0 + g, kkf, kk, seg);
                    any |= f[g].re != 0.0f || f[g].im != 0.0f;
                }
                // Every component is zero from this stretch down (new factors always come with a move): the
                // rest of the block adds nothing, and a warp whose threads all get here stops working.
                if (!any) {
#pragma unroll
                    for (int g = 0; g < PS_G; ++g) p[g] = cpx_make(0, 0);
                    break;
                }
            }
            if (seg.flags & SEG_MOVES) {
#pragma unroll
                for (int g = 0; g < PS_G; ++g) p[g] = cpx_mul(p[g], f[g]);
            }
            if (seg.slot >= 0) {
                cpx sum = cpx_make(0, 0);
                if (dip_max > 0.0f) {
                    float sv = slot_velocity[seg.slot];
#pragma unroll
                    for (int g = 0; g < PS_G; ++g)
                        sum = cpx_add(sum, cpx_scale(p[g], dip_weight(om_f[g], kkf, sv, dip_max, dip_rolloff)));
                } else {
#pragma unroll
                    for (int g = 0; g < PS_G; ++g) sum = cpx_add(sum, p[g]);
                }
                if (ordered) {
                    cpx* mine = &acc[(warp * n_slots + seg.slot) * PS_LANES + lane];  // this thread's alone
                    *mine = cpx_add(*mine, sum);
                } else {
                    atomicAdd(&acc[seg.slot * PS_LANES + lane].re, sum.re);
                    atomicAdd(&acc[seg.slot * PS_LANES + lane].im, sum.im);
                }
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
        for (int s = warp; s < n_slots; s += PS_WARPS) {
            cpx total = acc[s * PS_LANES + lane];
            if (ordered) {
                for (int w = 1; w < PS_WARPS; ++w) total = cpx_add(total, acc[(w * n_slots + s) * PS_LANES + lane]);
            }
            kimg[(u64)s * nk + k] = total;
        }
    }
}
