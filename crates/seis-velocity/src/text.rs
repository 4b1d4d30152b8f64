//! Velocity functions from text files, as processing contractors and interpretation software export them:
//! columns of numbers, one pick per line.
//!
//! - two columns, `time-or-depth velocity`: one function (`kind = "table"`);
//! - four columns, `inline crossline time-or-depth velocity`: functions at several locations
//!   (`kind = "functions"`), the lines of one location need not be together but keep their order.
//!
//! Numbers are separated by spaces, tabs or commas; `#` starts a comment; blank lines are skipped, and so
//! is one line of column names before the first pick. Hand-written rather than a CSV crate: the format is
//! this small, and every refusal must name the file and its line. Nothing is read beyond
//! [`MAX_TEXT_BYTES`], and no more than [`MAX_PICKS`] picks are held.

use std::path::Path;

/// Larger files are refused: a velocity table of a quarter of a gigabyte is not one.
pub const MAX_TEXT_BYTES: u64 = 256 << 20;

/// Files with more picks are refused, whatever their size: each pick is held a few times over while the
/// functions are built (about 150 bytes), and no velocity analysis gives this many (a function every 20
/// lines both ways of a 4000 × 4000-trace survey, each of 100 picks, is 4 million).
pub const MAX_PICKS: usize = 1 << 22;

/// One line of numbers and its 1-based line number.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub line: usize,
    pub values: Vec<f64>,
}

/// The rows of `path`, each of `columns` numbers. Errors name the file and the line.
#[cfg(test)]
pub fn read_rows(path: &Path, columns: usize, what: &str) -> Result<Vec<Row>, String> {
    read_table(path, columns, what).map(|(rows, _)| rows)
}

/// The rows of `path`, each of `columns` numbers (errors name the file and the line), and the line above them that may name the columns.
pub fn read_table(path: &Path, columns: usize, what: &str) -> Result<(Vec<Row>, Option<HeaderLine>), String> {
    let bytes = seis_io::files::read_bounded(path, MAX_TEXT_BYTES, "velocity text file").map_err(|e| e.to_string())?;
    let rows = parse_rows(&bytes, columns, what).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((rows, header_line(&bytes)))
}

/// A line of words above the first pick, which may name the columns (see [`super::columns`]).
#[derive(Clone, Debug, PartialEq)]
pub struct HeaderLine {
    /// 1-based.
    pub line: usize,
    pub text: String,
    /// Whether it is a comment (`# twt_ms vrms`) rather than the line of column names [`parse_rows`] skips.
    pub comment: bool,
}

/// The line of column names before the first pick, else the last comment line before it; `None` when
/// the text has neither (or is not text: [`parse_rows`] says so).
pub fn header_line(bytes: &[u8]) -> Option<HeaderLine> {
    let mut last_comment = None;
    for (n, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let text = std::str::from_utf8(raw).ok()?;
        let (content, comment) = text.split_once('#').unwrap_or((text, ""));
        let (content, comment) = (content.trim(), comment.trim());
        if content.is_empty() {
            if !comment.is_empty() {
                last_comment = Some(HeaderLine { line: n + 1, text: comment.to_string(), comment: true });
            }
            continue;
        }
        let words = content.split(|c: char| c.is_whitespace() || c == ',').filter(|t| !t.is_empty());
        if words.clone().all(|t| t.parse::<f64>().is_err()) {
            return Some(HeaderLine { line: n + 1, text: content.to_string(), comment: false });
        }
        return last_comment;
    }
    last_comment
}

/// The rows of a text, each of `columns` numbers (`what` names the columns in messages).
pub fn parse_rows(bytes: &[u8], columns: usize, what: &str) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    let mut header_seen = false;
    for (n, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = n + 1;
        let text = std::str::from_utf8(raw).map_err(|_| format!("line {line}: not text (invalid UTF-8)"))?;
        let text = text.split('#').next().unwrap_or_default().trim();
        if text.is_empty() {
            continue;
        }
        let tokens: Vec<&str> = text.split(|c: char| c.is_whitespace() || c == ',').filter(|t| !t.is_empty()).collect();
        let numbers: Vec<Option<f64>> = tokens.iter().map(|t| t.parse::<f64>().ok()).collect();
        if rows.is_empty() && !header_seen && numbers.iter().all(Option::is_none) {
            header_seen = true;
            continue;
        }
        if tokens.len() != columns {
            return Err(format!(
                "line {line}: {} values where {columns} are expected ({what}): \"{}\"",
                tokens.len(),
                seis_io::files::quoted(text, 80)
            ));
        }
        if rows.len() == MAX_PICKS {
            return Err(format!("line {line}: more than {MAX_PICKS} picks ({what}), more than a velocity file holds"));
        }
        let mut values = Vec::with_capacity(columns);
        for (t, v) in tokens.iter().zip(numbers) {
            match v {
                Some(v) if v.is_finite() => values.push(v),
                _ => {
                    return Err(format!("line {line}: \"{}\" is not a number ({what})", seis_io::files::quoted(t, 40)))
                }
            }
        }
        rows.push(Row { line, values });
    }
    if rows.is_empty() {
        return Err(format!("no picks: every line is blank or a comment ({what} expected)"));
    }
    Ok(rows)
}

