//! Input values and inputs that change: samples too large for the transforms, inputs cut short or
//! truncated while they are read.

use crate::cli_common::{job_text, model, run, samples, write_job, write_segy};
use seisimage::volume::{Domain, Geometry, LineAxis, SampleAxis};

use super::path_str;

/// Samples of 1e35, finite but beyond what the transforms can sum in single precision (byte-order
/// confusion gives such values): they are zeroed and counted like NaN, or refused.
#[test]
fn huge_samples_are_zeroed_and_counted_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(16, 12, 100);
    let mut data = samples(&m);
    for k in [1000, 5000, 9000] {
        data[k] = 1e35;
    }
    data[7000] = -3e38;
    let input = dir.path().join("input.sgy");
    write_segy(&input, &m, &data);
    let out = dir.path().join("out");
    let job = write_job(
        &dir.path().join("job.toml"),
        &job_text(&input, &out, "nz = 20", "inlines = [8]\nslice_formats = [\"npy\"]"),
    );
    let o = run(&["run", path_str(&job)]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(o.stderr.contains("4 NaN, infinite or out-of-range input samples were set to zero"), "{o:?}");
    let npy = std::fs::read(out.join("inline_8.npy")).unwrap();
    let values: Vec<f32> = npy[128..].chunks(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
    assert!(values.iter().all(|v| v.is_finite()), "the image is not finite");
    assert!(values.iter().any(|v| *v != 0.0));

    let o = run(&["run", path_str(&job), "--set", "input.nonfinite=refuse"]);
    assert_eq!(o.code(), Some(1), "{o:?}");
    // value 1000 of [il][xl][s] with 12 crosslines of 100 samples: inline 1, crossline 11, sample 1
    assert!(o.stderr.contains("sample 1 (0 ms) of the trace at inline 1, crossline 11 is 1e35"), "{o:?}");
}

/// The image of `src` on `engine` with the CPU tests' usual job (constant 2000 m/s, 20 depth steps of
/// 10 m), and what the run recorded.
fn migrate_whole(
    engine: &mut dyn seisimage::imaging::Engine,
    src: &dyn seisimage::volume::VolumeReader,
) -> (seisimage::Result<Vec<Vec<f32>>>, seisimage::stats::RunStats) {
    let job = crate::common::Job {
        bin: [10.0, 10.0],
        window: seisimage::window::WindowParams::default(),
        params: seisimage::imaging::ImagingParams { dz: 10.0, nz: Some(20), ..Default::default() },
        velocity: seisimage::velocity::VelocityModel::constant(2000.0).unwrap(),
    };
    let request = seisimage::imaging::ImageRequest::whole(&job.image_geometry(src));
    let plan = job.plan(src, &request);
    crate::common::migrate(engine, src, &plan, &job.velocity, &request, &seisimage::progress::Silent)
}

/// On every backend: samples beyond ±1e20 never reach the transforms (a GPU engine conditions its staging
/// buffer with the same code as the CPU), and the image stays finite.
#[test]
fn huge_samples_never_reach_the_transforms_on_any_backend() {
    let m = model(16, 12, 100);
    let mut data = samples(&m);
    for k in [1000, 5000, 9000] {
        data[k] = 1e35;
    }
    data[7000] = -3e38;
    let src = seisimage::volume::Volume { geometry: m.geometry().clone(), data };
    crate::common::for_each_backend(|engine| {
        let (image, stats) = migrate_whole(engine, &src);
        let image = image.unwrap_or_else(|e| panic!("{}: {e}", engine.name()));
        assert_eq!(stats.nonfinite_samples, 4, "{}", engine.name());
        assert!(image[0].iter().all(|v| v.is_finite()), "{}: the image is not finite", engine.name());
        assert!(image[0].iter().any(|v| *v != 0.0), "{}", engine.name());
    });
}

/// On every backend: a SEG-Y input cut short after it was opened (while it is mapped) fails the migration
/// with an error naming it, where the read used to die of SIGBUS.
#[test]
fn an_input_cut_short_fails_the_migration_on_any_backend() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(16, 12, 1000);
    let input = dir.path().join("input.sgy");
    crate::common::for_each_backend(|engine| {
        write_segy(&input, &m, &samples(&m));
        let reader = seisimage::io::segy::SegyReader::open(&input, &Default::default()).unwrap();
        let len = std::fs::metadata(&input).unwrap().len();
        std::fs::OpenOptions::new().write(true).open(&input).unwrap().set_len(len / 3).unwrap();
        let (image, _) = migrate_whole(engine, &reader);
        let e = image.err().unwrap_or_else(|| panic!("{}: migrated a file cut short", engine.name())).to_string();
        assert!(e.contains(path_str(&input)) && e.contains("changed while it was being read"), "{e}");
    });
}

#[test]
fn a_one_sample_input_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let g = Geometry::regular(
        LineAxis::new(1, 1, 8),
        LineAxis::new(1, 1, 8),
        SampleAxis { origin: 0.0, step: 4.0, len: 1, domain: Domain::Time },
    );
    let input = dir.path().join("one-sample.sgy");
    seisimage::io::write_volume(seisimage::io::FileFormat::Segy, &input, &g, &vec![1.0; 64], &Default::default())
        .unwrap();
    let job = write_job(
        &dir.path().join("job.toml"),
        &job_text(&input, &dir.path().join("out"), "nz = 20", "inlines = [4]")
            .replace("[input]\n", "[input]\nbin_size = [10.0, 10.0]\n"),
    );
    let o = run(&["validate", path_str(&job)]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains(path_str(&input)), "{o:?}");
}

/// The input is cut short while it is mapped: the read fails naming the file instead of the process
/// dying of SIGBUS.
#[test]
fn an_input_truncated_while_mapped_is_an_error_not_a_crash() {
    use seisimage::volume::VolumeReader;
    let dir = tempfile::tempdir().unwrap();
    let m = model(16, 12, 1000);
    let input = dir.path().join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let reader = seisimage::io::segy::SegyReader::open(&input, &Default::default()).unwrap();
    let len = std::fs::metadata(&input).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&input).unwrap().set_len(len / 3).unwrap();
    let mut out = vec![0.0f32; reader.geometry().n_values()];
    let e = reader.read_all(&mut out).unwrap_err().to_string();
    assert!(e.contains(path_str(&input)) && e.contains("changed while it was being read"), "{e}");
    // Reading again fails the same way; nothing else in the process was harmed.
    assert!(reader.read_all(&mut out).is_err());
}
