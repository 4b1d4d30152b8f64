//! What produced a picture (input, method, velocity, version, date), for its footer, title and sidecar,
//! and the few words and numbers every part of a picture writes the same way.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// What produced a picture, for its footer, its title template and its sidecar: filled in by the run
/// (see `products.rs`) or by `seisimage plot`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The input file's name.
    pub input: String,
    /// The migration method, or what the picture shows of an unmigrated input.
    pub method: Option<String>,
    /// The velocity in a few words, e.g. `v(z) 1550-2000 m/s`.
    pub velocity: Option<String>,
    pub dz_m: Option<f64>,
    pub fmax_hz: Option<f64>,
    /// `seisimage 0.1.0`.
    pub software: String,
    /// The day of the run, UTC (`2026-11-21`).
    pub date: String,
}

impl Provenance {
    /// Provenance of a picture drawn now from `input`, by nothing but this program.
    pub fn now(input: &Path) -> Self {
        Provenance {
            input: input.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            software: software(),
            date: today(),
            ..Default::default()
        }
    }

    /// The footer, as lines of text.
    pub fn footer(&self) -> Vec<String> {
        let mut parts = vec![format!("input {}", self.input)];
        if let Some(m) = &self.method {
            parts.push(m.clone());
        }
        if let Some(v) = &self.velocity {
            parts.push(v.clone());
        }
        if let Some(dz) = self.dz_m {
            parts.push(format!("dz {} m", number(dz)));
        }
        if let Some(f) = self.fmax_hz {
            parts.push(format!("fmax {} Hz", number(f)));
        }
        parts.push(self.software.clone());
        parts.push(self.date.clone());
        vec![parts.join(" · ")]
    }
}

/// Today's date, UTC.
pub fn today() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()[..10].to_string()
}

pub(crate) use seis_core::number::number;

/// This program and its version, as pictures name it.
pub(crate) fn software() -> String {
    format!("seisimage {}", env!("CARGO_PKG_VERSION"))
}
