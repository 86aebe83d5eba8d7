//! The on-disk object cache.
//!
//! Key: SHA-256 over the backend version, the LLVM version, the target triple, CPU
//! name and CPU features, the optimization level, and a canonical serialization of
//! every function (name, input sizes, and the nodes it needs renumbered densely in id
//! order, with constants by bit pattern and spline nodes with their table's full
//! contents, then its outputs). Nodes of a shared graph
//! that a function does not use do not enter the key, and parameter values are inputs
//! at run time, so changing a parameter never changes the key.
//!
//! A second kind of entry, the *source index*, is keyed the same way but over IR that
//! the caller transforms before compiling (the driver's unsimplified role functions),
//! plus a `recipe` string naming that transformation; its payload is the key of the
//! object entry that transformation led to, the number of functions in it, and the
//! caller's own bytes. A hit there skips the caller's transformation as well.
//!
//! A third kind, *roles* (`.fdcdef`), holds an element type's derived roles (bytes the
//! caller encodes), keyed by its definition before differentiation
//! ([`roles_key`]); source index entries for such types may be keyed by that
//! definition key instead of the roles' IR ([`defined_key`]).
//!
//! Entry file `<dir>/<key hex>.fdcobj` (objects), `.fdcsrc` (source index) or `.fdcdef` (roles):
//! `MAGIC (8) | key (32) | payload length (u64 LE) | SHA-256 of the payload (32) | payload`.
//! An entry is used only if every field checks out, so a truncated, corrupted or
//! misplaced file is a miss (and gets rewritten), never a crash. Writes go to a
//! temporary file in the same directory and are renamed into place (atomic on POSIX).

use fdc_ir::{Cmp, Func, Graph, Id, Op, Slot, Unary};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

const HEADER: usize = 8 + 32 + 8 + 32;

/// The two kinds of entry; each has its own magic and file extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An object file, keyed by the IR it was compiled from.
    Object,
    /// An object key (plus caller bytes), keyed by the IR before the caller's
    /// transformation.
    Source,
    /// An element type's derived roles, keyed by its definition (`crate::roles`).
    Roles,
}

impl Kind {
    fn magic(self) -> &'static [u8; 8] {
        match self {
            Kind::Object => b"FDCOBJ01",
            Kind::Source => b"FDCSRC01",
            Kind::Roles => b"FDCDEF01",
        }
    }
    fn ext(self) -> &'static str {
        match self {
            Kind::Object => "fdcobj",
            Kind::Source => "fdcsrc",
            Kind::Roles => "fdcdef",
        }
    }
}

pub type Key = [u8; 32];

/// Everything besides the IR that decides the machine code.
pub struct Target<'a> {
    pub backend: &'a str,
    pub llvm: &'a str,
    pub triple: &'a str,
    pub cpu: &'a str,
    pub features: &'a str,
    pub opt_level: u8,
}

pub fn key(target: &Target, graph: &Graph, funcs: &[Func], plans: &[Vec<Id>]) -> Key {
    let mut h = Sha256::new();
    put_ir(&mut h, target, graph, funcs, plans);
    h.finalize().into()
}

/// The key of a source index entry: a domain tag (so it can never equal an object
/// key), the recipe, then the same serialization as [`key`].
pub fn source_key(
    target: &Target,
    recipe: &str,
    graph: &Graph,
    funcs: &[Func],
    plans: &[Vec<Id>],
) -> Key {
    let mut h = Sha256::new();
    put_str(&mut h, "fdc source index");
    put_str(&mut h, recipe);
    put_ir(&mut h, target, graph, funcs, plans);
    h.finalize().into()
}

/// The key of a source index entry for roles named by their definition
/// ([`crate::lookup_defined_in`]): its own domain tag, the recipe, the target, the
/// definition's key and the functions' names and input sizes.
pub fn defined_key(target: &Target, defined: &crate::Defined) -> Key {
    let mut h = Sha256::new();
    put_str(&mut h, "fdc source index by definition");
    put_str(&mut h, defined.recipe);
    put_target(&mut h, target);
    h.update(defined.definition);
    h.update((defined.funcs.len() as u64).to_le_bytes());
    for func in defined.funcs {
        put_str(&mut h, &func.name);
        for s in Slot::ALL {
            h.update((func.inputs.get(s) as u64).to_le_bytes());
        }
        h.update((func.outputs.len() as u64).to_le_bytes());
    }
    h.finalize().into()
}

/// The key of a roles cache entry (`crate::roles`): a domain tag and the definition's
/// bytes (which begin with the differentiation's identity). No target: roles are IR.
pub fn roles_key(definition: &[u8]) -> Key {
    let mut h = Sha256::new();
    put_str(&mut h, "fdc roles");
    h.update((definition.len() as u64).to_le_bytes());
    h.update(definition);
    h.finalize().into()
}

