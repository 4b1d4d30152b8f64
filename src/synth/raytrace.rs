//! Zero-offset travel times through flat layers, by exact ray tracing.
//!
//! A ray from a surface point to a point at depth `z` crosses each layer at the angle Snell's law gives for
//! its ray parameter `p = sin θ / v`, the same in every layer. Its horizontal reach is
//! `X(p) = Σ h v p / sqrt(1 − p² v²)` and its travel time `T(p) = Σ h / (v sqrt(1 − p² v²))` over the layer
//! thicknesses `h` above `z`. `X` grows monotonically from 0 to infinity as `p` goes from 0 to `1 / v_max`,
//! so the ray that reaches a given offset is found by bisection; the time then follows.
//!
//! This module knows nothing of the migration code: the synthetic data it times are an independent input
//! for the migration tests.

use serde::{Deserialize, Serialize};

/// A layer of the flat-layered medium: its top depth (m) and interval velocity (m/s). The deepest layer
/// extends downwards without end.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Layer {
    pub top: f64,
    pub velocity: f64,
}

/// The ray from the surface to a point: its ray parameter (s/m) and one-way travel time (s).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray {
    pub p: f64,
    pub time: f64,
}

/// Thickness and velocity of each layer piece between the surface and depth `z` (layers sorted by top,
/// the first at the surface).
fn pieces(layers: &[Layer], z: f64) -> impl Iterator<Item = (f64, f64)> + '_ {
    layers.iter().enumerate().filter_map(move |(i, l)| {
        let bottom = layers.get(i + 1).map_or(z, |next| next.top.min(z));
        (bottom > l.top).then_some((bottom - l.top, l.velocity))
    })
}

/// The ray from a surface point to a point at depth `z` and horizontal distance `offset`.
pub fn trace(layers: &[Layer], offset: f64, z: f64) -> Ray {
    let offset = offset.abs();
    let reach = |p: f64| pieces(layers, z).map(|(h, v)| h * v * p / (1.0 - p * p * v * v).sqrt()).sum::<f64>();
    let time = |p: f64| pieces(layers, z).map(|(h, v)| h / (v * (1.0 - p * p * v * v).sqrt())).sum::<f64>();
    let v_max = pieces(layers, z).map(|(_, v)| v).fold(0.0, f64::max);
    if offset == 0.0 || v_max == 0.0 {
        return Ray { p: 0.0, time: time(0.0) };
    }
    // Bisection on p in [0, 1 / v_max): X(p) is increasing and unbounded there.
    let (mut lo, mut hi) = (0.0, 1.0 / v_max);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid == lo || mid == hi {
            break;
        }
        if reach(mid) < offset {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let p = 0.5 * (lo + hi);
    Ray { p, time: time(p) }
}

/// Zero-offset two-way time (s) from a surface point to a point diffractor `offset` away horizontally at
/// depth `z`.
pub fn two_way_time(layers: &[Layer], offset: f64, z: f64) -> f64 {
    2.0 * trace(layers, offset, z).time
}

/// Vertical two-way time (s) from the surface to depth `z`.
pub fn vertical_two_way_time(layers: &[Layer], z: f64) -> f64 {
    2.0 * pieces(layers, z).map(|(h, v)| h / v).sum::<f64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_layer_is_a_straight_ray() {
        let l = [Layer { top: 0.0, velocity: 2000.0 }];
        for (x, z) in [(0.0, 500.0), (300.0, 400.0), (2000.0, 100.0), (-700.0, 1200.0)] {
            let t = two_way_time(&l, x, z);
            let straight = 2.0 * f64::hypot(x, z) / 2000.0;
            assert!((t - straight).abs() < 1e-9, "{x} {z}: {t} vs {straight}");
        }
        assert_eq!(vertical_two_way_time(&l, 1000.0), 1.0);
    }

    /// Two layers: the ray obeys Snell's law at the interface, reaches the offset, and its time is the
    /// least time over all crossing points of the interface (Fermat), found here by a golden-section search.
    #[test]
    fn two_layers_obey_snell_and_fermat() {
        let (v1, v2, h1) = (1500.0, 3000.0, 400.0);
        let l = [Layer { top: 0.0, velocity: v1 }, Layer { top: h1, velocity: v2 }];
        let (x, z) = (900.0, 1000.0);
        let ray = trace(&l, x, z);
        let (s1, s2) = (ray.p * v1, ray.p * v2); // sines of the angles in each layer
        let x1 = h1 * s1 / (1.0 - s1 * s1).sqrt();
        let x2 = (z - h1) * s2 / (1.0 - s2 * s2).sqrt();
        assert!((x1 + x2 - x).abs() < 1e-6);
        assert!((s1 / v1 - s2 / v2).abs() < 1e-15);

        let t_via = |c: f64| f64::hypot(c, h1) / v1 + f64::hypot(x - c, z - h1) / v2;
        let (mut a, mut b) = (0.0, x);
        let g = (5f64.sqrt() - 1.0) / 2.0;
        for _ in 0..200 {
            let (c, d) = (b - g * (b - a), a + g * (b - a));
            if t_via(c) < t_via(d) {
                b = d;
            } else {
                a = c;
            }
        }
        assert!((ray.time - t_via(0.5 * (a + b))).abs() < 1e-12);
        assert!((a - x1).abs() < 1e-3);
        assert!((vertical_two_way_time(&l, z) - 2.0 * (h1 / v1 + (z - h1) / v2)).abs() < 1e-15);
    }

    #[test]
    fn point_above_an_interface_sees_only_the_layers_above() {
        let l = [Layer { top: 0.0, velocity: 2000.0 }, Layer { top: 800.0, velocity: 4000.0 }];
        let t = two_way_time(&l, 300.0, 400.0);
        assert!((t - 2.0 * f64::hypot(300.0, 400.0) / 2000.0).abs() < 1e-9);
    }
}
