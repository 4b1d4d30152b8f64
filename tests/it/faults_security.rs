//! Hostile inputs and shared folders: what seisimage refuses to do with them, and the resources a request
//! or a header can make it use. Every hostile file is made here, by the test, from the formats' own
//! definitions (HDF5 files through the HDF5 library); nothing is shipped.
//!
//! The attacks: an HDF5 file that names a filter plugin, stores its values in another file, maps another
//! file's dataset or links to one; symbolic links planted at the names a run writes in a shared output
//! folder; an output that is the input; FIFOs and devices where a file is expected; requests that ask for
//! more than a machine has (threads, pixels, samples, open files, names longer than a file system holds);
//! finite samples so large that the transforms overflow; an input that shrinks while it is read.

use std::ffi::CString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cli_common::{
    child, job_text, model, names, run, run_command, samples, seisimage, write_job, write_segy, Outcome,
};
use seisimage::volume::{Domain, Geometry, LineAxis, SampleAxis};

/// Run `cmd` to its end, killing it (and failing) after `limit`: for attacks whose symptom is a hang.
fn run_within(cmd: &mut Command, limit: Duration) -> Outcome {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {:?}: {e}", cmd.get_program()));
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("still running after {limit:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    Outcome {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("test paths are UTF-8")
}

/// A small input (16 × 12 traces of 100 samples) in `dir` and a job writing into `dir/out`, with `output`
/// added to `[output]` and `imaging` to `[imaging]`.
fn small_job(dir: &Path, imaging: &str, output: &str) -> (PathBuf, PathBuf, PathBuf) {
    let m = model(16, 12, 100);
    let input = dir.join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let out = dir.join("out");
    let job = write_job(&dir.join("job.toml"), &job_text(&input, &out, &format!("nz = 20\n{imaging}"), output));
    (job, input, out)
}

// ---------------------------------------------------------------------------------------------------------
// HDF5: filter plugins, storage in other files, virtual datasets, links out of the file

pub(crate) mod h5raw {
    //! The few raw HDF5 calls the hostile files need: the high-level crate refuses to make them.
    use std::ffi::CString;
    use std::path::Path;

    use hdf5_sys::h5d::{H5Dclose, H5Dcreate2, H5Dwrite, H5Dwrite_chunk};
    use hdf5_sys::h5p::{H5Pclose, H5Pcreate, H5Pset_chunk, H5Pset_external, H5Pset_filter, H5P_CLS_DATASET_CREATE};
    use hdf5_sys::h5p::{H5Pset_virtual, H5P_DEFAULT};
    use hdf5_sys::h5s::{H5S_seloper_t, H5Sselect_hyperslab};
    use hdf5_sys::h5z::H5Z_FLAG_OPTIONAL;

    fn check(what: &str, status: i64) {
        assert!(status >= 0, "{what} failed");
    }

    /// Create `name` in `file` with the float32 `shape` and a creation property list set up by `dcpl`.
    fn create(file: &hdf5::File, name: &str, shape: &[usize], dcpl: impl FnOnce(i64)) -> i64 {
        let space = hdf5::Dataspace::try_new(shape.to_vec()).unwrap();
        let dtype = hdf5::Datatype::from_type::<f32>().unwrap();
        let name = CString::new(name).unwrap();
        hdf5::sync::sync(|| unsafe {
            let plist = H5Pcreate(*H5P_CLS_DATASET_CREATE);
            dcpl(plist);
            let ds = H5Dcreate2(file.id(), name.as_ptr(), dtype.id(), space.id(), H5P_DEFAULT, plist, H5P_DEFAULT);
            check("H5Dcreate2", ds);
            H5Pclose(plist);
            ds
        })
    }

    /// `/seismic` of `shape` in one chunk that claims to be encoded by `filter`, which no HDF5 build has:
    /// reading it needs that filter, which HDF5 looks for among its plugins.
    pub fn volume_with_filter(path: &Path, shape: [usize; 3], filter: i32) {
        let file = hdf5::File::create(path).unwrap();
        let ds = create(&file, "seismic", &shape, |plist| unsafe {
            let chunk = shape.map(|n| n as u64);
            check("H5Pset_chunk", H5Pset_chunk(plist, 3, chunk.as_ptr()) as i64);
            check("H5Pset_filter", H5Pset_filter(plist, filter, H5Z_FLAG_OPTIONAL, 0, std::ptr::null()) as i64);
        });
        let bytes = vec![0u8; shape.iter().product::<usize>() * 4];
        hdf5::sync::sync(|| unsafe {
            let offset = [0u64; 3];
            let status = H5Dwrite_chunk(ds, H5P_DEFAULT, 0, offset.as_ptr(), bytes.len(), bytes.as_ptr().cast());
            check("H5Dwrite_chunk", status as i64);
            H5Dclose(ds);
        });
    }

    /// `/seismic` of `shape` whose values HDF5 reads from the raw file `outside`.
    pub fn volume_stored_in(path: &Path, shape: [usize; 3], outside: &Path) {
        let file = hdf5::File::create(path).unwrap();
        let name = CString::new(outside.to_str().unwrap()).unwrap();
        let bytes = shape.iter().product::<usize>() as u64 * 4;
        let ds = create(&file, "seismic", &shape, |plist| unsafe {
            check("H5Pset_external", H5Pset_external(plist, name.as_ptr(), 0, bytes) as i64);
        });
        hdf5::sync::sync(|| unsafe { H5Dclose(ds) });
    }

    /// Write inline `il` of the 3-D float32 dataset `ds` of `shape` (one HDF5 write per inline).
    pub fn write_inline(ds: &hdf5::Dataset, il: usize, shape: [usize; 3], values: &[f32]) {
        let file_space = ds.space().unwrap();
        let memory = hdf5::Dataspace::try_new([1, shape[1], shape[2]]).unwrap();
        let dtype = hdf5::Datatype::from_type::<f32>().unwrap();
        hdf5::sync::sync(|| unsafe {
            let start = [il as u64, 0, 0];
            let count = [1, shape[1] as u64, shape[2] as u64];
            let select = H5S_seloper_t::H5S_SELECT_SET;
            let status = H5Sselect_hyperslab(
                file_space.id(),
                select,
                start.as_ptr(),
                std::ptr::null(),
                count.as_ptr(),
                std::ptr::null(),
            );
            check("H5Sselect_hyperslab", status as i64);
            let status =
                H5Dwrite(ds.id(), dtype.id(), memory.id(), file_space.id(), H5P_DEFAULT, values.as_ptr().cast());
            check("H5Dwrite", status as i64);
        });
    }

    /// `/seismic` of `shape`, a virtual dataset mapping all of `/data` of the HDF5 file `source`.
    pub fn virtual_volume(path: &Path, shape: [usize; 3], source: &Path) {
        let file = hdf5::File::create(path).unwrap();
        let space = hdf5::Dataspace::try_new(shape.to_vec()).unwrap();
        let (src_file, src_name) = (CString::new(source.to_str().unwrap()).unwrap(), CString::new("/data").unwrap());
        let ds = create(&file, "seismic", &shape, |plist| unsafe {
            let status = H5Pset_virtual(plist, space.id(), src_file.as_ptr(), src_name.as_ptr(), space.id());
            check("H5Pset_virtual", status as i64);
        });
        hdf5::sync::sync(|| unsafe { H5Dclose(ds) });
    }
}

/// An HDF5 volume other people could be given: `/data` of 2 × 2 × 8 values of 7.5, with axis datasets,
/// in `path`. Its values are what must not leak into an output through another file.
fn secret_h5(path: &Path) {
    let f = hdf5::File::create(path).unwrap();
    let values = vec![7.5f32; 32];
    filled(&f, "data", &values);
    f.new_dataset_builder().with_data(&[5i64, 6]).create("iline").unwrap();
}

/// A 2 × 2 × 8 float32 dataset `name` in `group` holding `values`.
fn filled(group: &hdf5::Group, name: &str, values: &[f32]) -> hdf5::Dataset {
    let ds = group.new_dataset::<f32>().shape([2, 2, 8]).create(name).unwrap();
    ds.write_raw(values).unwrap();
    ds
}

/// `convert FILE out.npy` must fail with exit 1, write nothing, and say each of `says`.
fn assert_convert_refused(dir: &Path, file: &Path, says: &[&str]) {
    let out = dir.join("copy.npy");
    let o = run(&["convert", path_str(file), path_str(&out)]);
    assert_eq!(o.code(), Some(1), "{o:?}");
    for s in says {
        assert!(o.stderr.contains(s), "'{s}' is not in: {o:?}");
    }
    assert!(o.stderr.contains(path_str(file)), "the error names the file: {o:?}");
    assert!(!out.exists(), "nothing is written");
}

#[test]
fn hdf5_filter_plugins_are_never_loaded() {
    let dir = tempfile::tempdir().unwrap();
    // A plugin whose loading alone runs its code: the constructor writes a marker.
    let plugins = dir.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    let marker = dir.path().join("plugin-code-ran");
    let source = dir.path().join("planted.c");
    std::fs::write(
        &source,
        format!(
            "#include <stdio.h>\n\
             __attribute__((constructor)) static void planted(void) {{\n\
                 FILE *f = fopen(\"{}\", \"w\"); if (f) {{ fputs(\"ran\", f); fclose(f); }}\n\
             }}\n\
             int H5PLget_plugin_type(void) {{ return 0; }}\n\
             const void *H5PLget_plugin_info(void) {{ return 0; }}\n",
            marker.display()
        ),
    )
    .unwrap();
    let so = plugins.join("libplanted.so");
    let cc = child("gcc").args(["-shared", "-fPIC", "-o"]).arg(&so).arg(&source).output().expect("gcc");
    assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));

    let file = dir.path().join("filtered.h5");
    h5raw::volume_with_filter(&file, [2, 2, 8], 32100);
    for command in [vec!["info"], vec!["convert"]] {
        let mut cmd = seisimage();
        cmd.args(&command).arg(&file);
        if command[0] == "convert" {
            cmd.arg(dir.path().join("copy.h5"));
        }
        let o = run_command(cmd.env("HDF5_PLUGIN_PATH", &plugins));
        assert!(!marker.exists(), "the plugin was loaded and ran its code ({command:?})");
        assert_eq!(o.code(), Some(1), "{o:?}");
        assert!(o.stderr.contains("filter 32100"), "the filter is named: {o:?}");
    }
    assert!(!dir.path().join("copy.h5").exists());
}

