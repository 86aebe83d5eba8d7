//! Linear solvers for the assembled matrices, behind one trait.
//!
//! The matrix arrives in compressed sparse column form with a pattern that is fixed
//! for the solver's life (see [`crate::assembly::Pattern`]). Both solvers allocate
//! everything in `new`; `factorize` and `solve` allocate nothing on success.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::perm::PermRef;
use faer::sparse::linalg::lu::simplicial::{self, SimplicialLu};
use faer::sparse::linalg::lu::{factorize_symbolic_lu, LuSymbolicParams, SymbolicLu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};

use crate::assembly::Pattern;

mod amalgamate;
mod blocked;
mod dense;
mod diagonal;
mod rows;
mod scan;
mod supernodes;
use blocked::Blocks;
pub use dense::DenseLu;
use scan::larger;
pub use scan::{all_finite, scan, Scan};
use supernodes::Supernodes;

/// The kernels of the sparse LU's refactorization and solve on the kept pivot order.
/// All do the same elimination; they differ in how the updates are grouped, so their
/// results differ by round-off only. The tests and the factorization benchmark keep
/// the slower ones as references.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LuKernel {
    /// Column by column, left-looking (the reference).
    Column,
    /// Column by column, the updates of a column grouped by supernode.
    Supernodal,
    /// Supernode by supernode in dense blocks (`linear/blocked.rs`).
    #[default]
    Blocked,
}

/// Which solver a [`crate::System`] uses for the iteration and initial-condition matrices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LinearSolverKind {
    /// Sparse LU (faer, simplicial left-looking with partial pivoting and a COLAMD
    /// column order computed once).
    #[default]
    Sparse,
    /// Dense LU with partial pivoting (faer); for small systems.
    Dense,
}

/// The factorization failed: the matrix is singular (or not finite) in the column
/// `index` of the unknowns (global numbering, so the caller can name the element).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Singular {
    pub index: usize,
}

/// A factorization of matrices of one fixed pattern.
pub trait LinearSolver: Send {
    /// Factorizes the matrix with the pattern given at construction and these values.
    fn factorize(&mut self, values: &[f64]) -> Result<(), Singular>;
    /// [`LinearSolver::factorize`] of values the caller has [`scan`]ned (to check
    /// them finite): a solver that needs their largest magnitude takes it from there
    /// instead of a pass of its own.
    fn factorize_scanned(&mut self, values: &[f64], scan: Scan) -> Result<(), Singular> {
        let _ = scan;
        self.factorize(values)
    }
    /// Overwrites `rhs` with the solution of `A x = rhs` for the last factorization.
    fn solve(&mut self, rhs: &mut [f64]);
    /// Number of full factorizations (new pivot order) so far.
    fn full_factorizations(&self) -> usize;
    /// Keep the pivot order of the last full factorization unless a pivot is zero
    /// (real time: every factorization does the same work). Default: no-op.
    fn set_keep_pivots(&mut self, _keep: bool) {}
    /// Try an order with the pivots on the diagonal first at every new order
    /// (`linear/diagonal.rs`; the iteration matrix of a multibody system). Default:
    /// no-op (partial pivoting only).
    fn allow_diagonal_order(&mut self) {}
    /// Drops a kept order with diagonal pivots for partial pivoting, for the rest of
    /// the run; true if there was one (Newton failed on it: the caller tries again).
    fn abandon_diagonal_order(&mut self) -> bool {
        false
    }
    /// Nonzeros of the factors (L + U), for diagnostics.
    fn factor_nnz(&self) -> usize {
        0
    }
    /// What later factorizations depend on (the kept pivot order), for a snapshot of
    /// the integrator. Default: only the count of full factorizations.
    fn memory(&self) -> SolverMemory {
        SolverMemory {
            full: self.full_factorizations(),
            ..SolverMemory::default()
        }
    }
    /// Whether `memory` can be restored into this solver without breaking its
    /// invariants (it may come from bytes); the message says what does not fit.
    fn check_memory(&self, _memory: &SolverMemory) -> Result<(), String> {
        Ok(())
    }
    /// Restores a [`LinearSolver::memory`] that passed [`LinearSolver::check_memory`];
    /// the next `factorize` continues as the solver that made it would have.
    fn restore_memory(&mut self, _memory: &SolverMemory);
}

