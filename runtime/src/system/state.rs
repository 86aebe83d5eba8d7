//! Snapshots of the integrator (`System::state`, `System::restore`) for co-simulation:
//! a caller saves the complete state at a communication point and later continues
//! from it, with results bitwise equal to never having gone back.
//!
//! "Complete" means everything a later step reads: the accepted state (t, q, v, v̇, λ),
//! the Newmark history a_n and f_n, the linear predictor's memory, the step size and
//! the controller's memory, the scales of the error weights, every instance's
//! parameters (element state and input values live there), the constraint rows removed
//! at the start, the divergence watch, the statistics so far, and the pivot order the
//! sparse LU keeps between factorizations (a step refactorizes with it, so another
//! order would change the round-off), and the iteration matrix a later step may reuse
//! (`Settings::matrix_steps`: its values, coefficients and age; `restore` factorizes
//! them again in the kept order, which gives the same factors bit for bit), with the
//! memory of the rule that decides whether it serves (`Settings::matrix_rule`). The trial
//! arrays are not saved: every step recomputes them from the accepted state before
//! reading them.
//!
//! [`State::to_bytes`] is a flat little-endian encoding (for Python's pickle and the C
//! API's buffers); [`State::from_bytes`] checks every length and never panics.

use super::*;
use crate::linear::SolverMemory;

/// Format of [`State::to_bytes`]: a magic word and a version, then the fields.
/// Version 3 added the kept iteration matrix, version 4 the cost rule's ledger
/// (`Settings::matrix_rule`), version 5 whether the LU's orders are diagonal ones
/// (`linear/diagonal.rs`; two flags per solver at the end), version 6 the kept matrix's
/// last contraction rate (`Kept::rate`, at the end). Versions 2 (without the matrix: the next step factorizes
/// a new one), 3 (without the ledger: the rule starts afresh), 4 (orders of
/// partial pivoting only) and 5 (rate unknown: the next reuse is judged by the counts
/// alone) are still read.
const MAGIC: &[u8; 8] = b"FDCSTATE";
const FORMAT: u64 = 6;
const FORMAT_WITHOUT_RATE: u64 = 5;
const FORMAT_WITHOUT_DIAGONAL: u64 = 4;
const FORMAT_WITHOUT_LEDGER: u64 = 3;
const FORMAT_WITHOUT_KEPT: u64 = 2;

/// A snapshot of a [`System`] (see the module comment); restore it with
/// [`System::restore`] into a system of the same model.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// [`System::identity`] of the model it came from.
    identity: u64,
    t: f64,
    h: f64,
    h_prev: f64,
    extrapolate: [bool; 2],
    ctrl: step_control::Control,
    monitor: diverge::Monitor,
    /// q, v, v̇, λ, a_n, f_n, scale_n, scale_max, scale_t, w, x_prev (`vectors!`).
    vectors: Vec<Vec<f64>>,
    params: Vec<Vec<f64>>,
    removed: Vec<bool>,
    stats: RunStats,
    iter_memory: SolverMemory,
    ic_memory: SolverMemory,
    /// The kept iteration matrix and its values (empty unless `kept.valid`).
    kept: kept::Kept,
    kept_values: Vec<f64>,
}

/// The saved vectors of the system, in the order of `State::vectors`: `vectors!(s)`
/// borrows them, `vectors!(s, mut)` borrows them mutably.
macro_rules! vectors {
    ($s:ident $(, $m:ident)?) => {
        [
            &$($m)? $s.q,
            &$($m)? $s.v,
            &$($m)? $s.vd,
            &$($m)? $s.lam,
            &$($m)? $s.acc,
            &$($m)? $s.f_n,
            &$($m)? $s.scale_n,
            &$($m)? $s.scale_max,
            &$($m)? $s.scale_t,
            &$($m)? $s.w,
            &$($m)? $s.x_prev,
        ]
    };
}

impl State {
    /// The time of the snapshot.
    pub fn time(&self) -> f64 {
        self.t
    }

    /// Whether the next step may start on the iteration matrix of the last one
    /// (`Settings::matrix_steps`); `restore` factorizes it again.
    pub fn keeps_matrix(&self) -> bool {
        self.kept.valid
    }