#[test]
fn hdf5_values_stored_in_another_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.bin");
    let values: Vec<u8> = (0..32).flat_map(|k| (k as f32 + 0.25).to_le_bytes()).collect();
    std::fs::write(&secret, &values).unwrap();
    let file = dir.path().join("external.h5");
    h5raw::volume_stored_in(&file, [2, 2, 8], &secret);
    assert_convert_refused(dir.path(), &file, &["/seismic", "stored in another file", path_str(&secret)]);
}

#[test]
fn hdf5_virtual_datasets_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.h5");
    secret_h5(&secret);
    let file = dir.path().join("virtual.h5");
    h5raw::virtual_volume(&file, [2, 2, 8], &secret);
    assert_convert_refused(dir.path(), &file, &["/seismic", "virtual dataset", path_str(&secret)]);
}

#[test]
fn hdf5_links_out_of_the_file_are_refused_and_links_inside_it_followed() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.h5");
    secret_h5(&secret);

    // The volume itself is an external link.
    let direct = dir.path().join("direct.h5");
    hdf5::File::create(&direct).unwrap().link_external(path_str(&secret), "/data", "seismic").unwrap();
    assert_convert_refused(dir.path(), &direct, &["/seismic", "external link", path_str(&secret)]);

    // The volume is a soft link inside the file to a group that is an external link.
    let indirect = dir.path().join("indirect.h5");
    {
        let f = hdf5::File::create(&indirect).unwrap();
        f.link_external(path_str(&secret), "/", "elsewhere").unwrap();
        f.link_soft("/elsewhere/data", "seismic").unwrap();
    }
    assert_convert_refused(dir.path(), &indirect, &["/elsewhere", "external link", path_str(&secret)]);

    // The volume is in the file, but its inline axis is an external link.
    let companion = dir.path().join("companion.h5");
    {
        let f = hdf5::File::create(&companion).unwrap();
        filled(&f, "seismic", &[1.0; 32]);
        f.link_external(path_str(&secret), "/iline", "iline").unwrap();
    }
    assert_convert_refused(dir.path(), &companion, &["/iline", "external link", path_str(&secret)]);

    // A soft link that stays in the file is followed as before.
    let inside = dir.path().join("inside.h5");
    {
        let f = hdf5::File::create(&inside).unwrap();
        let g = f.create_group("stacks").unwrap();
        filled(&g, "full", &[1.0; 32]);
        f.link_soft("/stacks/full", "seismic").unwrap();
    }
    let out = dir.path().join("inside.npy");
    let o = run(&["convert", path_str(&inside), path_str(&out)]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(out.exists());
}

