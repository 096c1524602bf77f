//! The targets a local search has yet to cover, as a list with constant-time
//! add, remove and pick by index: a removed entry's place goes to the last
//! one. Shared by the array search ([`crate::anneal`]) and the starter search
//! ([`crate::starter`]), whose targets are pairs and difference slots.

const NOT_LISTED: u32 = u32::MAX;

/// The uncovered targets among `0..slots`, in no particular order.
pub(crate) struct Uncovered {
    items: Vec<u32>,
    /// `position[t]`: where target `t` stands in `items`, or [`NOT_LISTED`].
    position: Vec<u32>,
}

impl Uncovered {
    /// An empty list of targets numbered below `slots`.
    pub(crate) fn new(slots: usize) -> Self {
        Self {
            items: Vec::new(),
            position: vec![NOT_LISTED; slots],
        }
    }

    /// Adds target `t`, which must not be listed.
    pub(crate) fn list(&mut self, t: usize) {
        self.position[t] = self.items.len() as u32;
        self.items.push(t as u32);
    }

    /// Removes target `t`; a target not listed is left alone (in the array
    /// search, an excluded pair passing through a two-cell move).
    pub(crate) fn unlist(&mut self, t: usize) {
        if self.position[t] == NOT_LISTED {
            return;
        }
        let at = self.position[t] as usize;
        self.position[t] = NOT_LISTED;
        if let Some(last) = self.items.pop()
            && at < self.items.len()
        {
            self.items[at] = last;
            self.position[last as usize] = at as u32;
        }
    }

    /// How many targets are listed.
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether every target is covered.
    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The target at index `i` (below [`Uncovered::len`]).
    pub(crate) fn get(&self, i: usize) -> usize {
        self.items[i] as usize
    }
}

#[cfg(test)]
mod tests {
    use super::Uncovered;

    #[test]
    fn removing_moves_the_last_into_the_gap() {
        let mut u = Uncovered::new(5);
        for t in [4, 1, 3] {
            u.list(t);
        }
        u.unlist(4);
        u.unlist(0); // never listed: nothing changes
        assert_eq!((u.len(), u.get(0), u.get(1)), (2, 3, 1));
        u.unlist(1);
        u.unlist(3);
        assert!(u.is_empty());
        u.list(1);
        assert_eq!((u.len(), u.get(0)), (1, 1));
    }
}
