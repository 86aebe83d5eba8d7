//! The roles cache: an element type's derived roles, as bytes its caller encodes
//! (`fdc_diff::stored`), keyed by the type's definition before differentiation. A hit
//! lets the caller skip the differentiation; the object cache is then asked by the
//! same key ([`crate::lookup_defined_in`]). Entries are checked like every cache entry
//! (magic, key, length, checksum): anything else is [`Lookup::Invalid`].

use crate::{cache, cache_dir, Options};

pub use crate::cache::Key;

/// What reading an entry found.
pub enum Lookup {
    Hit(Vec<u8>),
    /// No entry, or no cache (off, or no directory known).
    Absent,
    /// A file exists but is no valid entry for this key (the reason says why).
    Invalid(String),
}

/// The key of the definition `definition` (bytes that begin with the identity of
/// what derives roles from them).
pub fn key(definition: &[u8]) -> Key {
    cache::roles_key(definition)
}

/// The entry stored under `key` in the cache of `opts`.
pub fn read(opts: &Options, key: &Key) -> Lookup {
    let Some(dir) = cache_dir(opts).0 else {
        return Lookup::Absent;
    };
    match cache::read(&dir, cache::Kind::Roles, key) {
        cache::Lookup::Hit(b) => Lookup::Hit(b),
        cache::Lookup::Absent => Lookup::Absent,
        cache::Lookup::Invalid(why) => Lookup::Invalid(why),
    }
}

/// Stores `roles` under `key` (atomically); nothing without a cache directory.
pub fn write(opts: &Options, key: &Key, roles: &[u8]) -> Result<(), String> {
    match cache_dir(opts).0 {
        Some(dir) => cache::write(&dir, cache::Kind::Roles, key, roles),
        None => Ok(()),
    }
}

/// The file of the entry `key`, if the cache of `opts` has a directory (tests damage it).
pub fn entry_path(opts: &Options, key: &Key) -> Option<std::path::PathBuf> {
    let dir = cache_dir(opts).0?;
    Some(cache::entry_path(&dir, cache::Kind::Roles, key))
}