/// The part of a solver's state that outlives a factorization: the row order and the
/// L/U patterns the sparse LU keeps (a refactorization in another order has another
/// round-off), and the count of full factorizations. The numbers of the factors are
/// not part of it: every step factorizes before it solves.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SolverMemory {
    pub pinv: Vec<usize>,
    pub l_ptr: Vec<usize>,
    pub l_row: Vec<usize>,
    pub u_ptr: Vec<usize>,
    pub u_row: Vec<usize>,
    pub have_factors: bool,
    pub full: usize,
    /// The order is a diagonal one (its column order is then the row order); a
    /// diagonal order failed before (partial pivoting from then on).
    pub diagonal: bool,
    pub diagonal_failed: bool,
}

/// Creates the solver of the given kind for a pattern.
pub fn make_solver(kind: LinearSolverKind, pattern: &Pattern) -> Box<dyn LinearSolver> {
    match kind {
        LinearSolverKind::Sparse => match SparseLu::new(pattern) {
            Some(s) => Box::new(s),
            // The symbolic analysis only fails for degenerate patterns; the dense
            // solver then reports the singular column by itself.
            None => Box::new(DenseLu::new(pattern)),
        },
        LinearSolverKind::Dense => Box::new(DenseLu::new(pattern)),
    }
}

/// Relative pivot size below which a matrix counts as singular.
const PIVOT_TOL: f64 = 1e-13;

/// Finds the column where the matrix loses rank, by a dense LU with partial pivoting:
/// the first column whose pivot vanishes depends on the columns before it (error path
/// only: it allocates).
fn diagnose_singular(pattern: &Pattern, values: &[f64]) -> Singular {
    let mut lu = DenseLu::new(pattern);
    match lu.factorize(values) {
        Err(s) => s,
        // The sparse factorization failed where the dense one does not: name the
        // smallest pivot.
        Ok(()) => Singular {
            index: lu.smallest_pivot(),
        },
    }
}

/// Threshold of the kept pivot order: a refactorization is accepted while every pivot
/// is at least this fraction of the largest entry below it in its column.
const REFACTOR_TAU: f64 = 1e-3;

/// The same for an order with the pivots on the diagonal (`linear/diagonal.rs`). Its
/// pivots are a body's inertia (the revolute chain's rods have 10⁻⁴ about their axis
/// against constraint entries of 1 below it) and the definite blocks a constraint's
/// diagonal receives from the bodies eliminated before it, so smallness relative to
/// the column is the mechanism's, not a bad pivot's. The order is built so that the
/// first matrix's pivots pass it; a later matrix that fails it goes to partial
/// pivoting.
const DIAGONAL_TAU: f64 = 1e-8;

