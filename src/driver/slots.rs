//! The one generation-tagged slot map behind the handles C holds (files and batch contexts),
//! in slotmap's shape: a key is `(generation << 32) | (index + 1)` as a `usize`, so it is never
//! 0 (never NULL as a `void *`), never dereferenced, and a stale key fails its look-up even
//! after its slot is reused (removal bumps the slot's generation).
#![deny(unsafe_code)]

/// Values by generation-tagged key.
pub(super) struct Slots<T> {
    slots: Vec<(u32, Option<T>)>,
    free: Vec<usize>,
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Slots {
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slots<T> {
    #[inline(always)]
    fn decode(key: usize) -> Option<(usize, u32)> {
        let k = key as u64;
        let index = (k & 0xffff_ffff).checked_sub(1)? as usize;
        Some((index, (k >> 32) as u32))
    }

    /// Store `value`; returns its key and slot index.
    pub(super) fn insert(&mut self, value: T) -> (usize, usize) {
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                self.slots.push((1, None));
                self.slots.len() - 1
            }
        };
        let slot = &mut self.slots[index];
        slot.1 = Some(value);
        (
            ((u64::from(slot.0) << 32) | (index as u64 + 1)) as usize,
            index,
        )
    }

    /// The value behind a current key.
    #[inline(always)]
    pub(super) fn get(&self, key: usize) -> Option<&T> {
        let (index, gen) = Self::decode(key)?;
        match self.slots.get(index)? {
            (g, Some(v)) if *g == gen => Some(v),
            _ => None,
        }
    }

    /// The value in slot `index`, whatever its generation.
    pub(super) fn at(&self, index: usize) -> Option<&T> {
        self.slots.get(index)?.1.as_ref()
    }

    /// Remove the value behind a current key; the key goes stale. Returns the value and its
    /// slot index.
    pub(super) fn remove(&mut self, key: usize) -> Option<(T, usize)> {
        let (index, gen) = Self::decode(key)?;
        let slot = self.slots.get_mut(index)?;
        if slot.0 != gen {
            return None;
        }
        let v = slot.1.take()?;
        slot.0 = slot.0.wrapping_add(1).max(1);
        self.free.push(index);
        Some((v, index))
    }

    /// Every value with its current key.
    pub(super) fn entries(&self) -> impl Iterator<Item = (usize, &T)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(index, (gen, v))| {
                v.as_ref()
                    .map(|v| (((u64::from(*gen) << 32) | (index as u64 + 1)) as usize, v))
            })
    }

    /// Remove every value; every key goes stale.
    pub(super) fn drain(&mut self) -> Vec<T> {
        let mut removed = Vec::new();
        for (index, slot) in self.slots.iter_mut().enumerate() {
            if let Some(v) = slot.1.take() {
                slot.0 = slot.0.wrapping_add(1).max(1);
                self.free.push(index);
                removed.push(v);
            }
        }
        removed
    }

    #[cfg(test)]
    /// Number of values.
    pub(super) fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.1.is_some()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_never_zero_and_go_stale() {
        let mut s = Slots::default();
        let (k1, i1) = s.insert("a");
        assert_ne!(k1, 0);
        assert_eq!(s.get(k1), Some(&"a"));
        assert_eq!(s.at(i1), Some(&"a"));
        assert_eq!(s.remove(k1), Some(("a", i1)));
        assert_eq!(s.remove(k1), None, "stale");
        assert_eq!(s.get(k1), None);
        let (k2, i2) = s.insert("b");
        assert_eq!(i2, i1, "the slot is reused");
        assert_ne!(k2, k1, "with a new generation");
        assert_eq!(s.get(k1), None);
        assert_eq!(s.get(0), None);
        assert_eq!(s.get(usize::MAX), None);
        let (k3, _) = s.insert("c");
        assert_eq!(s.len(), 2);
        let mut entries: Vec<_> = s.entries().map(|(k, v)| (k, *v)).collect();
        entries.sort_unstable();
        let mut want = vec![(k2, "b"), (k3, "c")];
        want.sort_unstable();
        assert_eq!(entries, want, "the current keys of the values held");
        let mut all = s.drain();
        all.sort();
        assert_eq!(all, ["b", "c"]);
        assert_eq!((s.get(k2), s.len()), (None, 0));
    }
}
