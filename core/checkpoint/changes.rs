//! What differs between two checkpoints' trees: the one shape that the
//! git way (record.rs) and the in-process way (in_process.rs) both give.

/// Files added, changed and deleted between two trees, as paths relative to
/// the top of the working tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// Files the second tree has and the first has not.
    pub added: Vec<String>,
    /// Files whose content, mode or type differ.
    pub changed: Vec<String>,
    /// Files the first tree has and the second has not.
    pub deleted: Vec<String>,
}

impl Changes {
    /// True when nothing differs.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.changed.is_empty() && self.deleted.is_empty()
    }

    /// The three lists cut to `n` paths each, and how many were cut: for
    /// an event, which must stay small when a command deletes a whole tree.
    pub fn capped(mut self, n: usize) -> (Changes, u64) {
        let mut more = 0u64;
        for v in [&mut self.added, &mut self.changed, &mut self.deleted] {
            if v.len() > n {
                more += (v.len() - n) as u64;
                v.truncate(n);
            }
        }
        (self, more)
    }

    /// Every path, each with its letter (A, M, D), sorted by path.
    pub fn lines(&self) -> Vec<String> {
        let mut all: Vec<(&str, char)> = Vec::new();
        all.extend(self.added.iter().map(|p| (p.as_str(), 'A')));
        all.extend(self.changed.iter().map(|p| (p.as_str(), 'M')));
        all.extend(self.deleted.iter().map(|p| (p.as_str(), 'D')));
        all.sort();
        all.into_iter().map(|(p, c)| format!("{c} {p}")).collect()
    }
}
