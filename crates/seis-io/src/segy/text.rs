//! Text headers: the 3200-byte main header and the extended 3200-byte records of rev 1 and 2, in EBCDIC or
//! ASCII, and the rev-2 stanzas that some of them carry.

use nom::bytes::complete::{tag, take_until};
use nom::sequence::delimited;
use nom::Parser;
use serde::Serialize;

use super::binary::FILE_HEADER_LEN;

/// Size of the main text header and of each extended text header record.
pub const TEXT_RECORD_LEN: usize = 3200;
const LINE_LEN: usize = 80;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TextEncoding {
    Ascii,
    Ebcdic,
}

/// The decoded text headers of a file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TextHeader {
    pub encoding: TextEncoding,
    /// The main header as 40 lines of up to 80 characters (trailing blanks removed).
    pub text: String,
    /// Extended text header records, including a closing `((SEG: EndText))` record when present.
    pub extended: Vec<String>,
}

impl TextHeader {
    /// Decode the main header (its first byte decides the encoding: ASCII 'C' means ASCII, anything else
    /// EBCDIC) and the extended records.
    pub fn decode(main: &[u8; TEXT_RECORD_LEN], extended: &[&[u8]]) -> TextHeader {
        let encoding = main_encoding(main);
        let text = decode(main, encoding)
            .chars()
            .collect::<Vec<_>>()
            .chunks(LINE_LEN)
            .map(|line| line.iter().collect::<String>().trim_end().to_string())
            .collect::<Vec<_>>()
            .join("\n");
        let mut previous = encoding;
        let extended = extended
            .iter()
            .map(|record| {
                previous = record_encoding(record).unwrap_or(previous);
                decode(record, previous).trim_end().to_string()
            })
            .collect();
        TextHeader { encoding, text, extended }
    }

    /// Byte locations of inline and crossline numbers declared by a rev-2.1 `SEG:Layout` stanza, if the file
    /// has one that names both in the standard trace header. Used to suggest byte locations, not applied.
    pub fn declared_line_bytes(&self) -> Option<(u16, u16)> {
        let all = self.extended.concat();
        let start = all.to_ascii_lowercase().find("((seg:layout")?;
        // Fields of additional trace headers are declared inside <extension> elements: stop there.
        let standard = &all[start..];
        let standard = &standard[..standard.find("<extension").unwrap_or(standard.len())];
        let byte_of = |name: &str| -> Option<u16> {
            let entry = standard.find(&format!("name=\"{name}\""))?;
            let rest = &standard[entry..];
            let rest = &rest[..rest.find('>')?];
            let value = &rest[rest.find("byte=\"")? + 6..];
            value[..value.find('"')?].parse().ok()
        };
        Some((byte_of("iline")?, byte_of("xline")?))
    }
}

/// The encoding of a main text header: ASCII when it opens with an ASCII 'C', else EBCDIC.
fn main_encoding(main: &[u8; TEXT_RECORD_LEN]) -> TextEncoding {
    if main[0] == b'C' {
        TextEncoding::Ascii
    } else {
        TextEncoding::Ebcdic
    }
}

/// How many extended text records follow the binary header, given the count at 3505-3506 of a file whose
/// bytes are `file`: the count itself, checked against the file size, or for -1 the records up to and
/// including the `((SEG: EndText))` stanza. Err: the byte offset of the problem and what it is.
pub fn extended_record_count(file: &[u8], declared: i16) -> Result<usize, (u64, String)> {
    // Empty when the file is too short to hold even the file header: it has no extended records either.
    let after_header = file.get(FILE_HEADER_LEN..).unwrap_or_default();
    let records_in_file = after_header.len() / TEXT_RECORD_LEN;
    match declared {
        n if n >= 0 && n as usize <= records_in_file => Ok(n as usize),
        n if n >= 0 => Err((
            3504,
            format!(
                "binary header field 3505-3506 announces {n} extended text headers ({} bytes) but only {} bytes \
                 follow the binary header",
                n as usize * TEXT_RECORD_LEN,
                after_header.len()
            ),
        )),
        -1 => {
            let mut encoding = TextEncoding::Ebcdic;
            for (k, record) in after_header.chunks_exact(TEXT_RECORD_LEN).enumerate() {
                encoding = record_encoding(record).unwrap_or(encoding);
                if is_end_text(&decode(record, encoding)) {
                    return Ok(k + 1);
                }
            }
            Err((
                3504,
                "binary header field 3505-3506 is -1 (extended text headers up to a ((SEG: EndText)) stanza), but \
                 no such stanza starts a 3200-byte record anywhere in the file"
                    .into(),
            ))
        }
        n => Err((
            3504,
            format!(
                "binary header field 3505-3506 holds {n} extended text headers; only -1 and counts >= 0 are defined"
            ),
        )),
    }
}

