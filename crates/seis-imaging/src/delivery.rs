//! How products leave an engine: one by one, each as soon as its last depth level is imaged.
//!
//! The depth methods image the levels from the top down, so a shallow depth slice is finished long before
//! the migration is. Handing it over then lets its picture be drawn and written while the engine works on
//! the deeper levels, instead of after them.

use std::ops::Range;
use std::sync::Mutex;

use super::request::ImageRequest;
use seis_core::error::{Error, Result};

/// Receives the products of a migration. `complete` is called once per box of the request, with the box's
/// values in `[il][xl][z]` order (depth contiguous), in the order the boxes are finished; possibly from a
/// thread other than the one that called the engine.
pub trait ProductSink: Sync {
    fn complete(&self, index: usize, values: Vec<f32>);
}

/// A sink that keeps every product, for callers that want them all once the migration is done.
pub struct Collected {
    slots: Mutex<Vec<Option<Vec<f32>>>>,
}

impl Collected {
    pub fn new(request: &ImageRequest) -> Self {
        Collected { slots: Mutex::new(vec![None; request.boxes.len()]) }
    }

    /// One buffer per box, in the request's order. A box the engine never handed over is an engine fault.
    pub fn into_images(self) -> Result<Vec<Vec<f32>>> {
        let slots = self.slots.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
        slots
            .into_iter()
            .enumerate()
            .map(|(i, s)| s.ok_or_else(|| Error::Internal(format!("the engine did not return request box {}", i + 1))))
            .collect()
    }
}

impl ProductSink for Collected {
    fn complete(&self, index: usize, values: Vec<f32>) {
        let mut slots = self.slots.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        slots[index] = Some(values);
    }
}

/// Which boxes are finished: for each box, the number of its levels not yet imaged. Engines report each
/// level once, when its values are in the box (in any order).
#[derive(Clone, Debug)]
pub struct Completion {
    depths: Vec<Range<usize>>,
    waiting: Vec<usize>,
}

impl Completion {
    pub fn new(request: &ImageRequest) -> Self {
        Completion {
            depths: request.boxes.iter().map(|b| b.s.clone()).collect(),
            waiting: request.boxes.iter().map(|b| b.s.len()).collect(),
        }
    }

    /// `levels` are imaged: the boxes this finishes, ascending.
    pub fn imaged(&mut self, levels: &[usize]) -> Vec<usize> {
        let mut finished = Vec::new();
        for (i, (depths, waiting)) in self.depths.iter().zip(&mut self.waiting).enumerate() {
            if *waiting == 0 {
                continue;
            }
            let n = levels.iter().filter(|l| depths.contains(l)).count();
            *waiting = waiting.saturating_sub(n);
            if *waiting == 0 {
                finished.push(i);
            }
        }
        finished
    }

    /// Boxes with levels still to come.
    pub fn unfinished(&self) -> Vec<usize> {
        (0..self.waiting.len()).filter(|&i| self.waiting[i] > 0).collect()
    }

    /// The migration is over: every box must have been finished (an engine fault otherwise).
    pub fn check_all_finished(&self) -> Result<()> {
        match self.unfinished().first() {
            None => Ok(()),
            Some(i) => Err(Error::Internal(format!("request box {} was not imaged at every level", i + 1))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seis_core::volume::IndexBox;

    fn request() -> ImageRequest {
        ImageRequest::new(vec![
            IndexBox { il: 0..4, xl: 0..4, s: 3..4 },  // a depth slice at level 3
            IndexBox { il: 1..2, xl: 0..4, s: 0..10 }, // a section down to level 9
            IndexBox { il: 0..2, xl: 0..2, s: 2..5 },  // a region, levels 2-4
        ])
    }

    #[test]
    fn boxes_finish_with_their_last_level_whatever_the_order() {
        let mut c = Completion::new(&request());
        assert_eq!(c.imaged(&[0, 1]), Vec::<usize>::new());
        assert_eq!(c.imaged(&[4, 3]), vec![0]);
        assert_eq!(c.imaged(&[2]), vec![2]);
        assert_eq!(c.unfinished(), vec![1]);
        assert!(c.check_all_finished().unwrap_err().to_string().contains("request box 2"));
        assert_eq!(c.imaged(&[9, 8, 7, 6]), Vec::<usize>::new());
        assert_eq!(c.imaged(&[5]), vec![1]);
        assert!(c.unfinished().is_empty());
        c.check_all_finished().unwrap();
        // A finished box is reported once.
        assert_eq!(c.imaged(&[3, 9]), Vec::<usize>::new());
    }

    #[test]
    fn all_levels_at_once_finish_every_box() {
        let mut c = Completion::new(&request());
        assert_eq!(c.imaged(&(0..10).collect::<Vec<_>>()), vec![0, 1, 2]);
    }

    #[test]
    fn collected_products_come_back_in_request_order_and_a_missing_one_is_an_error() {
        let c = Collected::new(&request());
        c.complete(2, vec![2.0]);
        c.complete(0, vec![0.0]);
        c.complete(1, vec![1.0]);
        assert_eq!(c.into_images().unwrap(), vec![vec![0.0], vec![1.0], vec![2.0]]);
        let c = Collected::new(&request());
        c.complete(1, vec![1.0]);
        let e = c.into_images().unwrap_err().to_string();
        assert!(e.contains("request box 1"), "{e}");
    }
}
