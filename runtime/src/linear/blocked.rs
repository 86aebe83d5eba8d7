//! Supernode-by-supernode refactorization of the sparse LU on the kept pivot order.
//!
//! The column kernels (and the supernodal ones of `supernodes.rs`) update one column at
//! a time: a short dot product per row, an index load per entry, a scatter into a work
//! column. On a multibody matrix that bookkeeping costs more than the arithmetic. Here
//! the same elimination runs right-looking by supernodes, each stored densely:
//!
//! - a supernode is a run of elimination steps `k0..k0+w`: the runs whose L columns
//!   nest (the same rows below the run, as in `supernodes.rs`), merged with their
//!   neighbours where wider blocks with some explicit zeros cost less
//!   (`amalgamate.rs`, which also computes the rows and columns below for the merged
//!   runs);
//! - its **panel** holds the columns `k0..k0+w` over the rows of the run and the common
//!   rows `R` below it (row-major, `(w + |R|) × w`): L below the diagonal, U on and above
//!   it within the run's diagonal block;
//! - its **U block** holds the rows of the run over the columns `C` right of it where
//!   any row of the run has a U entry (row-major `w × |C|`; entries outside the U
//!   pattern are explicit zeros, which stay exactly zero);
//! - eliminating it is a dense LU of the panel without pivoting (the kept order, with
//!   the threshold check), a unit-lower triangular solve of the U block, and one dense
//!   product `L(R, run) · U(run, C)` subtracted from the later panels and U blocks
//!   through an index map made once per pivot order.
//!
//! Every entry still receives its updates in the order of the elimination steps; only
//! the products of one supernode are summed before they are subtracted, so results
//! differ from the column kernel's by round-off in the order of the sums. No fast-math
//! is used: the inner loops are plain axpys over contiguous numbers that the compiler
//! vectorizes without reassociating, and the same input gives the same bits.

use super::amalgamate::{amalgamate, runs_of, stride, structure, LANES, MAX_WIDTH};
use super::larger;
use super::rows::{Entry, RowFactors};
use super::supernodes::{dot_descending, forward_panel};

/// The mean supernode width at or below which the solves run row by row
/// (`rows.rs`) instead of panel by panel. Narrow panels make a panel-wise solve pay for
/// every panel row it visits: the 64-rod chain's iteration matrix (191 supernodes for
/// 704 unknowns, mean width 3.7) solves in 8.4 µs by rows against 12.8 µs by panels.
/// Wide ones give its dot products contiguous runs of the solution, which the rows
/// reach through one index per entry: the lu bench's chains with spring-dampers under
/// partial pivoting (mean width 11) solve 1.1× slower by rows, its vehicle-like tree
/// (mean width 13) 1.3× slower.
const ROW_SOLVE_WIDTH: usize = 8;

/// The dense blocks of one L/U pattern and the maps that fill them.
pub(super) struct Blocks {
    /// First elimination step of each supernode, and `n` at the end.
    start: Vec<usize>,
    /// Rows of each panel: the supernode's own steps, then `R` ascending.
    rows_ptr: Vec<usize>,
    rows: Vec<usize>,
    /// Columns `C` of each U block, ascending.
    cols_ptr: Vec<usize>,
    cols: Vec<usize>,
    /// Offset of each supernode's panel in `val`; its U block follows it, and the next
    /// supernode's panel follows that (so every target of an update lies beyond).
    val_ptr: Vec<usize>,
    val: Vec<f64>,
    /// The values of A by the supernode whose blocks hold them: their indices in the
    /// value array and their places in `val`, so that each supernode's blocks are
    /// zeroed and filled just before the first update reaches them (while they are in
    /// cache, instead of one pass over all blocks ahead of the elimination).
    a_ptr: Vec<usize>,
    a_src: Vec<u32>,
    a_dst: Vec<u32>,
    /// The last supernode whose blocks must be filled before supernode s updates.
    reach: Vec<usize>,
    /// For each supernode: the places of its `|R| × |C|` update, row-major, counted from
    /// the end of its own U block.
    upd_ptr: Vec<usize>,
    upd_map: Vec<u32>,
    /// Every supernode's [`Shape`], made once (the solves read them per supernode).
    shapes: Vec<Shape>,
    /// One row of an update, or the gathered solution entries of `C` in the solve.
    tmp: Vec<f64>,
    /// 1 / pivot of every elimination step: the backward solves multiply, as the
    /// panel's LU does (a division's latency would lie on their critical path).
    recip: Vec<f64>,
    /// With narrow supernodes ([`ROW_SOLVE_WIDTH`]): the factors row by row for the
    /// solves (`rows.rs`), copied after each refactorization.
    rows_of_factors: Option<RowFactors>,
    /// The refactorization runs compiled for AVX2 ([`Blocks::refactor`]).
    wide: bool,
}

