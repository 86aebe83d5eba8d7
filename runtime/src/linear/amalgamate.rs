//! Relaxed supernodes for the blocked kernel (`blocked.rs`), and the symbolic structure
//! of any partition of the elimination steps into runs.
//!
//! The fundamental supernodes (runs whose L columns nest exactly) of a multibody matrix
//! are often one to three columns wide: every column of a joint whose rows couple
//! different bodies has its own L pattern. The blocked kernel then pays its per-node
//! set-up, a scatter per updated entry and a rank-1 update for each of them. Merging a
//! run with the next one (relaxed amalgamation, as in SuperLU and CHOLMOD) stores the
//! union of their patterns densely: a few explicit zeros, which stay exactly zero and
//! change no result (`x − 0·y = x` in IEEE arithmetic for finite numbers), in exchange
//! for wider blocks and fewer nodes. Which runs merge is chosen greedily by
//! [`node_cost`], a model of the kernel's work per node.
//!
//! A merged node's update reaches entries that the exact L/U patterns do not have, so
//! the structure of every node is recomputed for the chosen partition by
//! [`structure`] (a supernodal symbolic factorization) instead of being taken from the
//! factors of the full factorization.

/// Widest supernode: a panel's diagonal block costs width² numbers.
pub(super) const MAX_WIDTH: usize = 64;

/// Columns of the update computed together in registers; a U block's rows are padded
/// to whole groups of them (explicit zeros).
pub(super) const LANES: usize = 4;

/// The U block's row stride for `nc` columns.
pub(super) fn stride(nc: usize) -> usize {
    nc.div_ceil(LANES) * LANES
}

/// The rows `R` below each run and the columns `C` right of it (both ascending) of the
/// LU without pivoting of a matrix with the entries `entries` (row, column; in
/// elimination numbering), when the runs `start` (first step of each run, then `n`)
/// are eliminated as dense blocks. `of` maps a step to its run.
///
/// Runs are visited in order: the update of run t reaches `R_t × C_t`, and each entry
/// (r, c) there lives in the panel of c's run (if r is not above it) or in the U block
/// of r's run; all updates into a run come from runs before it, so its R and C are
/// complete when it is reached.
pub(super) fn structure(
    start: &[usize],
    of: &[usize],
    entries: &[(usize, usize)],
) -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
    let ns = start.len() - 1;
    let mut rows: Vec<Vec<usize>> = vec![vec![]; ns];
    let mut cols: Vec<Vec<usize>> = vec![vec![]; ns];
    for &(i, j) in entries {
        let (si, sj) = (of[i], of[j]);
        if si > sj {
            rows[sj].push(i);
        } else if si < sj {
            cols[si].push(j);
        }
    }
    for t in 0..ns {
        for list in [&mut rows[t], &mut cols[t]] {
            list.sort_unstable();
            list.dedup();
        }
        let (r_t, c_t) = (std::mem::take(&mut rows[t]), std::mem::take(&mut cols[t]));
        for &r in &r_t {
            let sr = of[r];
            for &c in &c_t {
                let sc = of[c];
                if sr > sc {
                    // c ascending: the same r for one run arrives in a row.
                    if rows[sc].last() != Some(&r) {
                        rows[sc].push(r);
                    }
                } else if sr < sc {
                    cols[sr].push(c);
                }
            }
        }
        rows[t] = r_t;
        cols[t] = c_t;
    }
    (rows, cols)
}

/// Run → its index for the runs `start`.
pub(super) fn runs_of(start: &[usize]) -> Vec<usize> {
    let n = start.last().copied().unwrap_or(0);
    let mut of = vec![0; n];
    for s in 0..start.len() - 1 {
        of[start[s]..start[s + 1]].fill(s);
    }
    of
}

/// Work of one node of the blocked kernel, refactorization and solve, in units of
/// about one vectorized multiply-add: width `w`, panel rows `m` (its own `w` rows
/// included), `nc` U block columns. The weights are rough measurements of the kernel
/// (release build): the update's product runs at about one multiply-add per unit; the
/// panel LU's short axpys and the solve's dot products are slower per operation; each
/// scattered entry is an index load and a dependent store; a node's set-up (slices,
/// the fill of its blocks, loop heads) is a fixed cost.
pub(super) fn node_cost(w: usize, m: usize, nc: usize) -> f64 {
    let s = stride(nc);
    let below = m - w;
    let panel: usize = (0..w).map(|j| (m - j - 1) * (w - j)).sum();
    let u_solve = w * w.saturating_sub(1) / 2 * s;
    let update = below * w * s;
    let scattered = below * nc;
    let numbers = w * (m + s);
    let solve = m * w + w * (w + nc);
    NODE_COST
        + 1.5 * panel as f64
        + u_solve as f64
        + update as f64
        + 2.0 * scattered as f64
        + 0.5 * numbers as f64
        + 1.5 * solve as f64
}

/// The fixed cost of a node in [`node_cost`]'s units.
const NODE_COST: f64 = 80.0;

