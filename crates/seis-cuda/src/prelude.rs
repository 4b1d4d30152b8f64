//! What the host and the kernels must agree on, written once, here: the launch geometry a kernel is built
//! for, the flags and layout of the records the host fills for a kernel, the constants of
//! [`seis_imaging::formulas`] that the kernels repeat, and the codes of [`seis_imaging::attributes::Attribute`].
//!
//! [`source`] renders them as C++ — `#define`s, and the structs declared from the Rust structs' own field
//! lists — and [`super::kernels::program_source`] puts that text in front of the sources of `kernels/`, so
//! it is compiled with them and is part of the kernel cache key. The kernels use these names and define
//! none of them: [`defined_again`] finds a kernel that does (a test runs it on every kernel), and the
//! NVRTC tests compile [`layout_checks`] after the program, which fail where a C++ struct does not lay out
//! as its Rust struct.

use std::fmt::Write;

use seis_imaging::attributes::Attribute;
use seis_imaging::formulas;

/// The name NVRTC's messages give the prelude.
pub const FILE_NAME: &str = "prelude.cuh";

/// A complex float as the kernels see it (`cpx` in kernels/common.cuh): real, imaginary.
pub type Cpx = [f32; 2];

/// Lanes of a phase-shift CTA: it owns this many consecutive wavenumbers, one per lane.
pub const PS_LANES: u32 = 32;
/// Warps of a phase-shift CTA: they take the CTA's frequencies in groups, in turn.
pub const PS_WARPS: u32 = 8;

/// [`Segment::flags`]: the stretch's factors differ from the last stretch's (they are computed anew).
pub const SEG_NEW_FACTORS: i32 = 1;
/// [`Segment::flags`]: the stretch takes the kernel's double-precision path.
pub const SEG_EXACT: i32 = 2;
/// [`Segment::flags`]: the stretch has a thickness (an entry that only images a slot has none).
pub const SEG_MOVES: i32 = 4;

/// Side of the square tile through which `band_transpose` moves trace spectra into the ω-major spectrum;
/// its CTA is this many threads wide.
pub const BAND_TILE: u32 = 32;

