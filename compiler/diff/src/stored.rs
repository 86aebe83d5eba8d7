//! Element types as bytes, for the roles cache keyed by a type's definition (the
//! driver's `crate::roles_cache` stores them through the backend's cache module):
//!
//! - [`ElementBuilder::definition`](crate::ElementBuilder::definition): everything
//!   [`finish`](crate::ElementBuilder::finish) derives the roles from, canonically
//!   (the nodes the definition needs renumbered densely in id order), prefixed by
//!   [`IDENTITY`]: equal bytes mean equal roles.
//! - [`encode`] / [`decode`]: the derived [`ElementFunctions`] with the IR of their
//!   roles. [`decode`] adds the nodes to a graph again and refuses (returns `None`)
//!   anything that is not a complete encoding: a damaged or foreign entry is a miss,
//!   never a panic.

use crate::roles::{Block, ElementFunctions, Role};
use fdc_ir::spline::SplineTable;
use fdc_ir::{Cmp, Func, Graph, Id, Op, Slot, SlotSizes, Unary};

/// What turns a definition into roles: this crate's sources and those of the IR and
/// the ABI it builds on, hashed at build time (`build.rs`). Any change to the
/// differentiation (e.g. how the iteration form is chosen) gives new keys by itself,
/// so a stale entry can never be read.
pub const IDENTITY: &str = concat!(
    "fdc-diff roles ",
    env!("CARGO_PKG_VERSION"),
    "; sources ",
    env!("FDC_DIFF_SOURCES")
);

const UNARY: [Unary; 9] = [
    Unary::Neg,
    Unary::Sqrt,
    Unary::Sin,
    Unary::Cos,
    Unary::Tan,
    Unary::Exp,
    Unary::Log,
    Unary::Tanh,
    Unary::Abs,
];
const CMP: [Cmp; 6] = [Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge, Cmp::Eq, Cmp::Ne];

/// A little-endian byte writer.
#[derive(Default)]
pub(crate) struct Writer(pub Vec<u8>);

impl Writer {
    pub fn u8(&mut self, x: u8) {
        self.0.push(x);
    }
    pub fn u32(&mut self, x: u32) {
        self.0.extend_from_slice(&x.to_le_bytes());
    }
    pub fn u64(&mut self, x: u64) {
        self.0.extend_from_slice(&x.to_le_bytes());
    }
    pub fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }
    pub fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }

    /// `nodes` (ascending, closed under operands) with operands as positions in it.
    pub fn nodes(&mut self, g: &Graph, nodes: &[Id]) {
        self.len(nodes.len());
        let at = |id: Id| nodes.binary_search(&id).expect("a node of the cone") as u32;
        for &id in nodes {
            self.op(g, &at, g.op(id));
        }
    }

    /// The position of `id` in `nodes`.
    pub fn local(&mut self, nodes: &[Id], id: Id) {
        let k = nodes.binary_search(&id).expect("a node of the cone");
        self.u32(k as u32);
    }

    /// One node, its operands written as `at(operand)` (a position before it).
    pub fn op(&mut self, g: &Graph, at: &dyn Fn(Id) -> u32, op: Op) {
        let code = |u: Unary| UNARY.iter().position(|&x| x == u).unwrap_or(0) as u8;
        let cmp = |c: Cmp| CMP.iter().position(|&x| x == c).unwrap_or(0) as u8;
        match op {
            Op::Const(bits) => {
                self.u8(0);
                self.u64(bits);
            }
            Op::Input(slot, i) => {
                self.u8(1);
                self.u8(slot as u8);
                self.u32(i);
            }
            Op::Sym(s) => {
                self.u8(2);
                self.u32(s);
            }
            Op::Unary(u, a) => {
                self.u8(3);
                self.u8(code(u));
                self.u32(at(a));
            }
            Op::Powi(a, n) => {
                self.u8(4);
                self.u32(at(a));
                self.u32(n as u32);
            }
            Op::Select(c, s) => {
                self.u8(5);
                self.u8(cmp(c));
                for a in s {
                    self.u32(at(a));
                }
            }
            Op::Spline(t, d, x) => {
                self.u8(6);
                self.u8(d);
                self.u32(at(x));
                // The table's contents: equal bytes mean equal tables.
                let (knots, pieces) = g
                    .table(t)
                    .map_or((&[][..], &[][..]), |t| (t.knots(), t.pieces()));
                self.len(knots.len());
                knots.iter().for_each(|k| self.u64(k.to_bits()));
                self.len(pieces.len());
                pieces.iter().flatten().for_each(|c| self.u64(c.to_bits()));
            }
            Op::Add(a, b)
            | Op::Sub(a, b)
            | Op::Mul(a, b)
            | Op::Div(a, b)
            | Op::Pow(a, b)
            | Op::Atan2(a, b)
            | Op::Min(a, b)
            | Op::Max(a, b) => {
                let tag = match op {
                    Op::Add(..) => 7,
                    Op::Sub(..) => 8,
                    Op::Mul(..) => 9,
                    Op::Div(..) => 10,
                    Op::Pow(..) => 11,
                    Op::Atan2(..) => 12,
                    Op::Min(..) => 13,
                    _ => 14,
                };
                self.u8(tag);
                self.u32(at(a));
                self.u32(at(b));
            }
        }
    }
}