fn put_target(h: &mut Sha256, target: &Target) {
    for s in [
        target.backend,
        target.llvm,
        target.triple,
        target.cpu,
        target.features,
    ] {
        put_str(h, s);
    }
    h.update([target.opt_level]);
}

fn put_ir(h: &mut Sha256, target: &Target, graph: &Graph, funcs: &[Func], plans: &[Vec<Id>]) {
    put_target(h, target);
    h.update((funcs.len() as u64).to_le_bytes());
    let mut local: HashMap<Id, u32> = HashMap::new();
    for (func, nodes) in funcs.iter().zip(plans) {
        put_str(h, &func.name);
        for s in Slot::ALL {
            h.update((func.inputs.get(s) as u64).to_le_bytes());
        }
        h.update((nodes.len() as u64).to_le_bytes());
        local.clear();
        for (i, &id) in nodes.iter().enumerate() {
            local.insert(id, i as u32);
        }
        let l = |a: &Id| local[a];
        let mut buf = Vec::with_capacity(24);
        for &id in nodes {
            buf.clear();
            encode(graph, &graph.op(id), &l, &mut buf);
            h.update(&buf);
        }
        h.update((func.outputs.len() as u64).to_le_bytes());
        for o in &func.outputs {
            h.update(l(o).to_le_bytes());
        }
    }
}

fn put_str(h: &mut Sha256, s: &str) {
    h.update((s.len() as u64).to_le_bytes());
    h.update(s.as_bytes());
}

/// A self-delimiting byte encoding of one node with local operand numbers.
fn encode(graph: &Graph, op: &Op, l: &impl Fn(&Id) -> u32, out: &mut Vec<u8>) {
    let ids = |tag: u8, ids: &[Id], out: &mut Vec<u8>| {
        out.push(tag);
        for a in ids {
            out.extend_from_slice(&l(a).to_le_bytes());
        }
    };
    match *op {
        Op::Const(bits) => {
            out.push(0);
            out.extend_from_slice(&bits.to_le_bytes());
        }
        Op::Input(slot, i) => {
            out.push(1);
            out.push(slot as u8);
            out.extend_from_slice(&i.to_le_bytes());
        }
        Op::Sym(s) => {
            out.push(2);
            out.extend_from_slice(&s.to_le_bytes());
        }
        Op::Unary(u, a) => {
            let code = match u {
                Unary::Neg => 0,
                Unary::Sqrt => 1,
                Unary::Sin => 2,
                Unary::Cos => 3,
                Unary::Tan => 4,
                Unary::Exp => 5,
                Unary::Log => 6,
                Unary::Tanh => 7,
                Unary::Abs => 8,
            };
            ids(3, &[a], out);
            out.push(code);
        }
        Op::Add(a, b) => ids(4, &[a, b], out),
        Op::Sub(a, b) => ids(5, &[a, b], out),
        Op::Mul(a, b) => ids(6, &[a, b], out),
        Op::Div(a, b) => ids(7, &[a, b], out),
        Op::Powi(a, n) => {
            ids(8, &[a], out);
            out.extend_from_slice(&n.to_le_bytes());
        }
        Op::Pow(a, b) => ids(9, &[a, b], out),
        Op::Atan2(a, b) => ids(10, &[a, b], out),
        Op::Min(a, b) => ids(11, &[a, b], out),
        Op::Max(a, b) => ids(12, &[a, b], out),
        Op::Select(c, s) => {
            let code = match c {
                Cmp::Lt => 0,
                Cmp::Le => 1,
                Cmp::Gt => 2,
                Cmp::Ge => 3,
                Cmp::Eq => 4,
                Cmp::Ne => 5,
            };
            ids(13, &s, out);
            out.push(code);
        }
        Op::Spline(t, d, x) => {
            ids(14, &[x], out);
            out.push(d);
            // The table's contents, not its index: equal IR means equal tables.
            if let Some(table) = graph.table(t) {
                for w in table.words() {
                    out.extend_from_slice(&w.to_le_bytes());
                }
            }
        }
    }
}

pub fn hex(key: &Key) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn entry_path(dir: &Path, kind: Kind, key: &Key) -> PathBuf {
    dir.join(format!("{}.{}", hex(key), kind.ext()))
}

