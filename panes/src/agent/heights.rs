//! Block heights in a Fenwick tree: set one height and sum any prefix in O(log n), so the
//! scroll position and the lines below it are known without walking the transcript.

/// Heights of blocks, indexable and summable.
#[derive(Debug, Default, Clone)]
pub(crate) struct Heights {
    values: Vec<usize>,
    /// 1-based Fenwick tree over `values`.
    tree: Vec<usize>,
}

fn lowbit(i: usize) -> usize {
    i & i.wrapping_neg()
}

impl Heights {
    /// Heights built from `values` in O(n).
    pub(crate) fn from_values(values: Vec<usize>) -> Self {
        let mut tree = vec![0; values.len() + 1];
        for (i, v) in values.iter().enumerate() {
            let k = i + 1;
            tree[k] += v;
            let parent = k + lowbit(k);
            if parent < tree.len() {
                tree[parent] += tree[k];
            }
        }
        Heights { values, tree }
    }

    /// Number of blocks.
    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }

    /// Block `i`'s height (0 past the end).
    pub(crate) fn get(&self, i: usize) -> usize {
        self.values.get(i).copied().unwrap_or(0)
    }

    /// Appends a block of height `h`.
    pub(crate) fn push(&mut self, h: usize) {
        if self.tree.is_empty() {
            // Slot 0 is unused: the tree is 1-based.
            self.tree.push(0);
        }
        let k = self.values.len() + 1;
        // Node k covers (k - lowbit(k), k]: the new value plus the sum of the ones before.
        let covered = self.prefix(k - 1) - self.prefix(k - lowbit(k));
        self.values.push(h);
        self.tree.push(h + covered);
    }

    /// Sets block `i`'s height.
    pub(crate) fn set(&mut self, i: usize, h: usize) {
        let Some(old) = self.values.get(i).copied() else {
            return;
        };
        if old == h {
            return;
        }
        self.values[i] = h;
        let mut k = i + 1;
        while k < self.tree.len() {
            self.tree[k] = self.tree[k] + h - old;
            k += lowbit(k);
        }
    }

    /// Sum of the heights of blocks `0..i`.
    pub(crate) fn prefix(&self, i: usize) -> usize {
        let mut k = i.min(self.values.len());
        let mut sum = 0;
        while k > 0 {
            sum += self.tree[k];
            k -= lowbit(k);
        }
        sum
    }

    /// Sum of all heights.
    pub(crate) fn total(&self) -> usize {
        self.prefix(self.values.len())
    }

    /// The block holding line `line` (lines counted from the first block's first) and the
    /// line within it; the last block's last line past the end, `None` with no lines.
    pub(crate) fn find(&self, line: usize) -> Option<(usize, usize)> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let line = line.min(total - 1);
        // Descend the tree for the most blocks whose heights sum to at most `line`.
        let mut pos = 0;
        let mut rest = line;
        let mut step = (self.tree.len().max(1)).next_power_of_two();
        while step > 0 {
            let next = pos + step;
            if next < self.tree.len() && self.tree[next] <= rest {
                pos = next;
                rest -= self.tree[next];
            }
            step /= 2;
        }
        Some((pos, rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_sums_follow_updates() {
        let mut h = Heights::from_values(vec![3, 1, 4, 1, 5]);
        assert_eq!(h.total(), 14);
        assert_eq!(h.prefix(2), 4);
        h.set(1, 10);
        assert_eq!(h.prefix(2), 13);
        assert_eq!(h.total(), 23);
        h.set(1, 0);
        assert_eq!(h.total(), 13);
    }

    #[test]
    fn find_locates_lines_and_skips_empty_blocks() {
        let h = Heights::from_values(vec![2, 0, 3, 1]);
        assert_eq!(h.find(0), Some((0, 0)));
        assert_eq!(h.find(1), Some((0, 1)));
        assert_eq!(h.find(2), Some((2, 0)), "the empty block holds no line");
        assert_eq!(h.find(4), Some((2, 2)));
        assert_eq!(h.find(5), Some((3, 0)));
        assert_eq!(h.find(99), Some((3, 0)), "past the end: the last line");
        assert_eq!(Heights::default().find(0), None);
        for n in 1..40 {
            let h = Heights::from_values((0..n).map(|i| i % 3).collect());
            for line in 0..h.total() {
                let (b, l) = h.find(line).unwrap();
                assert_eq!(h.prefix(b) + l, line);
                assert!(l < h.get(b));
            }
        }
    }

    #[test]
    fn push_matches_bulk_build() {
        let values: Vec<usize> = (0..100).map(|i| (i * 7) % 11).collect();
        let built = Heights::from_values(values.clone());
        let mut pushed = Heights::default();
        for v in &values {
            pushed.push(*v);
        }
        for i in 0..=values.len() {
            let expected: usize = values[..i].iter().sum();
            assert_eq!(built.prefix(i), expected);
            assert_eq!(pushed.prefix(i), expected);
        }
    }
}