/// The reader of [`Writer`]'s bytes: every read checks the length.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.bytes.len() {
            return None;
        }
        let (a, b) = self.bytes.split_at(n);
        self.bytes = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    /// A count of items of at least `min_bytes` each: never more than the bytes left,
    /// so a damaged count cannot make a huge allocation.
    fn len(&mut self, min_bytes: usize) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        (n.checked_mul(min_bytes.max(1))? <= self.bytes.len()).then_some(n)
    }
    /// A size (not a count of items that follow): at most `u32::MAX`.
    fn size(&mut self) -> Option<usize> {
        let n = self.u64()?;
        (n <= u64::from(u32::MAX)).then_some(n as usize)
    }
    fn str(&mut self) -> Option<String> {
        let n = self.len(1)?;
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }
    fn bool(&mut self) -> Option<bool> {
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    fn f64s(&mut self, n: usize) -> Option<Vec<f64>> {
        (0..n).map(|_| self.u64().map(f64::from_bits)).collect()
    }

    /// Adds the nodes of [`Writer::nodes`] to `g`; their ids there, by position.
    fn nodes(&mut self, g: &mut Graph) -> Option<Vec<Id>> {
        let n = self.len(5)?;
        let mut ids: Vec<Id> = Vec::with_capacity(n);
        for _ in 0..n {
            let op = self.op(g, &ids)?;
            ids.push(g.add(op));
        }
        Some(ids)
    }

    /// An operand: a node decoded before this one.
    fn local(&mut self, ids: &[Id]) -> Option<Id> {
        ids.get(self.u32()? as usize).copied()
    }

    fn op(&mut self, g: &mut Graph, ids: &[Id]) -> Option<Op> {
        Some(match self.u8()? {
            0 => Op::Const(self.u64()?),
            1 => {
                let slot = *Slot::ALL.get(self.u8()? as usize)?;
                Op::Input(slot, self.u32()?)
            }
            2 => Op::Sym(self.u32()?),
            3 => {
                let u = *UNARY.get(self.u8()? as usize)?;
                Op::Unary(u, self.local(ids)?)
            }
            4 => Op::Powi(self.local(ids)?, self.u32()? as i32),
            5 => {
                let c = *CMP.get(self.u8()? as usize)?;
                let mut s = [ids.first().copied()?; 4];
                for a in &mut s {
                    *a = self.local(ids)?;
                }
                Op::Select(c, s)
            }
            6 => {
                let d = self.u8()?;
                (d <= 3).then_some(())?;
                let x = self.local(ids)?;
                let n = self.len(8)?;
                let knots = self.f64s(n)?;
                let m = self.len(40)?;
                let flat = self.f64s(5 * m)?;
                let pieces = flat
                    .chunks_exact(5)
                    .map(|c| [c[0], c[1], c[2], c[3], c[4]])
                    .collect();
                let table = SplineTable::new(knots, pieces).ok()?;
                Op::Spline(g.add_table(table), d, x)
            }
            tag @ 7..=14 => {
                let (a, b) = (self.local(ids)?, self.local(ids)?);
                match tag {
                    7 => Op::Add(a, b),
                    8 => Op::Sub(a, b),
                    9 => Op::Mul(a, b),
                    10 => Op::Div(a, b),
                    11 => Op::Pow(a, b),
                    12 => Op::Atan2(a, b),
                    13 => Op::Min(a, b),
                    _ => Op::Max(a, b),
                }
            }
            _ => return None,
        })
    }
}