#[test]
fn hdf5_text_quoted_in_an_error_is_cut_short() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("long-unit.h5");
    {
        let f = hdf5::File::create(&file).unwrap();
        let ds = filled(&f, "seismic", &[1.0; 32]);
        let unit: hdf5::types::VarLenUnicode = "furlongs ".repeat(1_200_000).parse().unwrap();
        ds.new_attr::<hdf5::types::VarLenUnicode>().create("sample_unit").unwrap().write_scalar(&unit).unwrap();
    }
    let o = run(&["info", path_str(&file)]);
    assert_eq!(o.code(), Some(1), "{o:?}");
    assert!(o.stderr.contains("attribute sample_unit of /seismic is 'furlongs furlongs"), "{}", &o.stderr[..500]);
    assert!(o.stderr.len() < 2000, "a {}-byte error for a 10.8 MB attribute", o.stderr.len());
}

/// Many chunks of one value each, all written: HDF5 keeps a record per chunk of a read, so a read of the
/// whole volume at once took 1.7 GB for a 3 MB file of 262 144 chunks.
#[test]
fn hdf5_files_of_many_tiny_chunks_are_read_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tiny-chunks.h5");
    let shape = [32usize, 32, 256];
    {
        let f = hdf5::File::with_options().with_fapl(|p| p.libver_latest()).create(&file).unwrap();
        let ds = f.new_dataset::<f32>().shape(shape).chunk([1, 1, 1]).create("seismic").unwrap();
        let inline: Vec<f32> = (0..shape[1] * shape[2]).map(|k| (k % 17) as f32).collect();
        for il in 0..shape[0] {
            h5raw::write_inline(&ds, il, shape, &inline);
        }
    }
    let out = dir.path().join("copy.npy");
    for args in [vec!["info", "--json"], vec!["convert"]] {
        let mut cmd = seisimage();
        cmd.args(&args).arg(&file);
        if args[0] == "convert" {
            cmd.arg(&out);
        }
        // 600 MB of address space, arenas kept few so that it is the heap that counts.
        cmd.env("MALLOC_ARENA_MAX", "2");
        unsafe {
            cmd.pre_exec(|| {
                let limit = libc::rlimit { rlim_cur: 600 << 20, rlim_max: 600 << 20 };
                match libc::setrlimit(libc::RLIMIT_AS, &limit) {
                    0 => Ok(()),
                    _ => Err(std::io::Error::last_os_error()),
                }
            });
        }
        let o = run_command(&mut cmd);
        assert_eq!(o.code(), Some(0), "{args:?}: {o:?}");
    }
    let npy = std::fs::read(&out).unwrap();
    assert_eq!(npy.len(), 128 + 4 * shape.iter().product::<usize>());
}

