//! The coordinate reference system of a survey's coordinates, as a job names it (`input.crs`): an EPSG
//! code, or a WKT file. seisimage does no projection; it carries the CRS into every output that can say
//! it (HDF5 grid mapping, GeoTIFF keys, SEG-Y text header, manifest).

use std::path::Path;

use serde::{Deserialize, Serialize};

use seis_core::error::{Error, Result};

/// The largest WKT file read: a CRS's WKT is a few KiB.
const MAX_WKT_BYTES: u64 = 64 << 10;

/// A coordinate reference system: its EPSG code when known, its WKT when given.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Crs {
    /// `EPSG:23031` as the job gave it, or the WKT file's name.
    pub name: String,
    pub epsg: Option<u32>,
    pub wkt: Option<String>,
}

impl Crs {
    /// Read `input.crs`: `EPSG:<code>` (any case), or the path of a WKT file (relative paths from the job
    /// file's folder, as `base` gives them). Err: why it is neither, at the key `input.crs`.
    pub fn parse(value: &str, base: &Path) -> Result<Crs> {
        Crs::parse_at("input.crs", value, base)
    }

    /// [`Crs::parse`] for the setting `key` (`input.crs`, `--crs`), which an error names.
    pub fn parse_at(key: &str, value: &str, base: &Path) -> Result<Crs> {
        let refuse = |why: String| {
            Error::at_key(
                key,
                format!("{key} = {value:?}: {why}; give \"EPSG:<code>\" (EPSG:23031) or the path of a WKT file"),
            )
        };
        if let Some(code) = value.get(..5).filter(|p| p.eq_ignore_ascii_case("epsg:")).map(|_| &value[5..]) {
            return match code.trim().parse::<u32>() {
                Ok(epsg) if epsg > 0 => Ok(Crs { name: format!("EPSG:{epsg}"), epsg: Some(epsg), wkt: None }),
                _ => Err(refuse(format!("{code:?} is not an EPSG code (a positive whole number)"))),
            };
        }
        let path = base.join(value);
        let text = read_wkt(&path).map_err(|why| refuse(format!("{}: {why}", path.display())))?;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(Crs { name, epsg: outer_epsg(&text), wkt: Some(text) })
    }

    /// The CRS a dataset records as text, named `name` in messages: `EPSG:<code>` or a WKT, checked as a
    /// WKT file is; `epsg` is the code the dataset gives beside it, if any. Err: why it is neither.
    pub fn from_text(name: &str, text: &str, epsg: Option<u32>) -> std::result::Result<Crs, String> {
        let text = text.trim();
        if let Some(code) = text.get(..5).filter(|p| p.eq_ignore_ascii_case("epsg:")).map(|_| &text[5..]) {
            return match code.trim().parse::<u32>() {
                Ok(code) if code > 0 => Ok(Crs { name: format!("EPSG:{code}"), epsg: Some(code), wkt: None }),
                _ => Err(format!("{code:?} is not an EPSG code")),
            };
        }
        if text.len() as u64 > MAX_WKT_BYTES {
            return Err(format!("more than {MAX_WKT_BYTES} bytes, no WKT of a CRS is that long"));
        }
        let wkt = check_wkt(text.to_string())?;
        Ok(Crs { name: name.to_string(), epsg: outer_epsg(&wkt).or(epsg), wkt: Some(wkt) })
    }

    /// Whether `self` and `other` name the same CRS: the same EPSG code when both have one, else the
    /// same WKT.
    pub fn same_as(&self, other: &Crs) -> bool {
        match (self.epsg, other.epsg) {
            (Some(a), Some(b)) => a == b,
            _ => self.wkt.is_some() && self.wkt == other.wkt,
        }
    }

    /// The CRS in one line for text headers and logs: `EPSG:23031`, or the WKT's name and code.
    pub fn describe(&self) -> String {
        match (&self.wkt, self.epsg) {
            (None, _) => self.name.clone(),
            (Some(wkt), epsg) => {
                let title = wkt.split('"').nth(1).unwrap_or("WKT");
                match epsg {
                    Some(code) => format!("{title} (EPSG:{code})"),
                    None => title.to_string(),
                }
            }
        }
    }

    /// What other software reads as the CRS (GDAL's `spatial_ref`, rasterio and pyproj): the WKT, else
    /// `EPSG:<code>`.
    pub fn user_input(&self) -> String {
        self.wkt.clone().unwrap_or_else(|| self.name.clone())
    }
}

