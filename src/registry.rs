//! [`Registry`]: a fixed-capacity, insertion-ordered map without heap, for the few tens of
//! keys a device or gateway tracks (one hedger per host or route, say).

use core::fmt;

use heapless::Vec;

/// The registry is full: the entry was not added (and nothing was evicted).
///
/// ```
/// use tailguard::registry::{InsertError, Registry, RegistryFull};
///
/// let mut registry: Registry<&str, u32, 1> = Registry::new();
/// registry.get_or_try_insert_with("a", || Ok::<_, &str>(1)).unwrap();
/// let err = registry.get_or_try_insert_with("b", || Ok::<_, &str>(2)).unwrap_err();
/// assert_eq!(err, InsertError::Full(RegistryFull { capacity: 1 }));
/// assert_eq!(err.to_string(), "registry full (1 targets)");
/// assert_eq!(registry.get(&"a"), Some(&1)); // nothing evicted
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct RegistryFull {
    /// The registry's capacity.
    pub capacity: usize,
}

impl fmt::Display for RegistryFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "registry full ({} targets)", self.capacity)
    }
}

impl core::error::Error for RegistryFull {}

/// Why [`Registry::get_or_try_insert_with`] returned no entry.
///
/// ```
/// use tailguard::registry::{InsertError, Registry};
///
/// let mut registry: Registry<u16, u32, 4> = Registry::new();
/// let err = registry.get_or_try_insert_with(8080, || Err("no route")).unwrap_err();
/// assert_eq!(err, InsertError::Make("no route"));
/// assert_eq!(err.to_string(), "making the entry failed: no route");
/// assert!(registry.is_empty()); // nothing added
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum InsertError<E> {
    /// The registry is full.
    Full(RegistryFull),
    /// Making the entry failed.
    Make(E),
}

impl<E: fmt::Display> fmt::Display for InsertError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InsertError::Full(full) => full.fmt(f),
            InsertError::Make(e) => write!(f, "making the entry failed: {e}"),
        }
    }
}

impl<E: core::error::Error> core::error::Error for InsertError<E> {}

/// A map of at most `CAP` keys to their values, without heap.
///
/// Lookups take `&self`, so a registry built at start-up can be shared by every thread
/// when its values are themselves shareable (the crate's hedgers are lock-free). Adding a
/// key takes `&mut self` (wrap the registry in a mutex if keys appear at run time). A full
/// registry refuses new keys with [`RegistryFull`]; it never evicts, so no entry vanishes
/// behind its owner's back. Lookups scan the keys, which suits tens of entries. Entries
/// stay in insertion order, removals included.
///
/// One hedger per region, all within one budget (shared by reference; an `Arc` or a
/// `static` works the same):
///
/// ```
/// use tailguard::budget::{Budget, RatioBudget};
/// use tailguard::clock::ManualClock;
/// use tailguard::hedge::{HedgeConfig, Hedger};
/// use tailguard::registry::Registry;
/// use tailguard::sketch::presets;
///
/// let clock = ManualClock::new();
/// let budget = RatioBudget::new(0.1, 5).unwrap();
/// let make = || Hedger::with_budget(&clock, HedgeConfig::new(), &budget, presets::INT_LATENCY_LAYOUT);
/// let mut hedgers: Registry<&str, _, 2> = Registry::new();
/// hedgers.get_or_try_insert_with("eu-1", make).unwrap();
/// hedgers.get_or_try_insert_with("us-1", make).unwrap();
/// assert!(hedgers.get_or_try_insert_with("ap-1", make).is_err()); // full
///
/// let eu = hedgers.get(&"eu-1").unwrap();
/// let us = hedgers.get(&"us-1").unwrap();
/// budget.drain();
/// for _ in 0..5 {
///     eu.start();
///     us.start();
/// }
/// // Ten requests over both regions paid for one hedge, wherever it is needed.
/// assert!(us.budget().try_acquire());
/// assert!(!eu.budget().try_acquire());
/// ```
pub struct Registry<K, V, const CAP: usize> {
    /// In insertion order (a removal shifts the later entries down).
    entries: Vec<(K, V), CAP>,
}

impl<K: Eq, V, const CAP: usize> Registry<K, V, CAP> {
    /// An empty registry.
    ///
    /// ```
    /// use tailguard::registry::Registry;
    ///
    /// let registry: Registry<&str, u32, 4> = Registry::new();
    /// assert!(registry.is_empty());
    /// assert_eq!((registry.len(), registry.capacity()), (0, 4));
    /// assert_eq!(registry.get(&"eu-1"), None);
    /// ```
    pub const fn new() -> Self {
        Registry {
            entries: Vec::new(),
        }
    }