// ---------------------------------------------------------------------------------------------------------
// Shared output folders: planted links, debris of dead runs

/// Symbolic links planted at every name a run would have written under its former predictable temporary
/// names (process id and a count) all point at a file elsewhere: the run must write around them, and the
/// file elsewhere must stay as it was. The links are planted by a shell that then becomes seisimage, so
/// that they carry its process id.
#[test]
fn links_planted_in_the_output_folder_are_never_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let (job, _, out) = small_job(dir.path(), "", "inlines = [8]\nslice_formats = [\"npy\", \"hdf5\"]");
    std::fs::create_dir(&out).unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, b"precious").unwrap();
    let plant = format!(
        "for name in inline_8.png inline_8.json inline_8.npy inline_8.h5 index.html manifest.json; do \
           for n in $(seq 0 40); do ln -s {victim} {out}/.$name.partial-$$-$n; ln -s {victim} {out}/.$name.replaced-$$-$n; done; \
         done; exec \"$0\" run {job}",
        victim = victim.display(),
        out = out.display(),
        job = job.display()
    );
    let mut cmd = child("sh");
    cmd.arg("-c").arg(plant).arg(crate::cli_common::seisimage_path());
    let o = run_command(&mut cmd);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious", "the run wrote through a planted link");
    for name in ["inline_8.png", "inline_8.json", "inline_8.npy", "inline_8.h5", "index.html", "manifest.json"] {
        let meta = std::fs::symlink_metadata(out.join(name)).unwrap();
        assert!(meta.file_type().is_file(), "{name} is not a regular file");
    }
}

/// The tag of this host in temporary names: the first 8 hexadecimal digits of the SHA-256 of its name.
fn host_tag() -> String {
    use sha2::Digest;
    let mut name = [0u8; 256];
    // SAFETY: gethostname writes at most `name.len()` bytes into the buffer.
    assert_eq!(unsafe { libc::gethostname(name.as_mut_ptr().cast(), name.len()) }, 0);
    let len = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    sha2::Sha256::digest(&name[..len]).iter().take(4).map(|b| format!("{b:02x}")).collect()
}