/// Whether this processor runs [`Blocks::refactor`]'s AVX2 compilation.
pub(super) fn avx2_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// What a supernode's sizes are: first step, width, panel rows, U block columns.
#[derive(Clone, Copy)]
struct Shape {
    k0: usize,
    w: usize,
    m: usize,
    nc: usize,
    /// The U block's row stride: `nc` rounded up to whole [`LANES`] (explicit zeros).
    stride: usize,
}

impl Blocks {
    /// The blocks for the strictly lower L pattern (elimination numbering, column
    /// arrays; its nested columns make the fundamental runs) and A's pattern
    /// `col_ptr`/`row_idx` under the row order `pinv` and column order `q_inv`: the runs
    /// whose L columns nest, merged into wider ones where that costs less when `relax`
    /// is set (`amalgamate.rs`). `None` when an entry of A or of an update has no place
    /// in the blocks or the maps would not fit 32 bits. Allocates: on a new pivot order
    /// only.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        l_ptr: &[usize],
        l_row: &[usize],
        col_ptr: &[usize],
        row_idx: &[usize],
        pinv: &[usize],
        q_inv: &[usize],
        relax: bool,
    ) -> Option<Blocks> {
        let n = l_ptr.len() - 1;
        let lcol = |j: usize| {
            let mut c = l_row[l_ptr[j]..l_ptr[j + 1]].to_vec();
            c.sort_unstable();
            c
        };
        // Column j continues the run of j-1 when L(:, j-1) = {j} ∪ L(:, j).
        let mut start = vec![];
        let mut prev: Vec<usize> = vec![];
        for j in 0..n {
            let col = lcol(j);
            let w = j - start.last().copied().unwrap_or(0);
            let nests = j > 0 && prev.first() == Some(&j) && prev[1..] == col[..];
            if !nests || w == MAX_WIDTH {
                start.push(j);
            }
            prev = col;
        }
        start.push(n);
        let mut entries = Vec::with_capacity(row_idx.len());
        for c in 0..col_ptr.len() - 1 {
            for &r in &row_idx[col_ptr[c]..col_ptr[c + 1]] {
                entries.push((*pinv.get(r)?, *q_inv.get(c)?));
            }
        }
        let mut of = runs_of(&start);
        let (mut r_lists, mut col_lists) = structure(&start, &of, &entries);
        if relax {
            start = amalgamate(&start, &r_lists, &col_lists);
            of = runs_of(&start);
            (r_lists, col_lists) = structure(&start, &of, &entries);
        }
        let ns = start.len() - 1;
        let (mut rows_ptr, mut rows) = (vec![0], vec![]);
        for s in 0..ns {
            rows.extend(start[s]..start[s + 1]);
            rows.extend_from_slice(&r_lists[s]);
            rows_ptr.push(rows.len());
        }
        let (mut cols_ptr, mut cols, mut val_ptr) = (vec![0], vec![], vec![0]);
        for (s, list) in col_lists.iter().enumerate() {
            cols.extend_from_slice(list);
            cols_ptr.push(cols.len());
            let (w, m) = (start[s + 1] - start[s], rows_ptr[s + 1] - rows_ptr[s]);
            val_ptr.push(val_ptr[s] + w * (m + stride(list.len())));
        }
        let mut blocks = Blocks {
            val: vec![0.0; val_ptr[ns]],
            start,
            rows_ptr,
            rows,
            cols_ptr,
            cols,
            val_ptr,
            a_ptr: vec![],
            a_src: vec![],
            a_dst: vec![],
            reach: vec![],
            upd_ptr: vec![0],
            upd_map: vec![],
            tmp: vec![],
            shapes: vec![],
            recip: vec![0.0; n],
            rows_of_factors: None,
            wide: avx2_available(),
        };
        blocks.shapes = (0..ns).map(|s| blocks.shape_of(s)).collect();
        blocks.make_maps(&of, col_ptr, row_idx, pinv, q_inv)?;
        if n <= ROW_SOLVE_WIDTH * ns {
            let (lower, upper) = blocks.factor_entries();
            blocks.rows_of_factors = Some(RowFactors::new(n, lower, upper, pinv, q_inv)?);
        }
        Some(blocks)
    }

    /// Every entry the blocks hold of the strictly lower L and the strictly upper U
    /// (the panels below and above their diagonals, the U blocks without their padding)
    /// with its place in `val`: the blocks' own structure, so that the row layout has
    /// exactly the entries the elimination writes (the few explicit zeros of merged
    /// supernodes included; the L/U patterns of the pivot order can differ from it).
    fn factor_entries(&self) -> (Vec<Entry>, Vec<Entry>) {
        let (mut lower, mut upper) = (vec![], vec![]);
        for s in 0..self.count() {
            let sh = self.shape(s);
            let base = self.val_ptr[s];
            let rows = &self.rows[self.rows_ptr[s]..self.rows_ptr[s + 1]];
            for (i, &r) in rows.iter().enumerate() {
                for c in sh.k0..sh.k0 + sh.w {
                    let place = (base + i * sh.w + c - sh.k0) as u32;
                    if r > c {
                        lower.push((r, c, place));
                    } else if r < c {
                        upper.push((r, c, place));
                    }
                }
            }
            let cols = &self.cols[self.cols_ptr[s]..self.cols_ptr[s + 1]];
            let ublock = base + sh.w * sh.m;
            for i in 0..sh.w {
                for (k, &c) in cols.iter().enumerate() {
                    upper.push((sh.k0 + i, c, (ublock + i * sh.stride + k) as u32));
                }
            }
        }
        (lower, upper)
    }

    /// The places of A's values and of every update in `val`, and how far each
    /// supernode's updates reach; `None` if one has no place or 32 bits do not suffice.
    fn make_maps(
        &mut self,
        of: &[usize],
        col_ptr: &[usize],
        row_idx: &[usize],
        pinv: &[usize],
        q_inv: &[usize],
    ) -> Option<()> {
        u32::try_from(self.val.len().max(row_idx.len())).ok()?;
        let ns = self.count();
        let val_ptr = self.val_ptr.clone();
        let owner = |place: usize| val_ptr.partition_point(|&p| p <= place) - 1;
        let mut a_entries = vec![];
        for c in 0..col_ptr.len() - 1 {
            for k in col_ptr[c]..col_ptr[c + 1] {
                let place = self.place(of, pinv[row_idx[k]], q_inv[c])?;
                a_entries.push((owner(place), place as u32, k as u32));
            }
        }
        // By owner, then by place: each supernode's fill writes ascending addresses.
        a_entries.sort_unstable();
        self.a_ptr = vec![0; ns + 1];
        for &(t, _, _) in &a_entries {
            self.a_ptr[t + 1] += 1;
        }
        for t in 0..ns {
            self.a_ptr[t + 1] += self.a_ptr[t];
        }
        self.a_dst = a_entries.iter().map(|e| e.1).collect();
        self.a_src = a_entries.iter().map(|e| e.2).collect();
        let mut widest_c = 0;
        for s in 0..ns {
            let sh = self.shape(s);
            widest_c = widest_c.max(sh.stride);
            let base = self.val_ptr[s + 1];
            let mut reach = self.reach.last().copied().unwrap_or(0).max(s);
            for r in self.rows_ptr[s] + sh.w..self.rows_ptr[s + 1] {
                for c in self.cols_ptr[s]..self.cols_ptr[s + 1] {
                    let place = self.place(of, self.rows[r], self.cols[c])?;
                    reach = reach.max(owner(place));
                    self.upd_map.push((place - base) as u32);
                }
            }
            self.upd_ptr.push(self.upd_map.len());
            self.reach.push(reach);
        }
        self.tmp = vec![0.0; 2 * widest_c];
        Some(())
    }

    /// Where the entry (r, c) of the factors (elimination numbering) lives in `val`.
    fn place(&self, of: &[usize], r: usize, c: usize) -> Option<usize> {
        let t = of[c];
        let sh = self.shape(t);
        if r >= sh.k0 {
            let rows = &self.rows[self.rows_ptr[t]..self.rows_ptr[t + 1]];
            let i = if r < sh.k0 + sh.w {
                r - sh.k0
            } else {
                sh.w + rows[sh.w..].binary_search(&r).ok()?
            };
            return Some(self.val_ptr[t] + i * sh.w + c - sh.k0);
        }
        let u = of[r];
        let su = self.shape(u);
        let cols = &self.cols[self.cols_ptr[u]..self.cols_ptr[u + 1]];
        let i = cols.binary_search(&c).ok()?;
        Some(self.val_ptr[u] + su.w * su.m + (r - su.k0) * su.stride + i)
    }

    fn shape(&self, s: usize) -> Shape {
        self.shapes[s]
    }

    fn shape_of(&self, s: usize) -> Shape {
        let k0 = self.start[s];
        Shape {
            k0,
            w: self.start[s + 1] - k0,
            m: self.rows_ptr[s + 1] - self.rows_ptr[s],
            nc: self.cols_ptr[s + 1] - self.cols_ptr[s],
            stride: stride(self.cols_ptr[s + 1] - self.cols_ptr[s]),
        }
    }

    /// Width, panel rows and U block columns of every supernode (diagnostics).
    pub(super) fn shapes(&self) -> Vec<(usize, usize, usize)> {
        (0..self.count())
            .map(|s| {
                let sh = self.shape(s);
                (sh.w, sh.m, sh.nc)
            })
            .collect()
    }

    /// Number of supernodes (diagnostics and tests).
    pub(super) fn count(&self) -> usize {
        self.start.len() - 1
    }

    /// Multiply-adds of one refactorization, the explicit zeros of the blocks included.
    pub(super) fn multiply_adds(&self) -> usize {
        (0..self.count())
            .map(|s| {
                let Shape { w, m, stride, .. } = self.shape(s);
                let panel: usize = (0..w).map(|j| (m - j - 1) * (w - j)).sum();
                panel + w * (w - 1) / 2 * stride + (m - w) * w * stride
            })
            .sum()
    }

    /// The elimination with the kept order: writes the pivots to `diag` and returns
    /// false if one is unacceptable (`tau` relative to the largest entry below it in
    /// its column; 0 accepts any nonzero finite pivot).
    ///
    /// On a processor with AVX2 the same code runs compiled for it: the kernels are
    /// lane-wise multiplies and adds without fused multiply-adds or reassociation, so
    /// the wider registers change the speed, not a bit of the result (checked by
    /// `avx2_refactorization_is_bitwise_the_baseline`).
    pub(super) fn refactor(&mut self, values: &[f64], tau: f64, diag: &mut [f64]) -> bool {
        if self.wide {
            // SAFETY: `wide` is only set where `avx2_available` found the processor to
            // support AVX2, the only feature `refactor_avx2` is compiled for (and
            // never on other architectures).
            #[cfg(target_arch = "x86_64")]
            return unsafe { self.refactor_avx2(values, tau, diag) };
        }
        self.eliminate(values, tau, diag)
    }

    /// Runs the refactorization compiled for AVX2 where the processor has it (`on`,
    /// the default) or the baseline x86-64 one (the reference of the tests and the
    /// benchmark).
    pub(super) fn set_wide(&mut self, on: bool) {
        self.wide = on && avx2_available();
    }

    /// [`Blocks::refactor`] compiled for AVX2 (the kernels are inlined into it).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn refactor_avx2(&mut self, values: &[f64], tau: f64, diag: &mut [f64]) -> bool {
        self.eliminate(values, tau, diag)
    }

    /// The body of [`Blocks::refactor`], inlined into each of its compilations.
    #[inline(always)]
    fn eliminate(&mut self, values: &[f64], tau: f64, diag: &mut [f64]) -> bool {
        let mut ok = true;
        let mut filled = 0;
        for s in 0..self.count() {
            while filled <= self.reach[s] {
                self.fill(filled, values);
                filled += 1;
            }
            let sh = self.shape(s);
            let (own, later) = self.val.split_at_mut(self.val_ptr[s + 1]);
            let (panel, ublock) = own[self.val_ptr[s]..].split_at_mut(sh.m * sh.w);
            let pivots = &mut diag[sh.k0..sh.k0 + sh.w];
            ok &= factor_panel(panel, sh.w, tau, pivots);
            for (r, &p) in self.recip[sh.k0..].iter_mut().zip(pivots.iter()) {
                *r = 1.0 / p;
            }
            if sh.nc == 0 {
                continue;
            }
            lower_solve(panel, sh.w, ublock, sh.stride);
            let map = &self.upd_map[self.upd_ptr[s]..self.upd_ptr[s + 1]];
            let l_rows = &panel[sh.w * sh.w..];
            // Two rows of L(R, run) at a time share the loads of U.
            let mut pairs = l_rows.chunks_exact(2 * sh.w);
            let mut maps = map.chunks_exact(2 * sh.nc);
            for (pair, places) in (&mut pairs).zip(&mut maps) {
                let (l0, l1) = pair.split_at(sh.w);
                let (t0, t1) = self.tmp[..2 * sh.stride].split_at_mut(sh.stride);
                product_rows(l0, Some(l1), ublock, sh.stride, t0, t1);
                let (p0, p1) = places.split_at(sh.nc);
                scatter(later, p0, t0);
                scatter(later, p1, t1);
            }
            if !pairs.remainder().is_empty() {
                let (t0, t1) = self.tmp[..2 * sh.stride].split_at_mut(sh.stride);
                product_rows(pairs.remainder(), None, ublock, sh.stride, t0, t1);
                scatter(later, maps.remainder(), t0);
            }
        }
        if let Some(rows) = self.rows_of_factors.as_mut() {
            rows.gather(&self.val);
        }
        ok
    }

    /// Zeroes the blocks of supernode `t` and writes A's values into them.
    #[inline(always)]
    fn fill(&mut self, t: usize, values: &[f64]) {
        self.val[self.val_ptr[t]..self.val_ptr[t + 1]].fill(0.0);
        let (a, b) = (self.a_ptr[t], self.a_ptr[t + 1]);
        for (&dst, &src) in self.a_dst[a..b].iter().zip(&self.a_src[a..b]) {
            self.val[dst as usize] = values[src as usize];
        }
    }

    /// Whether the solves run row by row ([`Blocks::solve_by_rows`]).
    pub(super) fn has_rows(&self) -> bool {
        self.rows_of_factors.is_some()
    }

    /// Overwrites `rhs` (original numbering) with the solution of A x = rhs on the
    /// factors of the last refactorization, row by row (`rows.rs`), and returns true
    /// where the supernodes are narrow ([`ROW_SOLVE_WIDTH`]); returns false and leaves
    /// `rhs` for the panel-wise [`Blocks::solve`] where they are wide.
    pub(super) fn solve_by_rows(&mut self, rhs: &mut [f64]) -> bool {
        let Some(rows) = self.rows_of_factors.as_mut() else {
            return false;
        };
        rows.solve(rhs, &self.recip);
        true
    }

    /// Overwrites `y` (elimination numbering) with the solution of L U y = y, panel by
    /// panel.
    pub(super) fn solve(&mut self, y: &mut [f64]) {
        for s in 0..self.count() {
            let sh = self.shape(s);
            let panel = &self.val[self.val_ptr[s]..self.val_ptr[s] + sh.m * sh.w];
            let rows = &self.rows[self.rows_ptr[s]..self.rows_ptr[s + 1]];
            forward_panel(sh.k0, sh.w, panel, rows, y);
        }
        for s in (0..self.count()).rev() {
            let sh = self.shape(s);
            let (w, nc, stride) = (sh.w, sh.nc, sh.stride);
            let (panel, ublock) = self.val[self.val_ptr[s]..self.val_ptr[s + 1]].split_at(sh.m * w);
            let tmp = &mut self.tmp[..nc];
            for (t, &c) in tmp.iter_mut().zip(&self.cols[self.cols_ptr[s]..]) {
                *t = y[c];
            }
            let recip = &self.recip[sh.k0..sh.k0 + w];
            for i in (0..w).rev() {
                let right = dot_descending(&ublock[i * stride..i * stride + nc], tmp);
                let (head, done) = y[sh.k0..sh.k0 + w].split_at_mut(i + 1);
                let inner = dot_descending(&panel[i * w + i + 1..(i + 1) * w], done);
                head[i] = (head[i] - right - inner) * recip[i];
            }
        }
    }
}

