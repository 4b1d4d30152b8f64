//! HDF5 files that reach outside themselves: filter plugins, values stored in other files, virtual
//! datasets, links out of the file; and files whose layout would make a read take unbounded memory.

use std::os::unix::process::CommandExt;
use std::path::Path;

use crate::cli_common::{child, run, run_command, seisimage};

use super::path_str;

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
