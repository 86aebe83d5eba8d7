//! Byte offsets (what the front end's spans hold) to LSP positions and back. LSP counts
//! columns in UTF-16 code units, so a line with `é` or `ω` differs from its byte count.

use lsp_types::{Position, Range};

/// Start offsets of every line of one text. Lines end at LF, CRLF or a lone CR, as
/// the LSP specification says (and as the front end reads a file).
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let b = text.as_bytes();
        let mut starts = vec![0];
        starts.extend(
            b.iter()
                .enumerate()
                .filter(|&(i, &c)| c == b'\n' || (c == b'\r' && b.get(i + 1) != Some(&b'\n')))
                .map(|(i, _)| i + 1),
        );
        LineIndex { starts }
    }

    /// The position of byte `offset`; offsets past the end or inside a character are
    /// moved back to the nearest character boundary rather than failing.
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let col = text[self.starts[line]..offset].encode_utf16().count();
        Position::new(line as u32, col as u32)
    }

    pub fn range(&self, text: &str, start: usize, end: usize) -> Range {
        Range::new(self.position(text, start), self.position(text, end))
    }

    /// The byte offset of a position; a column past the end of its line means the end
    /// of the line, a line past the end means the end of the text (clients may send both).
    pub fn offset(&self, text: &str, pos: Position) -> usize {
        let Some(&start) = self.starts.get(pos.line as usize) else {
            return text.len();
        };
        let mut units = 0u32;
        for (i, c) in text[start..].char_indices() {
            if c == '\n' || c == '\r' || units >= pos.character {
                return start + i;
            }
            units += c.len_utf16() as u32;
        }
        text.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_round_trip() {
        // `ω` is 2 bytes and 1 UTF-16 unit; `𝜔` is 4 bytes and 2 units.
        let text = "ab\nω = 1; // 𝜔x\n";
        let idx = LineIndex::new(text);
        let x = text.find('x').unwrap();
        assert_eq!(idx.position(text, x), Position::new(1, 12));
        assert_eq!(idx.offset(text, Position::new(1, 12)), x);
        let eq = text.find('=').unwrap();
        assert_eq!(idx.position(text, eq), Position::new(1, 2));
        assert_eq!(idx.offset(text, Position::new(1, 2)), eq);
        // Past the end of a line or of the text: clamped, never a panic.
        assert_eq!(idx.offset(text, Position::new(0, 99)), 2);
        assert_eq!(idx.offset(text, Position::new(9, 0)), text.len());
        assert_eq!(idx.position(text, 999), Position::new(2, 0));
        // Inside a multi-byte character: the character's start.
        assert_eq!(idx.position(text, 4), Position::new(1, 0));
    }

    #[test]
    fn cr_lf_and_crlf_end_lines_alike() {
        for text in ["a\nbc\nd", "a\r\nbc\r\nd", "a\rbc\rd"] {
            let idx = LineIndex::new(text);
            let d = text.find('d').unwrap();
            assert_eq!(idx.position(text, d), Position::new(2, 0), "{text:?}");
            assert_eq!(idx.offset(text, Position::new(2, 0)), d);
            // The end of line 1 is before its line break, whichever it is.
            assert_eq!(
                idx.offset(text, Position::new(1, 9)),
                text.find('c').unwrap() + 1
            );
        }
    }
}
