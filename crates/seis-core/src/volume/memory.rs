//! A volume held in memory, itself a reader: what a read returns, a synthetic model, or a product about
//! to be written.

use super::geometry::{Geometry, IndexBox};
use super::reader::{check_box_buffer, VolumeReader};
use crate::error::Result;

/// A volume held in memory: the result of a read, a synthetic model, or a product about to be written.
#[derive(Clone, Debug)]
pub struct Volume {
    pub geometry: Geometry,
    pub data: Vec<f32>,
}

impl Volume {
    pub fn zeros(geometry: Geometry) -> Self {
        let n = geometry.n_values();
        Volume { geometry, data: vec![0.0; n] }
    }

    /// Read a whole source into memory.
    pub fn read(src: &dyn VolumeReader) -> Result<Self> {
        let geometry = src.geometry().clone();
        let mut data = vec![0.0f32; geometry.n_values()];
        src.read_all(&mut data)?;
        Ok(Volume { geometry, data })
    }

    pub fn trace(&self, il: usize, xl: usize) -> &[f32] {
        let ns = self.geometry.samples.len;
        let t = il * self.geometry.xlines.len + xl;
        &self.data[t * ns..(t + 1) * ns]
    }

    pub fn trace_mut(&mut self, il: usize, xl: usize) -> &mut [f32] {
        let ns = self.geometry.samples.len;
        let t = il * self.geometry.xlines.len + xl;
        &mut self.data[t * ns..(t + 1) * ns]
    }

    /// Copy a box out of this volume (in `[il][xl][s]` order).
    pub fn cut(&self, b: &IndexBox) -> Volume {
        let mut data = Vec::with_capacity(b.len());
        for i in b.il.clone() {
            for j in b.xl.clone() {
                data.extend_from_slice(&self.trace(i, j)[b.s.clone()]);
            }
        }
        Volume { geometry: self.geometry.subset(b), data }
    }
}

impl VolumeReader for Volume {
    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn describe(&self) -> String {
        "in-memory volume".into()
    }

    fn read_box(&self, b: &IndexBox, out: &mut [f32]) -> Result<()> {
        check_box_buffer(b, out)?;
        let ns = b.s.len();
        let mut k = 0;
        for i in b.il.clone() {
            for j in b.xl.clone() {
                out[k..k + ns].copy_from_slice(&self.trace(i, j)[b.s.clone()]);
                k += ns;
            }
        }
        Ok(())
    }
}