/// Sparse LU in two parts.
///
/// - Full factorization (a new order): first an order with the pivots on the diagonal
///   (`linear/diagonal.rs`: symmetric patterns, about half the work of the kernels on a
///   multibody matrix), accepted if its pivots pass [`DIAGONAL_TAU`] and the blocked
///   kernel's refactorization takes no more multiply-adds in it than in partial
///   pivoting's order (both counted on the first matrix); otherwise, and
///   for the rest of the run once such an order failed, faer's simplicial
///   left-looking LU with partial pivoting, in the COLAMD column order computed once
///   from the pattern. Its L and U patterns are copied into the arrays below.
/// - Refactorization (kept pivots, the common case): the same left-looking
///   elimination with the row and column orders and the L/U patterns of the last full
///   factorization, numbers only. It allocates nothing and executes the same
///   instructions every time. It falls back to a full factorization when a pivot
///   drops below [`REFACTOR_TAU`] of its column (pivot growth), or, with
///   [`LinearSolver::set_keep_pivots`], only when a pivot is zero or not finite.
pub struct SparseLu {
    pattern: Pattern,
    faer_lu: SimplicialLu<usize, f64>,
    row_perm: Vec<usize>,
    /// Original row → elimination step.
    pinv: Vec<usize>,
    /// Elimination step → original column.
    q: Vec<usize>,
    q_inv: Vec<usize>,
    mem: MemBuffer,
    /// Strictly lower part of L (unit diagonal implied), column by column.
    l_ptr: Vec<usize>,
    l_row: Vec<usize>,
    l_val: Vec<f64>,
    /// Strictly upper part of U, rows ascending within a column; the pivots apart.
    u_ptr: Vec<usize>,
    u_row: Vec<usize>,
    u_val: Vec<f64>,
    diag: Vec<f64>,
    x: Vec<f64>,
    /// The supernodes of the kept L/U patterns with their dense panels (the values of
    /// L live there instead of `l_val` when `supernodal` is on); `None` when the
    /// patterns have none the kernels can use.
    blocks: Option<Supernodes>,
    /// The dense blocks of the kept patterns for [`LuKernel::Blocked`] (which holds
    /// the values of L and U there); `None` when the patterns do not fit them.
    dense: Option<Blocks>,
    kernel: LuKernel,
    /// Whether the blocked kernel merges its supernodes into wider ones
    /// (`linear/amalgamate.rs`; default on).
    relax: bool,
    /// Whether the blocked kernel runs its AVX2 compilation where the processor has
    /// AVX2 ([`SparseLu::set_wide_registers`]; default on).
    wide: bool,
    /// The kernel that made the current factors (the solve reads its arrays).
    factored: LuKernel,
    have_factors: bool,
    keep: bool,
    full: usize,
    /// The COLAMD column order of partial pivoting (`q` holds the diagonal order's
    /// while that is kept).
    colamd: (Vec<usize>, Vec<usize>),
    /// The kept order is a diagonal one.
    diagonal: bool,
    /// A diagonal order failed its pivot check or cost the blocked kernel more
    /// multiply-adds than partial pivoting's order: partial pivoting from then on.
    diagonal_failed: bool,
    /// Diagonal orders are tried at all ([`LinearSolver::allow_diagonal_order`]).
    diagonal_allowed: bool,
}

impl SparseLu {
    pub fn new(pattern: &Pattern) -> Option<SparseLu> {
        let n = pattern.n;
        let sym =
            SymbolicSparseColMatRef::new_checked(n, n, &pattern.col_ptr, None, &pattern.row_idx);
        let symbolic: SymbolicLu<usize> =
            factorize_symbolic_lu(sym, LuSymbolicParams::default()).ok()?;
        let (fwd, inv) = symbolic.col_perm().arrays();
        let req = simplicial::factorize_simplicial_numeric_lu_scratch::<usize, f64>(n, n);
        Some(SparseLu {
            pattern: pattern.clone(),
            faer_lu: SimplicialLu::new(),
            row_perm: vec![0; n],
            pinv: vec![0; n],
            q: fwd.to_vec(),
            q_inv: inv.to_vec(),
            mem: MemBuffer::new(req),
            l_ptr: vec![0; n + 1],
            l_row: Vec::new(),
            l_val: Vec::new(),
            u_ptr: vec![0; n + 1],
            u_row: Vec::new(),
            u_val: Vec::new(),
            diag: vec![0.0; n],
            x: vec![0.0; n],
            blocks: None,
            dense: None,
            kernel: LuKernel::default(),
            relax: true,
            wide: true,
            factored: LuKernel::Column,
            have_factors: false,
            keep: false,
            full: 0,
            colamd: (fwd.to_vec(), inv.to_vec()),
            diagonal: false,
            diagonal_failed: false,
            diagonal_allowed: false,
        })
    }