/// The default cache directory: `$XDG_CACHE_HOME/fdc`, else `$HOME/.cache/fdc`.
pub fn default_dir() -> Option<PathBuf> {
    dir_from(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"))
}

/// [`default_dir`] for given values of the two variables. Relative or empty values
/// are ignored, as the XDG base directory specification asks.
fn dir_from(xdg: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    let abs = |v: OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    if let Some(x) = xdg.and_then(abs) {
        return Some(x.join("fdc"));
    }
    home.and_then(abs).map(|h| h.join(".cache").join("fdc"))
}

/// What reading an entry found.
pub enum Lookup {
    Hit(Vec<u8>),
    Absent,
    /// A file exists but is not a valid entry for this key (the reason says why).
    Invalid(String),
}

pub fn read(dir: &Path, kind: Kind, key: &Key) -> Lookup {
    let path = entry_path(dir, kind, key);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Absent,
        Err(e) => return Lookup::Invalid(format!("cannot read {}: {e}", path.display())),
    };
    match check(&bytes, kind, key) {
        Ok(()) => Lookup::Hit(bytes[HEADER..].to_vec()),
        Err(why) => Lookup::Invalid(format!("{}: {why}", path.display())),
    }
}

fn check(bytes: &[u8], kind: Kind, key: &Key) -> Result<(), &'static str> {
    if bytes.len() < HEADER {
        return Err("truncated header");
    }
    if &bytes[..8] != kind.magic() {
        return Err("not an fdc cache entry of this format");
    }
    if &bytes[8..40] != key {
        return Err("entry stored under the wrong key");
    }
    let len = u64::from_le_bytes(bytes[40..48].try_into().expect("8 bytes"));
    if len != (bytes.len() - HEADER) as u64 {
        return Err("payload length does not match (truncated?)");
    }
    let sum: [u8; 32] = Sha256::digest(&bytes[HEADER..]).into();
    if bytes[48..80] != sum {
        return Err("payload checksum does not match (corrupted)");
    }
    Ok(())
}

/// Writes an entry atomically: temporary file in `dir`, then rename.
pub fn write(dir: &Path, kind: Kind, key: &Key, object: &[u8]) -> Result<(), String> {
    let path = entry_path(dir, kind, key);
    let ctx = |e: std::io::Error| format!("cannot write cache entry {}: {e}", path.display());
    std::fs::create_dir_all(dir).map_err(ctx)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".fdcobj-")
        .tempfile_in(dir)
        .map_err(ctx)?;
    let sum: [u8; 32] = Sha256::digest(object).into();
    let f = tmp.as_file_mut();
    f.write_all(kind.magic()).map_err(ctx)?;
    f.write_all(key).map_err(ctx)?;
    f.write_all(&(object.len() as u64).to_le_bytes())
        .map_err(ctx)?;
    f.write_all(&sum).map_err(ctx)?;
    f.write_all(object).map_err(ctx)?;
    tmp.persist(&path).map_err(|e| ctx(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_dir_follows_xdg_then_home() {
        let os = |s: &str| Some(OsString::from(s));
        assert_eq!(
            dir_from(os("/x/cache"), os("/home/u")),
            Some(PathBuf::from("/x/cache/fdc"))
        );
        assert_eq!(
            dir_from(None, os("/home/u")),
            Some(PathBuf::from("/home/u/.cache/fdc"))
        );
        assert_eq!(
            dir_from(os("relative"), os("/home/u")),
            Some(PathBuf::from("/home/u/.cache/fdc"))
        );
        assert_eq!(dir_from(os(""), None), None);
    }

    #[test]
    fn entries_round_trip_and_reject_damage() {
        let dir = tempfile::tempdir().unwrap();
        let key = [7u8; 32];
        let obj = b"object bytes".to_vec();
        let o = Kind::Object;
        assert!(matches!(read(dir.path(), o, &key), Lookup::Absent));
        write(dir.path(), o, &key, &obj).unwrap();
        match read(dir.path(), o, &key) {
            Lookup::Hit(b) => assert_eq!(b, obj),
            _ => panic!("expected a hit"),
        }
        // Same file under another key: refused.
        let other = [8u8; 32];
        std::fs::copy(
            entry_path(dir.path(), o, &key),
            entry_path(dir.path(), o, &other),
        )
        .unwrap();
        assert!(
            matches!(read(dir.path(), o, &other), Lookup::Invalid(m) if m.contains("wrong key"))
        );
        // An object entry renamed to a source index entry: refused by its magic.
        let src = entry_path(dir.path(), Kind::Source, &key);
        std::fs::copy(entry_path(dir.path(), o, &key), &src).unwrap();
        assert!(
            matches!(read(dir.path(), Kind::Source, &key), Lookup::Invalid(m) if m.contains("not an fdc"))
        );
        std::fs::remove_file(src).unwrap();
        // Only the entry and its copy: the temporary file was renamed, not left over.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
