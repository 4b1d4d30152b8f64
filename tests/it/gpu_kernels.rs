//! The CUDA kernels compile with NVRTC — checked without a GPU, since NVRTC is a plain library.
//!
//! CI installs NVRTC from PyPI and sets `SEISIMAGE_NVRTC_TESTS=1`, so there these tests must run; elsewhere
//! they skip with a message when libnvrtc cannot be loaded.

use seisimage::gpu::{kernel_cache, kernels, prelude};

fn nvrtc_available() -> bool {
    // SAFETY: only tries to dlopen the library.
    let present = unsafe { cudarc::nvrtc::sys::is_culib_present() };
    if !present {
        if std::env::var("SEISIMAGE_NVRTC_TESTS").as_deref() == Ok("1") {
            panic!("SEISIMAGE_NVRTC_TESTS=1 but libnvrtc cannot be loaded (is LD_LIBRARY_PATH set by `make test`?)");
        }
        eprintln!("skipped: libnvrtc not found (set LD_LIBRARY_PATH to a CUDA 13 NVRTC to run this test)");
    }
    present
}

#[test]
fn every_kernel_compiles_for_hopper_and_ampere() {
    if !nvrtc_available() {
        return;
    }
    let names = kernels::kernel_names();
    for expected in [
        "band_transpose",
        "gather_box",
        "phase_shift_block",
        "stolt_remap",
        "split_step_lens_image",
        "attr_load",
        "attr_analytic",
        "attr_output",
    ] {
        assert!(names.contains(&expected), "kernel scan found {names:?}, not {expected}");
    }
    for arch in ["sm_80", "sm_90"] {
        for fast in [false, true] {
            let program = kernels::compile(arch, fast).unwrap_or_else(|e| panic!("{arch} fast={fast}: {e}"));
            for name in &names {
                assert!(program.ptx.contains(&format!(".entry {name}(")), "{arch}: kernel {name} missing from the PTX");
            }
            // The device code the driver loads as it is: an ELF image holding every kernel.
            assert_eq!(&program.cubin[..4], b"\x7fELF", "{arch}: the CUBIN is not an ELF image");
            for name in &names {
                let found = program.cubin.windows(name.len()).any(|w| w == name.as_bytes());
                assert!(found, "{arch}: kernel {name} missing from the CUBIN");
            }
        }
    }
}

#[test]
fn kernel_signatures_are_read_from_the_ptx() {
    if !nvrtc_available() {
        return;
    }
    use kernels::ParamKind::*;
    let ptx = kernels::compile("sm_90", false).expect("compiles").ptx;
    let sigs = kernels::signatures(&ptx);
    for name in kernels::kernel_names() {
        assert!(sigs.contains_key(name), "no signature for {name}");
    }
    // pointers, ints, doubles and floats in the order the source declares them
    assert_eq!(sigs["split_step_shift"], vec![U64, U64, U64, U32, U32, F64, F64, F32, F32, F32]);
    assert_eq!(sigs["scale_planes"], vec![U64, U64, U32, U32]);
    // The attribute kernel takes what crates/seis-cuda/src/attributes.rs passes, in its order.
    assert_eq!(sigs["attr_output"], vec![U64, U32, U32, U32, U32, U32, U32, F32, U64]);
}

/// The records the host fills for the kernels lay out in the compiled program as in Rust, field by field;
/// a program whose record is not the host's is refused.
#[test]
fn the_kernels_records_have_the_hosts_layout() {
    if !nvrtc_available() {
        return;
    }
    let checks = format!("#line 1 \"layout-checks\"\n{}", prelude::layout_checks());
    let compile = |program: &str| kernels::compile_source(program, "sm_90", false).map_err(|e| e.to_string());
    let source = kernels::program_source();
    compile(&format!("{source}{checks}")).unwrap_or_else(|e| panic!("the program's records are not the host's: {e}"));

    // Two fields swapped: the size agrees, the offsets do not.
    let swapped = source.replacen("    float slowness2;\n", "", 1).replacen(
        "    int slot;\n",
        "    int slot;\n    float slowness2;\n",
        1,
    );
    assert_ne!(swapped, source);
    let err = compile(&format!("{swapped}{checks}")).expect_err("a record with swapped fields");
    assert!(err.contains("Segment.slowness2: not the host's offset"), "{err}");
    // A wider field: the program itself refuses it, as it refuses a complex type of another size.
    for (from, to, message) in [
        ("    int flags;\n", "    double flags;\n", "Segment: not the host's layout"),
        ("float re, im;", "double re, im;", "cpx: not the host's layout"),
    ] {
        let changed = source.replacen(from, to, 1);
        assert_ne!(changed, source, "{from:?} is not in the program");
        let err = compile(&changed).expect_err(message);
        assert!(err.contains(message), "{err}");
    }
}

/// The prelude is the start of the program that NVRTC compiles and that names its kernel cache entry, so
/// another value in it is another entry.
#[test]
fn the_prelude_is_compiled_and_keyed_with_the_kernels() {
    let source = kernels::program_source();
    assert!(source.starts_with(&format!("#line 1 \"{}\"\n{}", prelude::FILE_NAME, prelude::source())));
    let other = source.replacen("#define PS_WARPS 8\n", "#define PS_WARPS 4\n", 1);
    assert_ne!(other, source, "the prelude defines PS_WARPS as 8");
    let key = |source: &str| kernel_cache::Recipe::new(source, "sm_90", &["--std=c++17".into()], (13, 0)).key();
    assert_ne!(key(&source), key(&other));
}

#[test]
fn a_compile_error_reports_the_nvrtc_log_with_file_and_line() {
    if !nvrtc_available() {
        return;
    }
    let src = "#line 1 \"broken.cu\"\nextern \"C\" __global__ void k(float* x) {\n  x[0] = undefined_name;\n}\n";
    let err = kernels::compile_source(src, "sm_90", false).expect_err("broken source must not compile").to_string();
    assert!(err.contains("NVRTC"), "{err}");
    assert!(err.contains("broken.cu") && err.contains("undefined_name"), "the log should point at the error: {err}");
}

#[test]
fn architecture_names_follow_the_compute_capability() {
    assert_eq!(kernels::arch_name((9, 0)), "sm_90");
    assert_eq!(kernels::arch_name((8, 6)), "sm_86");
    assert!(std::ptr::eq(kernels::arch_name((9, 0)), kernels::arch_name((9, 0))), "names are interned once");
}
