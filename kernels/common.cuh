// Shared helpers for seisimage's kernels. Compiled by NVRTC at run time (no CUDA headers are available
// there, so the little complex arithmetic we need is written out here).

typedef unsigned long long u64;

struct __align__(8) cpx {
    float re, im;
};

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
