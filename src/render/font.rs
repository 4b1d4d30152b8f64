//! A small bitmap font for axis labels, drawn for this project: printable ASCII in cells of 5 × 9 pixels.
//!
//! The glyphs are kept as a picture (`#` ink, `.` paper) so they can be read and edited as they look. Capitals
//! and digits use rows 0-6; the baseline lies under row 6 and descenders (g, j, p, q, y, comma) use rows 7-8.
//! The picture is turned into bit masks at compile time, so a malformed picture is a build error.

/// Width of a glyph in pixels, before scaling.
pub(crate) const GLYPH_WIDTH: usize = 5;
/// Height of a glyph cell in pixels, descenders included, before scaling.
pub(crate) const GLYPH_HEIGHT: usize = 9;
/// Height of capitals and digits: the part of the cell to centre on a tick mark.
pub(crate) const CAP_HEIGHT: usize = 7;
/// Horizontal distance from one glyph to the next: the glyph and one blank column.
pub(crate) const ADVANCE: usize = GLYPH_WIDTH + 1;

/// One row mask per pixel row, top first; bit `GLYPH_WIDTH - 1` is the leftmost column.
pub(crate) type Glyph = [u8; GLYPH_HEIGHT];

const FIRST: u8 = b'!';
const LAST: u8 = b'~';
const COUNT: usize = (LAST - FIRST + 1) as usize;

/// Every printable ASCII character except the space, in blocks: a line naming the characters (one every
/// `ADVANCE` columns), then their `GLYPH_HEIGHT` rows side by side, one blank column apart.
const SHEET: &str = r#"
!     "     #     $     %     &     '     (     )     *     +     ,     -     .     /     0
..#.. .#.#. .#.#. ..#.. ##... .##.. ..#.. ...#. .#... ..... ..... ..... ..... ..... ....# .###.
..#.. .#.#. .#.#. .#### ##..# #..#. ..#.. ..#.. ..#.. ..#.. ..#.. ..... ..... ..... ....# #...#
..#.. ..... ##### #.#.. ...#. #.#.. ..... .#... ...#. #.#.# ..#.. ..... ..... ..... ...#. #..##
..#.. ..... .#.#. .###. ..#.. .#... ..... .#... ...#. .###. ##### ..... ##### ..... ..#.. #.#.#
..#.. ..... ##### ..#.# .#... #.#.# ..... .#... ...#. #.#.# ..#.. ..... ..... ..... .#... ##..#
..... ..... .#.#. ####. #..## #..#. ..... ..#.. ..#.. ..#.. ..#.. .##.. ..... .##.. #.... #...#
..#.. ..... .#.#. ..#.. ...## .##.# ..... ...#. .#... ..... ..... .##.. ..... .##.. #.... .###.
..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..#.. ..... ..... ..... .....
..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... .#... ..... ..... ..... .....

1     2     3     4     5     6     7     8     9     :     ;     <     =     >     ?     @
..#.. .###. ##### ...#. ##### ..##. ##### .###. .###. ..... ..... ...#. ..... .#... .###. .###.
.##.. #...# ...#. ..##. #.... .#... ....# #...# #...# .##.. .##.. ..#.. ..... ..#.. #...# #...#
#.#.. ....# ..#.. .#.#. ####. #.... ...#. #...# #...# .##.. .##.. .#... ##### ...#. ....# #.###
..#.. ...#. ...#. #..#. ....# ####. ..#.. .###. .#### ..... ..... #.... ..... ....# ...#. #.#.#
..#.. ..#.. ....# ##### ....# #...# .#... #...# ....# .##.. .##.. .#... ##### ...#. ..#.. #.###
..#.. .#... #...# ...#. #...# #...# .#... #...# ...#. .##.. .##.. ..#.. ..... ..#.. ..... #....
##### ##### .###. ...#. .###. .###. .#... .###. .##.. ..... ..#.. ...#. ..... .#... ..#.. .####
..... ..... ..... ..... ..... ..... ..... ..... ..... ..... .#... ..... ..... ..... ..... .....
..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... .....

A     B     C     D     E     F     G     H     I     J     K     L     M     N     O     P
.###. ####. .###. ###.. ##### ##### .###. #...# .###. ..### #...# #.... #...# #...# .###. ####.
#...# #...# #...# #..#. #.... #.... #...# #...# ..#.. ...#. #..#. #.... ##.## #...# #...# #...#
#...# #...# #.... #...# #.... #.... #.... #...# ..#.. ...#. #.#.. #.... #.#.# ##..# #...# #...#
##### ####. #.... #...# ####. ####. #.### ##### ..#.. ...#. ##... #.... #.#.# #.#.# #...# ####.
#...# #...# #.... #...# #.... #.... #...# #...# ..#.. ...#. #.#.. #.... #...# #..## #...# #....
#...# #...# #...# #..#. #.... #.... #...# #...# ..#.. #..#. #..#. #.... #...# #...# #...# #....
#...# ####. .###. ###.. ##### #.... .#### #...# .###. .##.. #...# ##### #...# #...# .###. #....
..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... .....
..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... .....