#[test]
fn temporary_files_of_runs_that_died_are_removed_by_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let (job, _, out) = small_job(dir.path(), "", "depth_slices = [50.0]");
    std::fs::create_dir(&out).unwrap();
    let dead = {
        let mut child = child("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    };
    let alive = std::process::id();
    let host = host_tag();
    let debris =
        [format!(".inline_3.png.partial-{dead}-{host}-Xq3ZzA1b"), format!(".roi_a.h5.replaced-{dead}-{host}-7TkLmN0p")];
    let kept = [
        // a run that is still going
        format!(".inline_3.png.partial-{alive}-{host}-Ab12Cd34"),
        // a run on another host sharing the folder
        format!(".inline_3.png.partial-{dead}-0badc0de-Ab12Cd34"),
        // not seisimage's
        format!(".notes.txt.backup-{dead}-{host}-Ab12Cd34"),
        "inline_3.png.partial-1-2".to_string(),
    ];
    for name in debris.iter().chain(&kept) {
        std::fs::write(out.join(name), b"x").unwrap();
    }
    // a link with the pattern, and a file of another user (where the test may give one away)
    std::os::unix::fs::symlink(dir.path().join("job.toml"), out.join(format!(".a.partial-{dead}-{host}-LnK00000")))
        .unwrap();
    let foreign = out.join(format!(".b.partial-{dead}-{host}-0ther000"));
    std::fs::write(&foreign, b"x").unwrap();
    let gave_away = unsafe { libc::geteuid() } == 0 && std::os::unix::fs::chown(&foreign, Some(65534), None).is_ok();

    let o = run(&["run", path_str(&job)]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    let left = names(&out);
    for name in &debris {
        assert!(!left.contains(name), "{name} was left: {left:?}");
    }
    for name in &kept {
        assert!(left.contains(name), "{name} was removed: {left:?}");
    }
    assert!(left.iter().any(|n| n.ends_with("LnK00000")), "the link was removed: {left:?}");
    if gave_away {
        assert!(foreign.exists(), "another user's file was removed");
    }
}

// ---------------------------------------------------------------------------------------------------------
// Outputs that are inputs

/// `o` was refused as a bad request (exit 2) saying `says`, and `kept` still holds `before`.
fn assert_refused_and_kept(o: &Outcome, says: &str, kept: &Path, before: &[u8]) {
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains(says), "'{says}' is not in: {o:?}");
    assert_eq!(std::fs::read(kept).unwrap(), before, "{} was replaced", kept.display());
}

#[test]
fn a_product_that_is_the_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    // The input lies in the output folder under the name of the ROI's file.
    let m = model(16, 12, 100);
    let input = out.join("roi_centre.sgy");
    write_segy(&input, &m, &samples(&m));
    let before = std::fs::read(&input).unwrap();
    let job = write_job(
        &dir.path().join("job.toml"),
        &job_text(&input, &out, "nz = 20", "[[output.roi]]\nname = \"centre\"\nformats = [\"segy\"]"),
    );
    for command in ["validate", "run"] {
        let o = run(&[command, path_str(&job)]);
        assert_refused_and_kept(&o, "would replace the input", &input, &before);
        assert!(o.stderr.contains(path_str(&input)), "{o:?}");
    }

    // A hard link to the input under the product's name is the input too.
    let other = dir.path().join("input.sgy");
    std::fs::rename(&input, &other).unwrap();
    std::fs::hard_link(&other, &input).unwrap();
    let job = write_job(
        &dir.path().join("job.toml"),
        &job_text(&other, &out, "nz = 20", "[[output.roi]]\nname = \"centre\"\nformats = [\"segy\"]"),
    );
    let o = run(&["run", path_str(&job)]);
    assert_refused_and_kept(&o, "would replace the input", &other, &before);
}

#[test]
fn a_product_that_is_the_velocity_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let m = model(16, 12, 100);
    let input = dir.path().join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let g = m.geometry();
    let velocity = out.join("roi_v.h5");
    let depth = SampleAxis { origin: 0.0, step: 10.0, len: 50, domain: Domain::Depth };
    let vg = Geometry::regular(g.ilines, g.xlines, depth);
    seisimage::io::write_volume(
        seisimage::io::FileFormat::Hdf5,
        &velocity,
        &vg,
        &vec![2000.0f32; vg.n_values()],
        &Default::default(),
    )
    .unwrap();
    let before = std::fs::read(&velocity).unwrap();
    let text = job_text(&input, &out, "nz = 20", "[[output.roi]]\nname = \"v\"\nformats = [\"hdf5\"]")
        .replace("kind = \"constant\"\nvelocity = 2000.0", &format!("kind = \"file\"\npath = {velocity:?}"));
    let job = write_job(&dir.path().join("job.toml"), &text);
    let o = run(&["run", path_str(&job)]);
    assert_refused_and_kept(&o, "would replace the velocity file", &velocity, &before);
}

