//! Velocity functions as processing systems export them in cards: ProMAX/Omega `HANDVEL` cards and SEG
//! / Western `VELF` cards. Both hold functions of two-way time, each at a CDP (or a shot point) and
//! sometimes at map coordinates; by convention the times are in ms, the velocities RMS in m/s.
//!
//! - **HANDVEL**: a card `HANDVEL cdp` (or `HANDVEL cdp x y`) opens a function; the lines of numbers that
//!   follow are its `time velocity` pairs, as many to a line as the exporter writes, a pair free to run on
//!   to the next line.
//! - **VELF**: a `SPNT` card gives the location of the function that follows: its numbers are
//!   `[line] cdp [x y]` (a line name in words is skipped; with three numbers or more, the last two are x
//!   and y and the one before them the CDP). `VELF` cards carry the pairs: a card with an odd count of
//!   numbers starts with the CDP of the function (a new one, unless the `SPNT` card just above has no
//!   pairs yet, which it then names), one with an even count continues the function above it.
//!
//! Fields are separated by blanks, tabs or commas, and keywords may be in any case. `#` starts a comment,
//! and a line whose first word is neither a keyword nor a number (a title, a `LINE` or `NAME` card, a
//! comment card) is passed over; numbers outside a function are an error. Every error names the line.
//! Nothing is read beyond [`text::MAX_TEXT_BYTES`], and no more than [`text::MAX_PICKS`] picks are held.
//!
//! [`load`] places the functions on the seismic and converts them.

pub mod load;
#[cfg(test)]
mod tests;

use std::path::Path;

use super::text;
use super::units::CardFormat;

pub use load::CdpLookup;

/// One time-velocity pair and the line it is on (the line of its time).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CardPick {
    pub line: usize,
    pub time: f64,
    pub velocity: f64,
}

/// One function of a card file.
#[derive(Clone, Debug, PartialEq)]
pub struct CardFunction {
    /// The line of the card that opened it (1-based).
    pub line: usize,
    pub cdp: Option<i64>,
    /// Map coordinates, as the card gives them.
    pub xy: Option<[f64; 2]>,
    pub picks: Vec<CardPick>,
}

impl CardFunction {
    /// "CDP 101 (line 4)", for messages.
    pub fn name(&self) -> String {
        match self.cdp {
            Some(cdp) => format!("CDP {cdp} (line {})", self.line),
            None => format!("the function of line {}", self.line),
        }
    }
}

/// The functions of the card file `path`. Errors name the file and the line.
pub fn read_cards(path: &Path, format: CardFormat) -> Result<Vec<CardFunction>, String> {
    let bytes =
        seis_io::files::read_bounded(path, text::MAX_TEXT_BYTES, "velocity card file").map_err(|e| e.to_string())?;
    parse_cards(&bytes, format).map_err(|e| format!("{}: {e}", path.display()))
}

/// The functions of a text of cards.
pub fn parse_cards(bytes: &[u8], format: CardFormat) -> Result<Vec<CardFunction>, String> {
    let mut cards = Cards { format, functions: Vec::new(), time: None, picks: 0 };
    for (n, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = n + 1;
        let text = std::str::from_utf8(raw).map_err(|_| format!("line {line}: not text (invalid UTF-8)"))?;
        let text = text.split('#').next().unwrap_or_default();
        let tokens: Vec<&str> = text.split(|c: char| c.is_whitespace() || c == ',').filter(|t| !t.is_empty()).collect();
        let Some(first) = tokens.first() else { continue };
        let keyword = first.to_ascii_uppercase();
        match (format, keyword.as_str()) {
            (CardFormat::Handvel, "HANDVEL") => cards.handvel(line, &tokens[1..])?,
            (CardFormat::Velf, "SPNT") => cards.spnt(line, &tokens[1..])?,
            (CardFormat::Velf, "VELF") => cards.velf(line, &tokens[1..])?,
            _ if number(first).is_some() => match format {
                CardFormat::Handvel => cards.pairs(line, &numbers(line, &tokens)?)?,
                _ => return Err(format!("line {line}: numbers outside a VELF card")),
            },
            _ => {}
        }
    }
    cards.finish()?;
    if cards.functions.is_empty() {
        let card = if format == CardFormat::Velf { "VELF" } else { "HANDVEL" };
        return Err(format!("no {card} cards: no velocity function in the file"));
    }
    Ok(cards.functions)
}

