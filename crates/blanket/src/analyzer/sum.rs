//! The sum and count of integer messages in {0, ..., max}: the analyzer's sufficient
//! statistic for the scalar-sum protocol.

use super::{AggregateError, Aggregator};

/// Running sum (exact, 128-bit) and count of messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntegerSum {
    max: u32,
    sum: u128,
    count: u64,
}

impl IntegerSum {
    /// An empty state for messages in {0, ..., max}.
    pub fn new(max: u32) -> Self {
        Self {
            max,
            sum: 0,
            count: 0,
        }
    }

    /// Sum of the messages absorbed.
    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// Largest valid message.
    pub fn max(&self) -> u32 {
        self.max
    }

    /// A state from a stored sum and count (e.g. kept in a database between batches); `None`
    /// when no `count` messages in {0, ..., max} can have this sum (sum > max * count).
    pub fn from_parts(max: u32, sum: u128, count: u64) -> Option<Self> {
        (sum <= u128::from(max) * u128::from(count)).then_some(Self { max, sum, count })
    }
}

impl Aggregator for IntegerSum {
    type Message = u32;

    #[inline]
    fn absorb(&mut self, y: u32) -> Result<(), AggregateError> {
        if y > self.max {
            return Err(AggregateError::MessageOutOfDomain {
                value: u64::from(y),
                max: u64::from(self.max),
            });
        }
        self.sum += u128::from(y);
        self.count += 1;
        Ok(())
    }

    #[inline]
    fn absorb_repeated(&mut self, y: u32, k: u64) -> Result<(), AggregateError> {
        if k == 0 {
            return Ok(());
        }
        if y > self.max {
            return Err(AggregateError::MessageOutOfDomain {
                value: u64::from(y),
                max: u64::from(self.max),
            });
        }
        self.sum += u128::from(y) * u128::from(k);
        self.count += k;
        Ok(())
    }

    fn merge(&mut self, other: Self) -> Result<(), AggregateError> {
        if other.max != self.max {
            return Err(AggregateError::ShapeMismatch {
                left: u64::from(self.max) + 1,
                right: u64::from(other.max) + 1,
            });
        }
        self.sum += other.sum;
        self.count += other.count;
        Ok(())
    }

    fn reports(&self) -> u64 {
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_and_merges() {
        let mut a = IntegerSum::new(3);
        a.absorb_all(&[3, 0, 2]).unwrap();
        let mut b = IntegerSum::new(3);
        b.absorb(1).unwrap();
        a.merge(b).unwrap();
        assert_eq!((a.sum(), a.reports()), (6, 4));
        assert!(a.absorb(4).is_err());
        assert!(a.merge(IntegerSum::new(4)).is_err());
        assert_eq!(IntegerSum::from_parts(3, 6, 4), Some(a));
        assert_eq!(IntegerSum::from_parts(3, 13, 4), None);
        assert!(IntegerSum::from_parts(3, 12, 4).is_some());
        // k copies at once are k absorbs; an out-of-range message is refused (also k = 0 is
        // a no-op).
        let mut c = IntegerSum::new(3);
        c.absorb_repeated(2, 5).unwrap();
        c.absorb_repeated(7, 0).unwrap();
        let mut d = IntegerSum::new(3);
        (0..5).for_each(|_| d.absorb(2).unwrap());
        assert_eq!(c, d);
        assert!(c.absorb_repeated(4, 1).is_err());
        assert_eq!(c, d);
    }
}
