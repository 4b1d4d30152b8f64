//! Velocity cards placed on the seismic and converted, for `kind = "functions"` with `format = "handvel"`
//! or `"velf"`.
//!
//! A function is placed at the trace of its CDP number, found
//! - in the seismic's trace headers (CDP at bytes 21-24; the application reads them, see [`CdpLookup`]);
//! - or by `velocity.cdp_origin = [cdp, iline, xline]` and `velocity.cdp_step = [per inline, per
//!   crossline]`: the CDP number at one place of the seismic's grid, and how it grows from one of its
//!   inlines to the next and from one crossline to the next (default: by the number of crosslines, and by
//!   1, as a survey numbered crossline by crossline along each inline);
//! - or, with `velocity.locate = "coordinates"`, at the trace nearest the map coordinates its card gives,
//!   through the seismic's coordinate transform.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use super::{read_cards, CardFormat, CardFunction};
use crate::convert::Converted;
use crate::lateral::{Inverse, Locate};
use crate::spec::{Kind, VelocitySpec};
use crate::units::VerticalDomain;
use seis_core::error::{Error, Result};
use seis_core::volume::Geometry;
use seis_io::segy::cdps::CdpLines;

/// Where the application finds the inline and crossline of the CDP numbers it is given: the seismic's
/// trace headers ([`seis_io::segy::cdps::cdp_lines`]).
pub type CdpLookup<'a> = &'a dyn Fn(&BTreeSet<i64>) -> Result<CdpLines>;

/// Functions placed at `(inline, crossline)` and converted, and the steps that say how.
type Placed = (Vec<((i64, i64), Converted)>, Vec<String>);

impl VelocitySpec {
    /// The card format of `velocity.path`, when it is one.
    pub fn cards(&self) -> Option<CardFormat> {
        self.format.filter(|f| *f != CardFormat::Columns)
    }

    /// The rules of the card keys: `format`, `cdp_origin`, `cdp_step`, and `locate` for functions.
    pub(crate) fn check_cards(&self) -> Result<()> {
        let cards_only = |key: &str| {
            Error::at_key(
                format!("velocity.{key}"),
                format!("{key} places the functions of HANDVEL or VELF cards: set velocity.format and velocity.path"),
            )
        };
        if self.cards().is_none() {
            if self.cdp_origin.is_some() {
                return Err(cards_only("cdp_origin"));
            }
            if self.cdp_step.is_some() {
                return Err(cards_only("cdp_step"));
            }
            if self.kind == Kind::Functions && self.locate.is_some() {
                return Err(cards_only("locate"));
            }
            return Ok(());
        }
        if self.path.is_none() {
            return Err(Error::at_key("velocity.format", "a card format reads a file: set velocity.path"));
        }
        if self.domain == Some(VerticalDomain::Depth) {
            return Err(Error::at_key("velocity.domain", "HANDVEL and VELF cards are functions of two-way time"));
        }
        if self.cdp_step.is_some() && self.cdp_origin.is_none() {
            return Err(Error::at_key(
                "velocity.cdp_step",
                "cdp_step goes with cdp_origin = [cdp, iline, xline], the CDP number at one inline and crossline",
            ));
        }
        if self.cdp_origin.is_some() && self.locate == Some(Locate::Coordinates) {
            return Err(Error::at_key(
                "velocity.cdp_origin",
                "locate = \"coordinates\" places the functions by their x and y, not by their CDP numbers",
            ));
        }
        if self.cdp_step == Some([0, 0]) {
            return Err(Error::at_key("velocity.cdp_step", "[0, 0] gives every trace the same CDP number"));
        }
        Ok(())
    }