const MAGIC: &[u8] = b"fdc element type 1\n";

/// The element type `ty` (whose roles are nodes of `g`) as bytes for [`decode`].
pub fn encode(g: &Graph, ty: &ElementFunctions) -> Vec<u8> {
    let mut w = Writer::default();
    w.0.extend_from_slice(MAGIC);
    w.str(IDENTITY);
    w.str(&ty.name);
    for n in [ty.nq, ty.nv, ty.nl, ty.np] {
        w.len(n);
    }
    w.u8(u8::from(ty.owns_coordinates));
    for names in [&ty.outputs, &ty.multipliers] {
        w.len(names.len());
        names.iter().for_each(|s| w.str(s));
    }
    w.len(ty.state_params.len());
    ty.state_params.iter().for_each(|&p| w.len(p));
    let roots: Vec<Id> = ty.roles.iter().flat_map(|r| r.1.outputs.clone()).collect();
    let nodes = g.cone(&roots);
    w.nodes(g, &nodes);
    w.len(ty.roles.len());
    for (role, f, blocks) in &ty.roles {
        w.u8(*role as u8);
        w.str(&f.name);
        f.inputs.0.iter().for_each(|&n| w.len(n));
        w.len(f.outputs.len());
        f.outputs.iter().for_each(|&o| w.local(&nodes, o));
        w.len(blocks.len());
        for b in blocks {
            match b {
                Block::Dense { len } => {
                    w.u8(0);
                    w.len(*len);
                }
                Block::Sparse {
                    rows,
                    cols,
                    entries,
                } => {
                    w.u8(1);
                    w.len(*rows);
                    w.len(*cols);
                    w.len(entries.len());
                    for &(r, c) in entries {
                        w.u32(r);
                        w.u32(c);
                    }
                }
            }
        }
    }
    w.0
}

/// The element type of [`encode`]'s bytes, its nodes added to `g`; `None` unless the
/// bytes are a complete encoding by this build ([`IDENTITY`]) and their blocks fit
/// their outputs.
pub fn decode(bytes: &[u8], g: &mut Graph) -> Option<ElementFunctions> {
    let mut r = Reader {
        bytes: bytes.strip_prefix(MAGIC)?,
    };
    (r.str()? == IDENTITY).then_some(())?;
    let name = r.str()?;
    let [nq, nv, nl, np] = [r.size()?, r.size()?, r.size()?, r.size()?];
    let owns_coordinates = r.bool()?;
    let mut names = || -> Option<Vec<String>> { (0..r.len(8)?).map(|_| r.str()).collect() };
    let outputs = names()?;
    let multipliers = names()?;
    let state_params = (0..r.len(8)?).map(|_| r.size()).collect::<Option<_>>()?;
    let ids = r.nodes(g)?;
    let n_roles = r.len(1)?;
    let mut roles = Vec::with_capacity(n_roles);
    for _ in 0..n_roles {
        let role = *Role::ALL.get(r.u8()? as usize)?;
        let fname = r.str()?;
        let mut inputs = [0usize; 8];
        for n in &mut inputs {
            *n = r.size()?;
        }
        let outs = (0..r.len(4)?)
            .map(|_| r.local(&ids))
            .collect::<Option<Vec<Id>>>()?;
        let blocks = (0..r.len(9)?)
            .map(|_| block(&mut r))
            .collect::<Option<Vec<Block>>>()?;
        (blocks.iter().map(Block::len).sum::<usize>() == outs.len()).then_some(())?;
        let f = Func {
            name: fname,
            inputs: SlotSizes(inputs),
            outputs: outs,
        };
        roles.push((role, f, blocks));
    }
    r.bytes.is_empty().then_some(ElementFunctions {
        name,
        nq,
        nv,
        nl,
        np,
        owns_coordinates,
        outputs,
        multipliers,
        state_params,
        roles,
    })
}

fn block(r: &mut Reader) -> Option<Block> {
    Some(match r.u8()? {
        0 => Block::Dense { len: r.size()? },
        1 => {
            let (rows, cols) = (r.size()?, r.size()?);
            let entries = (0..r.len(8)?)
                .map(|_| Some((r.u32()?, r.u32()?)))
                .collect::<Option<_>>()?;
            Block::Sparse {
                rows,
                cols,
                entries,
            }
        }
        _ => return None,
    })
}