    /// The snapshot as bytes (see [`State::from_bytes`]).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer(Vec::new());
        w.0.extend_from_slice(MAGIC);
        w.u64(FORMAT);
        w.u64(self.identity);
        for x in [self.t, self.h, self.h_prev] {
            w.f64(x);
        }
        w.bools(&self.extrapolate);
        let c = &self.ctrl;
        for x in [c.shift, c.err_prev, c.ratio_prev] {
            w.f64(x);
        }
        w.bools(&[c.rejected]);
        let m = &self.monitor;
        for x in [m.floor_v, m.floor_l, m.last] {
            w.f64(x);
        }
        w.u64(m.streak as u64);
        w.f64(m.window_max);
        w.u64(m.window_steps as u64);
        w.f64s(&m.envelopes);
        for list in [&self.vectors, &self.params] {
            w.u64(list.len() as u64);
            for v in list {
                w.f64s(v);
            }
        }
        w.u64(self.removed.len() as u64);
        w.bools(&self.removed);
        w.stats(&self.stats);
        for m in [&self.iter_memory, &self.ic_memory] {
            w.memory(m);
        }
        let k = &self.kept;
        w.bools(&[k.valid, k.noqv]);
        k.c.iter().for_each(|&x| w.f64(x));
        w.u64(k.age as u64);
        w.f64s(&self.kept_values);
        let l = &k.ledger;
        [l.life, l.last, l.wait, l.backoff]
            .iter()
            .for_each(|&x| w.u64(x));
        for m in [&self.iter_memory, &self.ic_memory] {
            w.bools(&[m.diagonal, m.diagonal_failed]);
        }
        w.f64(k.rate);
        w.0
    }

    /// Reads [`State::to_bytes`]; bytes of another format or cut short are an error.
    pub fn from_bytes(bytes: &[u8]) -> Result<State, RuntimeError> {
        let mut r = Reader(bytes);
        if r.take(MAGIC.len()) != Some(MAGIC.as_slice()) {
            return Err(bad_state("the bytes are not an fdc state"));
        }
        let read = |r: &mut Reader| -> Option<State> {
            let format = r.u64()?;
            let known = [
                FORMAT,
                FORMAT_WITHOUT_RATE,
                FORMAT_WITHOUT_DIAGONAL,
                FORMAT_WITHOUT_LEDGER,
                FORMAT_WITHOUT_KEPT,
            ];
            if !known.contains(&format) {
                return None;
            }
            let identity = r.u64()?;
            let (t, h, h_prev) = (r.f64()?, r.f64()?, r.f64()?);
            let e = r.bools(2)?;
            let ctrl = step_control::Control {
                shift: r.f64()?,
                err_prev: r.f64()?,
                ratio_prev: r.f64()?,
                rejected: r.bools(1)?[0],
            };
            let monitor = diverge::Monitor {
                floor_v: r.f64()?,
                floor_l: r.f64()?,
                last: r.f64()?,
                streak: r.usize()?,
                window_max: r.f64()?,
                window_steps: r.usize()?,
                envelopes: r.f64s()?.try_into().ok()?,
            };
            let vectors = r.lists()?;
            let params = r.lists()?;
            let n = r.usize()?;
            Some(State {
                identity,
                t,
                h,
                h_prev,
                extrapolate: [e[0], e[1]],
                ctrl,
                monitor,
                vectors,
                params,
                removed: r.bools(n)?,
                stats: r.stats()?,
                iter_memory: r.memory()?,
                ic_memory: r.memory()?,
                kept: Default::default(),
                kept_values: Vec::new(),
            })
            .and_then(|mut s| {
                if format != FORMAT_WITHOUT_KEPT {
                    let flags = r.bools(2)?;
                    s.kept = kept::Kept {
                        valid: flags[0],
                        noqv: flags[1],
                        c: [r.f64()?, r.f64()?, r.f64()?, r.f64()?],
                        age: r.usize()?,
                        ledger: Default::default(),
                        reach: None,
                        rate: 0.0,
                    };
                    s.kept_values = r.f64s()?;
                }
                if format >= FORMAT_WITHOUT_DIAGONAL {
                    s.kept.ledger = matrix_cost::Ledger {
                        life: r.u64()?,
                        last: r.u64()?,
                        wait: r.u64()?,
                        backoff: r.u64()?,
                    };
                }
                if format >= FORMAT_WITHOUT_RATE {
                    for m in [&mut s.iter_memory, &mut s.ic_memory] {
                        let flags = r.bools(2)?;
                        (m.diagonal, m.diagonal_failed) = (flags[0], flags[1]);
                    }
                }
                if format == FORMAT {
                    s.kept.rate = r.f64()?;
                }
                Some(s)
            })
        };
        match read(&mut r) {
            Some(s) if r.0.is_empty() => Ok(s),
            _ => Err(bad_state(
                "the bytes are cut short, too long or of another fdc version",
            )),
        }
    }
}

fn bad_state(why: &str) -> RuntimeError {
    RuntimeError::BadState(why.to_string())
}