/// Dense LU without pivoting of a row-major `m × w` panel whose first `w` rows are the
/// diagonal block, right-looking; pivots to `diag`. False if a pivot is zero, not
/// finite, or below `tau` times the largest entry under it.
#[inline(always)]
fn factor_panel(panel: &mut [f64], w: usize, tau: f64, diag: &mut [f64]) -> bool {
    let mut ok = true;
    for j in 0..w {
        let (top, below) = panel.split_at_mut((j + 1) * w);
        let pivot = top[j * w + j];
        diag[j] = pivot;
        let inv = 1.0 / pivot;
        let urow = &top[j * w + j + 1..(j + 1) * w];
        // The largest entry below the pivot is taken in the elimination's own pass over
        // the rows (it only decides `ok`), not in one of its own.
        let mut col_max = 0.0f64;
        for row in below.chunks_exact_mut(w) {
            col_max = larger(col_max, row[j].abs());
            let l = row[j] * inv;
            row[j] = l;
            for (x, &u) in row[j + 1..].iter_mut().zip(urow) {
                *x -= l * u;
            }
        }
        if !pivot.is_finite() || pivot == 0.0 || pivot.abs() < tau * col_max {
            ok = false;
        }
    }
    ok
}

/// Solves L U_block = U_block in place for the unit lower triangle L of the panel's
/// diagonal block (`w × nc` U block, row-major).
#[inline(always)]
fn lower_solve(panel: &[f64], w: usize, ublock: &mut [f64], nc: usize) {
    if nc == 0 {
        return;
    }
    for i in 1..w {
        let (done, rest) = ublock.split_at_mut(i * nc);
        let row = &mut rest[..nc];
        for (&l, prev) in panel[i * w..i * w + i].iter().zip(done.chunks_exact(nc)) {
            for (x, &u) in row.iter_mut().zip(prev) {
                *x -= l * u;
            }
        }
    }
}