    fn position(&self, key: &K) -> Option<usize> {
        self.entries.iter().position(|(k, _)| k == key)
    }

    /// The value of `key`, if present.
    ///
    /// ```
    /// use tailguard::registry::Registry;
    ///
    /// let mut ports: Registry<u16, &str, 4> = Registry::new();
    /// ports.insert(443, "https").unwrap();
    /// assert_eq!(ports.get(&443), Some(&"https"));
    /// assert_eq!(ports.get(&80), None);
    /// ```
    pub fn get(&self, key: &K) -> Option<&V> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Adds `value` under `key`. Errors, giving both back, if the registry is full; an
    /// existing entry is replaced (keeping its place) and returned.
    ///
    /// ```
    /// use tailguard::registry::Registry;
    ///
    /// let mut registry: Registry<&str, u32, 2> = Registry::new();
    /// assert_eq!(registry.insert("a", 1), Ok(None));
    /// assert_eq!(registry.insert("b", 2), Ok(None));
    /// assert_eq!(registry.insert("a", 10), Ok(Some(1))); // replaced, keeping its place
    /// assert_eq!(registry.insert("c", 3), Err(("c", 3))); // full: both given back
    /// let entries: Vec<_> = registry.iter().map(|(k, v)| (*k, *v)).collect();
    /// assert_eq!(entries, [("a", 10), ("b", 2)]);
    /// ```
    pub fn insert(&mut self, key: K, value: V) -> Result<Option<V>, (K, V)> {
        if let Some((_, old)) = self.entries.iter_mut().find(|(k, _)| *k == key) {
            return Ok(Some(core::mem::replace(old, value)));
        }
        self.entries.push((key, value)).map(|()| None)
    }

    /// The value of `key`, made by `make` and added if absent.
    ///
    /// ```
    /// use tailguard::registry::{InsertError, Registry};
    ///
    /// let mut registry: Registry<&str, u32, 2> = Registry::new();
    /// assert_eq!(registry.get_or_try_insert_with("a", || Ok::<_, ()>(1)), Ok(&1));
    /// // Present: `make` is not called.
    /// assert_eq!(registry.get_or_try_insert_with("a", || Ok::<_, ()>(99)), Ok(&1));
    /// // A failing `make` adds nothing.
    /// assert_eq!(registry.get_or_try_insert_with("b", || Err(())), Err(InsertError::Make(())));
    /// assert_eq!(registry.len(), 1);
    /// ```
    pub fn get_or_try_insert_with<E>(
        &mut self,
        key: K,
        make: impl FnOnce() -> Result<V, E>,
    ) -> Result<&V, InsertError<E>> {
        let full = RegistryFull { capacity: CAP };
        let pos = match self.position(&key) {
            Some(pos) => pos,
            None => {
                if self.entries.is_full() {
                    return Err(InsertError::Full(full));
                }
                let value = make().map_err(InsertError::Make)?;
                self.entries
                    .push((key, value))
                    .map_err(|_| InsertError::Full(full))?;
                self.entries.len().wrapping_sub(1) // just pushed: len >= 1
            }
        };
        self.entries
            .get(pos)
            .map(|(_, v)| v)
            .ok_or(InsertError::Full(full))
    }

    /// Removes `key`'s entry and returns it; the entries after it keep their order.
    ///
    /// ```
    /// use tailguard::registry::Registry;
    ///
    /// let mut registry: Registry<&str, u32, 3> = Registry::new();
    /// for (key, value) in [("a", 1), ("b", 2), ("c", 3)] {
    ///     registry.insert(key, value).unwrap();
    /// }
    /// assert_eq!(registry.remove(&"a"), Some(1));
    /// assert_eq!(registry.remove(&"a"), None); // already gone
    /// let keys: Vec<_> = registry.iter().map(|(k, _)| *k).collect();
    /// assert_eq!(keys, ["b", "c"]);
    /// assert!(registry.insert("d", 4).is_ok()); // room again
    /// ```
    pub fn remove(&mut self, key: &K) -> Option<V> {
        let pos = self.position(key)?;
        // `pos` came from `position`: in range, so `remove` cannot panic.
        #[allow(clippy::indexing_slicing)]
        Some(self.entries.remove(pos).1)
    }

