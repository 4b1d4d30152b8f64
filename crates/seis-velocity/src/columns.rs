//! What the columns of a velocity text file are, as far as the file itself says: a job that reads them
//! otherwise is refused instead of run on numbers it misreads.
//!
//! - **The header's words.** A line of column names (`TWT_ms  Vrms_m/s`, `depth (ft)  vint`), or a comment
//!   line of them just above the picks (`# inline crossline twt_ms vint_kms`), names roles (time, depth,
//!   velocity and its kind) and units. Each word it names is compared with the job: `depth_ft` while the job
//!   reads metres is refused, naming the word and the key to set. Words it does not know say nothing; a line
//!   whose columns cannot be told apart (more or fewer than the file has) is not read, and a comment line
//!   is read only when every one of its columns names a role, so that prose in a comment is never taken
//!   for column names.
//! - **Swapped columns.** With velocities in the time-or-depth column, a file still parses. The header's
//!   roles catch it when it has them; otherwise the values do (see [`check_swapped`]).

use super::text::HeaderLine;
use super::units::{DepthUnit, Reading, TimeUnit, VelocityType, VelocityUnit, VerticalDomain};

/// A contradiction between a file and the job: the key that would resolve it, and the message.
#[derive(Clone, Debug, PartialEq)]
pub struct Contradiction {
    pub key: &'static str,
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Time,
    Depth,
    Velocity,
    Location,
}

/// What one column's name says.
#[derive(Clone, Debug, Default)]
struct Column {
    name: String,
    role: Option<Role>,
    kind: Option<VelocityType>,
    words: Vec<String>,
}

fn role_of(word: &str) -> Option<(Role, Option<VelocityType>)> {
    use VelocityType::*;
    Some(match word {
        "time" | "twt" | "twtt" | "t" => (Role::Time, None),
        "depth" | "z" | "tvd" | "tvdss" => (Role::Depth, None),
        "velocity" | "vel" | "v" | "speed" => (Role::Velocity, None),
        "vint" | "interval" | "vi" => (Role::Velocity, Some(Interval)),
        "vrms" | "rms" | "vstack" | "stacking" | "vnmo" | "nmo" => (Role::Velocity, Some(Rms)),
        "vavg" | "vave" | "average" | "avg" | "vav" => (Role::Velocity, Some(Average)),
        "inline" | "iline" | "il" | "inl" | "crossline" | "xline" | "xl" | "crl" | "cdp" => (Role::Location, None),
        _ => return None,
    })
}

fn time_unit_of(word: &str) -> Option<TimeUnit> {
    Some(match word {
        "ms" | "msec" | "millisecond" | "milliseconds" => TimeUnit::Milliseconds,
        "s" | "sec" | "secs" | "second" | "seconds" => TimeUnit::Seconds,
        "us" | "µs" | "usec" | "microsecond" | "microseconds" => TimeUnit::Microseconds,
        _ => return None,
    })
}

fn depth_unit_of(word: &str) -> Option<DepthUnit> {
    Some(match word {
        "m" | "metre" | "metres" | "meter" | "meters" => DepthUnit::Metres,
        "ft" | "feet" | "foot" => DepthUnit::Feet,
        _ => return None,
    })
}

/// In a velocity column `ms` is m/s (`Vrms_ms`), as contractors write it.
fn velocity_unit_of(word: &str) -> Option<VelocityUnit> {
    Some(match word {
        "m/s" | "mps" | "ms" | "m/sec" => VelocityUnit::MetresPerSecond,
        "km/s" | "kms" | "kmps" | "km/sec" => VelocityUnit::KilometresPerSecond,
        "ft/s" | "fps" | "fts" | "ftps" | "ft/sec" => VelocityUnit::FeetPerSecond,
        _ => return None,
    })
}

fn is_unit(word: &str) -> bool {
    time_unit_of(word).is_some() || depth_unit_of(word).is_some() || velocity_unit_of(word).is_some()
}