    /// New pivots by faer; copies the L and U patterns. False if faer fails.
    fn full_factorization(&mut self, values: &[f64]) -> bool {
        let n = self.pattern.n;
        self.full += 1;
        self.have_factors = false;
        self.diagonal = false;
        self.q.clone_from(&self.colamd.0);
        self.q_inv.clone_from(&self.colamd.1);
        let sym = SymbolicSparseColMatRef::new_checked(
            n,
            n,
            &self.pattern.col_ptr,
            None,
            &self.pattern.row_idx,
        );
        let a = SparseColMatRef::new(sym, values);
        let col_perm = PermRef::new_checked(&self.q, &self.q_inv, n);
        let (rp, rpi, lu, mem) = (
            &mut self.row_perm,
            &mut self.pinv,
            &mut self.faer_lu,
            &mut self.mem,
        );
        // faer panics on an exactly zero pivot column instead of returning an error;
        // a singular matrix must end the run with a message, so the panic is caught.
        let result = catch_quietly(|| {
            simplicial::factorize_simplicial_numeric_lu(
                rp,
                rpi,
                lu,
                a,
                col_perm,
                MemStack::new(mem),
            )
        });
        if !matches!(result, Ok(Ok(()))) {
            return false;
        }
        // faer numbers the rows of L and U by elimination step; the first entry of an
        // L column is its unit diagonal, the last entry of a U column its pivot.
        let l = self.faer_lu.l_factor_unsorted();
        let u = self.faer_lu.u_factor_unsorted();
        self.l_row.clear();
        self.u_row.clear();
        for j in 0..n {
            self.l_row
                .extend(l.row_idx_of_col_raw(j).iter().copied().filter(|&r| r > j));
            self.l_ptr[j + 1] = self.l_row.len();
            let start = self.u_row.len();
            self.u_row
                .extend(u.row_idx_of_col_raw(j).iter().copied().filter(|&r| r < j));
            self.u_row[start..].sort_unstable();
            self.u_ptr[j + 1] = self.u_row.len();
        }
        self.l_val.clear();
        self.l_val.resize(self.l_row.len(), 0.0);
        self.u_val.clear();
        self.u_val.resize(self.u_row.len(), 0.0);
        self.find_supernodes();
        self.have_factors = true;
        true
    }

    /// The structures of both grouped kernels, so that [`SparseLu::set_kernel`] may
    /// switch at any time (on a new pivot order only: it allocates).
    fn find_supernodes(&mut self) {
        let n = self.pattern.n;
        self.blocks = Supernodes::new(n, &self.l_ptr, &self.l_row, &self.u_ptr, &self.u_row);
        self.dense = Blocks::new(
            &self.l_ptr,
            &self.l_row,
            &self.pattern.col_ptr,
            &self.pattern.row_idx,
            &self.pinv,
            &self.q_inv,
            self.relax,
        );
        if let Some(blocks) = self.dense.as_mut() {
            blocks.set_wide(self.wide);
        }
    }

    /// Chooses the kernels of the refactorization and solve (default
    /// [`LuKernel::Blocked`]). Takes effect at the next `factorize`.
    pub fn set_kernel(&mut self, kernel: LuKernel) {
        self.kernel = kernel;
    }

    /// Whether the blocked kernel merges supernodes into wider ones with explicit zeros
    /// (default true; false keeps the runs whose L columns nest exactly, the reference
    /// of the tests and the benchmark). Rebuilds the blocks of a kept order (allocates).
    pub fn set_relaxed(&mut self, relax: bool) {
        self.relax = relax;
        if self.have_factors {
            self.find_supernodes();
        }
    }

    /// Whether the blocked refactorization runs compiled for AVX2 where the processor
    /// has it (default true; the results are the same bits either way, false is the
    /// reference of the tests and the benchmark). Takes effect at the next `factorize`.
    pub fn set_wide_registers(&mut self, on: bool) {
        self.wide = on;
        if let Some(blocks) = self.dense.as_mut() {
            blocks.set_wide(on);
        }
    }

    /// Whether the blocked refactorization runs its AVX2 compilation.
    pub fn wide_registers(&self) -> bool {
        self.wide && blocked::avx2_available()
    }

    /// The kernel that runs: the chosen one, or the next simpler one where the kept
    /// patterns have no structure for it.
    pub fn active(&self) -> LuKernel {
        self.active_for(self.kernel)
    }

    fn active_for(&self, kernel: LuKernel) -> LuKernel {
        match kernel {
            LuKernel::Blocked if self.dense.is_some() => LuKernel::Blocked,
            LuKernel::Blocked | LuKernel::Supernodal if self.blocks.is_some() => {
                LuKernel::Supernodal
            }
            _ => LuKernel::Column,
        }
    }

    /// Number of supernodes of the kept pivot order in the active kernel (0 before the
    /// first factorization or when the kernels run column by column).
    pub fn supernodes(&self) -> usize {
        match self.active() {
            LuKernel::Blocked => self.dense.as_ref().map_or(0, Blocks::count),
            LuKernel::Supernodal => self.blocks.as_ref().map_or(0, Supernodes::count),
            LuKernel::Column => 0,
        }
    }

    /// Multiply-adds of one refactorization by the blocked kernel (its explicit zeros
    /// included), if the kept patterns have its blocks.
    pub fn blocked_multiply_adds(&self) -> Option<usize> {
        self.dense.as_ref().map(Blocks::multiply_adds)
    }

