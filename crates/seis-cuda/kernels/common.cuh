// Shared helpers for seisimage's kernels. Compiled by NVRTC at run time (no CUDA headers are available
// there, so the little complex arithmetic we need is written out here).
//
// The program starts with a prelude generated from src/gpu/prelude.rs: the constants, flags and record
// layouts the host and the kernels share (the names in capitals below and in the other files, and struct
// Segment) are defined there, once, and never here.

typedef unsigned long long u64;

struct __align__(8) cpx {
    float re, im;
};
static_assert(sizeof(cpx) == CPX_BYTES, "cpx: not the host's layout");

__device__ __forceinline__ cpx cpx_make(float re, float im) {
    cpx c;
    c.re = re;
    c.im = im;
    return c;
}

__device__ __forceinline__ cpx cpx_mul(cpx a, cpx b) {
    return cpx_make(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}

__device__ __forceinline__ cpx cpx_add(cpx a, cpx b) { return cpx_make(a.re + b.re, a.im + b.im); }

__device__ __forceinline__ cpx cpx_scale(cpx a, float s) { return cpx_make(a.re * s, a.im * s); }

// exp(i * phase)
__device__ __forceinline__ cpx cpx_expi(float phase) {
    float s, c;
    sincosf(phase, &s, &c);
    return cpx_make(c, s);
}

__device__ __forceinline__ cpx cpx_conj_scale(cpx a, float s) { return cpx_make(a.re * s, -a.im * s); }

// ---- The per-element formulas of the migrations, one for one with src/imaging/formulas.rs ----------------
// Velocities are true medium velocities v; the exploding-reflector slowness 2 / v is applied here.

// Waves within 0.002° of horizontal count as evanescent (GRAZING, from formulas.rs, which says why).

// exp(i kz dz) for kz² = (2ω/v)² − |k|², or 0 for an evanescent wave.
//
// kz² is a difference of two nearly equal numbers for waves near the evanescent limit, where float would
// lose most digits of kz, so it is formed in double precision with the CPU's operations in the CPU's order
// (no fused multiply-add); the phase is reduced to (−π, π] before the float sincos.
__device__ __forceinline__ cpx phase_factor(double omega, double k2, double v, double dz) {
    double s = __ddiv_rn(2.0 * omega, v);
    double s2 = __dmul_rn(s, s);
    double a = __dsub_rn(s2, k2);
    if (a <= GRAZING * s2) return cpx_make(0.0f, 0.0f);
    const double two_pi = 6.283185307179586476925286766559;
    double phase = sqrt(a) * dz;
    phase -= two_pi * rint(phase / two_pi);
    return cpx_expi((float)phase);
}

// Weight of a plane wave in a dip-limited image: 1 below (max − rolloff), a half cosine to 0 at max.
__device__ __forceinline__ float dip_weight(float omega, float k2, float v, float max_angle, float rolloff) {
    if (omega <= 0.0f) return 0.0f;
    float s = sqrtf(k2) * v / (2.0f * omega);
    if (s >= 1.0f) return 0.0f;
    float theta = asinf(s);
    float start = max_angle - rolloff;
    if (theta <= start) return 1.0f;
    if (theta >= max_angle) return 0.0f;
    return 0.5f * (1.0f + cospif((theta - start) / rolloff));
}