    /// Every entry, in insertion order (to report statistics per target, say).
    ///
    /// ```
    /// use tailguard::registry::Registry;
    ///
    /// let mut requests: Registry<&str, u32, 4> = Registry::new();
    /// requests.insert("us-1", 7).unwrap();
    /// requests.insert("eu-1", 3).unwrap();
    /// requests.insert("us-1", 8).unwrap(); // replaced in place
    /// let report: Vec<String> = requests.iter().map(|(k, v)| format!("{k}={v}")).collect();
    /// assert_eq!(report, ["us-1=8", "eu-1=3"]);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// How many targets are registered.
    ///
    /// ```
    /// use tailguard::registry::Registry;
    ///
    /// let mut registry: Registry<u8, (), 4> = Registry::new();
    /// registry.insert(1, ()).unwrap();
    /// registry.insert(2, ()).unwrap();
    /// registry.insert(1, ()).unwrap(); // the same key: replaced, not added
    /// assert_eq!(registry.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no target is registered.
    ///
    /// ```
    /// use tailguard::registry::Registry;
    ///
    /// let mut registry: Registry<u8, u8, 2> = Registry::new();
    /// assert!(registry.is_empty());
    /// registry.insert(1, 10).unwrap();
    /// assert!(!registry.is_empty());
    /// registry.remove(&1);
    /// assert!(registry.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The most targets the registry holds.
    ///
    /// ```
    /// use tailguard::registry::Registry;
    ///
    /// let mut registry: Registry<u8, u8, 2> = Registry::new();
    /// assert_eq!(registry.capacity(), 2);
    /// registry.insert(1, 1).unwrap();
    /// registry.insert(2, 2).unwrap();
    /// assert_eq!(registry.len(), registry.capacity()); // full
    /// assert_eq!(registry.insert(3, 3), Err((3, 3)));
    /// ```
    pub const fn capacity(&self) -> usize {
        CAP
    }
}

impl<K: Eq, V, const CAP: usize> Default for Registry<K, V, CAP> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: fmt::Debug + Eq, V, const CAP: usize> fmt::Debug for Registry<K, V, CAP> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field(
                "keys",
                &self.entries.iter().map(|(k, _)| k).collect::<Vec<_, CAP>>(),
            )
            .field("capacity", &CAP)
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn full_registry_is_a_clear_error_and_evicts_nothing() {
        let mut r: Registry<(u8, u8), u32, 2> = Registry::new();
        assert_eq!(
            *r.get_or_try_insert_with((1, 1), || Ok::<_, ()>(10))
                .unwrap(),
            10
        );
        assert_eq!(
            *r.get_or_try_insert_with((1, 1), || Ok::<_, ()>(99))
                .unwrap(),
            10
        );
        assert_eq!(
            *r.get_or_try_insert_with((2, 1), || Ok::<_, ()>(20))
                .unwrap(),
            20
        );
        assert_eq!(
            r.get_or_try_insert_with((3, 1), || Ok::<_, ()>(30)),
            Err(InsertError::Full(RegistryFull { capacity: 2 }))
        );
        assert_eq!(r.insert((3, 1), 30), Err(((3, 1), 30)));
        assert_eq!(r.len(), 2);
        assert_eq!(r.get(&(1, 1)), Some(&10));
        assert_eq!(r.remove(&(1, 1)), Some(10));
        assert_eq!(
            *r.get_or_try_insert_with((3, 1), || Ok::<_, ()>(30))
                .unwrap(),
            30
        );
        assert_eq!(r.iter().count(), 2);
    }

    /// Removal shifts the later entries down, in their order.
    #[test]
    fn iteration_keeps_insertion_order_after_removals() {
        let mut r: Registry<u8, u8, 5> = Registry::new();
        for k in 1..=5 {
            r.insert(k, k * 10).unwrap();
        }
        assert_eq!(r.remove(&2), Some(20));
        assert_eq!(r.insert(4, 41), Ok(Some(40)));
        r.insert(6, 60).unwrap();
        let order: std::vec::Vec<_> = r.iter().map(|(k, v)| (*k, *v)).collect();
        assert_eq!(order, [(1, 10), (3, 30), (4, 41), (5, 50), (6, 60)]);
        assert_eq!(r.remove(&9), None);
    }

    #[test]
    fn a_failing_constructor_adds_nothing() {
        let mut r: Registry<u8, u32, 4> = Registry::new();
        assert_eq!(
            r.get_or_try_insert_with(1, || Err("bad")),
            Err(InsertError::Make("bad"))
        );
        assert!(r.is_empty());
        assert_eq!(r.capacity(), 4);
    }
}