/// The words of a column name, lower case: `Vrms_m/s` → `vrms`, `m/s`; `TWT(ms)` → `twt`, `ms`.
fn words(name: &str) -> Vec<String> {
    name.split(|c: char| c.is_whitespace() || "_()[]{}:;=".contains(c))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The columns a header names: its tokens, each unit on its own (`TWT (ms)`, `depth in ft`) joined to
/// the name before it.
fn columns(text: &str) -> Vec<Column> {
    let mut out: Vec<Column> = Vec::new();
    for token in text.split(|c: char| c.is_whitespace() || c == ',').filter(|t| !t.is_empty()) {
        let w = words(token);
        let qualifier = !w.is_empty() && w.iter().all(|w| is_unit(w) || w == "in");
        match out.last_mut() {
            Some(last) if qualifier => {
                last.name = format!("{} {token}", last.name);
                last.words.extend(w);
            }
            _ => out.push(Column { name: token.to_string(), words: w, ..Column::default() }),
        }
    }
    for c in &mut out {
        for w in &c.words {
            if let Some((role, kind)) = role_of(w) {
                c.role = c.role.or(Some(role));
                c.kind = c.kind.or(kind);
            }
        }
    }
    out
}

/// Check what `header` says of the last two columns of a file of `count` columns (time or depth, then
/// velocity) against how the job reads them. `what` names the columns the file should hold.
pub fn check_header(header: &HeaderLine, count: usize, reading: &Reading, what: &str) -> Result<(), Contradiction> {
    let mut cols = columns(&header.text);
    if cols.len() != count || (header.comment && cols.iter().any(|c| c.role.is_none())) {
        return Ok(());
    }
    let velocity = cols.pop().expect("count ≥ 2");
    let mut vertical = cols.pop().expect("count ≥ 2");
    let at = |m: String| format!("line {}: {m}", header.line);
    let named = |c: &Column| format!("column \"{}\"", seis_io::files::quoted(&c.name, 40));
    if vertical.role.is_none() {
        vertical.role = vertical.words.iter().find_map(|w| match (time_unit_of(w), depth_unit_of(w)) {
            (Some(_), _) => Some(Role::Time),
            (None, Some(_)) => Some(Role::Depth),
            _ => None,
        });
    }
    if vertical.role == Some(Role::Velocity) || matches!(velocity.role, Some(Role::Time | Role::Depth)) {
        return Err(Contradiction {
            key: "velocity.path",
            message: at(format!(
                "the header names the columns {} and {}: velocity before time or depth, where seisimage reads \
                 {what}; are the columns swapped? Swap them in the file",
                named(&vertical),
                named(&velocity)
            )),
        });
    }
    let domain = match vertical.role {
        Some(Role::Time) => Some(VerticalDomain::Time),
        Some(Role::Depth) => Some(VerticalDomain::Depth),
        _ => None,
    };
    if let Some(d) = domain.filter(|d| *d != reading.domain) {
        let (said, set) = match d {
            VerticalDomain::Time => ("two-way time", "time"),
            VerticalDomain::Depth => ("depth", "depth"),
        };
        return Err(Contradiction {
            key: "velocity.domain",
            message: at(format!(
                "{} names {said}, and the job reads {} there: if it is {said}, set velocity.domain = \"{set}\"",
                named(&vertical),
                reading.describe()
            )),
        });
    }
    for w in &vertical.words {
        let (given, job, key) = match reading.domain {
            VerticalDomain::Time => match time_unit_of(w) {
                Some(u) => (u.name(), reading.time_unit.name(), "velocity.time_unit"),
                None => continue,
            },
            VerticalDomain::Depth => match depth_unit_of(w) {
                Some(u) => (u.name(), reading.depth_unit.name(), "velocity.depth_unit"),
                None => continue,
            },
        };
        if given != job {
            return Err(Contradiction {
                key,
                message: at(format!(
                    "{} says {given} (\"{w}\"), and the job reads {job} ({key}): if the column is in {given}, set \
                     {key} = \"{given}\"",
                    named(&vertical),
                )),
            });
        }
    }
    if let Some((w, u)) = velocity.words.iter().find_map(|w| velocity_unit_of(w).map(|u| (w, u))) {
        if u != reading.unit {
            return Err(Contradiction {
                key: "velocity.unit",
                message: at(format!(
                    "{} says {} (\"{w}\"), and the job reads velocities in {} (velocity.unit): if they are in {0}, \
                     set velocity.unit = \"{1}\"",
                    named(&velocity),
                    u.name(),
                    reading.unit.name(),
                )),
            });
        }
    }
    match velocity.kind {
        Some(kind) if kind != reading.kind => Err(Contradiction {
            key: "velocity.type",
            message: at(format!(
                "{} names {} velocities, and the job reads {} velocities (velocity.type): if they are {0}, set \
                 velocity.type = \"{}\"",
                named(&velocity),
                kind.name(),
                reading.kind.name(),
                kind.name().to_lowercase()
            )),
        }),
        _ => Ok(()),
    }
}

/// How much wider, as a ratio of largest to smallest value, the velocity column must spread than the
/// time-or-depth column for [`check_swapped`] to call them swapped.
const SWAP_SPREAD: f64 = 3.0;

/// Refuse a function whose columns look swapped: at least three picks, every time or depth (as given) a
/// plausible velocity in the job's unit, and "velocities" increasing with a spread (largest over smallest)
/// at least `SWAP_SPREAD` times that of the times or depths. Times and depths start near the surface, so
/// their spread is large; a function's velocities rarely span a factor of four. A real function that looks
/// so (picks starting deep, velocities tripling within a short interval) has a hint it cannot follow, but
/// none has been seen. `at` and `velocity` are as given; `range` is in m/s.
pub fn check_swapped(at: &[f64], velocity: &[f64], reading: &Reading, range: [f64; 2]) -> Result<(), String> {
    let spread = |v: &[f64]| {
        let (lo, hi) = v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        if lo > 0.0 {
            hi / lo
        } else {
            f64::INFINITY
        }
    };
    let like_velocities = at.iter().all(|&a| (range[0]..=range[1]).contains(&(a * reading.unit.factor())));
    let increasing = velocity.windows(2).all(|w| w[1] > w[0]);
    if at.len() < 3 || !like_velocities || !increasing || spread(velocity) < SWAP_SPREAD * spread(at) {
        return Ok(());
    }
    let (first, last) = (at[0], at[at.len() - 1]);
    let (v0, v1) = (velocity[0], velocity[velocity.len() - 1]);
    let vertical = match reading.domain {
        VerticalDomain::Time => "two-way times",
        VerticalDomain::Depth => "depths",
    };
    Err(format!(
        "are the columns swapped? The {vertical} ({first}..{last} {}) look like velocities in {}, and the \
         velocities ({v0}..{v1}) increase as {vertical} do; seisimage reads the {vertical} first, then the \
         velocity: swap the columns in the file",
        reading.vertical_unit(),
        reading.unit.name()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(domain: VerticalDomain) -> Reading {
        Reading {
            kind: VelocityType::Interval,
            unit: VelocityUnit::MetresPerSecond,
            domain,
            depth_unit: DepthUnit::Metres,
            time_unit: TimeUnit::Milliseconds,
        }
    }

    fn check(text: &str, count: usize, r: &Reading) -> Result<(), Contradiction> {
        check_header(&HeaderLine { line: 1, text: text.into(), comment: false }, count, r, "time or depth, velocity")
    }

    #[test]
    fn header_words_that_agree_with_the_job_pass() {
        let time = reading(VerticalDomain::Time);
        let depth = reading(VerticalDomain::Depth);
        for (text, r) in [
            ("TWT_ms  Vint_m/s", &time),
            ("TWT (ms)  Velocity (m/s)", &time),
            ("time velocity", &time),
            ("depth_m vint_ms", &depth),
            ("depth in m, vel", &depth),
            ("a b", &time),
            ("one two three", &time),
        ] {
            assert_eq!(check(text, 2, r), Ok(()), "{text}");
        }
        let kms = Reading { unit: VelocityUnit::KilometresPerSecond, ..time };
        assert_eq!(check("inline crossline twt_ms vint_kms", 4, &kms), Ok(()));
    }

    #[test]
    fn header_words_that_contradict_the_job_name_the_key_and_the_word() {
        let time = reading(VerticalDomain::Time);
        let depth = reading(VerticalDomain::Depth);
        let cases = [
            ("depth_ft vint", &depth, "velocity.depth_unit", "\"depth_ft\" says ft (\"ft\")"),
            ("Depth (ft)  V", &depth, "velocity.depth_unit", "set velocity.depth_unit = \"ft\""),
            ("depth_ft vint", &time, "velocity.domain", "set velocity.domain = \"depth\""),
            ("twt_ms vint", &depth, "velocity.domain", "set velocity.domain = \"time\""),
            ("twt_s vint", &time, "velocity.time_unit", "set velocity.time_unit = \"s\""),
            ("time_us v", &time, "velocity.time_unit", "\"us\""),
            ("twt vint_kms", &time, "velocity.unit", "set velocity.unit = \"km/s\""),
            ("twt vel_ft/s", &time, "velocity.unit", "\"ft/s\""),
            ("TWT_ms Vrms_ms", &time, "velocity.type", "set velocity.type = \"rms\""),
            ("vrms twt", &time, "velocity.path", "are the columns swapped?"),
            ("velocity time", &time, "velocity.path", "swapped"),
            ("il xl vint depth", &depth, "velocity.path", "swapped"),
        ];
        for (text, r, key, expect) in cases {
            let count = if text.starts_with("il ") { 4 } else { 2 };
            let e = check(text, count, r).unwrap_err();
            assert_eq!(e.key, key, "{text}: {}", e.message);
            assert!(e.message.starts_with("line 1: ") && e.message.contains(expect), "{text}: {}", e.message);
        }
    }

    #[test]
    fn comment_lines_count_only_when_every_column_names_a_role() {
        let time = reading(VerticalDomain::Time);
        let comment = |text: &str| HeaderLine { line: 3, text: text.into(), comment: true };
        let e = check_header(&comment("depth_ft vint"), 2, &time, "").unwrap_err();
        assert_eq!((e.key, e.message.starts_with("line 3")), ("velocity.domain", true));
        // Prose in a comment: "seconds" is not read as a unit of the first column.
        assert!(check_header(&comment("times, seconds"), 2, &time, "").is_ok());
        assert!(check_header(&comment("well A"), 2, &time, "").is_ok());
    }

    #[test]
    fn swapped_columns_are_told_by_their_values() {
        let time = reading(VerticalDomain::Time);
        let r = [300.0, 8000.0];
        let e = check_swapped(&[1500.0, 1650.0, 1800.0, 2000.0], &[0.0, 500.0, 1000.0, 1500.0], &time, r).unwrap_err();
        assert!(e.contains("are the columns swapped? The two-way times (1500..2000 ms)"), "{e}");
        assert!(check_swapped(&[1600.0, 1800.0, 2100.0], &[400.0, 1200.0, 2000.0], &time, r).is_err());
        let depth = reading(VerticalDomain::Depth);
        assert!(check_swapped(&[1500.0, 1700.0, 2000.0], &[0.0, 500.0, 1000.0], &depth, r).is_err());
        // Real functions: from the surface, starting deep, with a fast layer; two picks tell nothing.
        for (at, v) in [
            (vec![0.0, 500.0, 1000.0], vec![1500.0, 1800.0, 2200.0]),
            (vec![400.0, 800.0, 1200.0], vec![1600.0, 1800.0, 2000.0]),
            (vec![1000.0, 1200.0, 1400.0], vec![1500.0, 2500.0, 3500.0]),
            (vec![1500.0, 2000.0], vec![0.0, 1000.0]),
        ] {
            assert!(check_swapped(&at, &v, &time, r).is_ok(), "{at:?} {v:?}");
        }
    }
}