/// Every name a run gives a file is checked, not only the sections in depth: the page, products in time,
/// attributes, the members and panels of a velocity scan, and a velocity text table is an input like a cube.
#[test]
fn products_of_every_kind_that_are_an_input_are_refused() {
    let scan = "[velocity]\nkind = \"constant\"\nvelocity = 2000.0\nscale = [0.95, 1.05]";
    let cases = [
        ("index.html", "inlines = [8]", ""),
        ("inline_8_time.sgy", "inlines = [8]\ndomain = [\"time\"]\nslice_formats = [\"segy\"]", ""),
        ("inline_8_envelope.npy", "inlines = [8]\nattributes = [\"envelope\"]\nslice_formats = [\"npy\"]", ""),
        ("inline_8_v105.json", "inlines = [8]", scan),
        ("inline_8_panel.png", "inlines = [8]", scan),
    ];
    for (name, output, velocity) in cases {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let m = model(16, 12, 100);
        let input = dir.path().join("input.sgy");
        write_segy(&input, &m, &samples(&m));
        let before = std::fs::read(&input).unwrap();
        std::fs::hard_link(&input, out.join(name)).unwrap();
        let mut text = job_text(&input, &out, "nz = 20", output);
        if !velocity.is_empty() {
            text = text.replace("[velocity]\nkind = \"constant\"\nvelocity = 2000.0", velocity);
        }
        let job = write_job(&dir.path().join("job.toml"), &text);
        let o = run(&["run", path_str(&job)]);
        assert_refused_and_kept(&o, "would replace the input", &input, &before);
        assert!(o.stderr.contains(name), "{name}: {o:?}");
    }

    // A velocity text table under the name of a picture's sidecar.
    let dir = tempfile::tempdir().unwrap();
    let (job, _, out) = small_job(dir.path(), "", "inlines = [8]");
    std::fs::create_dir(&out).unwrap();
    let table = out.join("inline_8.json");
    std::fs::write(&table, "0 2000\n1000 2400\n").unwrap();
    let text = std::fs::read_to_string(&job).unwrap().replace(
        "kind = \"constant\"\nvelocity = 2000.0",
        &format!("kind = \"table\"\npath = {table:?}\ndomain = \"time\""),
    );
    let job = write_job(&job, &text);
    let o = run(&["run", path_str(&job)]);
    assert_refused_and_kept(&o, "would replace the velocity file", &table, b"0 2000\n1000 2400\n");
}

/// A share of a job split into shards writes its partial products into the output folder or `--partials`:
/// that file is checked against the inputs too.
#[test]
fn a_partial_products_file_that_is_the_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (job, input, _) = small_job(dir.path(), "", "depth_slices = [50.0]\npng = false\nslice_formats = [\"npy\"]");
    let before = std::fs::read(&input).unwrap();
    let partials = dir.path().join("partials");
    std::fs::create_dir(&partials).unwrap();
    std::fs::hard_link(&input, partials.join("shard-1-of-2.partial")).unwrap();
    let o = run(&["run", path_str(&job), "--shard", "1/2", "--partials", path_str(&partials)]);
    assert_refused_and_kept(&o, "shard-1-of-2.partial would replace the input", &input, &before);
}

#[test]
fn plot_onto_its_own_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(6, 5, 40);
    let input = dir.path().join("a.sgy");
    write_segy(&input, &m, &samples(&m));
    let before = std::fs::read(&input).unwrap();
    // the picture, and its sidecar (a.json beside a.png), each a hard link to the input
    for (picture, link) in [("a.png", "a.png"), ("b.png", "b.json")] {
        std::fs::hard_link(&input, dir.path().join(link)).unwrap();
        let o = run(&["plot", path_str(&input), "--inline", "2", "-o", path_str(&dir.path().join(picture))]);
        assert_refused_and_kept(&o, "is the input", &input, &before);
    }
}

#[test]
fn convert_onto_its_own_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(6, 5, 40);
    let input = dir.path().join("a.sgy");
    write_segy(&input, &m, &samples(&m));
    let before = std::fs::read(&input).unwrap();
    let link = dir.path().join("b.sgy");
    std::fs::hard_link(&input, &link).unwrap();
    for output in [&input, &link] {
        let o = run(&["convert", path_str(&input), path_str(output), "--iline", "2:3"]);
        assert_refused_and_kept(&o, "is the input", &input, &before);
    }
}

// ---------------------------------------------------------------------------------------------------------
// Files that are not regular files

