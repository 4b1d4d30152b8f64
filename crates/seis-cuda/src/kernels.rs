//! The CUDA kernels: sources embedded from `kernels/` behind the prelude of values the host owns (see
//! [`super::prelude`]), compiled by NVRTC for the device's architecture (once per machine: see
//! [`super::kernel_cache`]), and loaded as one module.

use std::collections::HashMap;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction};
use cudarc::nvrtc::Ptx;

use super::prelude;
use seis_core::error::{Error, Result};

/// Kernel sources in the order they are concatenated after the prelude (helpers first). `#line` directives
/// keep NVRTC's messages pointing at the right file and line.
pub const SOURCES: &[(&str, &str)] = &[
    ("common.cuh", include_str!("../kernels/common.cuh")),
    ("spectrum.cu", include_str!("../kernels/spectrum.cu")),
    ("phase_shift.cu", include_str!("../kernels/phase_shift.cu")),
    ("stolt.cu", include_str!("../kernels/stolt.cu")),
    ("split_step.cu", include_str!("../kernels/split_step.cu")),
    ("attributes.cu", include_str!("../kernels/attributes.cu")),
];

/// Every `extern "C" __global__` function in the sources.
pub fn kernel_names() -> Vec<&'static str> {
    const MARK: &str = "__global__ void";
    let mut names = Vec::new();
    for (_, src) in SOURCES {
        let mut rest = *src;
        while let Some(i) = rest.find(MARK) {
            let mut after = rest[i + MARK.len()..].trim_start();
            if let Some(bounds) = after.strip_prefix("__launch_bounds__") {
                after = bounds.find(')').map_or("", |close| bounds[close + 1..].trim_start());
            }
            let end = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
            names.push(&after[..end]);
            rest = &after[end..];
        }
    }
    names
}

/// The whole program as NVRTC sees it, and as the kernel cache key hashes it: the prelude, then the sources.
pub fn program_source() -> String {
    let mut s = format!("#line 1 \"{}\"\n", prelude::FILE_NAME);
    s.push_str(&prelude::source());
    for (name, src) in SOURCES {
        s.push_str(&format!("#line 1 \"{name}\"\n"));
        s.push_str(src);
        s.push('\n');
    }
    s
}

/// NVRTC's architecture name for a compute capability, e.g. (9, 0) → "sm_90".
pub fn arch_name(cc: (i32, i32)) -> &'static str {
    // NVRTC wants a &'static str; the handful of names are interned once.
    static NAMES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let name = format!("sm_{}{}", cc.0, cc.1);
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = names.iter().find(|n| **n == name) {
        return n;
    }
    let leaked: &'static str = Box::leak(name.into_boxed_str());
    names.push(leaked);
    leaked
}

/// The kernels compiled for one architecture: the PTX, from which the launch code reads the kernels'
/// parameter types, and the device code (CUBIN) the driver loads without compiling anything further.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiled {
    pub ptx: String,
    pub cubin: Vec<u8>,
}

/// Compile the program for `arch` (a real architecture such as `sm_90`). `fast_math` trades accuracy of
/// sin/cos/sqrt for speed.
pub fn compile(arch: &'static str, fast_math: bool) -> Result<Compiled> {
    compile_source(&program_source(), arch, fast_math)
}

/// NVRTC's options for `arch`.
pub(crate) fn options(arch: &str, fast_math: bool) -> Vec<String> {
    let mut options = vec![format!("--gpu-architecture={arch}"), "--std=c++17".to_string()];
    if fast_math {
        options.push("--use_fast_math".into());
    }
    options
}