    /// The functions of the card file `path`, placed on `seismic` and converted.
    pub(crate) fn card_functions(
        &self,
        path: &Path,
        format: CardFormat,
        seismic: &Geometry,
        cdps: Option<CdpLookup>,
    ) -> Result<Placed> {
        let blame = |m: String| Error::at_key("velocity.path", format!("{}: {m}", path.display()));
        let functions = read_cards(path, format).map_err(|m| Error::at_key("velocity.path", m))?;
        crate::check_function_count(functions.len(), seismic).map_err(blame)?;
        let (places, how) = self.place(&functions, seismic, cdps, path)?;
        let mut seen: HashMap<(i64, i64), &CardFunction> = HashMap::new();
        for (f, &at) in functions.iter().zip(&places) {
            if let Some(other) = seen.insert(at, f) {
                let e = format!("{} and {} are both at inline {}, crossline {}", other.name(), f.name(), at.0, at.1);
                return Err(blame(e));
            }
        }
        let reading = self.reading(VerticalDomain::Time);
        let unit = reading.vertical_unit();
        let times: Vec<Vec<f64>> = functions.iter().map(|f| f.picks.iter().map(|p| p.time).collect()).collect();
        let refs: Vec<&[f64]> = times.iter().map(Vec::as_slice).collect();
        self.check_record(&refs, seismic).map_err(|(f, i, m)| {
            let (function, pick) = (&functions[f], functions[f].picks[i]);
            let at = format!("line {} ({}, {} {unit})", pick.line, function.name(), pick.time);
            Error::at_key("velocity.time_unit", format!("{}: {at}: {m}", path.display())).or_key("velocity.path")
        })?;
        let cancel = seis_core::cancel::CancelToken::process();
        let mut out = Vec::with_capacity(functions.len());
        for ((f, at), &place) in functions.iter().zip(&times).zip(&places) {
            cancel.check()?;
            let v: Vec<f64> = f.picks.iter().map(|p| p.velocity).collect();
            let cdp = f.cdp.map(|c| format!("CDP {c}, ")).unwrap_or_default();
            let name = |i: usize| format!("line {} ({cdp}{} {unit})", f.picks[i].line, at[i]);
            let c = self.convert(at, &v, &reading, &name).map_err(|m| blame(m).or_key("velocity.unit"))?;
            out.push((place, c));
        }
        let step = format!(
            "{} at {} locations from {} ({} cards, placed {how})",
            reading.describe(),
            out.len(),
            path.display(),
            format.name().to_uppercase()
        );
        Ok((out, vec![step]))
    }

    /// The `(inline, crossline)` of each function, and how they were found.
    fn place(
        &self,
        functions: &[CardFunction],
        seismic: &Geometry,
        cdps: Option<CdpLookup>,
        path: &Path,
    ) -> Result<(Vec<(i64, i64)>, &'static str)> {
        if self.locate == Some(Locate::Coordinates) {
            return Ok((by_coordinates(functions, seismic, path)?, "at the seismic's traces nearest their x and y"));
        }
        let wanted: BTreeSet<i64> = functions.iter().filter_map(|f| f.cdp).collect();
        let (lines, how, source) = match self.cdp_origin {
            Some(origin) => {
                (self.by_origin(origin, seismic, &wanted)?, "by velocity.cdp_origin", "velocity.cdp_origin")
            }
            None => {
                let lookup = cdps.ok_or_else(|| {
                    Error::at_key(
                        "velocity.cdp_origin",
                        "the functions are placed by CDP number, and the seismic's CDP headers are not at hand: set \
                         velocity.cdp_origin = [cdp, iline, xline], or velocity.locate = \"coordinates\"",
                    )
                })?;
                (lookup(&wanted)?, "by the CDP numbers of the seismic's trace headers", "trace header bytes 21-24")
            }
        };
        let key = if self.cdp_origin.is_some() { "velocity.cdp_origin" } else { "velocity.path" };
        let fail = |m: String| Error::at_key(key, format!("{}: {m}", path.display())).or_key("velocity.path");
        let mut out = Vec::with_capacity(functions.len());
        for f in functions {
            let cdp = f.cdp.expect("every card function has a CDP");
            match lines.lines.get(&cdp).map(Vec::as_slice) {
                Some([one]) => out.push(*one),
                Some([a, b, ..]) => {
                    return Err(fail(format!(
                        "{} is on more than one trace of the seismic (inline {}, crossline {} and inline {}, crossline \
                         {}): set velocity.cdp_origin to number the traces",
                        f.name(),
                        a.0,
                        a.1,
                        b.0,
                        b.1
                    )))
                }
                _ => {
                    let range = match lines.range {
                        Some([lo, hi]) => format!("its CDP numbers ({source}) run {lo}..={hi}"),
                        None => "it has no traces".to_string(),
                    };
                    return Err(fail(format!("{} is not a trace of the seismic: {range}", f.name())));
                }
            }
        }
        Ok((out, how))
    }

