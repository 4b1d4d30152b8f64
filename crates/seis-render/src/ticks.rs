//! Tick marks of an axis: round values (1, 2 or 5 times a power of ten) as dense as their labels allow,
//! shared by the frame of a picture and the panels inside it.

use crate::PlotAxis;

/// A labelled position along an axis of the data area.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Tick {
    /// Pixels from the start (left or top edge) of the data area.
    pub offset: f64,
    pub label: String,
}

/// Most ticks an axis gets, however much room there is.
const MAX_TICKS: f64 = 50.0;

/// Round tick values (1, 2 or 5 times a power of ten, never finer than the sample step) along `axis`
/// drawn on `pixels`, as dense as `min_gap` (pixels wanted between neighbours, given the labels) allows.
pub(crate) fn ticks(axis: &PlotAxis, pixels: usize, min_gap: impl Fn(&[String]) -> f64) -> Vec<Tick> {
    let (a, b) = (axis.value(0.0), axis.last());
    let (lo, hi) = (a.min(b), a.max(b));
    let pixels_per_unit = pixels as f64 / (axis.len as f64 * axis.step.abs());
    let offset = |v: f64| ((v - axis.origin) / axis.step + 0.5) * pixels as f64 / axis.len as f64;
    let mut step = NiceStep::at_least(axis.step.abs().max((hi - lo) / MAX_TICKS));
    loop {
        let value = step.value();
        let first = (lo / value - 1e-9).ceil() as i64;
        let last = (hi / value + 1e-9).floor() as i64;
        let labels: Vec<(f64, String)> = (first..=last).map(|k| (k as f64 * value, step.label(k))).collect();
        let texts: Vec<String> = labels.iter().map(|(_, l)| l.clone()).collect();
        if labels.len() > 1 && value * pixels_per_unit < min_gap(&texts) {
            step = step.next();
            continue;
        }
        if labels.is_empty() {
            // An axis too short to hold a round value: label its first sample as it is.
            return vec![Tick { offset: offset(a), label: plain_number(a) }];
        }
        return labels.into_iter().map(|(v, label)| Tick { offset: offset(v), label }).collect();
    }
}

/// `mantissa · 10^exponent` with a mantissa of 1, 2 or 5.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct NiceStep {
    pub(crate) mantissa: u8,
    pub(crate) exponent: i32,
}

impl NiceStep {
    pub(crate) fn at_least(x: f64) -> Self {
        let mut step = NiceStep { mantissa: 1, exponent: x.log10().floor() as i32 };
        while step.value() < x * (1.0 - 1e-9) {
            step = step.next();
        }
        step
    }

    pub(crate) fn next(self) -> Self {
        match self.mantissa {
            1 => NiceStep { mantissa: 2, ..self },
            2 => NiceStep { mantissa: 5, ..self },
            _ => NiceStep { mantissa: 1, exponent: self.exponent + 1 },
        }
    }

    pub(crate) fn value(self) -> f64 {
        self.mantissa as f64 * 10f64.powi(self.exponent)
    }

    /// The label of the `k`-th multiple, with as many decimals as the step needs.
    pub(crate) fn label(self, k: i64) -> String {
        let decimals = (-self.exponent).max(0) as usize;
        no_negative_zero(format!("{:.*}", decimals, k as f64 * self.value()))
    }
}

fn no_negative_zero(s: String) -> String {
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        s[1..].to_string()
    } else {
        s
    }
}

/// `v` to six decimals at most (a scale bar's length, a tick's value): the shortest form of a round value,
/// without the noise of binary fractions (0.30000000000000004).
pub(crate) fn plain_number(v: f64) -> String {
    seis_core::number::decimals(v, 6)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(origin: f64, step: f64, len: usize) -> PlotAxis {
        PlotAxis { name: "x".into(), unit: String::new(), origin, step, len, spacing_m: None }
    }

    fn labels(ticks: &[Tick]) -> Vec<&str> {
        ticks.iter().map(|t| t.label.as_str()).collect()
    }

    #[test]
    fn ticks_take_round_steps_that_fit() {
        // Lines 100..=300 on 1000 pixels (about 5 per line), labels wanting 120 pixels apart: steps of 50.
        let t = ticks(&axis(100.0, 1.0, 201), 1000, |_| 120.0);
        assert_eq!(labels(&t), ["100", "150", "200", "250", "300"]);
        // A tick sits on the centre of its sample's cell: line 150 is sample 50 of 201.
        assert!((t[1].offset - 50.5 * 1000.0 / 201.0).abs() < 1e-9);
        // Depth 0..=1000 m on 502 pixels (half a pixel per metre), 60 pixels wanted apart: steps of 200 m.
        let t = ticks(&axis(0.0, 4.0, 251), 502, |_| 60.0);
        assert_eq!(labels(&t), ["0", "200", "400", "600", "800", "1000"]);
    }

    #[test]
    fn ticks_are_never_finer_than_the_samples_and_handle_fractions() {
        // Three lines with lots of room: still one tick per line at most.
        assert_eq!(labels(&ticks(&axis(10.0, 1.0, 3), 900, |_| 1.0)), ["10", "11", "12"]);
        let t = ticks(&axis(-0.3, 0.1, 7), 700, |_| 150.0);
        assert_eq!(labels(&t), ["-0.2", "0.0", "0.2"]);
        // Time samples of 4 ms starting at 2 ms: ticks land between samples.
        let t = ticks(&axis(2.0, 4.0, 100), 400, |_| 70.0);
        assert_eq!(labels(&t)[..3], ["100", "200", "300"]);
        assert!((t[0].offset - (98.0 / 4.0 + 0.5) * 4.0).abs() < 1e-9);
    }

    #[test]
    fn a_single_sample_gets_a_single_tick() {
        assert_eq!(labels(&ticks(&axis(120.0, 1.0, 1), 800, |_| 50.0)), ["120"]);
        let t = ticks(&axis(12.5, 4.0, 1), 800, |_| 50.0);
        assert_eq!(labels(&t), ["12.5"]);
        assert_eq!(t[0].offset, 400.0);
    }
}
