//! The plan in words, for `validate`: apart from the numbers, since only people read it.

use super::Plan;

impl Plan {
    /// Human-readable summary for `validate`.
    pub fn describe(&self) -> Vec<String> {
        let [ni, nx, nt] = self.input.shape();
        let [pi, px, pt] = self.padded;
        let ramps = self.window.ramp_lengths();
        let df = 1.0 / (pt as f64 * self.dt);
        let (f0, f1) = self.band_hz();
        let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
        let mut lines = vec![
            format!("method: {}", self.method.kind().name()),
            format!(
                "input: {ni} × {nx} traces × {nt} samples of {} ms; bins {:.2} × {:.2} m",
                self.input.samples.step, self.bin[0], self.bin[1]
            ),
            format!(
                "padded: {pi} × {px} traces × {pt} samples; tapers: last {} samples, {} / {} edge traces",
                ramps[0], ramps[1], ramps[2]
            ),
            format!("band: {f0:.2}..{f1:.2} Hz, {} frequencies {df:.4} Hz apart", self.band.len),
            format!(
                "depth: 0..{} m step {} m ({} levels); computed down to {} m, {} level(s) imaged in {} block(s)",
                self.depth.last(),
                self.depth.step,
                self.depth.len,
                self.last_level() as f64 * self.depth.step,
                self.levels.len(),
                self.blocks.len()
            ),
        ];
        lines.push(match self.reach {
            Some(z) => format!(
                "reach: the last sample ({} ms) reaches {z:.0} m (vertical two-way time through the fastest \
                 velocity); the products are zero below",
                self.input.samples.last()
            ),
            None => "reach: the record reaches below the deepest level".to_string(),
        });
        lines.extend(self.share_note());
        if let Some(d) = self.dip_limit {
            lines.push(format!("dip limit: {:.1}° (cosine roll-off over the last 5°)", d.to_degrees()));
        }
        lines.extend(self.method.rules().describe(self));
        lines.push(format!(
            "memory: host ≈ {:.1} MiB (spectrum {:.1} MiB, k-image block {:.1} MiB, requested image {:.1} MiB)",
            mib(self.host_memory_bytes()),
            mib(self.spectrum_bytes()),
            mib(self.block_bytes()),
            mib(self.request_values as u64 * 4)
        ));
        lines
    }
}