    /// Width, panel rows and U block columns of each supernode of the blocked kernel
    /// (empty when the kept patterns do not fit its blocks); for diagnostics: the
    /// kernel's work is `w·(m−w)·nc` multiply-adds and `(m−w)·nc` scattered entries
    /// per supernode for the update, besides the panel's LU.
    pub fn blocked_shapes(&self) -> Vec<(usize, usize, usize)> {
        self.dense.as_ref().map_or(vec![], Blocks::shapes)
    }

    /// Whether the solves run row by row (`linear/rows.rs`: the blocked kernel on
    /// narrow supernodes) rather than panel by panel (diagnostics and tests).
    pub fn solves_by_rows(&self) -> bool {
        self.factored == LuKernel::Blocked && self.dense.as_ref().is_some_and(Blocks::has_rows)
    }

    fn refactor_chosen(&mut self, values: &[f64], tau: f64) -> bool {
        self.factored = self.active();
        match self.factored {
            LuKernel::Blocked => match self.dense.as_mut() {
                Some(b) => b.refactor(values, tau, &mut self.diag),
                None => false,
            },
            LuKernel::Supernodal => self.refactor_blocked(values, tau),
            LuKernel::Column => self.refactor(values, tau),
        }
    }

    /// Left-looking elimination with the kept orders and patterns. Returns false if
    /// a pivot is unacceptable (`tau` relative to its column; 0 accepts any nonzero).
    fn refactor(&mut self, values: &[f64], tau: f64) -> bool {
        let n = self.pattern.n;
        let x = &mut self.x;
        let mut ok = true;
        for j in 0..n {
            let c = self.q[j];
            for k in self.pattern.col_ptr[c]..self.pattern.col_ptr[c + 1] {
                x[self.pinv[self.pattern.row_idx[k]]] = values[k];
            }
            for p in self.u_ptr[j]..self.u_ptr[j + 1] {
                let k = self.u_row[p];
                let ukj = x[k];
                x[k] = 0.0;
                self.u_val[p] = ukj;
                if ukj != 0.0 {
                    for m in self.l_ptr[k]..self.l_ptr[k + 1] {
                        x[self.l_row[m]] -= self.l_val[m] * ukj;
                    }
                }
            }
            let pivot = x[j];
            x[j] = 0.0;
            let mut col_max = 0.0f64;
            for m in self.l_ptr[j]..self.l_ptr[j + 1] {
                col_max = col_max.max(x[self.l_row[m]].abs());
            }
            if !pivot.is_finite() || pivot == 0.0 || pivot.abs() < tau * col_max {
                ok = false;
            }
            self.diag[j] = pivot;
            let inv = 1.0 / pivot;
            for m in self.l_ptr[j]..self.l_ptr[j + 1] {
                let r = self.l_row[m];
                self.l_val[m] = x[r] * inv;
                x[r] = 0.0;
            }
        }
        ok
    }
}

impl LinearSolver for SparseLu {
    fn factorize(&mut self, values: &[f64]) -> Result<(), Singular> {
        self.factorize_scanned(values, scan(values))
    }

    fn factorize_scanned(&mut self, values: &[f64], scan: Scan) -> Result<(), Singular> {
        let max = scan.max;
        let tau = match (self.keep, self.diagonal) {
            (true, _) => 0.0,
            (false, true) => DIAGONAL_TAU,
            (false, false) => REFACTOR_TAU,
        };
        let kept = self.have_factors && self.refactor_chosen(values, tau);
        // A diagonal order whose pivots no longer pass is not tried again: partial
        // pivoting decides from here on (as it does where the order never passed).
        let kept = kept && (!self.diagonal || self.pivots_pass(max));
        self.diagonal_failed |= self.have_factors && self.diagonal && !kept;
        if !kept
            && !self.diagonal_factorization(values, max)
            && (!self.full_factorization(values) || !self.refactor_chosen(values, 0.0))
        {
            self.have_factors = false;
            return Err(diagnose_singular(&self.pattern, values));
        }
        if !self.pivots_pass(max) {
            return Err(diagnose_singular(&self.pattern, values));
        }
        Ok(())
    }