/// Compile any CUDA source; a failure carries NVRTC's log.
pub fn compile_source(source: &str, arch: &'static str, fast_math: bool) -> Result<Compiled> {
    use cudarc::nvrtc::{result as nvrtc, sys};
    let fail = |what: &str, e: nvrtc::NvrtcError| Error::Gpu(format!("NVRTC failed for {arch} ({what}): {e:?}"));
    let text = |chars: Vec<std::ffi::c_char>| {
        let bytes: Vec<u8> = chars.into_iter().map(|c| c as u8).take_while(|&b| b != 0).collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    let src = std::ffi::CString::new(source)
        .map_err(|_| Error::Gpu("the kernel source holds a NUL byte (a programming error)".into()))?;
    let name = c"seisimage.cu";
    let prog = nvrtc::create_program(&src, Some(name)).map_err(|e| fail("creating the program", e))?;
    // The program is destroyed on every path out of here.
    struct Program(sys::nvrtcProgram);
    impl Drop for Program {
        fn drop(&mut self) {
            // SAFETY: created above and destroyed once.
            let _ = unsafe { nvrtc::destroy_program(self.0) };
        }
    }
    let prog = Program(prog);
    // SAFETY: a live program and plain option strings.
    if let Err(e) = unsafe { nvrtc::compile_program(prog.0, &options(arch, fast_math)) } {
        // SAFETY: as above; the log exists after a failed compilation.
        let log = unsafe { nvrtc::get_program_log(prog.0) }.map(text).unwrap_or_default();
        return Err(Error::Gpu(format!("NVRTC could not compile the kernels for {arch} ({e:?}):\n{log}")));
    }
    // SAFETY: a compiled program.
    let ptx = text(unsafe { nvrtc::get_ptx(prog.0) }.map_err(|e| fail("reading the PTX", e))?);
    let mut size = 0usize;
    // SAFETY: out-parameter.
    unsafe { sys::nvrtcGetCUBINSize(prog.0, &mut size) }.result().map_err(|e| fail("sizing the CUBIN", e))?;
    let mut cubin = vec![0u8; size];
    // SAFETY: the buffer has the size NVRTC gave.
    unsafe { sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr().cast()) }
        .result()
        .map_err(|e| fail("reading the CUBIN", e))?;
    Ok(Compiled { ptx, cubin })
}

/// NVRTC's version, part of what identifies a compiled program in the kernel cache.
pub fn nvrtc_version() -> Result<(i32, i32)> {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: out-parameters; callers have checked that libnvrtc loads.
    unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| Error::Gpu(format!("cannot read the NVRTC version: {e:?}")))?;
    Ok((major, minor))
}

/// The type of a kernel parameter as PTX declares it (pointers are `.u64`, ints `.u32`/`.s32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    U64,
    U32,
    F32,
    F64,
}

/// Every kernel's parameter types, read from the PTX: the launch code is checked against them, so a
/// launch whose arguments do not match its kernel is refused instead of reading garbage on the device.
pub fn signatures(ptx: &str) -> HashMap<String, Vec<ParamKind>> {
    let mut out = HashMap::new();
    let mut rest = ptx;
    while let Some(i) = rest.find(".entry ") {
        let after = &rest[i + ".entry ".len()..];
        let name_end = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
        let name = after[..name_end].to_string();
        let params = after[name_end..].trim_start();
        let close = params.find(')').unwrap_or(0);
        let kinds = params[..close]
            .split(".param")
            .skip(1)
            .map(|p| match p.split_whitespace().next() {
                Some(".u64" | ".s64" | ".b64") => ParamKind::U64,
                Some(".f64") => ParamKind::F64,
                Some(".f32") => ParamKind::F32,
                _ => ParamKind::U32,
            })
            .collect();
        out.insert(name, kinds);
        rest = &params[close..];
    }
    out
}

/// The kernels loaded into the engine's context, and their parameter types.
pub struct Kernels {
    functions: HashMap<&'static str, CudaFunction>,
    signatures: HashMap<String, Vec<ParamKind>>,
}

impl Kernels {
    pub fn load(ctx: &Arc<CudaContext>, program: &Compiled) -> Result<Self> {
        let signatures = signatures(&program.ptx);
        let image = Ptx::from_binary(program.cubin.clone());
        let module = super::device::check("loading the kernel module", ctx.load_module(image))?;
        let mut functions = HashMap::new();
        for name in kernel_names() {
            let f = super::device::check(&format!("finding kernel {name}"), module.load_function(name))?;
            functions.insert(name, f);
        }
        Ok(Kernels { functions, signatures })
    }

    /// The parameter types of kernel `name`.
    pub fn signature(&self, name: &str) -> &[ParamKind] {
        self.signatures.get(name).map_or(&[], |v| v.as_slice())
    }

    pub fn get(&self, name: &str) -> &CudaFunction {
        self.functions.get(name).unwrap_or_else(|| panic!("kernel {name} is not in kernels/ (a programming error)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No kernel repeats a value or layout the host owns: each comes from the prelude.
    #[test]
    fn no_kernel_defines_what_the_prelude_defines() {
        assert_eq!(prelude::defined_again(SOURCES), Vec::<String>::new());
    }

    /// Every name of the prelude is used by some kernel: none stays behind after the kernel stops using it.
    #[test]
    fn every_name_of_the_prelude_is_used_by_a_kernel() {
        let words: std::collections::HashSet<&str> =
            SOURCES.iter().flat_map(|(_, src)| src.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))).collect();
        for name in prelude::names() {
            assert!(words.contains(name), "{name} is defined by the prelude but no kernel uses it");
        }
    }
}
