//! The lowering's side of the roles cache: before differentiating an element type,
//! ask a [`RoleStore`] for the roles derived earlier from the same definition
//! ([`fdc_diff::ElementBuilder::definition`]); on a hit the stored roles are added to
//! the graph ([`fdc_diff::stored::decode`]) and `finish` does not run. The lowering
//! knows no files: the driver implements the store over the backend's cache.

use crate::Lowering;
use fdc_diff::{DiffError, ElementBuilder, ElementFunctions};
use fdc_ir::Graph;

/// A type's definition key: a digest of its definition bytes, made by the store.
pub type DefinitionKey = [u8; 32];

/// Where derived roles are kept between builds.
pub trait RoleStore: Sync {
    /// The key of a definition (a digest of `definition`).
    fn key(&self, definition: &[u8]) -> DefinitionKey;
    /// The bytes stored under `key`, if any.
    fn get(&self, key: &DefinitionKey) -> Option<Vec<u8>>;
    /// Stores the encoded roles of a definition (failures are the store's to report).
    fn put(&self, key: &DefinitionKey, roles: &[u8]);
    /// The bytes under `key` were no element type of this build: rebuilt and rewritten.
    fn refused(&self, key: &DefinitionKey);
}

/// How a type's roles were obtained.
pub(crate) enum Derived {
    /// Differentiated now; with the key to store them under, if there is a store.
    Fresh(Option<DefinitionKey>),
    /// From the store.
    Stored(DefinitionKey),
}

impl Lowering<'_> {
    /// `b.finish()`, unless the store holds the roles of `b`'s definition.
    pub(crate) fn finish_type(
        &self,
        mut b: ElementBuilder,
    ) -> (Result<ElementFunctions, DiffError>, Derived) {
        let Some((store, def)) = self.store.zip(b.definition()) else {
            return (b.finish(), Derived::Fresh(None));
        };
        let key = store.key(&def);
        if let Some(bytes) = store.get(&key) {
            // A refused entry may have added some of its nodes to the graph before
            // failing: unused nodes, in no role's cone.
            match fdc_diff::stored::decode(&bytes, b.graph()) {
                Some(ty) => return (Ok(ty), Derived::Stored(key)),
                None => store.refused(&key),
            }
        }
        (b.finish(), Derived::Fresh(Some(key)))
    }

    /// Adds a type (its roles nodes of `graph`) and stores freshly derived roles.
    pub(crate) fn push_type(&mut self, graph: &Graph, ty: ElementFunctions, how: Derived) -> usize {
        let key = match how {
            Derived::Fresh(Some(key)) => {
                if let Some(store) = self.store {
                    store.put(&key, &fdc_diff::stored::encode(graph, &ty));
                }
                Some(key)
            }
            Derived::Fresh(None) => None,
            Derived::Stored(key) => Some(key),
        };
        self.types.push(ty);
        self.definition_keys.push(key);
        self.types.len() - 1
    }
}