/// A record the host fills and a kernel reads: a `#[repr(C)]` Rust struct and, from the same field list,
/// its C++ declaration, checked to have the size of Rust's; [`layout_checks`] checks every field's offset.
macro_rules! kernel_struct {
    ($(#[doc = $doc:literal])* $name:ident { $($(#[doc = $field_doc:literal])* $field:ident: $ty:ty,)* }) => {
        $(#[doc = $doc])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name {
            $($(#[doc = $field_doc])* pub $field: $ty,)*
        }

        impl $name {
            /// The C++ declaration, and a check of its size.
            fn declaration() -> String {
                let name = stringify!($name);
                let mut s = format!("struct {name} {{\n");
                $(
                    $(s.push_str(&format!("    //{}\n", $field_doc));)*
                    s.push_str(&format!("    {} {};\n", <$ty as CType>::NAME, stringify!($field)));
                )*
                s.push_str("};\n");
                let size = std::mem::size_of::<$name>();
                s.push_str(&format!("static_assert(sizeof({name}) == {size}, \"{name}: not the host's layout\");\n"));
                s
            }

            /// A check of each field's offset.
            fn offset_checks() -> String {
                let name = stringify!($name);
                let mut s = String::new();
                $(
                    s.push_str(&format!(
                        "static_assert(OFFSET_OF({name}, {field}) == {offset}, \"{name}.{field}: not the host's offset\");\n",
                        field = stringify!($field),
                        offset = std::mem::offset_of!($name, $field),
                    ));
                )*
                s
            }
        }
    };
}

/// The C++ name of a field type.
trait CType {
    const NAME: &'static str;
}

impl CType for f64 {
    const NAME: &'static str = "double";
}

impl CType for f32 {
    const NAME: &'static str = "float";
}

impl CType for i32 {
    const NAME: &'static str = "int";
}

kernel_struct! {
    /// One stretch of depth of a phase-shift launch (one velocity), as the host prepares it.
    Segment {
        /// m/s
        velocity: f64,
        /// m
        thickness: f64,
        /// 2 / v, for the float path
        slowness2: f32,
        /// thickness / π: sincospif(kz · phase_scale) = sin/cos(kz · thickness)
        phase_scale: f32,
        /// the slot imaged at the bottom of the stretch, or −1
        slot: i32,
        /// SEG_NEW_FACTORS, SEG_EXACT, SEG_MOVES
        flags: i32,
    }
}

/// A value of a `#define`.
enum Value {
    Int(i64),
    Double(f64),
    /// A brace-enclosed list, to initialise an array.
    Floats(Vec<f32>),
}

/// Every `#define` of the prelude.
fn defines() -> Vec<(&'static str, Value)> {
    use Value::*;
    vec![
        ("CPX_BYTES", Int(std::mem::size_of::<Cpx>() as i64)),
        ("GRAZING", Double(formulas::GRAZING)),
        ("STOLT_REACH", Double(formulas::STOLT_REACH)),
        ("SINC_QUARTER_COS", Floats(formulas::SINC_QUARTER_TURNS.iter().map(|&(c, _)| c as f32).collect())),
        ("SINC_QUARTER_SIN", Floats(formulas::SINC_QUARTER_TURNS.iter().map(|&(_, s)| s as f32).collect())),
        ("PS_LANES", Int(PS_LANES.into())),
        ("PS_WARPS", Int(PS_WARPS.into())),
        ("SEG_NEW_FACTORS", Int(SEG_NEW_FACTORS.into())),
        ("SEG_EXACT", Int(SEG_EXACT.into())),
        ("SEG_MOVES", Int(SEG_MOVES.into())),
        ("BAND_TILE", Int(BAND_TILE.into())),
        ("ATTR_ENVELOPE", Int(Attribute::Envelope.code())),
        ("ATTR_PHASE", Int(Attribute::Phase.code())),
        ("ATTR_FREQUENCY", Int(Attribute::Frequency.code())),
        ("ATTR_COS_PHASE", Int(Attribute::CosPhase.code())),
    ]
}

/// The structs of the prelude: (name, declaration, offset checks).
fn structs() -> Vec<(&'static str, String, String)> {
    vec![("Segment", Segment::declaration(), Segment::offset_checks())]
}

/// C++ that checks, field by field, that each struct of the prelude has Rust's offsets: for the tests, which
/// compile it after the program. It is not part of the program: NVRTC has no `offsetof`, and the front-end
/// builtin these checks use instead is not something the kernels should depend on.
pub fn layout_checks() -> String {
    let mut s = String::from("#define OFFSET_OF(type, field) __INTADDR__(&(((type*)0)->field))\n");
    for (_, _, checks) in structs() {
        s.push_str(&checks);
    }
    s
}

/// The prelude as C++, in front of the kernel sources.
pub fn source() -> String {
    let mut s = String::from("// Generated from prelude.rs: the host's side of the kernels' interface.\n");
    for (name, value) in defines() {
        // Debug formatting writes the shortest decimal that reads back as the same number, always with a
        // point or an exponent, so that C++ reads a double (or, with the suffix, a float) of the same value.
        let text = match value {
            Value::Int(v) => v.to_string(),
            Value::Double(v) => format!("{v:?}"),
            Value::Floats(v) => format!("{{{}}}", v.iter().map(|x| format!("{x:?}f")).collect::<Vec<_>>().join(", ")),
        };
        let _ = writeln!(s, "#define {name} {text}");
    }
    for (_, declaration, _) in structs() {
        s.push_str(&declaration);
    }
    s
}

/// Every name the prelude defines.
pub fn names() -> Vec<&'static str> {
    defines().into_iter().map(|(n, _)| n).chain(structs().into_iter().map(|(n, _, _)| n)).collect()
}

/// Where a kernel source defines a name of the prelude again (`file: NAME`): a `#define` of a constant or
/// a declaration of a struct, which would copy what the host owns instead of using it.
pub fn defined_again(sources: &[(&str, &str)]) -> Vec<String> {
    let names = names();
    let mut found = Vec::new();
    for (file, src) in sources {
        for line in src.lines() {
            let words: Vec<&str> =
                line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect();
            let directive = line.trim_start().starts_with('#');
            let defined = match words.as_slice() {
                ["define", name, ..] if directive => Some(*name),
                ["struct", "__align__", _, name, ..] => Some(*name),
                ["struct", name, ..] => Some(*name),
                _ => None,
            };
            if let Some(name) = defined.filter(|n| names.contains(n)) {
                found.push(format!("{file}: {name}"));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel that defines a name of the prelude again is found (kernels.rs runs this on every kernel).
    #[test]
    fn a_kernel_that_copies_a_definition_is_found() {
        let copies = [
            ("a.cu", "#define TILE 32\n  # define PS_LANES 32\n"),
            ("b.cu", "struct Segment {\n    double velocity;\n};\n"),
            ("c.cu", "#define STOLT_REACH_SCALE 2\nint PS_WARPS_USED = PS_WARPS;\n"),
            ("d.cu", "struct __align__(8) Segment {\n"),
        ];
        assert_eq!(defined_again(&copies), vec!["a.cu: PS_LANES", "b.cu: Segment", "d.cu: Segment"]);
    }

    /// The prelude carries the host's numbers: the constants as written in Rust, the struct at Rust's
    /// offsets.
    #[test]
    fn the_prelude_carries_the_hosts_numbers() {
        let s = source();
        for line in [
            "#define GRAZING 1e-9",
            "#define STOLT_REACH 4.0",
            "#define PS_LANES 32",
            "#define SEG_MOVES 4",
            "#define CPX_BYTES 8",
            "#define SINC_QUARTER_COS {-0.70710677f, 0.0f, 0.70710677f, 1.0f, 0.70710677f, 0.0f, -0.70710677f, -1.0f}",
            "static_assert(sizeof(Segment) == 32, \"Segment: not the host's layout\");",
            "    int flags;",
        ] {
            assert!(s.lines().any(|l| l == line), "the prelude lacks `{line}`:\n{s}");
        }
        let checks = layout_checks();
        let line = "static_assert(OFFSET_OF(Segment, slot) == 24, \"Segment.slot: not the host's offset\");";
        assert!(checks.lines().any(|l| l == line), "the layout checks lack `{line}`:\n{checks}");
        // Each constant reads back as the value Rust holds.
        let value = |name: &str| -> f64 {
            let line = s.lines().find(|l| l.starts_with(&format!("#define {name} "))).expect("defined");
            line[format!("#define {name} ").len()..].parse().expect("a number")
        };
        assert_eq!(value("GRAZING"), formulas::GRAZING);
        assert_eq!(value("STOLT_REACH"), formulas::STOLT_REACH);
        assert_eq!(value("BAND_TILE"), BAND_TILE as f64);
    }
}