fn mkfifo(path: &Path) {
    let c = CString::new(path_str(path)).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn fifos_and_devices_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (job, input, out) = small_job(dir.path(), "", "depth_slices = [50.0]");
    let fifo = dir.path().join("pipe.sgy");
    mkfifo(&fifo);
    let limit = Duration::from_secs(20);

    // as the input of `info` and of a job, as a velocity file, as the job file itself
    let o = run_within(seisimage().args(["info", path_str(&fifo)]), limit);
    assert_eq!(o.code(), Some(1), "{o:?}");
    assert!(o.stderr.contains(path_str(&fifo)) && o.stderr.contains("FIFO"), "{o:?}");

    // a job naming one is a mistake in the job, found with its other files, placed at the key
    let text = std::fs::read_to_string(&job).unwrap();
    let as_input = write_job(&dir.path().join("fifo-input.toml"), &text.replace(path_str(&input), path_str(&fifo)));
    let o = run_within(seisimage().args(["run", path_str(&as_input)]), limit);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("input.path") && o.stderr.contains("FIFO"), "{o:?}");

    let constant = "kind = \"constant\"\nvelocity = 2000.0";
    for (form, velocity) in [
        ("cube", format!("kind = \"file\"\npath = {fifo:?}")),
        ("text table", format!("kind = \"table\"\npath = {fifo:?}\ndomain = \"time\"")),
        ("text functions", format!("kind = \"functions\"\npath = {fifo:?}\ndomain = \"depth\"")),
        ("device", "kind = \"table\"\npath = \"/dev/zero\"\ndomain = \"time\"".to_string()),
    ] {
        let as_velocity = write_job(&dir.path().join("fifo-velocity.toml"), &text.replace(constant, &velocity));
        for command in ["validate", "run"] {
            let o = run_within(seisimage().args([command, path_str(&as_velocity)]), limit);
            assert_eq!(o.code(), Some(2), "{form}, {command}: {o:?}");
            assert!(o.stderr.contains("velocity.path"), "{form}, {command}: {o:?}");
            assert!(o.stderr.contains("FIFO") || o.stderr.contains("character device"), "{form}: {o:?}");
        }
    }

    let job_fifo = dir.path().join("job-pipe.toml");
    mkfifo(&job_fifo);
    let o = run_within(seisimage().args(["run", path_str(&job_fifo)]), limit);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("FIFO"), "{o:?}");

    // a device that never ends
    let o = run_within(seisimage().args(["validate", "/dev/zero"]), limit);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("/dev/zero") && o.stderr.contains("character device"), "{o:?}");
    let o = run_within(seisimage().args(["info", "/dev/zero", "--format", "segy"]), limit);
    assert_eq!(o.code(), Some(1), "{o:?}");

    // a job file far larger than any job
    let huge = dir.path().join("huge.toml");
    std::fs::write(&huge, format!("{text}\n# {}\n", "x".repeat(20 << 20))).unwrap();
    let o = run_within(seisimage().args(["validate", path_str(&huge)]), limit);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("larger than"), "{o:?}");
    assert!(!out.exists());
}

/// FIFOs planted in a shared output folder under the names a run reads there (the folder's lock, the
/// manifest of the run before) would block the run for ever on opening them: the lock is refused with a
/// message, the manifest is not read.
#[test]
fn fifos_planted_in_the_output_folder_do_not_hang_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let (job, _, out) = small_job(dir.path(), "", "depth_slices = [50.0]");
    std::fs::create_dir(&out).unwrap();
    let limit = Duration::from_secs(20);

    mkfifo(&out.join("manifest.json"));
    let o = run_within(seisimage().args(["run", path_str(&job)]), limit);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(o.stderr.contains("is not a manifest seisimage can read") && o.stderr.contains("FIFO"), "{o:?}");
    assert!(std::fs::symlink_metadata(out.join("manifest.json")).unwrap().is_file());

    mkfifo(&out.join(".seisimage.lock"));
    let o = run_within(seisimage().args(["run", path_str(&job)]), limit);
    assert_eq!(o.code(), Some(1), "{o:?}");
    assert!(o.stderr.contains(".seisimage.lock") && o.stderr.contains("not a plain file"), "{o:?}");
}

// ---------------------------------------------------------------------------------------------------------
// Requests larger than a machine

/// More products than the process may have files open: the run may not keep them all open at once.
#[test]
fn more_products_than_open_files_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(300, 3, 40);
    let input = dir.path().join("input.sgy");
    write_segy(&input, &m, &samples(&m));
    let out = dir.path().join("out");
    let inlines: Vec<String> = (1..=300).map(|il| il.to_string()).collect();
    let output = format!("inlines = [{}]\npng = false\nslice_formats = [\"npy\"]", inlines.join(", "));
    let job = write_job(&dir.path().join("job.toml"), &job_text(&input, &out, "nz = 10", &output));
    let mut cmd = seisimage();
    cmd.args(["-v", "run"]).arg(&job);
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: 128, rlim_max: 128 };
            match libc::setrlimit(libc::RLIMIT_NOFILE, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let o = run_command(&mut cmd);
    assert_eq!(o.code(), Some(0), "{o:?}");
    assert!(o.stderr.contains("the files of 268 of 300 products are created when their values come"), "{o:?}");
    assert_eq!(names(&out).len(), 302, "300 products, the page and the manifest");
}

#[test]
fn requests_beyond_any_machine_are_refused_by_validate() {
    let dir = tempfile::tempdir().unwrap();
    let (job, _, _) = small_job(dir.path(), "", "inlines = [8]");
    let job = path_str(&job);
    let title = format!("output.render.title=\"{}\"", "T".repeat(100_000));
    let long_roi = format!("output.roi=[{{name = \"{}\"}}]", "r".repeat(300));
    for (set, key) in [
        ("compute.threads=1000000", "compute.threads"),
        (title.as_str(), "output.render.title"),
        (long_roi.as_str(), "output.roi.0.name"),
        ("output.roi=[{name = \"a\", formats = [\"hdf5\", \"npy\", \"hdf5\"]}]", "output.roi.0.formats"),
        ("output.slice_formats=[\"npy\", \"npy\"]", "output.slice_formats"),
        ("input.bin_size=[10.0, 10.0, 10.0]", "input.bin_size"),
        ("output.roi=[{name = \"a\", iline = [2, 4, 6]}]", "output.roi.0.iline"),
    ] {
        let t = Instant::now();
        let o = run(&["validate", job, "--set", set]);
        assert_eq!(o.code(), Some(2), "{key}: {o:?}");
        assert!(o.stderr.contains(key), "{key}: {o:?}");
        assert!(o.stderr.len() < 2000, "{key}: a {}-byte error", o.stderr.len());
        assert!(t.elapsed() < Duration::from_secs(10), "{key}: took {:?}", t.elapsed());
    }
    // bin_size with three numbers, in the file: placed at its line
    let text = std::fs::read_to_string(job).unwrap().replace("[input]\n", "[input]\nbin_size = [10.0, 10.0, 10.0]\n");
    let file_job = write_job(&dir.path().join("bins.toml"), &text);
    let o = run(&["validate", path_str(&file_job)]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("bins.toml at line 2"), "{o:?}");
}