Q     R     S     T     U     V     W     X     Y     Z     [     \     ]     ^     _     `
.###. ####. .#### ##### #...# #...# #...# #...# #...# ##### .###. #.... .###. ..#.. ..... .#...
#...# #...# #.... ..#.. #...# #...# #...# #...# #...# ....# .#... #.... ...#. .#.#. ..... ..#..
#...# #...# #.... ..#.. #...# #...# #...# .#.#. .#.#. ...#. .#... .#... ...#. #...# ..... .....
#...# ####. .###. ..#.. #...# #...# #.#.# ..#.. ..#.. ..#.. .#... ..#.. ...#. ..... ..... .....
#.#.# #.#.. ....# ..#.. #...# #...# #.#.# .#.#. ..#.. .#... .#... ...#. ...#. ..... ..... .....
#..#. #..#. ....# ..#.. #...# .#.#. #.#.# #...# ..#.. #.... .#... ....# ...#. ..... ..... .....
.##.# #...# ####. ..#.. .###. ..#.. .#.#. #...# ..#.. ##### .###. ....# .###. ..... ..... .....
..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ##### .....
..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... .....

a     b     c     d     e     f     g     h     i     j     k     l     m     n     o     p
..... #.... ..... ....# ..... ..##. ..... #.... ..#.. ...#. #.... .##.. ..... ..... ..... .....
..... #.... ..... ....# ..... .#..# ..... #.... ..... ..... #.... ..#.. ..... ..... ..... .....
.###. ####. .###. .#### .###. .#... .#### #.##. .##.. ..##. #..#. ..#.. ##.#. #.##. .###. ####.
....# #...# #.... #...# #...# ###.. #...# ##..# ..#.. ...#. #.#.. ..#.. #.#.# ##..# #...# #...#
.#### #...# #.... #...# ##### .#... #...# #...# ..#.. ...#. ##... ..#.. #.#.# #...# #...# #...#
#...# #...# #...# #...# #.... .#... #...# #...# ..#.. ...#. #.#.. ..#.. #.#.# #...# #...# #...#
.#### ####. .###. .#### .###. .#... .#### #...# .###. ...#. #..#. .###. #.#.# #...# .###. ####.
..... ..... ..... ..... ..... ..... ....# ..... ..... #..#. ..... ..... ..... ..... ..... #....
..... ..... ..... ..... ..... ..... .###. ..... ..... .##.. ..... ..... ..... ..... ..... #....

q     r     s     t     u     v     w     x     y     z     {     |     }     ~
..... ..... ..... .#... ..... ..... ..... ..... ..... ..... ...## ..#.. ##... .....
..... ..... ..... .#... ..... ..... ..... ..... ..... ..... ..#.. ..#.. ..#.. .....
.#### #.##. .#### ###.. #...# #...# #...# #...# #...# ##### ..#.. ..#.. ..#.. .#...
#...# ##..# #.... .#... #...# #...# #...# .#.#. #...# ...#. .#... ..#.. ...#. #.#.#
#...# #.... .###. .#... #...# #...# #.#.# ..#.. #...# ..#.. ..#.. ..#.. ..#.. ...#.
#...# #.... ....# .#..# #..## .#.#. #.#.# .#.#. #...# .#... ..#.. ..#.. ..#.. .....
.#### #.... ####. ..##. .##.# ..#.. .#.#. #...# .#### ##### ...## ..#.. ##... .....
....# ..... ..... ..... ..... ..... ..... ..... ....# ..... ..... ..#.. ..... .....
....# ..... ..... ..... ..... ..... ..... ..... .###. ..... ..... ..#.. ..... .....
"#;

static GLYPHS: [Glyph; COUNT] = parse_sheet(SHEET);

/// The glyph of `c`; the space is blank and characters outside printable ASCII are drawn as `?`.
pub(crate) fn glyph(c: char) -> Glyph {
    match c {
        ' ' => [0; GLYPH_HEIGHT],
        '!'..='~' => GLYPHS[c as usize - FIRST as usize],
        _ => GLYPHS[(b'?' - FIRST) as usize],
    }
}

/// Turn [`SHEET`] into masks, rejecting anything that is not exactly the documented layout.
const fn parse_sheet(sheet: &str) -> [Glyph; COUNT] {
    let s = sheet.as_bytes();
    let mut glyphs = [[0u8; GLYPH_HEIGHT]; COUNT];
    let mut defined = [false; COUNT];
    let mut pos = 0;
    while pos < s.len() {
        let header_end = line_end(s, pos);
        if header_end == pos {
            pos += 1; // a blank line between blocks
            continue;
        }
        let header_len = header_end - pos;
        if header_len % ADVANCE != 1 {
            panic!("font sheet: a header line must name one character every ADVANCE columns");
        }
        let n = header_len / ADVANCE + 1;
        let mut k = 0;
        while k < n {
            let c = s[pos + k * ADVANCE];
            if c < FIRST || c > LAST {
                panic!("font sheet: header names a character outside printable ASCII");
            }
            if defined[(c - FIRST) as usize] {
                panic!("font sheet: a character is defined twice");
            }
            defined[(c - FIRST) as usize] = true;
            let mut gap = 1;
            while k + 1 < n && gap < ADVANCE {
                if s[pos + k * ADVANCE + gap] != b' ' {
                    panic!("font sheet: header characters must be ADVANCE columns apart");
                }
                gap += 1;
            }
            k += 1;
        }
        let mut row_start = header_end + 1;
        let mut row = 0;
        while row < GLYPH_HEIGHT {
            let row_end = line_end(s, row_start);
            if row_end - row_start != n * ADVANCE - 1 {
                panic!("font sheet: a glyph row has the wrong length");
            }
            let mut k = 0;
            while k < n {
                let c = s[pos + k * ADVANCE];
                let mut mask = 0u8;
                let mut col = 0;
                while col < GLYPH_WIDTH {
                    mask <<= 1;
                    match s[row_start + k * ADVANCE + col] {
                        b'#' => mask |= 1,
                        b'.' => {}
                        _ => panic!("font sheet: glyph pixels must be '#' or '.'"),
                    }
                    col += 1;
                }
                if k + 1 < n && s[row_start + k * ADVANCE + GLYPH_WIDTH] != b' ' {
                    panic!("font sheet: glyphs must be separated by one blank column");
                }
                glyphs[(c - FIRST) as usize][row] = mask;
                k += 1;
            }
            row_start = row_end + 1;
            row += 1;
        }
        pos = row_start;
    }
    let mut i = 0;
    while i < COUNT {
        if !defined[i] {
            panic!("font sheet: a printable ASCII character has no glyph");
        }
        i += 1;
    }
    glyphs
}

const fn line_end(s: &[u8], mut pos: usize) -> usize {
    while pos < s.len() && s[pos] != b'\n' {
        pos += 1;
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_chars() -> impl Iterator<Item = char> {
        (FIRST..=LAST).map(char::from)
    }

    #[test]
    fn every_glyph_has_ink_and_stays_in_its_cell() {
        for c in all_chars() {
            let g = glyph(c);
            assert!(g.iter().any(|&r| r != 0), "{c:?} is blank");
            assert!(g.iter().all(|&r| r < 1 << GLYPH_WIDTH), "{c:?} has ink outside its {GLYPH_WIDTH} columns");
        }
    }

    #[test]
    fn every_glyph_is_distinct() {
        let chars: Vec<char> = all_chars().collect();
        for (i, &a) in chars.iter().enumerate() {
            for &b in &chars[i + 1..] {
                assert_ne!(glyph(a), glyph(b), "{a:?} and {b:?} look the same");
            }
        }
    }

    #[test]
    fn capitals_and_digits_sit_on_the_baseline_and_only_descenders_go_below() {
        let descenders = ['g', 'j', 'p', 'q', 'y', ',', ';', '_', '|'];
        for c in all_chars() {
            let below = glyph(c)[CAP_HEIGHT..].iter().any(|&r| r != 0);
            assert_eq!(below, descenders.contains(&c), "{c:?}");
        }
        for c in ('0'..='9').chain('A'..='Z') {
            assert_ne!(glyph(c)[CAP_HEIGHT - 1], 0, "{c:?} does not reach the baseline");
        }
    }

    #[test]
    fn the_picture_reads_as_drawn() {
        // The digit one, written out independently of the sheet.
        let one = [0b00100, 0b01100, 0b10100, 0b00100, 0b00100, 0b00100, 0b11111, 0, 0];
        assert_eq!(glyph('1'), one);
        assert_eq!(glyph(' '), [0; GLYPH_HEIGHT]);
        assert_eq!(glyph('é'), glyph('?'));
    }
}