    fn solve(&mut self, rhs: &mut [f64]) {
        let active = self.factored;
        // Narrow supernodes: the row-wise solve, which permutes as it goes.
        let blocked = active == LuKernel::Blocked;
        if blocked && self.dense.as_mut().is_some_and(|d| d.solve_by_rows(rhs)) {
            return;
        }
        let n = self.pattern.n;
        let y = &mut self.x;
        for i in 0..n {
            y[self.pinv[i]] = rhs[i];
        }
        if let (LuKernel::Blocked, Some(dense)) = (active, self.dense.as_mut()) {
            dense.solve(y);
            for j in 0..n {
                rhs[self.q[j]] = y[j];
                y[j] = 0.0;
            }
            return;
        }
        match self
            .blocks
            .as_ref()
            .filter(|_| active == LuKernel::Supernodal)
        {
            Some(blocks) => blocks.forward(y),
            None => {
                for j in 0..n {
                    let yj = y[j];
                    if yj != 0.0 {
                        for m in self.l_ptr[j]..self.l_ptr[j + 1] {
                            y[self.l_row[m]] -= self.l_val[m] * yj;
                        }
                    }
                }
            }
        }
        for j in (0..n).rev() {
            let yj = y[j] / self.diag[j];
            y[j] = yj;
            if yj != 0.0 {
                for p in self.u_ptr[j]..self.u_ptr[j + 1] {
                    y[self.u_row[p]] -= self.u_val[p] * yj;
                }
            }
        }
        for j in 0..n {
            rhs[self.q[j]] = y[j];
            y[j] = 0.0;
        }
    }

    fn full_factorizations(&self) -> usize {
        self.full
    }

    fn set_keep_pivots(&mut self, keep: bool) {
        self.keep = keep;
    }

    fn allow_diagonal_order(&mut self) {
        self.diagonal_failed = false;
        self.diagonal_allowed = true;
    }

    fn abandon_diagonal_order(&mut self) -> bool {
        let had = self.diagonal && self.have_factors;
        self.diagonal_failed = true;
        if had {
            self.have_factors = false;
            self.diagonal = false;
        }
        had
    }

    fn factor_nnz(&self) -> usize {
        self.l_row.len() + self.u_row.len() + self.pattern.n
    }

    fn memory(&self) -> SolverMemory {
        SolverMemory {
            pinv: self.pinv.clone(),
            l_ptr: self.l_ptr.clone(),
            l_row: self.l_row.clone(),
            u_ptr: self.u_ptr.clone(),
            u_row: self.u_row.clone(),
            have_factors: self.have_factors,
            full: self.full,
            diagonal: self.diagonal,
            diagonal_failed: self.diagonal_failed,
        }
    }

    fn check_memory(&self, m: &SolverMemory) -> Result<(), String> {
        let n = self.pattern.n;
        if !m.have_factors {
            // No order yet: the next factorization makes one in these arrays.
            let sized = m.pinv.len() == n && m.l_ptr.len() == n + 1 && m.u_ptr.len() == n + 1;
            return if sized {
                Ok(())
            } else {
                Err("its solver arrays do not fit the matrix".into())
            };
        }
        let mut seen = vec![false; n];
        let permutation = m.pinv.len() == n
            && m.pinv
                .iter()
                .all(|&p| p < n && !std::mem::replace(&mut seen[p], true));
        // Column j of L holds rows below j, column j of U rows above it.
        let column_fits = |ptr: &[usize], rows: &[usize], lower: bool| {
            ptr.len() == n + 1
                && ptr[0] == 0
                && ptr[n] == rows.len()
                && ptr.windows(2).all(|w| w[0] <= w[1])
                && (0..n).all(|j| {
                    rows[ptr[j]..ptr[j + 1]]
                        .iter()
                        .all(|&r| if lower { r > j && r < n } else { r < j })
                })
        };
        if !permutation
            || !column_fits(&m.l_ptr, &m.l_row, true)
            || !column_fits(&m.u_ptr, &m.u_row, false)
        {
            return Err("its pivot order does not fit the iteration matrix".into());
        }
        Ok(())
    }