/// The encoding a record announces by its first bytes, if it announces one: a stanza opening "((" or a
/// card-image line starting with 'C', in ASCII or in EBCDIC. Other records continue the previous one.
fn record_encoding(record: &[u8]) -> Option<TextEncoding> {
    match record {
        [b'(', b'(', ..] | [b'C', ..] => Some(TextEncoding::Ascii),
        [0x4D, 0x4D, ..] | [0xC3, ..] => Some(TextEncoding::Ebcdic),
        _ => None,
    }
}

/// Whether a decoded extended record is the `((SEG: EndText))` stanza that closes the extended headers.
pub fn is_end_text(record: &str) -> bool {
    stanza_name(record).is_some_and(|name| {
        let compact: String = name.chars().filter(|c| !c.is_whitespace()).collect();
        compact.eq_ignore_ascii_case("SEG:EndText")
    })
}

/// The name of the stanza a record opens, e.g. `SEG:Layout:text/xml` for `((SEG:Layout:text/xml))`.
fn stanza_name(record: &str) -> Option<&str> {
    let opened: nom::IResult<&str, &str> = delimited(tag("(("), take_until("))"), tag("))")).parse(record.trim_start());
    opened.ok().map(|(_, name)| name.trim())
}

/// Bytes to text. Control characters other than newlines become blanks, so that embedded NULs and the like
/// do not reach terminals or JSON.
pub fn decode(bytes: &[u8], encoding: TextEncoding) -> String {
    bytes
        .iter()
        .map(|&b| {
            let c = match encoding {
                TextEncoding::Ascii => b,
                TextEncoding::Ebcdic => EBCDIC_TO_LATIN1[b as usize],
            } as char;
            if c.is_control() && c != '\n' {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// 40 card-image lines of 80 columns in EBCDIC. Characters outside code page 037 become '?'.
pub fn encode_ebcdic(lines: &[String]) -> [u8; TEXT_RECORD_LEN] {
    let mut out = [LATIN1_TO_EBCDIC[b' ' as usize]; TEXT_RECORD_LEN];
    for (line, slot) in lines.iter().zip(out.chunks_mut(LINE_LEN)) {
        for (c, b) in line.chars().zip(slot.iter_mut()) {
            let latin1 = u8::try_from(u32::from(c)).unwrap_or(b'?');
            *b = LATIN1_TO_EBCDIC[latin1 as usize];
        }
    }
    out
}

/// The card of a main text header that [`put_card`] chose, and the text it held before.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PutCard {
    /// 1-based card number.
    pub card: usize,
    /// The card's former text (trailing blanks removed), `None` when it was blank or held `line` already.
    pub replaced: Option<String>,
}

/// Put `line` on a card of the main text header `main`, in its encoding (as [`TextHeader::decode`] tells
/// it) and after the card's `C nn ` prefix: the card that already opens with `line`'s words before its
/// first ':' (a line written by an earlier run), else the first blank card before the closing
/// `END TEXTUAL HEADER` / `END EBCDIC` card, else the last card before that one (or the last card).
/// Columns past 80 are cut.
pub fn put_card(main: &mut [u8; TEXT_RECORD_LEN], line: &str) -> PutCard {
    let encoding = main_encoding(main);
    // Card by card: an ASCII header may end its cards with a newline, which is no card of its own.
    let cards: Vec<String> =
        main.chunks(LINE_LEN).map(|card| decode(card, encoding).replace('\n', " ").trim_end().to_string()).collect();
    // A bare `C` is a blank card without its number.
    let body =
        |card: &str| if card == "C" { String::new() } else { card[card_prefix(card).len()..].trim_start().to_string() };
    let end = cards.iter().position(|card| {
        let body = body(card);
        body.starts_with("END TEXTUAL HEADER") || body.starts_with("END EBCDIC")
    });
    let before_end = &cards[..end.unwrap_or(cards.len())];
    let key = line.split_once(':').map(|(key, _)| key);
    let index = key
        .and_then(|key| before_end.iter().position(|card| body(card).split_once(':').is_some_and(|(k, _)| k == key)))
        .or_else(|| before_end.iter().position(|card| body(card).is_empty()))
        .unwrap_or(match end {
            Some(end) if end > 0 => end - 1,
            _ => cards.len() - 1,
        });
    let card = &cards[index];
    let number = index + 1;
    let prefix = match card_prefix(card) {
        "" if cards[0].starts_with("C0") => format!("C{number:02} "),
        "" => format!("C{number:>2} "),
        own => format!("{own} "),
    };
    let former = body(card);
    let replaced = (!former.is_empty() && former != line).then(|| card.clone());
    let slot = &mut main[index * LINE_LEN..][..LINE_LEN];
    // A newline that ends an ASCII card stays where it is.
    let columns = if encoding == TextEncoding::Ascii && slot[LINE_LEN - 1] == b'\n' { LINE_LEN - 1 } else { LINE_LEN };
    let slot = &mut slot[..columns];
    slot.fill(encode_char(' ', encoding));
    for (c, b) in format!("{prefix}{line}").chars().zip(slot.iter_mut()) {
        *b = encode_char(c, encoding);
    }
    PutCard { card: number, replaced }
}

/// The `C nn` that opens a card (`C 3`, `C03`, `C3`), or "" when it has none.
fn card_prefix(card: &str) -> &str {
    let Some(rest) = card.strip_prefix('C') else { return "" };
    let number = rest.trim_start_matches(' ');
    let digits = number.len() - number.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || number[digits..].chars().next().is_some_and(|c| c != ' ') {
        return "";
    }
    &card[..card.len() - number.len() + digits]
}

/// One character in `encoding`: '?' for one that it cannot hold.
fn encode_char(c: char, encoding: TextEncoding) -> u8 {
    let latin1 = u8::try_from(u32::from(c)).unwrap_or(b'?');
    match encoding {
        TextEncoding::Ascii if latin1.is_ascii() => latin1,
        TextEncoding::Ascii => b'?',
        TextEncoding::Ebcdic => LATIN1_TO_EBCDIC[latin1 as usize],
    }
}

/// EBCDIC code page 037 (the usual EBCDIC of SEG-Y text headers) to Latin-1, a one-to-one map of all bytes.
const EBCDIC_TO_LATIN1: [u8; 256] = [
    0x00, 0x01, 0x02, 0x03, 0x9C, 0x09, 0x86, 0x7F, 0x97, 0x8D, 0x8E, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, //
    0x10, 0x11, 0x12, 0x13, 0x9D, 0x85, 0x08, 0x87, 0x18, 0x19, 0x92, 0x8F, 0x1C, 0x1D, 0x1E, 0x1F, //
    0x80, 0x81, 0x82, 0x83, 0x84, 0x0A, 0x17, 0x1B, 0x88, 0x89, 0x8A, 0x8B, 0x8C, 0x05, 0x06, 0x07, //
    0x90, 0x91, 0x16, 0x93, 0x94, 0x95, 0x96, 0x04, 0x98, 0x99, 0x9A, 0x9B, 0x14, 0x15, 0x9E, 0x1A, //
    0x20, 0xA0, 0xE2, 0xE4, 0xE0, 0xE1, 0xE3, 0xE5, 0xE7, 0xF1, 0xA2, 0x2E, 0x3C, 0x28, 0x2B, 0x7C, //
    0x26, 0xE9, 0xEA, 0xEB, 0xE8, 0xED, 0xEE, 0xEF, 0xEC, 0xDF, 0x21, 0x24, 0x2A, 0x29, 0x3B, 0xAC, //
    0x2D, 0x2F, 0xC2, 0xC4, 0xC0, 0xC1, 0xC3, 0xC5, 0xC7, 0xD1, 0xA6, 0x2C, 0x25, 0x5F, 0x3E, 0x3F, //
    0xF8, 0xC9, 0xCA, 0xCB, 0xC8, 0xCD, 0xCE, 0xCF, 0xCC, 0x60, 0x3A, 0x23, 0x40, 0x27, 0x3D, 0x22, //
    0xD8, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0xAB, 0xBB, 0xF0, 0xFD, 0xFE, 0xB1, //
    0xB0, 0x6A, 0x6B, 0x6C, 0x6D, 0x6E, 0x6F, 0x70, 0x71, 0x72, 0xAA, 0xBA, 0xE6, 0xB8, 0xC6, 0xA4, //
    0xB5, 0x7E, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7A, 0xA1, 0xBF, 0xD0, 0xDD, 0xDE, 0xAE, //
    0x5E, 0xA3, 0xA5, 0xB7, 0xA9, 0xA7, 0xB6, 0xBC, 0xBD, 0xBE, 0x5B, 0x5D, 0xAF, 0xA8, 0xB4, 0xD7, //
    0x7B, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0xAD, 0xF4, 0xF6, 0xF2, 0xF3, 0xF5, //
    0x7D, 0x4A, 0x4B, 0x4C, 0x4D, 0x4E, 0x4F, 0x50, 0x51, 0x52, 0xB9, 0xFB, 0xFC, 0xF9, 0xFA, 0xFF, //
    0x5C, 0xF7, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5A, 0xB2, 0xD4, 0xD6, 0xD2, 0xD3, 0xD5, //
    0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0xB3, 0xDB, 0xDC, 0xD9, 0xDA, 0x9F, //
];

const LATIN1_TO_EBCDIC: [u8; 256] = {
    let mut inverse = [0u8; 256];
    let mut e = 0;
    while e < 256 {
        inverse[EBCDIC_TO_LATIN1[e] as usize] = e as u8;
        e += 1;
    }
    inverse
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ebcdic_table_is_a_bijection_with_the_usual_letters() {
        let mut seen = [false; 256];
        for &b in &EBCDIC_TO_LATIN1 {
            assert!(!seen[b as usize], "byte {b:#04x} appears twice");
            seen[b as usize] = true;
        }
        // EBCDIC: 'C' = 0xC3, '1' = 0xF1, ' ' = 0x40, 'a' = 0x81, '(' = 0x4D.
        assert_eq!(decode(&[0xC3, 0xF1, 0x40, 0x81, 0x4D], TextEncoding::Ebcdic), "C1 a(");
        let lines = vec!["C 1 HELLO".to_string()];
        let bytes = encode_ebcdic(&lines);
        assert_eq!(&bytes[..4], &[0xC3, 0x40, 0xF1, 0x40]);
        assert_eq!(bytes[3199], 0x40);
    }

    #[test]
    fn encoding_follows_the_first_byte_and_stanzas() {
        let mut main = [b' '; TEXT_RECORD_LEN];
        main[..3].copy_from_slice(b"C 1");
        let mut end = [0x40u8; TEXT_RECORD_LEN]; // EBCDIC blanks
        let ebcdic_end: Vec<u8> = "((SEG: EndText))".bytes().map(|c| LATIN1_TO_EBCDIC[c as usize]).collect();
        end[..ebcdic_end.len()].copy_from_slice(&ebcdic_end);
        let mut ascii_stanza = [b' '; TEXT_RECORD_LEN];
        ascii_stanza[..24].copy_from_slice(b"((SEG:Layout:text/xml))\n");
        let mut continuation = [b' '; TEXT_RECORD_LEN];
        continuation[..5].copy_from_slice(b"<a/>\n");
        let t = TextHeader::decode(&main, &[&ascii_stanza, &continuation, &end]);
        assert_eq!(t.encoding, TextEncoding::Ascii);
        assert!(t.text.starts_with("C 1\n\n"));
        assert_eq!(t.text.split('\n').count(), 40);
        assert_eq!(t.extended[1], "<a/>", "a continuation keeps the encoding of the stanza it continues");
        assert!(is_end_text(&t.extended[2]));
        assert!(!is_end_text(&t.extended[0]));
    }

    /// A main header of `cards` (40 at most), each padded to 80 columns, in `encoding`.
    fn header(cards: &[&str], encoding: TextEncoding) -> [u8; TEXT_RECORD_LEN] {
        let mut main = [encode_char(' ', encoding); TEXT_RECORD_LEN];
        for (card, slot) in cards.iter().zip(main.chunks_mut(LINE_LEN)) {
            for (c, b) in card.chars().zip(slot) {
                *b = encode_char(c, encoding);
            }
        }
        main
    }

    fn card(main: &[u8; TEXT_RECORD_LEN], number: usize, encoding: TextEncoding) -> String {
        decode(&main[(number - 1) * LINE_LEN..][..LINE_LEN], encoding).trim_end().to_string()
    }

    #[test]
    fn a_card_goes_on_the_first_blank_card_in_the_headers_encoding_and_numbering() {
        let crs = "CRS OF CDP X/Y: EPSG:23031";
        let mut cards: Vec<String> = (1..=40).map(|n| format!("C{n:02} LINE {n}")).collect();
        cards[5] = "C".into();
        cards[6] = "C07".into();
        cards[39] = "C40 END TEXTUAL HEADER".into();
        let refs: Vec<&str> = cards.iter().map(String::as_str).collect();
        for encoding in [TextEncoding::Ascii, TextEncoding::Ebcdic] {
            let before = header(&refs, encoding);
            let mut main = before;
            assert_eq!(put_card(&mut main, crs), PutCard { card: 6, replaced: None });
            assert_eq!(card(&main, 6, encoding), "C06 CRS OF CDP X/Y: EPSG:23031");
            assert_eq!(main[..400], before[..400]);
            assert_eq!(main[480..], before[480..]);
            // Again, with another CRS: the same card, said to be replaced; the same CRS: nothing replaced.
            let other = "CRS OF CDP X/Y: EPSG:4326";
            let put = put_card(&mut main, other);
            assert_eq!(put, PutCard { card: 6, replaced: Some("C06 CRS OF CDP X/Y: EPSG:23031".into()) });
            assert_eq!(put_card(&mut main, other), PutCard { card: 6, replaced: None });
        }
    }

    #[test]
    fn a_full_header_loses_the_card_before_its_end_card() {
        let crs = "CRS OF CDP X/Y: EPSG:23031";
        let mut cards: Vec<String> = (1..=40).map(|n| format!("C{n:>2} LINE {n}")).collect();
        cards[29] = "C30 END EBCDIC".into();
        let refs: Vec<&str> = cards.iter().map(String::as_str).collect();
        let mut main = header(&refs, TextEncoding::Ebcdic);
        assert_eq!(put_card(&mut main, crs), PutCard { card: 29, replaced: Some("C29 LINE 29".into()) });
        assert_eq!(card(&main, 29, TextEncoding::Ebcdic), "C29 CRS OF CDP X/Y: EPSG:23031");
        // No end card: the last card; a card without a number gets one in the style of the first card.
        cards[29] = "C30 LINE 30".into();
        cards[39] = "NOTHING HERE".into();
        let refs: Vec<&str> = cards.iter().map(String::as_str).collect();
        let mut main = header(&refs, TextEncoding::Ascii);
        assert_eq!(put_card(&mut main, crs).card, 40);
        assert_eq!(card(&main, 40, TextEncoding::Ascii), "C40 CRS OF CDP X/Y: EPSG:23031");
    }

    #[test]
    fn an_ascii_card_keeps_the_newline_that_ends_it() {
        let mut main = header(&["C 1 SURVEY"], TextEncoding::Ascii);
        for slot in main.chunks_mut(LINE_LEN) {
            slot[LINE_LEN - 1] = b'\n';
        }
        let before = main;
        assert_eq!(put_card(&mut main, "CRS OF CDP X/Y: EPSG:23031").card, 2);
        assert_eq!(&main[80..160], format!("{:<79}\n", "C 2 CRS OF CDP X/Y: EPSG:23031").as_bytes());
        assert_eq!(main[..80], before[..80]);
        assert_eq!(main[160..], before[160..]);
    }

    #[test]
    fn layout_stanza_names_line_bytes() {
        let stanza = "((SEG:Layout:text/xml))\n<segy-layout><entry name=\"iline\" byte=\"190\" type=\"int4\"/>\n\
                      <entry name=\"xline\" byte=\"194\" type=\"int4\"/><extension name=\"X\">\
                      <entry name=\"iline\" byte=\"5\" type=\"int4\"/></extension></segy-layout>";
        let t = TextHeader { encoding: TextEncoding::Ascii, text: String::new(), extended: vec![stanza.into()] };
        assert_eq!(t.declared_line_bytes(), Some((190, 194)));
        let t = TextHeader { extended: vec!["((SEG:Layout))<entry name=\"iline\" byte=\"1\"/>".into()], ..t };
        assert_eq!(t.declared_line_bytes(), None, "both lines must be declared");
    }
}
