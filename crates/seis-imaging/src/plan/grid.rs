//! The share of the frequencies a plan migrates, as the method's rules allow (what else the engines ask
//! of a plan as they follow it is in `planned.rs`).

use std::ops::Range;

use super::Plan;
use crate::bands::Share;

impl Plan {
    /// Migrate only `share` of the frequencies (see [`crate::bands`]). A method that needs every frequency
    /// of a wavenumber at once (Stolt) does not split: its first share migrates them all and the others none, which
    /// the plan's warnings say.
    pub fn restrict_to(&mut self, share: Share) {
        self.share = share;
        self.frequencies = self.share_frequencies(share);
        if let Some(note) = self.share_note() {
            if self.method.rules().whole_spectrum().is_some() || self.frequencies.is_empty() {
                self.warnings.push(note);
            }
        }
    }

    /// What this plan's share of the frequencies is, in words; `None` for the whole band.
    pub(super) fn share_note(&self) -> Option<String> {
        let (share, n) = (self.share, self.band.len);
        if share.is_whole() {
            return None;
        }
        Some(match (self.method.rules().whole_spectrum(), self.frequencies.is_empty()) {
            (Some(why), false) => {
                format!("share {share}: {why}, so this share migrates all {n} frequencies and the other shares none")
            }
            (Some(why), true) => {
                format!("share {share}: {why}; share 1/{} migrates them all, this one none", share.count)
            }
            (_, true) => format!("share {share}: no frequency (more shares than the {n} frequencies)"),
            (_, false) => {
                let df = 1.0 / (self.padded[2] as f64 * self.dt);
                let f = |i: usize| (self.band.first + i) as f64 * df;
                format!(
                    "share {share}: frequencies {}..{} of {n} ({:.2}..{:.2} Hz)",
                    self.frequencies.start + 1,
                    self.frequencies.end,
                    f(self.frequencies.start),
                    f(self.frequencies.end - 1)
                )
            }
        })
    }

    /// The frequencies (indices into the band) that `share` migrates (see [`Plan::restrict_to`]).
    pub fn share_frequencies(&self, share: Share) -> Range<usize> {
        let n = self.band.len;
        match self.method.rules().whole_spectrum() {
            Some(_) if share.index == 0 => 0..n,
            Some(_) => n..n,
            None => {
                let (_, f_max) = self.band_hz();
                let df = 1.0 / (self.padded[2] as f64 * self.dt);
                let rules = self.method.rules();
                let costs: Vec<f64> =
                    (0..n).map(|i| rules.frequency_cost((self.band.first + i) as f64 * df, f_max)).collect();
                share.range_by_cost(&costs)
            }
        }
    }
}
