//! Adler-32 (RFC 1950) and the combination of two Adler-32 values.
//!
//! Definition, for bytes `x_1 .. x_n`, with `M = 65521` (the largest prime below 2^16):
//!
//! ```text
//! A_0 = 1,               A_k = A_{k-1} + x_k          (mod M)
//! B_0 = 0,               B_k = B_{k-1} + A_k          (mod M)
//! adler32 = (B_n << 16) | A_n
//! ```

/// The Adler-32 modulus.
const MOD: u32 = 65521;

/// Number of interleaved lanes of the bulk loop. 16 `u32` lanes fill four SSE2 (or two AVX2) registers, which lets
/// LLVM vectorise the loop: lanes do not depend on each other, unlike the textbook `a += x; b += a` chain.
const LANES: usize = 16;

/// Groups of `LANES` bytes summed before the `u32` lane accumulators are folded into `a`/`b`. The largest lane
/// accumulator is `255 * G * (G + 1) / 2`, which for `G = 4096` is 2_139_619_840 < 2^32, so nothing overflows.
const GROUPS_PER_BLOCK: usize = 4096;

/// Adler-32 of `data`.
pub fn adler32(data: &[u8]) -> u32 {
    adler32_update(1, data)
}

/// Continue an Adler-32 value (`adler32_update(adler32(x), y) == adler32(x ++ y)`).
pub fn adler32_update(adler: u32, data: &[u8]) -> u32 {
    let mut a = u64::from(adler & 0xffff);
    let mut b = u64::from(adler >> 16);
    for block in data.chunks(LANES * GROUPS_PER_BLOCK) {
        let body_len = block.len() / LANES * LANES;
        let (body, tail) = block.split_at(body_len);
        if !body.is_empty() {
            // Byte t = LANES*k + j (group k of G, lane j) of the body. By the definition, processing n bytes
            // starting from (a, b) gives a' = a + sum x_t and b' = b + n*a + sum_t (n - t) x_t (t from 0).
            // With n - t = LANES*(G - k) - j the last sum is LANES * sum_j acc_j - sum_j j * sum_j, where
            // sum_j = sum_k x_{LANES*k+j} and acc_j = sum_k (G - k) x_{LANES*k+j}; acc_j is the running total of
            // sum_j after each group, exactly what the loop below accumulates.
            let mut sum = [0u32; LANES];
            let mut acc = [0u32; LANES];
            for group in body.chunks_exact(LANES) {
                // A fixed-size array and two separate loops: this shape is what LLVM turns into SIMD adds.
                let group: &[u8; LANES] = group.try_into().expect("chunks_exact yields LANES bytes");
                for j in 0..LANES {
                    sum[j] += u32::from(group[j]);
                }
                for j in 0..LANES {
                    acc[j] += sum[j];
                }
            }
            let mut sum_all = 0u64;
            let mut weighted = 0u64;
            for j in 0..LANES {
                sum_all += u64::from(sum[j]);
                weighted += LANES as u64 * u64::from(acc[j]) - j as u64 * u64::from(sum[j]);
            }
            b = (b + body_len as u64 * a + weighted) % u64::from(MOD);
            a = (a + sum_all) % u64::from(MOD);
        }
        // At most LANES - 1 bytes: the plain definition cannot overflow a u64 here.
        for &x in tail {
            a += u64::from(x);
            b += a;
        }
        a %= u64::from(MOD);
        b %= u64::from(MOD);
    }
    ((b as u32) << 16) | a as u32
}

/// Adler-32 of `x ++ y` from `adler1 = adler32(x)`, `adler2 = adler32(y)` and `len2 = y.len()`.
///
/// Derivation from the definition (all mod M, n = |x|, m = |y|):
/// - `A(x ++ y) = 1 + sum(x) + sum(y) = A(x) + A(y) - 1`, because both A values include the initial 1.
/// - `B(x ++ y)` is the sum of the running A over all n + m prefixes. The first n terms are exactly `B(x)`. The
///   running A after k bytes of y is `A(x) + sum(y_1..y_k) = (A(x) - 1) + A_k(y)`, so the last m terms sum to
///   `m * (A(x) - 1) + B(y)`. Hence `B(x ++ y) = B(x) + B(y) + m * (A(x) - 1)`.
///
/// Only `m mod M` matters, so any `len2` works. `A(x) - 1` is taken as `A(x) + M - 1` to stay non-negative.
pub fn adler32_combine(adler1: u32, adler2: u32, len2: u64) -> u32 {
    let m = u64::from(MOD);
    let (a1, b1) = (u64::from(adler1 & 0xffff), u64::from(adler1 >> 16));
    let (a2, b2) = (u64::from(adler2 & 0xffff), u64::from(adler2 >> 16));
    let a = (a1 + a2 + m - 1) % m;
    let b = (b1 + b2 + (len2 % m) * ((a1 + m - 1) % m)) % m;
    ((b as u32) << 16) | a as u32
}