    fn restore_memory(&mut self, m: &SolverMemory) {
        self.pinv.clone_from(&m.pinv);
        self.l_ptr.clone_from(&m.l_ptr);
        self.l_row.clone_from(&m.l_row);
        self.u_ptr.clone_from(&m.u_ptr);
        self.u_row.clone_from(&m.u_row);
        self.l_val.resize(self.l_row.len(), 0.0);
        self.u_val.resize(self.u_row.len(), 0.0);
        self.have_factors = m.have_factors;
        self.full = m.full;
        self.diagonal = m.diagonal && m.have_factors;
        self.diagonal_failed = m.diagonal_failed;
        if self.diagonal {
            // Rows and columns in one order: the column order is the rows'.
            for (i, &k) in self.pinv.iter().enumerate() {
                self.q[k] = i;
            }
            self.q_inv.clone_from(&self.pinv);
        } else {
            self.q.clone_from(&self.colamd.0);
            self.q_inv.clone_from(&self.colamd.1);
        }
        if self.have_factors {
            self.find_supernodes();
        } else {
            self.blocks = None;
            self.dense = None;
        }
    }
}

/// Runs `f` and catches a panic without printing it: the caller turns the failure into
/// an error message, so the panic hook's backtrace would only be noise for the user.
/// Only on the rare full factorization (the hook swap allocates).
fn catch_quietly<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    std::panic::set_hook(previous);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random sequence in [-1, 1).
    fn lcg(seed: &mut u64) -> f64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    fn residual(p: &Pattern, values: &[f64], x: &[f64], b: &[f64]) -> f64 {
        let mut y = vec![0.0; p.n];
        p.mul(values, x, &mut y);
        y.iter()
            .zip(b)
            .map(|(y, b)| (y - b).abs())
            .fold(0.0, f64::max)
    }

    #[test]
    fn sparse_and_dense_solve_random_systems_with_kept_and_new_pivots() {
        let n = 40;
        let mut seed = 7;
        let mut entries = vec![];
        for j in 0..n {
            for _ in 0..3 {
                let i = ((lcg(&mut seed) + 1.0) * 0.5 * n as f64) as usize % n;
                entries.push((i, j));
            }
        }
        let (p, _) = Pattern::build(n, &entries);
        let mut sparse = SparseLu::new(&p).unwrap();
        let mut dense = DenseLu::new(&p);
        for round in 0..5 {
            // Small changes keep the pivot order; round 3 changes everything.
            let values: Vec<f64> = (0..p.nnz())
                .map(|k| {
                    let (j, i) = (p.col_ptr.partition_point(|&c| c <= k) - 1, p.row_idx[k]);
                    let base = if i == j {
                        4.0
                    } else {
                        ((i * 31 + j * 17) % 7) as f64 - 3.0
                    };
                    if round == 3 {
                        lcg(&mut seed) * 5.0
                    } else {
                        base + 0.01 * round as f64 * lcg(&mut seed)
                    }
                })
                .collect();
            let b: Vec<f64> = (0..n).map(|_| lcg(&mut seed)).collect();
            sparse.factorize(&values).unwrap();
            dense.factorize(&values).unwrap();
            let (mut xs, mut xd) = (b.clone(), b.clone());
            sparse.solve(&mut xs);
            dense.solve(&mut xd);
            assert!(residual(&p, &values, &xs, &b) < 1e-10, "round {round}");
            assert!(residual(&p, &values, &xd, &b) < 1e-10, "round {round}");
            for (a, d) in xs.iter().zip(&xd) {
                assert!((a - d).abs() < 1e-8 * (1.0 + d.abs()));
            }
        }
        // Rounds 1, 2 and 4 could keep the order of the factorization before them.
        assert!(
            sparse.full_factorizations() < 5,
            "{}",
            sparse.full_factorizations()
        );
    }

    #[test]
    fn singular_matrices_name_the_dependent_column() {
        // Columns 0 and 2 are equal.
        let entries = [(0, 0), (1, 0), (1, 1), (2, 1), (0, 2), (1, 2), (2, 2)];
        let (p, map) = Pattern::build(3, &entries);
        let vals = [1.0, 2.0, 1.0, 1.0, 1.0, 2.0, 0.0];
        let mut values = vec![0.0; p.nnz()];
        for (k, &m) in map.iter().enumerate() {
            values[m] += vals[k];
        }
        let mut dense = DenseLu::new(&p);
        assert_eq!(dense.factorize(&values), Err(Singular { index: 2 }));
        let mut sparse = SparseLu::new(&p).unwrap();
        assert!(sparse.factorize(&values).is_err());
    }
}
