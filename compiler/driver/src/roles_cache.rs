//! The driver's roles store ([`fdc_lower::stored::RoleStore`]) over the backend's
//! roles cache (`fdc_backend::roles`): the lowering asks it for each element type's
//! roles before differentiating, by the type's definition. Problems never fail a
//! build: a damaged or foreign entry is a miss (rebuilt and rewritten), with a
//! warning, like the object cache's.

use fdc_lower::stored::{DefinitionKey, RoleStore};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

pub(crate) struct Store {
    opts: fdc_backend::Options,
    /// Types whose roles came from the cache.
    pub hits: AtomicUsize,
    pub warnings: Mutex<Vec<String>>,
}

impl Store {
    /// The store of the object cache `opts` names; `None` when that cache is off.
    pub fn of(opts: &fdc_backend::Options) -> Option<Store> {
        (opts.cache != fdc_backend::CacheMode::Off).then(|| Store {
            opts: opts.clone(),
            hits: AtomicUsize::new(0),
            warnings: Mutex::default(),
        })
    }

    fn warn(&self, w: String) {
        let mut ws = self.warnings.lock().unwrap_or_else(|e| e.into_inner());
        ws.push(format!("warning: roles cache: {w}\n"));
    }

    /// The warnings so far, and the hit count.
    pub fn take(self) -> (usize, Vec<String>) {
        let ws = self
            .warnings
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        (self.hits.into_inner(), ws)
    }
}

impl RoleStore for Store {
    fn key(&self, definition: &[u8]) -> DefinitionKey {
        fdc_backend::roles::key(definition)
    }

    fn get(&self, key: &DefinitionKey) -> Option<Vec<u8>> {
        match fdc_backend::roles::read(&self.opts, key) {
            fdc_backend::roles::Lookup::Hit(b) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                Some(b)
            }
            fdc_backend::roles::Lookup::Absent => None,
            fdc_backend::roles::Lookup::Invalid(why) => {
                self.warn(format!("invalid entry {why}; rebuilt"));
                None
            }
        }
    }

    fn put(&self, key: &DefinitionKey, roles: &[u8]) {
        if let Err(e) = fdc_backend::roles::write(&self.opts, key, roles) {
            self.warn(e);
        }
    }

    fn refused(&self, key: &DefinitionKey) {
        self.hits.fetch_sub(1, Ordering::Relaxed);
        let file = fdc_backend::roles::entry_path(&self.opts, key)
            .map_or_else(String::new, |p| format!(" {}", p.display()));
        self.warn(format!(
            "entry{file} is no element type of this build; rebuilt"
        ));
    }
}
