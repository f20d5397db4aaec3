//! Per-coordinate message counts and sums: the analyzer's sufficient statistic for the
//! vector-sum protocol, whose messages are (coordinate, value) pairs.

use super::{AggregateError, Aggregator};

/// One message of the vector-sum protocol: `(coordinate, value)` with the coordinate in
/// {0, ..., d - 1} (chosen independently of the data, sent in the clear) and the randomized
/// value in {0, ..., k}.
pub type CoordinateMessage = (u32, u32);

/// For each coordinate j: the number n_j of messages reporting j and the exact sum of their
/// values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoordinateSums {
    max: u32,
    counts: Vec<u64>,
    sums: Vec<u128>,
    total: u64,
}

impl CoordinateSums {
    /// An empty state for `d` coordinates and values in {0, ..., max}.
    pub fn new(d: u32, max: u32) -> Self {
        Self {
            max,
            counts: vec![0; d as usize],
            sums: vec![0; d as usize],
            total: 0,
        }
    }

    /// A stored state: per-coordinate counts and sums for values in {0, ..., max}; `None` if
    /// the lengths differ, d is 0, or a sum exceeds max times its count.
    pub fn from_parts(max: u32, counts: Vec<u64>, sums: Vec<u128>) -> Option<Self> {
        if counts.is_empty() || counts.len() != sums.len() {
            return None;
        }
        let fits = counts
            .iter()
            .zip(&sums)
            .all(|(&c, &s)| s <= u128::from(c) * u128::from(max));
        if !fits {
            return None;
        }
        let total = counts.iter().try_fold(0u64, |t, &c| t.checked_add(c))?;
        Some(Self {
            max,
            counts,
            sums,
            total,
        })
    }

    /// Number of coordinates d.
    pub fn dimension(&self) -> u32 {
        self.counts.len() as u32
    }

    /// Largest valid value.
    pub fn max(&self) -> u32 {
        self.max
    }

    /// Messages per coordinate, n_j.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Sum of the values per coordinate.
    pub fn sums(&self) -> &[u128] {
        &self.sums
    }
}

impl Aggregator for CoordinateSums {
    type Message = CoordinateMessage;

    #[inline]
    fn absorb(&mut self, (j, y): CoordinateMessage) -> Result<(), AggregateError> {
        if y > self.max {
            return Err(AggregateError::MessageOutOfDomain {
                value: u64::from(y),
                max: u64::from(self.max),
            });
        }
        let d = self.counts.len();
        match (
            self.counts.get_mut(j as usize),
            self.sums.get_mut(j as usize),
        ) {
            (Some(c), Some(s)) => {
                *c += 1;
                *s += u128::from(y);
                self.total += 1;
                Ok(())
            }
            _ => Err(AggregateError::MessageOutOfDomain {
                value: u64::from(j),
                max: d as u64 - 1,
            }),
        }
    }

    fn merge(&mut self, other: Self) -> Result<(), AggregateError> {
        if other.counts.len() != self.counts.len() || other.max != self.max {
            return Err(AggregateError::ShapeMismatch {
                left: self.counts.len() as u64 * (u64::from(self.max) + 1),
                right: other.counts.len() as u64 * (u64::from(other.max) + 1),
            });
        }
        for (a, b) in self.counts.iter_mut().zip(other.counts) {
            *a += b;
        }
        for (a, b) in self.sums.iter_mut().zip(other.sums) {
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
        let msgs = [(0u32, 3u32), (2, 1), (2, 2), (1, 0), (0, 1)];
        let mut a = CoordinateSums::new(3, 3);
        a.absorb_all(&msgs).unwrap();
        let mut b = CoordinateSums::new(3, 3);
        b.absorb_all(&msgs[2..]).unwrap();
        let mut c = CoordinateSums::new(3, 3);
        c.absorb_all(&msgs[..2]).unwrap();
        b.merge(c).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.counts(), &[2, 1, 2]);
        assert_eq!(a.sums(), &[4, 0, 3]);
        let back = CoordinateSums::from_parts(3, a.counts().to_vec(), a.sums().to_vec());
        assert_eq!(back.as_ref(), Some(&a));
        assert_eq!(CoordinateSums::from_parts(3, vec![1], vec![4]), None);
        assert_eq!(CoordinateSums::from_parts(3, vec![1, 2], vec![1]), None);
        assert_eq!(a.reports(), 5);
        assert_eq!(a.dimension(), 3);
    }

    #[test]
    fn rejects_bad_messages_and_shapes() {
        let mut a = CoordinateSums::new(3, 3);
        assert_eq!(
            a.absorb((0, 4)),
            Err(AggregateError::MessageOutOfDomain { value: 4, max: 3 })
        );
        assert_eq!(
            a.absorb((3, 0)),
            Err(AggregateError::MessageOutOfDomain { value: 3, max: 2 })
        );
        assert!(a.merge(CoordinateSums::new(4, 3)).is_err());
        assert!(a.merge(CoordinateSums::new(3, 4)).is_err());
        assert_eq!(a.reports(), 0);
    }
}
