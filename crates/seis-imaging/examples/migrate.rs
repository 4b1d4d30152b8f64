//! The library without the application: open a SEG-Y file, plan a phase-shift migration through a
//! constant velocity, migrate it on the CPU, and write one depth slice as an NPY file.
//!
//! `cargo run --release -p seis-imaging --example migrate -- data/f3.sgy 2000 150 slice.npy`
//! (input, velocity in m/s, depth of the slice in m, output).

use std::path::PathBuf;

use seis_core::cancel::CancelToken;
use seis_core::context::RunContext;
use seis_core::progress::Silent;
use seis_core::volume::IndexBox;
use seis_imaging::window::WindowParams;
use seis_imaging::{image_geometry, CpuEngine, Engine, ImageRequest, ImagingParams, Migration, Plan};
use seis_io::InputOptions;
use seis_velocity::VelocityModel;

fn main() -> seis_core::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, velocity, depth, output] = <[String; 4]>::try_from(args)
        .map_err(|_| seis_core::Error::Request("usage: migrate INPUT.sgy VELOCITY_M_S DEPTH_M OUTPUT.npy".into()))?;
    let number = |s: &str| s.parse::<f64>().map_err(|e| seis_core::Error::Request(format!("{s}: {e}")));

    let src = seis_io::open(&PathBuf::from(&input), &InputOptions::default())?;
    let velocity = VelocityModel::Constant(number(&velocity)?);
    let params = ImagingParams { dz: 5.0, fmax: 60.0, ..Default::default() };
    let image = image_geometry(src.geometry(), &params, &velocity)?;

    // One box of the image: every trace, at the depth level nearest the one asked for.
    let level = ((number(&depth)? - image.samples.origin) / image.samples.step).round().max(0.0) as usize;
    let level = level.min(image.samples.len - 1);
    let [ni, nx, _] = image.shape();
    let request = ImageRequest::new(vec![IndexBox { il: 0..ni, xl: 0..nx, s: level..level + 1 }]);

    let bin = src.geometry().coords.map_or([25.0, 25.0], |c| c.bin_size());
    let plan = Plan::new(src.geometry(), bin, &WindowParams::default(), &params, &velocity, &request)?;
    let mut engine = CpuEngine::new(None)?;
    let mut ctx = RunContext::new(&Silent, CancelToken::new());
    let migration = Migration { input: src.as_ref(), plan: &plan, velocity: &velocity, request: &request };
    let slice = engine.migrate(&migration, &mut ctx)?.remove(0);

    let written = seis_io::npy::write(&PathBuf::from(&output), &[ni, nx], &slice)?;
    println!("depth {:.0} m: {ni} x {nx} values in {}", image.samples.value(level), written.display());
    Ok(())
}