/// The text of a WKT file, checked to be one: a regular file of at most 64 KiB of UTF-8 text that starts
/// with a CRS keyword of WKT 1 or 2 and whose brackets balance.
fn read_wkt(path: &Path) -> std::result::Result<String, String> {
    use std::io::Read;
    let file = crate::files::open_regular(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(MAX_WKT_BYTES + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot be read ({e})"))?;
    if bytes.len() as u64 > MAX_WKT_BYTES {
        return Err(format!("more than {MAX_WKT_BYTES} bytes, no WKT of a CRS is that long"));
    }
    let text = String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())?;
    check_wkt(text.trim().to_string())
}

/// `text` if it starts with a CRS keyword of WKT 1 or 2 and its brackets balance.
fn check_wkt(text: String) -> std::result::Result<String, String> {
    const KEYWORDS: [&str; 11] = [
        "PROJCS",
        "GEOGCS",
        "GEOCCS",
        "COMPD_CS",
        "PROJCRS",
        "GEOGCRS",
        "GEODCRS",
        "COMPOUNDCRS",
        "BOUNDCRS",
        "VERTCRS",
        "ENGCRS",
    ];
    let keyword: String = text.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    if !KEYWORDS.contains(&keyword.to_ascii_uppercase().as_str()) || !text[keyword.len()..].starts_with(['[', '(']) {
        let start: String = text.chars().take(40).collect();
        return Err(format!("does not start as the WKT of a CRS does (PROJCS[, PROJCRS[, ...): {start:?}"));
    }
    let opened = text.chars().filter(|c| matches!(c, '[' | '(')).count();
    let closed = text.chars().filter(|c| matches!(c, ']' | ')')).count();
    if opened != closed {
        return Err(format!("its brackets do not balance ({opened} opened, {closed} closed)"));
    }
    Ok(text)
}

/// The EPSG code of the whole CRS of a WKT text: its last `AUTHORITY["EPSG","n"]` (WKT 1) or
/// `ID["EPSG",n]` (WKT 2), which closes the outermost element; those of its parts come before.
fn outer_epsg(wkt: &str) -> Option<u32> {
    let upper = wkt.to_ascii_uppercase();
    let at =
        ["AUTHORITY[\"EPSG\",", "ID[\"EPSG\","].iter().filter_map(|k| upper.rfind(k).map(|i| i + k.len())).max()?;
    let code: String =
        wkt[at..].chars().skip_while(|c| *c == '"' || *c == ' ').take_while(char::is_ascii_digit).collect();
    // Only the outermost element's: nothing but closing brackets may follow its own closing bracket.
    let rest = &wkt[at..];
    let after = rest.find(']').map(|i| &rest[i + 1..])?;
    after.trim().chars().all(|c| c == ']').then(|| code.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epsg_codes_and_wkt_files_are_read_and_anything_else_refused() {
        let dir = tempfile::tempdir().unwrap();
        let crs = Crs::parse("epsg:23031", dir.path()).unwrap();
        assert_eq!((crs.name.as_str(), crs.epsg), ("EPSG:23031", Some(23031)));
        for bad in ["EPSG:", "EPSG:abc", "EPSG:-4", "no-such.wkt"] {
            let e = Crs::parse(bad, dir.path()).unwrap_err().to_string();
            assert!(e.contains("input.crs") && e.contains(bad), "{e}");
        }
        let wkt = r#"PROJCS["ED50 / UTM zone 31N",GEOGCS["ED50",AUTHORITY["EPSG","4230"]],UNIT["metre",1],AUTHORITY["EPSG","23031"]]"#;
        std::fs::write(dir.path().join("ed50.wkt"), wkt).unwrap();
        let crs = Crs::parse("ed50.wkt", dir.path()).unwrap();
        assert_eq!((crs.epsg, crs.wkt.as_deref()), (Some(23031), Some(wkt)));
        assert_eq!(crs.describe(), "ED50 / UTM zone 31N (EPSG:23031)");
        // A code that belongs to a part only (here the datum) is not the CRS's.
        let inner = r#"PROJCS["local",GEOGCS["ED50",AUTHORITY["EPSG","4230"]],UNIT["metre",1]]"#;
        assert_eq!(outer_epsg(inner), None);
        assert_eq!(outer_epsg(r#"PROJCRS["x",ID["EPSG",32631]]"#), Some(32631));
        std::fs::write(dir.path().join("not.wkt"), "hello").unwrap();
        assert!(Crs::parse("not.wkt", dir.path()).unwrap_err().to_string().contains("does not start as"));
        std::fs::write(dir.path().join("open.wkt"), "PROJCS[\"x\",UNIT[\"m\",1]").unwrap();
        assert!(Crs::parse("open.wkt", dir.path()).unwrap_err().to_string().contains("do not balance"));
    }
}