impl System {
    /// A snapshot of the complete integrator state (module comment). Cheap enough for
    /// every communication point of a co-simulation: it copies the state vectors.
    pub fn state(&self) -> State {
        let vectors = vectors!(self).map(|v| v.clone()).to_vec();
        State {
            identity: self.identity,
            t: self.t,
            h: self.h,
            h_prev: self.h_prev,
            extrapolate: self.extrapolate,
            ctrl: self.ctrl,
            monitor: self.monitor.clone(),
            vectors,
            params: self.inst.iter().map(|e| e.params.clone()).collect(),
            removed: self.removed.clone(),
            stats: self.stats.clone(),
            iter_memory: self.js.as_ref().map(|j| j.memory()).unwrap_or_default(),
            ic_memory: self.ics.as_ref().map(|j| j.memory()).unwrap_or_default(),
            // The reach is computed again from the restored factors (the same bits).
            kept: kept::Kept {
                reach: None,
                ..self.kept
            },
            kept_values: if self.kept.valid {
                self.jv[..self.jp.nnz()].to_vec()
            } else {
                Vec::new()
            },
        }
    }

    /// Continues from a snapshot of [`System::state`]: the next step is the one the
    /// system that made it would have taken (with the same settings). Needs
    /// [`System::initialize`] first (it makes the linear solvers). A state of another
    /// model, or one whose sizes do not fit, is an error and changes nothing.
    pub fn restore(&mut self, state: &State) -> Result<(), RuntimeError> {
        if !self.initialized {
            return Err(RuntimeError::NotInitialized);
        }
        if state.identity != self.identity {
            return Err(bad_state("the state belongs to another model"));
        }
        self.check_sizes(state).map_err(|w| bad_state(&w))?;
        for (dst, src) in vectors!(self, mut).into_iter().zip(&state.vectors) {
            dst.copy_from_slice(src);
        }
        for (e, p) in self.inst.iter_mut().zip(&state.params) {
            e.params.copy_from_slice(p);
        }
        self.roads.invalidate();
        self.removed.copy_from_slice(&state.removed);
        self.apply_removed_positions();
        self.t = state.t;
        self.h = state.h;
        self.h_prev = state.h_prev;
        self.extrapolate = state.extrapolate;
        self.ctrl = state.ctrl;
        self.monitor = state.monitor.clone();
        self.stats = state.stats.clone();
        for (solver, memory) in [
            (&mut self.js, &state.iter_memory),
            (&mut self.ics, &state.ic_memory),
        ] {
            if let Some(s) = solver.as_mut() {
                s.restore_memory(memory);
            }
        }
        self.restore_kept(state);
        Ok(())
    }

    /// The kept iteration matrix of a snapshot: its values factorized in the restored
    /// pivot order with any nonzero pivot accepted, as the factorization that made
    /// them ended (a full factorization refactorizes in its new order with pivot
    /// tolerance 0 too), so the factors are the same bit for bit. Values that do not
    /// factorize (bytes from elsewhere) are not kept.
    fn restore_kept(&mut self, state: &State) {
        self.kept = state.kept;
        // Counted again from the restored pivot order when the rule needs them.
        self.forget_costs();
        if !self.kept.valid {
            return;
        }
        let nnz = self.jp.nnz();
        self.jv[..nnz].copy_from_slice(&state.kept_values);
        let Some(solver) = self.js.as_mut() else {
            self.kept.valid = false;
            return;
        };
        solver.set_keep_pivots(true);
        self.kept.valid = solver.factorize(&self.jv[..nnz]).is_ok();
        solver.set_keep_pivots(self.real_time);
    }

    /// Every length of `state` against this system (bytes may come from anywhere).
    fn check_sizes(&self, state: &State) -> Result<(), String> {
        let want: Vec<usize> = vectors!(self).iter().map(|v| v.len()).collect();
        let got: Vec<usize> = state.vectors.iter().map(Vec::len).collect();
        let params_fit = state.params.len() == self.inst.len()
            && self
                .inst
                .iter()
                .zip(&state.params)
                .all(|(e, p)| e.params.len() == p.len());
        let kept_fits =
            !state.kept.valid || state.kept_values.len() == self.jp.nnz() && state.kept.age > 0;
        if want != got || !params_fit || state.removed.len() != self.nl || !kept_fits {
            return Err("its sizes do not fit this model".into());
        }
        for (solver, memory) in [
            (&self.js, &state.iter_memory),
            (&self.ics, &state.ic_memory),
        ] {
            if let Some(s) = solver.as_ref() {
                s.check_memory(memory)?;
            }
        }
        Ok(())
    }