/// Picks of one location of a four-column file.
#[derive(Clone, Debug, PartialEq)]
pub struct LocatedRows {
    pub iline: i64,
    pub xline: i64,
    /// `[time-or-depth, velocity]` and the line it came from, in file order.
    pub rows: Vec<Row>,
}

/// The rows of a four-column text grouped by location, in the order each location first appears.
pub fn group_by_location(rows: Vec<Row>) -> Result<Vec<LocatedRows>, String> {
    let mut out: Vec<LocatedRows> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for row in rows {
        let (il, xl) = (row.values[0], row.values[1]);
        if il.fract() != 0.0 || xl.fract() != 0.0 || il.abs() > 1e15 || xl.abs() > 1e15 {
            return Err(format!("line {}: inline {il} and crossline {xl} must be whole line numbers", row.line));
        }
        let key = (il as i64, xl as i64);
        let k = *index.entry(key).or_insert_with(|| {
            out.push(LocatedRows { iline: key.0, xline: key.1, rows: Vec::new() });
            out.len() - 1
        });
        out[k].rows.push(Row { line: row.line, values: row.values[2..].to_vec() });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_blank_lines_a_header_and_separators() {
        let text = b"# RMS velocities, well A\nTWT_ms  Vrms_ms\n\n0, 1500\n500\t1650 # top chalk\n  1000 1800\n";
        let rows = parse_rows(text, 2, "time, velocity").unwrap();
        assert_eq!(rows.iter().map(|r| r.line).collect::<Vec<_>>(), [4, 5, 6]);
        assert_eq!(rows[1].values, [500.0, 1650.0]);
    }

    #[test]
    fn the_header_is_the_line_of_names_else_the_last_comment_before_the_picks() {
        let h = header_line(b"# RMS velocities, well A\nTWT_ms  Vrms_ms # names\n\n0, 1500\n").unwrap();
        assert_eq!(h, HeaderLine { line: 2, text: "TWT_ms  Vrms_ms".into(), comment: false });
        let h = header_line(b"# RMS velocities, well A\n# twt_s vrms\n\n0 1500 # top\n# later\n").unwrap();
        assert_eq!(h, HeaderLine { line: 2, text: "twt_s vrms".into(), comment: true });
        assert_eq!(header_line(b"0 1500\n# twt_s vrms\n"), None);
    }

    #[test]
    fn refusals_name_the_line() {
        let e = parse_rows(b"0 1500\n500 1650 3\n", 2, "time, velocity").unwrap_err();
        assert!(e.starts_with("line 2: 3 values where 2"), "{e}");
        let e = parse_rows(b"0 1500\n500 fast\n", 2, "time, velocity").unwrap_err();
        assert!(e.starts_with("line 2: \"fast\" is not a number"), "{e}");
        let e = parse_rows(b"0 1500\nNaN 1600\n", 2, "t, v").unwrap_err();
        assert!(e.starts_with("line 2"), "{e}");
        let e = parse_rows(b"0 1500\n\xff\xfe 1\n", 2, "t, v").unwrap_err();
        assert!(e.starts_with("line 2: not text"), "{e}");
        assert!(parse_rows(b"# nothing\n\n", 2, "t, v").unwrap_err().contains("no picks"));
        // A second line of words is not a header.
        assert!(parse_rows(b"a b\nc d\n1 2\n", 2, "t, v").unwrap_err().starts_with("line 2"));
    }

    /// A file that is not a regular file is refused, not waited on or read without end; a line quoted in a
    /// message is cut short.
    #[test]
    fn only_regular_files_are_read_and_quotes_are_short() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("v.txt");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_rows(&fifo, 2, "t, v").unwrap_err();
        assert!(e.contains("v.txt") && e.contains("FIFO"), "{e}");
        let e = read_rows(Path::new("/dev/zero"), 2, "t, v").unwrap_err();
        assert!(e.contains("character device"), "{e}");
        let long = format!("0 1500\n{}\n", "1 ".repeat(100_000));
        let e = parse_rows(long.as_bytes(), 2, "t, v").unwrap_err();
        assert!(e.starts_with("line 2: 100000 values") && e.len() < 300, "{} bytes", e.len());
    }

    #[test]
    fn located_rows_group_by_location_in_order() {
        let rows =
            parse_rows(b"100 200 0 1500\n100 200 1000 2000\n120 200 0 1600\n100 200 2000 2500\n", 4, "").unwrap();
        let g = group_by_location(rows).unwrap();
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].iline, g[0].xline, g[0].rows.len()), (100, 200, 3));
        assert_eq!(g[0].rows[2], Row { line: 4, values: vec![2000.0, 2500.0] });
        assert_eq!((g[1].iline, g[1].rows[0].line), (120, 3));
        let e = group_by_location(parse_rows(b"100.5 200 0 1500\n", 4, "").unwrap()).unwrap_err();
        assert!(e.starts_with("line 1"), "{e}");
    }
}