    /// The lines of the CDPs of `wanted`, numbered from `origin` by `velocity.cdp_step`.
    fn by_origin(&self, origin: [i64; 3], seismic: &Geometry, wanted: &BTreeSet<i64>) -> Result<CdpLines> {
        let [cdp0, il0, xl0] = origin;
        let (il, xl) = (&seismic.ilines, &seismic.xlines);
        let off_grid = |value: i64, axis: &seis_core::volume::LineAxis, what: &str| {
            ((value - axis.first) % axis.step != 0).then(|| {
                Error::at_key(
                    "velocity.cdp_origin",
                    format!("{what} {value} is not on the seismic's {what}s ({}, every {})", axis.first, axis.step),
                )
            })
        };
        if let Some(e) = off_grid(il0, il, "inline").or_else(|| off_grid(xl0, xl, "crossline")) {
            return Err(e);
        }
        let [per_il, per_xl] = self.cdp_step.unwrap_or([xl.len as i64, 1]);
        let (i0, j0) = ((il0 - il.first) / il.step, (xl0 - xl.first) / xl.step);
        let mut out = CdpLines::default();
        for i in 0..il.len as i64 {
            for j in 0..xl.len as i64 {
                let cdp = (i - i0)
                    .checked_mul(per_il)
                    .zip((j - j0).checked_mul(per_xl))
                    .and_then(|(a, b)| a.checked_add(b)?.checked_add(cdp0))
                    .ok_or_else(|| Error::at_key("velocity.cdp_step", "the CDP numbers overflow"))?;
                out.range = Some(out.range.map_or([cdp, cdp], |[lo, hi]| [lo.min(cdp), hi.max(cdp)]));
                if wanted.contains(&cdp) {
                    let places = out.lines.entry(cdp).or_default();
                    if places.len() < 2 {
                        places.push((il.value(i as usize), xl.value(j as usize)));
                    }
                }
            }
        }
        Ok(out)
    }
}

/// The trace of the seismic nearest each function's x and y.
fn by_coordinates(functions: &[CardFunction], seismic: &Geometry, path: &Path) -> Result<Vec<(i64, i64)>> {
    let fail = |m: String| Error::at_key("velocity.locate", format!("{}: {m}", path.display())).or_key("velocity.path");
    let inverse = seismic.coords.as_ref().and_then(Inverse::of).ok_or_else(|| {
        Error::at_key(
            "velocity.locate",
            "locate = \"coordinates\" needs the seismic's map coordinates, and it has none",
        )
    })?;
    let [ni, nx, _] = seismic.shape();
    let mut out = Vec::with_capacity(functions.len());
    for f in functions {
        let Some(xy) = f.xy else {
            return Err(fail(format!("{} gives no x and y, which locate = \"coordinates\" needs", f.name())));
        };
        let [fi, fj] = inverse.apply(xy);
        let inside = |f: f64, n: usize| f >= -0.5 && f <= n as f64 - 0.5;
        if !(inside(fi, ni) && inside(fj, nx)) {
            return Err(fail(format!(
                "{} at x {}, y {} lies outside the seismic (at inline index {fi:.1}, crossline index {fj:.1} of its \
                 {ni} × {nx} traces)",
                f.name(),
                xy[0],
                xy[1]
            )));
        }
        let (i, j) = ((fi.round() as usize).min(ni - 1), (fj.round() as usize).min(nx - 1));
        out.push((seismic.ilines.value(i), seismic.xlines.value(j)));
    }
    Ok(out)
}
