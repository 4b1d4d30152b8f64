//! Where each value of a job was set: the line and column in the job file of a key, or the `--set` override
//! that gave it, so that an error about a value can point there.

use std::ops::Range;

use crate::error::{Error, Location, Result};

/// How an error names the override `item`: `--set KEY=VALUE`, the value cut short.
fn set_source(item: &str) -> String {
    format!("--set {}", crate::io::files::quoted(item, 100))
}

/// Where the values of a job came from: the job file's text and the overrides, in order.
#[derive(Clone, Debug)]
pub(super) struct Origin {
    /// The job file, as errors name it.
    pub(super) name: String,
    pub(super) text: String,
    pub(super) overrides: Vec<Override>,
}

/// One `--set KEY=VALUE`.
#[derive(Clone, Debug)]
pub(super) struct Override {
    pub(super) key: String,
    pub(super) item: String,
}

impl Origin {
    /// The last override that set `key` or a table holding it: the one whose value stood.
    pub(super) fn overridden(&self, key: &str) -> Option<&Override> {
        self.overrides.iter().rev().find(|o| o.key == key || key.starts_with(&format!("{}.", o.key)))
    }

    /// Whether the job gives `key` a value: an override, or the job file.
    pub(super) fn sets(&self, key: &str) -> bool {
        self.overridden(key).is_some() || entries(&self.text).iter().any(|e| e.path == key)
    }

    pub(super) fn error_at(&self, key: &str, message: &str) -> Error {
        let message = if key.is_empty() { message.to_string() } else { format!("{key}: {message}") };
        match self.overridden(key) {
            Some(o) => Error::config(set_source(&o.item), Location::File, message),
            None => Error::config(&self.name, position(&self.text, key), message),
        }
    }

    /// A TOML error in the job file: at its own position, prefixed by the key it concerns.
    pub(super) fn toml_error(&self, e: &toml::de::Error) -> Error {
        let Some(span) = e.span() else { return Error::config(&self.name, Location::File, e.message().trim()) };
        let entries = entries(&self.text);
        let mut key = key_at(&entries, &span);
        let mut at = span.start;
        // A table read as a whole (a tagged enum) reports an unknown key at the table: find the key itself.
        if let (Some(table), Some(field)) = (&key, unknown_field(e.message())) {
            if let Some(k) = entries.iter().find(|en| en.path == format!("{table}.{field}")) {
                at = k.key.as_ref().map_or(k.value.start, |r| r.start);
                key = Some(k.path.clone());
            }
        }
        let message = match (key, e.message().trim()) {
            (Some(k), m) => format!("{k}: {m}"),
            (None, m) if m.starts_with("missing field") => format!("{m}: the job file needs this table"),
            (None, m) => m.to_string(),
        };
        Error::config(&self.name, line_column(&self.text, at), message)
    }

    /// An error in the job after the overrides, read from the merged text: blame the override that set the
    /// key at fault (or a key inside it); else the file's own error, when the file alone had one (the
    /// overrides may also complete a file that lacks something); else the file's line of that key.
    pub(super) fn merged_error(&self, merged: &str, e: &toml::de::Error, file_only: Option<&toml::de::Error>) -> Error {
        let entries = entries(merged);
        let key = e.span().and_then(|s| key_at(&entries, &s)).unwrap_or_default();
        let key = match unknown_field(e.message()) {
            Some(field) if entries.iter().any(|en| en.path == format!("{key}.{field}")) => format!("{key}.{field}"),
            _ => key,
        };
        let message = e.message().trim();
        let inside = self.overrides.iter().rev().find(|o| o.key.starts_with(&format!("{key}.")));
        match (self.overridden(&key), inside, file_only) {
            (Some(_), _, _) => self.error_at(&key, message),
            (None, Some(o), _) => Error::config(set_source(&o.item), Location::File, format!("{key}: {message}")),
            (None, None, Some(own)) => self.toml_error(own),
            (None, None, None) => self.error_at(&key, &format!("{message} (once the --set overrides are applied)")),
        }
    }
}

/// `unknown field `x`` → `x`.
fn unknown_field(message: &str) -> Option<&str> {
    message.strip_prefix("unknown field `")?.split('`').next()
}

