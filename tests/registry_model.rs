//! `Registry` against a model (a list of entries in insertion order), for capacities 0, 1
//! and 4, through arbitrary inserts, lookups-or-inserts (failing or not), removals and
//! re-insertions: every answer, error and the iteration order as the docs say; a full
//! registry evicts nothing; a removal makes room.

use proptest::prelude::*;
use tailguard::registry::{InsertError, Registry, RegistryFull};

#[derive(Debug, Clone, Copy)]
enum Op {
    Insert(u8, u32),
    GetOrInsert(u8, u32, bool),
    Remove(u8),
}

fn op() -> impl Strategy<Value = Op> {
    // Few keys, so that keys come back after a removal and full registries are common.
    let key = 0u8..6;
    prop_oneof![
        (key.clone(), any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
        (key.clone(), any::<u32>(), any::<bool>()).prop_map(|(k, v, f)| Op::GetOrInsert(k, v, f)),
        key.prop_map(Op::Remove),
    ]
}

fn check<const CAP: usize>(ops: &[Op]) -> Result<(), TestCaseError> {
    let mut registry: Registry<u8, u32, CAP> = Registry::new();
    let mut model: Vec<(u8, u32)> = Vec::new();
    let full = RegistryFull { capacity: CAP };
    for &op in ops {
        match op {
            Op::Insert(k, v) => {
                let got = registry.insert(k, v);
                let want = match model.iter().position(|(key, _)| *key == k) {
                    Some(i) => Ok(Some(core::mem::replace(&mut model[i].1, v))),
                    None if model.len() < CAP => {
                        model.push((k, v));
                        Ok(None)
                    }
                    None => Err((k, v)),
                };
                prop_assert_eq!(got, want);
            }
            Op::GetOrInsert(k, v, fails) => {
                let mut called = false;
                let room = model.len() < CAP;
                let got = registry
                    .get_or_try_insert_with(k, || {
                        called = true;
                        if fails {
                            Err("no route")
                        } else {
                            Ok(v)
                        }
                    })
                    .copied();
                let present = model.iter().find(|(key, _)| *key == k).map(|&(_, v)| v);
                let want = match present {
                    Some(old) => Ok(old),
                    None if !room => Err(InsertError::Full(full)),
                    None if fails => Err(InsertError::Make("no route")),
                    None => {
                        model.push((k, v));
                        Ok(v)
                    }
                };
                prop_assert_eq!(got, want);
                // `make` runs only for an absent key with room for it.
                prop_assert_eq!(called, present.is_none() && room);
            }
            Op::Remove(k) => {
                let want = model
                    .iter()
                    .position(|(key, _)| *key == k)
                    .map(|i| model.remove(i).1);
                prop_assert_eq!(registry.remove(&k), want);
            }
        }
        prop_assert_eq!(registry.len(), model.len());
        prop_assert_eq!(registry.is_empty(), model.is_empty());
        prop_assert_eq!(registry.capacity(), CAP);
        let entries: Vec<(u8, u32)> = registry.iter().map(|(k, v)| (*k, *v)).collect();
        prop_assert_eq!(&entries, &model);
        for k in 0..6u8 {
            let want = model.iter().find(|(key, _)| *key == k).map(|(_, v)| v);
            prop_assert_eq!(registry.get(&k), want);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Every operation answers as the model does, at capacities 0, 1 and 4.
    #[test]
    fn a_registry_answers_as_its_model(ops in proptest::collection::vec(op(), 0..64)) {
        check::<0>(&ops)?;
        check::<1>(&ops)?;
        check::<4>(&ops)?;
    }
}