/// `t0 = l0 · U` and `t1 = l1 · U` (when given) for a row-major `w × stride` U: each
/// entry summed over the steps in order, LANES columns at a time in registers.
#[inline(always)]
fn product_rows(
    l0: &[f64],
    l1: Option<&[f64]>,
    ublock: &[f64],
    stride: usize,
    t0: &mut [f64],
    t1: &mut [f64],
) {
    let l1 = l1.unwrap_or(l0);
    for c in (0..stride).step_by(LANES) {
        let (mut a0, mut a1) = ([0.0f64; LANES], [0.0f64; LANES]);
        for ((&x0, &x1), urow) in l0.iter().zip(l1).zip(ublock.chunks_exact(stride)) {
            let u: &[f64; LANES] = urow[c..c + LANES].try_into().expect("whole lanes");
            for i in 0..LANES {
                a0[i] += x0 * u[i];
                a1[i] += x1 * u[i];
            }
        }
        t0[c..c + LANES].copy_from_slice(&a0);
        t1[c..c + LANES].copy_from_slice(&a1);
    }
}

/// Subtracts the first `places.len()` entries of `t` at their places.
#[inline(always)]
fn scatter(later: &mut [f64], places: &[u32], t: &[f64]) {
    for (&place, &t) in places.iter().zip(t) {
        later[place as usize] -= t;
    }
}