/// One key of a TOML document: its dotted path (array elements by index), where the key is written (none
/// for array elements) and where its value is.
struct Entry {
    path: String,
    key: Option<Range<usize>>,
    value: Range<usize>,
    table: bool,
}

/// Every key of a TOML document, parents before children. Empty when the text does not parse.
fn entries(text: &str) -> Vec<Entry> {
    fn walk(path: &str, key: Option<Range<usize>>, value: &toml::Spanned<toml::de::DeValue>, out: &mut Vec<Entry>) {
        let child = |name: &str| if path.is_empty() { name.to_string() } else { format!("{path}.{name}") };
        let table = matches!(value.get_ref(), toml::de::DeValue::Table(_));
        if !path.is_empty() {
            out.push(Entry { path: path.to_string(), key, value: value.span(), table });
        }
        match value.get_ref() {
            toml::de::DeValue::Table(t) => {
                for (k, v) in t.iter() {
                    walk(&child(k.get_ref()), Some(k.span()), v, out);
                }
            }
            toml::de::DeValue::Array(a) => {
                for (i, v) in a.iter().enumerate() {
                    walk(&child(&i.to_string()), None, v, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Ok(doc) = toml::de::DeTable::parse(text) {
        let span = doc.span();
        let root = toml::Spanned::new(span, toml::de::DeValue::Table(doc.into_inner()));
        walk("", None, &root, &mut out);
    }
    out
}

/// The deepest key whose written key or value holds the whole of `span`. An empty span is the document's
/// (a missing top-level table), no key's.
fn key_at(entries: &[Entry], span: &Range<usize>) -> Option<String> {
    if span.is_empty() {
        return None;
    }
    let holds = |r: &Range<usize>| r.start <= span.start && span.end <= r.end.max(r.start + 1);
    entries
        .iter()
        .filter(|e| e.key.as_ref().is_some_and(holds) || holds(&e.value))
        .max_by_key(|e| e.path.split('.').count())
        .map(|e| e.path.clone())
}

/// Where the value of `key` is written (for a table, its key in the header), or failing that the nearest
/// enclosing table's.
fn position(text: &str, key: &str) -> Location {
    let entries = entries(text);
    let mut path = key;
    loop {
        if let Some(e) = entries.iter().find(|e| e.path == path) {
            let at = match (&e.key, e.table) {
                (Some(k), true) => k.start,
                _ => e.value.start,
            };
            return line_column(text, at);
        }
        match path.rsplit_once('.') {
            Some((parent, _)) => path = parent,
            None => return Location::File,
        }
    }
}

/// The 1-based line and column (in characters) of byte `at` of `text`.
fn line_column(text: &str, at: usize) -> Location {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Location::Line { line, column }
}

/// Apply one `KEY=VALUE` override to the parsed table. VALUE is TOML (`50`, `"cpu"`, `[1, 2]`); a bare word
/// that is not valid TOML is taken as a string, so `--set compute.backend=cpu` works unquoted.
pub(super) fn apply_override(table: &mut toml::Table, item: &str) -> Result<Override> {
    let bad = |msg: String| Error::config(set_source(item), Location::File, msg);
    let (key, value) = item.split_once('=').ok_or_else(|| bad("expected KEY=VALUE".into()))?;
    let key = key.trim();
    let parsed: toml::Value = match toml::from_str::<toml::Table>(&format!("v = {value}")) {
        Ok(mut t) => t.remove("v").expect("the key just written"),
        Err(_) => toml::Value::String(value.to_string()),
    };
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(bad(format!("{key:?} is not a dotted key such as imaging.fmax")));
    }
    let mut t = table;
    for (i, p) in parts[..parts.len() - 1].iter().enumerate() {
        let entry = t.entry(p.to_string()).or_insert_with(|| toml::Value::Table(Default::default()));
        t = entry.as_table_mut().ok_or_else(|| bad(format!("{} is not a table", parts[..=i].join("."))))?;
    }
    t.insert(parts[parts.len() - 1].to_string(), parsed);
    Ok(Override { key: key.to_string(), item: item.to_string() })
}
