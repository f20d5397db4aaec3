//! Per-value message counts: the analyzer's whole view in a single-message protocol whose
//! messages are values of {0, ..., m-1}.

use super::{AggregateError, Aggregator};

/// Counts c_y of each message value y.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counts {
    counts: Vec<u64>,
    total: u64,
}

impl Counts {
    /// Zero counts over m values.
    pub fn new(m: u32) -> Self {
        Self {
            counts: vec![0; m as usize],
            total: 0,
        }
    }

    /// The counts, indexed by message value.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// A state from stored counts (e.g. a state kept in a database between batches); `None`
    /// for an empty domain or a total that overflows `u64`.
    pub fn from_counts(counts: Vec<u64>) -> Option<Self> {
        if counts.is_empty() {
            return None;
        }
        let total = counts.iter().try_fold(0u64, |t, &c| t.checked_add(c))?;
        Some(Self { counts, total })
    }
}

impl Aggregator for Counts {
    type Message = u32;

    #[inline]
    fn absorb(&mut self, y: u32) -> Result<(), AggregateError> {
        match self.counts.get_mut(y as usize) {
            Some(c) => {
                *c += 1;
                self.total += 1;
                Ok(())
            }
            None => Err(AggregateError::MessageOutOfDomain {
                value: u64::from(y),
                max: self.counts.len() as u64 - 1,
            }),
        }
    }

    fn absorb_repeated(&mut self, y: u32, k: u64) -> Result<(), AggregateError> {
        if k == 0 {
            return Ok(());
        }
        let max = self.counts.len() as u64 - 1;
        match self.counts.get_mut(y as usize) {
            Some(c) => {
                *c += k;
                self.total += k;
                Ok(())
            }
            None => Err(AggregateError::MessageOutOfDomain {
                value: u64::from(y),
                max,
            }),
        }
    }

    fn merge(&mut self, other: Self) -> Result<(), AggregateError> {
        if other.counts.len() != self.counts.len() {
            return Err(AggregateError::ShapeMismatch {
                left: self.counts.len() as u64,
                right: other.counts.len() as u64,
            });
        }
        for (a, b) in self.counts.iter_mut().zip(other.counts) {
            *a += b;
        }
        self.total += other.total;
        Ok(())
    }

    fn reports(&self) -> u64 {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absorb_merge_order_free() {
        let msgs = [0u32, 2, 2, 1, 0, 2];
        let mut a = Counts::new(3);
        a.absorb_all(&msgs).unwrap();
        let mut b = Counts::new(3);
        b.absorb_all(&msgs[3..]).unwrap();
        let mut c = Counts::new(3);
        c.absorb_all(&msgs[..3]).unwrap();
        b.merge(c).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.counts(), &[2, 1, 3]);
        assert_eq!(Counts::from_counts(a.counts().to_vec()), Some(a.clone()));
        assert_eq!(Counts::from_counts(vec![]), None);
        assert_eq!(Counts::from_counts(vec![u64::MAX, 1]), None);
        assert_eq!(a.reports(), 6);
    }

    #[test]
    fn rejects_bad_messages_and_shapes() {
        let mut a = Counts::new(3);
        assert_eq!(
            a.absorb(3),
            Err(AggregateError::MessageOutOfDomain { value: 3, max: 2 })
        );
        assert!(a.merge(Counts::new(4)).is_err());
        assert!(a.absorb_repeated(3, 2).is_err());
        a.absorb_repeated(1, 5).unwrap();
        a.absorb_repeated(0, 0).unwrap();
        assert_eq!((a.counts(), a.reports()), (&[0, 5, 0][..], 5));
        a.merge(Counts::new(3)).unwrap();
    }
}
