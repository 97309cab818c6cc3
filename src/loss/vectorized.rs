//! Per-row arithmetic written for the compiler to vectorize, and a way to run a pass compiled
//! for AVX2 when the CPU has it (the crate itself is built for the baseline x86-64, SSE2).

/// Runs `pass` compiled for AVX2 when the CPU has it, so that its loops run four `f64` rows per
/// instruction: the same IEEE operations lane by lane, so the same results either way. Pass an
/// `#[inline(always)]` closure over inlined code: whatever is compiled outside `run` keeps the
/// baseline instructions.
#[inline(always)]
pub fn with_avx2<R>(pass: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        #[target_feature(enable = "avx2")]
        fn run<R>(pass: impl FnOnce() -> R) -> R {
            pass()
        }
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { run(pass) };
    }
    pass()
}

/// eˣ for x ≤ 0 (and NaN), within 1 ulp of libm's (test below), in branch-free arithmetic that
/// the compiler vectorizes: the logistic loss pass computes one per row, and libm's `exp`, a call
/// per row, took half of that pass. Only IEEE additions and multiplications (no fused
/// multiply-add), so every instruction set gives the same bits, vectorized or not. Positive x
/// are not supported (the scale below would overflow its exponent field).
///
/// x = k ln 2 + r with k = round(x / ln 2) and |r| ≤ ln 2 / 2 (ln 2 split in two, the high part
/// with 32 trailing zero bits so that k·LN2_HI is exact); eʳ by its Taylor polynomial of degree
/// 13 (remainder below 6e-18 relative), evaluated by Estrin's scheme for short dependency chains;
/// 2^k as two factors 2^{k/2}, both normal down to k = −1076, so that subnormal results are
/// rounded once.
#[inline(always)]
pub fn exp_nonpositive(x: f64) -> f64 {
    // 1.5·2^52: adding it rounds to an integer, held in the low mantissa bits.
    const SHIFT: f64 = 6755399441055744.0;
    const INV_LN2: f64 = std::f64::consts::LOG2_E;
    // ln 2 = LN2_HI + LN2_LO, the high part to 21 bits (fdlibm's split).
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    // 1/n! for n = 2..=13.
    const C: [f64; 12] = [
        0.5,
        0.166_666_666_666_666_66,
        0.041_666_666_666_666_664,
        0.008_333_333_333_333_333,
        0.001_388_888_888_888_889,
        1.984_126_984_126_984e-4,
        2.480_158_730_158_73e-5,
        2.755_731_922_398_589_3e-6,
        2.755_731_922_398_589e-7,
        2.505_210_838_544_172e-8,
        2.087_675_698_786_81e-9,
        1.605_904_383_682_161_3e-10,
    ];
    // Below −746, eˣ rounds to 0; the clamp keeps k in range. A comparison, not `max`, so that
    // NaN stays NaN.
    let x = if x < -746.0 { -746.0 } else { x };
    let k = (x * INV_LN2 + SHIFT) - SHIFT;
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let (r2, r4) = (r * r, r * r * (r * r));
    let pair = |i: usize| C[i + 1] * r + C[i];
    let tail = (pair(2) * r2 + pair(0))
        + (pair(6) * r2 + pair(4)) * r4
        + (pair(10) * r2 + pair(8)) * (r4 * r4);
    let exp_r = (r2 * tail + r) + 1.0;
    // 2^j for an integer j in [−1022, 1023] held as a float: its biased exponent, shifted into
    // place (the higher bits of the shifted sum fall off the top).
    let power_of_two = |j: f64| f64::from_bits((j + (SHIFT + 1023.0)).to_bits() << 52);
    let half = (k * 0.5 + SHIFT) - SHIFT;
    exp_r * power_of_two(half) * power_of_two(k - half)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_nonpositive_is_within_one_ulp_of_libm() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut uniform = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        // Every range of k, the subnormal results, and small |x| where eˣ ≈ 1 + x.
        let scales = [1e-12, 1e-3, 0.35, 1.0, 5.0, 40.0, 710.0, 745.2];
        for scale in scales {
            for _ in 0..100_000 {
                let x = -scale * uniform();
                let ulps = (exp_nonpositive(x).to_bits() as i64 - x.exp().to_bits() as i64).abs();
                assert!(
                    ulps <= 1,
                    "e^{x}: {} against {}",
                    exp_nonpositive(x),
                    x.exp()
                );
            }
        }
        for x in [
            0.0, -0.0, -1e-300, -708.39, -745.13, -745.14, -746.0, -800.0, -1e300,
        ] {
            assert_eq!(exp_nonpositive(x), x.exp(), "e^{x}");
        }
        assert_eq!(exp_nonpositive(f64::NEG_INFINITY), 0.0);
        assert!(exp_nonpositive(f64::NAN).is_nan());
    }
}
