//! Stage times of device work. A launch or an asynchronous copy returns before the device runs it, so the
//! host clock cannot time it: a section of a stream's work is timed by two events recorded around it, and
//! the sections are summed into the run's stages once the device is done with them. Work on the host is
//! timed by the host clock, with [`RunStats::add`] and [`RunStats::time`].

use std::cell::RefCell;
use std::time::Duration;

use cudarc::driver::{CudaEvent, CudaStream};

use super::device::{check, elapsed_ms, Gpu};
use seis_core::error::Result;
use seis_core::stats::RunStats;

/// Sections of device work, each part of a named stage, waiting to be summed into a [`RunStats`].
pub struct DeviceTimer<'a> {
    gpu: &'a Gpu,
    sections: RefCell<Vec<Section>>,
}

/// The work a stream did between two events.
struct Section {
    stage: &'static str,
    start: CudaEvent,
    end: CudaEvent,
}

impl<'a> DeviceTimer<'a> {
    pub fn new(gpu: &'a Gpu) -> Self {
        DeviceTimer { gpu, sections: RefCell::new(Vec::new()) }
    }

    /// Queue `f`'s work on `stream` as part of stage `stage`.
    pub fn time<T>(&self, stage: &'static str, stream: &CudaStream, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let (start, end) = (self.gpu.timing_event()?, self.gpu.timing_event()?);
        check("recording an event", start.record(stream))?;
        let out = f()?;
        check("recording an event", end.record(stream))?;
        self.sections.borrow_mut().push(Section { stage, start, end });
        Ok(out)
    }

    /// Add the sections timed so far to `stats`, one entry per stage in the order the stages were first
    /// timed, and start again. Waits for the device to finish them.
    pub fn collect(&self, stats: &mut RunStats) -> Result<()> {
        let mut stages: Vec<(&'static str, f64)> = Vec::new();
        for s in self.sections.borrow_mut().drain(..) {
            let ms = elapsed_ms(&s.start, &s.end)?;
            match stages.iter_mut().find(|(name, _)| *name == s.stage) {
                Some((_, total)) => *total += ms,
                None => stages.push((s.stage, ms)),
            }
        }
        for (stage, ms) in stages {
            stats.add(stage, Duration::from_secs_f64(ms / 1000.0), 0);
        }
        Ok(())
    }
}