/// Merges consecutive runs greedily, left to right, while the merged node costs no more
/// than the two apart ([`node_cost`]) and stays within [`MAX_WIDTH`]; `rows` and `cols`
/// are the runs' structure ([`structure`]). The effect of a merge on the later nodes'
/// fill is not modelled (the caller recomputes the structure). Returns the new
/// `start`.
pub(super) fn amalgamate(start: &[usize], rows: &[Vec<usize>], cols: &[Vec<usize>]) -> Vec<usize> {
    let ns = start.len() - 1;
    if ns == 0 {
        return start.to_vec();
    }
    let mut merged = vec![start[0]];
    let (mut cur_rows, mut cur_cols) = (rows[0].clone(), cols[0].clone());
    let mut cur_cost = cost_of(start[1] - start[0], &cur_rows, &cur_cols);
    for b in 1..ns {
        let (b0, b1) = (start[b], start[b + 1]);
        let w = b1 - merged.last().copied().unwrap_or(0);
        let next_cost = cost_of(b1 - b0, &rows[b], &cols[b]);
        // The current node's rows and columns inside run b join the diagonal block.
        let union = |cur: &[usize], next: &[usize]| {
            let mut u: Vec<usize> = cur.iter().copied().filter(|&x| x >= b1).collect();
            u.extend_from_slice(next);
            u.sort_unstable();
            u.dedup();
            u
        };
        let (mr, mc) = (union(&cur_rows, &rows[b]), union(&cur_cols, &cols[b]));
        let both = cost_of(w, &mr, &mc);
        if w <= MAX_WIDTH && both <= cur_cost + next_cost {
            (cur_rows, cur_cols, cur_cost) = (mr, mc, both);
        } else {
            merged.push(b0);
            (cur_rows, cur_cols, cur_cost) = (rows[b].clone(), cols[b].clone(), next_cost);
        }
    }
    merged.push(start[ns]);
    merged
}

fn cost_of(w: usize, rows: &[usize], cols: &[usize]) -> f64 {
    node_cost(w, w + rows.len(), cols.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The LU pattern without pivoting by a dense boolean elimination: the reference.
    fn dense_pattern(n: usize, entries: &[(usize, usize)]) -> Vec<Vec<bool>> {
        let mut a = vec![vec![false; n]; n];
        for &(i, j) in entries {
            a[i][j] = true;
        }
        for k in 0..n {
            let row_k = a[k].clone();
            for row in &mut a[k + 1..] {
                if row[k] {
                    for (x, &u) in row[k + 1..].iter_mut().zip(&row_k[k + 1..]) {
                        *x |= u;
                    }
                }
            }
        }
        a
    }

    fn random_entries(n: usize, per_row: usize, seed: &mut u64) -> Vec<(usize, usize)> {
        let mut next = || {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (*seed >> 33) as usize % n
        };
        let mut e: Vec<(usize, usize)> = (0..n).map(|i| (i, i)).collect();
        for i in 0..n {
            for _ in 0..per_row {
                e.push((i, next()));
            }
        }
        e
    }

    #[test]
    fn the_structure_of_single_steps_is_the_lu_pattern() {
        let mut seed = 1;
        for (n, per_row) in [(1, 0), (12, 1), (40, 2), (70, 3)] {
            let e = random_entries(n, per_row, &mut seed);
            let start: Vec<usize> = (0..=n).collect();
            let (rows, cols) = structure(&start, &runs_of(&start), &e);
            let a = dense_pattern(n, &e);
            for k in 0..n {
                let below: Vec<usize> = (k + 1..n).filter(|&i| a[i][k]).collect();
                let right: Vec<usize> = (k + 1..n).filter(|&j| a[k][j]).collect();
                assert_eq!(rows[k], below, "n = {n}, column {k}");
                assert_eq!(cols[k], right, "n = {n}, row {k}");
            }
        }
    }

    /// For merged runs, every entry the dense elimination of the merged blocks reaches
    /// has a place: the rows below and columns right of each run cover the LU pattern
    /// of the matrix with each run's diagonal block and its rows/columns filled in.
    #[test]
    fn merged_runs_cover_the_fill_of_their_blocks() {
        let mut seed = 5;
        for (n, per_row, widths) in [(30, 1, [3, 1, 4]), (50, 2, [2, 5, 1]), (64, 2, [7, 2, 3])] {
            let e = random_entries(n, per_row, &mut seed);
            let mut start = vec![0];
            let mut k = 0;
            while *start.last().unwrap() < n {
                let next = (start.last().unwrap() + widths[k % 3]).min(n);
                start.push(next);
                k += 1;
            }
            let of = runs_of(&start);
            let (rows, cols) = structure(&start, &of, &e);
            // The blocked elimination as booleans: each run's rows R × columns C.
            let mut a = vec![vec![false; n]; n];
            for &(i, j) in &e {
                a[i][j] = true;
            }
            for s in 0..start.len() - 1 {
                let (k0, k1) = (start[s], start[s + 1]);
                let r: Vec<usize> = (k1..n).filter(|&i| (k0..k1).any(|c| a[i][c])).collect();
                let c: Vec<usize> = (k1..n).filter(|&j| (k0..k1).any(|i| a[i][j])).collect();
                assert_eq!(rows[s], r, "n = {n}, run {s}");
                assert_eq!(cols[s], c, "n = {n}, run {s}");
                for &i in &r {
                    for &j in &c {
                        a[i][j] = true;
                    }
                }
            }
        }
    }

    #[test]
    fn narrow_runs_merge_and_wide_dense_ones_stay_apart() {
        // Eight one-step runs sharing the same rows below: merging saves the per-node
        // cost and adds no zeros.
        let start: Vec<usize> = (0..=8).collect();
        let rows: Vec<Vec<usize>> = (0..8).map(|k| (k + 1..8).chain(8..12).collect()).collect();
        let cols: Vec<Vec<usize>> = (0..8).map(|k| (k + 1..8).collect()).collect();
        assert_eq!(amalgamate(&start, &rows, &cols), vec![0, 8]);
        // Two 20-wide runs with disjoint, long row lists: a merge would double the
        // update's width over both lists.
        let start = vec![0, 20, 40];
        let rows = vec![(40..240).collect(), (240..440).collect()];
        let cols = vec![(20..40).collect(), vec![]];
        assert_eq!(amalgamate(&start, &rows, &cols), start);
    }
}
