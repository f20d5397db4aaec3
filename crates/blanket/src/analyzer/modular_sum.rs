//! The sum mod q of messages in Z_q: the analyzer state of split-and-mix (IKOS) summation.

use super::{AggregateError, Aggregator};
use crate::field::Modulus;

/// Running sum mod q and count of messages in Z_q.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModularSum {
    modulus: Modulus,
    sum: u64,
    count: u64,
}

impl ModularSum {
    /// An empty state over Z_q.
    pub fn new(modulus: Modulus) -> Self {
        Self {
            modulus,
            sum: 0,
            count: 0,
        }
    }

    /// Sum mod q of the messages absorbed.
    pub fn sum(&self) -> u64 {
        self.sum
    }

    /// The modulus q.
    pub fn modulus(&self) -> Modulus {
        self.modulus
    }
}

impl Aggregator for ModularSum {
    type Message = u64;

    #[inline]
    fn absorb(&mut self, y: u64) -> Result<(), AggregateError> {
        if !self.modulus.contains(y) {
            return Err(AggregateError::MessageOutOfDomain {
                value: y,
                max: self.modulus.max(),
            });
        }
        self.sum = self.modulus.add(self.sum, y);
        self.count += 1;
        Ok(())
    }

    fn merge(&mut self, other: Self) -> Result<(), AggregateError> {
        if other.modulus != self.modulus {
            return Err(AggregateError::ModulusMismatch {
                left: self.modulus.q(),
                right: other.modulus.q(),
            });
        }
        self.sum = self.modulus.add(self.sum, other.sum);
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
    use crate::rng::simulation_rng;

    #[test]
    fn merge_of_shards_equals_absorb_all() {
        let mut rng = simulation_rng(11);
        for q in [2u128, 3, 1 << 32, (1 << 64) - 59, 1 << 64] {
            let m = Modulus::new(q).unwrap();
            let messages: Vec<u64> = (0..1000).map(|_| m.uniform(&mut rng)).collect();
            let mut all = ModularSum::new(m);
            all.absorb_all(&messages).unwrap();
            let mut merged = ModularSum::new(m);
            for chunk in messages.chunks(77) {
                let mut shard = ModularSum::new(m);
                shard.absorb_all(chunk).unwrap();
                merged.merge(shard).unwrap();
            }
            assert_eq!(merged, all);
            assert_eq!(all.reports(), 1000);
            let reference = messages.iter().map(|&y| u128::from(y)).sum::<u128>() % q;
            assert_eq!(u128::from(all.sum()), reference);
        }
    }

    #[test]
    fn rejects_unreduced_messages_and_foreign_states() {
        let m = Modulus::new(5).unwrap();
        let mut s = ModularSum::new(m);
        assert_eq!(
            s.absorb(5),
            Err(AggregateError::MessageOutOfDomain { value: 5, max: 4 })
        );
        let other = ModularSum::new(Modulus::new(7).unwrap());
        assert_eq!(
            s.merge(other),
            Err(AggregateError::ModulusMismatch { left: 5, right: 7 })
        );
        assert_eq!(s.reports(), 0);
    }
}
