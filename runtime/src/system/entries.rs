//! The iteration matrix's entries of all instances for one matrix role (`Iter` or
//! `IterNoqv`): where each entry's value goes in the matrix values, instance after
//! instance in pass order, each instance owning a range (`Inst::iter_at`, `noqv_at`).
//!
//! One array per role, which a pass reads front to back: as vectors of each instance,
//! interleaved in memory with its other vectors (or the two roles' positions interleaved
//! in one array), the stream the scatter reads broke at every instance, and at 1,000
//! bodies, where it no longer stays in a core's cache, the scatter cost 2.5–5× as much
//! per entry as with one stream (docs/performance.md, session 26).

use std::ops::Range;

#[derive(Debug, Default)]
pub(super) struct MatrixEntries {
    /// The value index of every entry; an entry in a removed constraint row points at
    /// the spare slot after the matrix values.
    pos: Vec<usize>,
    /// The global row of every entry, and its value index whatever was removed.
    row: Vec<usize>,
    all: Vec<usize>,
}

impl MatrixEntries {
    /// Appends an instance's entries: their global rows and value indices, in its role's
    /// output order. Returns the instance's range.
    pub(super) fn push(
        &mut self,
        rows: impl Iterator<Item = usize>,
        positions: &[usize],
    ) -> Range<usize> {
        let start = self.pos.len();
        self.row.extend(rows);
        self.all.extend_from_slice(positions);
        self.pos.extend_from_slice(positions);
        start..self.pos.len()
    }

    /// The value indices of an instance's entries.
    pub(super) fn of(&self, range: Range<usize>) -> &[usize] {
        &self.pos[range]
    }

    /// Points the entries of the removed constraint rows (`removed[row - nv]`) at
    /// `spare`, and the others at their places.
    pub(super) fn remove_rows(&mut self, nv: usize, removed: &[bool], spare: usize) {
        let rows = self.row.iter().zip(&self.all);
        for (p, (&r, &kept)) in self.pos.iter_mut().zip(rows) {
            let gone = r >= nv && removed[r - nv];
            *p = if gone { spare } else { kept };
        }
    }
}