    /// A fingerprint of the model's structure: sizes, instances (name, type, maps,
    /// parameter count), inputs, and the data roads (their contents and which tyre
    /// rolls on which: a state of a run on one road does not fit another road). States
    /// carry it so that one model's state is not restored into another (FNV-1a:
    /// stable across runs and machines).
    pub(super) fn fingerprint(&self) -> u64 {
        let mut h = Fnv(0xcbf2_9ce4_8422_2325);
        for n in [self.nq, self.nv, self.nl, self.inst.len()] {
            h.usize(n);
        }
        for e in &self.inst {
            h.bytes(e.name.as_bytes());
            h.bytes(self.table.types[e.ty].name.as_bytes());
            h.usize(e.params.len());
            for map in [&e.q_map, &e.v_map, &e.lambda_map] {
                h.usize(map.len());
                map.iter().for_each(|&g| h.usize(g));
            }
        }
        for i in &self.inputs {
            h.bytes(i.name.as_bytes());
        }
        let roads = self.roads.roads();
        h.usize(roads.roads.len());
        roads.roads.iter().for_each(|r| h.u64(r.fingerprint()));
        for c in &roads.contacts {
            for n in [c.instance, c.road].iter().chain(&c.q).chain(&c.slots) {
                h.usize(*n);
            }
        }
        h.0
    }
}

struct Fnv(u64);

impl Fnv {
    fn bytes(&mut self, b: &[u8]) {
        self.usize(b.len());
        for &x in b {
            self.0 = (self.0 ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn usize(&mut self, n: usize) {
        self.u64(n as u64);
    }
    fn u64(&mut self, n: u64) {
        for x in n.to_le_bytes() {
            self.0 = (self.0 ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

struct Writer(Vec<u8>);

impl Writer {
    fn u64(&mut self, x: u64) {
        self.0.extend_from_slice(&x.to_le_bytes());
    }
    fn f64(&mut self, x: f64) {
        self.u64(x.to_bits());
    }
    fn f64s(&mut self, v: &[f64]) {
        self.u64(v.len() as u64);
        v.iter().for_each(|&x| self.f64(x));
    }
    fn usizes(&mut self, v: &[usize]) {
        self.u64(v.len() as u64);
        v.iter().for_each(|&x| self.u64(x as u64));
    }
    fn bools(&mut self, v: &[bool]) {
        self.0.extend(v.iter().map(|&b| u8::from(b)));
    }
    fn stats(&mut self, s: &RunStats) {
        self.f64(s.t);
        for n in [
            s.steps,
            s.rejected,
            s.newton_iterations,
            s.residual_evaluations,
            s.factorizations,
            s.full_factorizations,
        ] {
            self.u64(n as u64);
        }
        self.f64(s.max_correction);
    }
    fn memory(&mut self, m: &SolverMemory) {
        for v in [&m.pinv, &m.l_ptr, &m.l_row, &m.u_ptr, &m.u_row] {
            self.usizes(v);
        }
        self.bools(&[m.have_factors]);
        self.u64(m.full as u64);
    }
}

/// Reads what [`Writer`] wrote; `None` when the bytes run out.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn usize(&mut self) -> Option<usize> {
        usize::try_from(self.u64()?).ok()
    }
    fn f64(&mut self) -> Option<f64> {
        Some(f64::from_bits(self.u64()?))
    }
    /// A length prefix, refused when the rest cannot hold that many `size`-byte items
    /// (so a corrupt length allocates nothing).
    fn len(&mut self, size: usize) -> Option<usize> {
        let n = self.usize()?;
        (n <= self.0.len() / size).then_some(n)
    }
    fn f64s(&mut self) -> Option<Vec<f64>> {
        let n = self.len(8)?;
        (0..n).map(|_| self.f64()).collect()
    }
    fn usizes(&mut self) -> Option<Vec<usize>> {
        let n = self.len(8)?;
        (0..n).map(|_| self.usize()).collect()
    }
    fn lists(&mut self) -> Option<Vec<Vec<f64>>> {
        let n = self.len(8)?;
        (0..n).map(|_| self.f64s()).collect()
    }
    fn bools(&mut self, n: usize) -> Option<Vec<bool>> {
        self.take(n)?
            .iter()
            .map(|&b| match b {
                0 => Some(false),
                1 => Some(true),
                _ => None,
            })
            .collect()
    }
    fn stats(&mut self) -> Option<RunStats> {
        let t = self.f64()?;
        let mut n = [0usize; 6];
        for x in &mut n {
            *x = self.usize()?;
        }
        Some(RunStats {
            t,
            steps: n[0],
            rejected: n[1],
            newton_iterations: n[2],
            residual_evaluations: n[3],
            factorizations: n[4],
            full_factorizations: n[5],
            max_correction: self.f64()?,
            timing: None,
        })
    }
    fn memory(&mut self) -> Option<SolverMemory> {
        Some(SolverMemory {
            pinv: self.usizes()?,
            l_ptr: self.usizes()?,
            l_row: self.usizes()?,
            u_ptr: self.usizes()?,
            u_row: self.usizes()?,
            have_factors: self.bools(1)?[0],
            full: self.usize()?,
            diagonal: false,
            diagonal_failed: false,
        })
    }
}
