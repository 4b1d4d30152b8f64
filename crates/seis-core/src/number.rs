//! Numbers as people read them, in every text the program writes for a user (`validate`, the log, the
//! pictures, `index.html`): rounded to what a user can use, with no trailing zeros and no `-0`.
//!
//! A value that went through a unit conversion or a single-precision file (2800.011962890625 for
//! 2800.012) is printed with at most three decimals; a value that rounds to zero is `0`, whatever its sign.

/// `v` with at most three decimals and no trailing zeros: `2800.012`, `4`, `0.5`, `0` for `-0.0001`.
pub fn number(v: f64) -> String {
    decimals(v, 3)
}

/// `v` with at most `places` decimals and no trailing zeros, never `-0`.
pub fn decimals(v: f64, places: usize) -> String {
    let s = format!("{v:.places$}");
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.') } else { &s };
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// `v` with exactly `places` decimals (a column of a table), never `-0.0`.
pub fn fixed(v: f64, places: usize) -> String {
    let s = format!("{v:.places$}");
    match s.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_rounded_without_trailing_zeros_or_negative_zero() {
        assert_eq!(number(2800.011962890625), "2800.012");
        assert_eq!(number(4.0), "4");
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(-0.0), "0");
        assert_eq!(number(-0.0001), "0");
        assert_eq!(number(-12.25), "-12.25");
        assert_eq!(number(1500.0), "1500");
        assert_eq!(decimals(1.234567, 1), "1.2");
        assert_eq!(fixed(-0.04, 1), "0.0");
        assert_eq!(fixed(-0.06, 1), "-0.1");
        assert_eq!(fixed(2.0, 2), "2.00");
    }
}