/// The functions read so far and a time waiting for its velocity.
struct Cards {
    format: CardFormat,
    functions: Vec<CardFunction>,
    time: Option<(f64, usize)>,
    picks: usize,
}

impl Cards {
    fn handvel(&mut self, line: usize, fields: &[&str]) -> Result<(), String> {
        let values = numbers(line, fields)?;
        let (cdp, xy) = match values.as_slice() {
            [cdp] => (*cdp, None),
            [cdp, x, y] => (*cdp, Some([*x, *y])),
            _ => {
                return Err(format!(
                    "line {line}: a HANDVEL card gives the CDP, or the CDP, x and y: {} values",
                    values.len()
                ))
            }
        };
        self.open(line, Some(whole(line, cdp)?), xy)
    }

    fn spnt(&mut self, line: usize, fields: &[&str]) -> Result<(), String> {
        // A line name may be a word; the numbers are what places the function.
        let values: Vec<f64> = fields.iter().filter_map(|t| number(t)).collect();
        let (cdp, xy) = match values.as_slice() {
            [] => return Err(format!("line {line}: a SPNT card without a CDP or shot point number")),
            [cdp] | [_, cdp] => (*cdp, None),
            [.., cdp, x, y] => (*cdp, Some([*x, *y])),
        };
        self.open(line, Some(whole(line, cdp)?), xy)
    }

    fn velf(&mut self, line: usize, fields: &[&str]) -> Result<(), String> {
        let values = numbers(line, fields)?;
        let pairs = if values.len() % 2 == 1 {
            let cdp = whole(line, values[0])?;
            match self.functions.last_mut() {
                Some(f) if f.picks.is_empty() && self.time.is_none() => f.cdp = Some(cdp),
                _ => self.open(line, Some(cdp), None)?,
            }
            &values[1..]
        } else {
            &values[..]
        };
        if self.functions.is_empty() {
            return Err(format!("line {line}: a VELF card of time-velocity pairs before any SPNT card or CDP"));
        }
        self.pairs(line, pairs)
    }

    /// Start a function, ending the one before.
    fn open(&mut self, line: usize, cdp: Option<i64>, xy: Option<[f64; 2]>) -> Result<(), String> {
        self.finish()?;
        self.functions.push(CardFunction { line, cdp, xy, picks: Vec::new() });
        Ok(())
    }

    /// Numbers that continue the current function's pairs.
    fn pairs(&mut self, line: usize, values: &[f64]) -> Result<(), String> {
        let Some(function) = self.functions.last_mut() else {
            return Err(format!("line {line}: numbers before the first HANDVEL card"));
        };
        for &v in values {
            match self.time.take() {
                None => self.time = Some((v, line)),
                Some((time, at)) => {
                    if self.picks == text::MAX_PICKS {
                        return Err(format!(
                            "line {line}: more than {} picks, more than a velocity file holds",
                            text::MAX_PICKS
                        ));
                    }
                    self.picks += 1;
                    function.picks.push(CardPick { line: at, time, velocity: v });
                }
            }
        }
        Ok(())
    }

    /// Check that the current function is complete.
    fn finish(&mut self) -> Result<(), String> {
        let Some(f) = self.functions.last() else { return Ok(()) };
        if let Some((time, line)) = self.time {
            return Err(format!("line {line}: time {time} of {} has no velocity", f.name()));
        }
        if f.picks.is_empty() {
            let card = if self.format == CardFormat::Velf { "VELF" } else { "HANDVEL" };
            return Err(format!("line {}: {} has no time-velocity pairs ({card} cards)", f.line, f.name()));
        }
        Ok(())
    }
}

fn number(token: &str) -> Option<f64> {
    token.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Every token of a card as a number, else an error quoting the one that is not.
fn numbers(line: usize, tokens: &[&str]) -> Result<Vec<f64>, String> {
    tokens
        .iter()
        .map(|t| number(t).ok_or_else(|| format!("line {line}: \"{}\" is not a number", seis_io::files::quoted(t, 40))))
        .collect()
}

/// A CDP or shot point number, which must be whole.
fn whole(line: usize, value: f64) -> Result<i64, String> {
    if value.fract() != 0.0 || value.abs() > 1e15 {
        return Err(format!("line {line}: CDP {value} is not a whole number"));
    }
    Ok(value as i64)
}