/// Read the width and height from a PNG's IHDR.
fn png_size(path: &Path) -> (u64, u64) {
    let bytes = std::fs::read(path).unwrap();
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as u64;
    (be(16), be(20))
}

#[test]
fn pictures_stay_within_max_pixels_whatever_the_exaggeration() {
    let dir = tempfile::tempdir().unwrap();
    let (job, _, out) = small_job(
        dir.path(),
        "",
        "inlines = [8]\ndepth_slices = [50.0]\n[output.render]\nvertical_exaggeration = 1e9\nmax_pixels = 1000000",
    );
    let o = run(&["run", path_str(&job)]);
    assert_eq!(o.code(), Some(0), "{o:?}");
    for png in ["inline_8.png", "depth_50m.png"] {
        let (w, h) = png_size(&out.join(png));
        assert!(w * h <= 1_000_000, "{png}: {w} × {h} pixels");
    }
}

#[test]
fn sizes_no_machine_holds_are_errors_not_aborts() {
    let dir = tempfile::tempdir().unwrap();
    // One inline of 1.6 GB in 1 GB of address space: an error naming the allocation, no temporary file.
    let out = dir.path().join("synth");
    std::fs::create_dir(&out).unwrap();
    let mut cmd = seisimage();
    cmd.args(["synth", path_str(&out.join("big.sgy")), "--size", "2x20000x20000"]);
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: 1 << 30, rlim_max: 1 << 30 };
            match libc::setrlimit(libc::RLIMIT_AS, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let o = run_command(&mut cmd);
    assert_eq!(o.code(), Some(1), "{o:?}");
    assert!(o.stderr.contains("cannot allocate"), "{o:?}");
    assert_eq!(names(&out), Vec::<String>::new());
    // 10^15 samples (4 PB): refused as the command line is read
    let o = run(&["synth", path_str(&out.join("huge.sgy")), "--size", "1000000x1000000x1000"]);
    assert_eq!(o.code(), Some(2), "{o:?}");
    assert!(o.stderr.contains("--size"), "{o:?}");
    assert_eq!(names(&out), Vec::<String>::new());
}

// ---------------------------------------------------------------------------------------------------------
// The command line and its streams

#[test]
fn a_closed_output_pipe_ends_the_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let (job, input, out) = small_job(dir.path(), "", "depth_slices = [50.0]");
    let picture = dir.path().join("inline.png");
    let commands = [
        vec!["info", path_str(&input)],
        vec!["validate", path_str(&job)],
        vec!["print-config", path_str(&job)],
        vec!["plot", path_str(&input), "--inline", "3", "-o", path_str(&picture)],
        vec!["run", path_str(&job), "--shard", "1/1"],
        vec!["reduce", path_str(&job), "--shards", "1"],
        vec!["run", path_str(&job)],
    ];
    for args in commands {
        let mut fds = [0; 2];
        // SAFETY: pipe(2) fills two descriptors; the read end is closed at once.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        unsafe { libc::close(fds[0]) };
        // SAFETY: the write end is ours alone.
        let write_end = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fds[1]) };
        let status = seisimage()
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::from(write_end.try_clone().unwrap()))
            .stderr(Stdio::from(write_end))
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(0), "{args:?}: {status}");
    }
    assert!(picture.exists(), "the picture was not drawn without its log");
    assert!(out.join("manifest.json").exists(), "the run went on without its log");
}

#[test]
fn a_progress_interval_beyond_any_run_means_never() {
    let dir = tempfile::tempdir().unwrap();
    let (_, input, _) = small_job(dir.path(), "", "depth_slices = [50.0]");
    for interval in ["1e20", "1e300"] {
        let o = run(&["--progress-interval", interval, "info", path_str(&input)]);
        assert_eq!(o.code(), Some(0), "{o:?}");
    }
}

// ---------------------------------------------------------------------------------------------------------
// Input values and inputs that change

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
