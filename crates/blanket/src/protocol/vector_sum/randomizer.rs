//! The vector-sum client: t sampled coordinates, each rounded and randomized.

use super::*;
use crate::analyzer::CoordinateMessage;
use crate::encode::{randomized_round_pool, sample_coordinates};
use crate::params::UnitValue;
use crate::rng::{SecureRng, SimulationRng};
use crate::sample::{uniform_bits, uniform_u32, BitSource};

impl VectorSum {
    /// Client side: validates x (length d, every coordinate in [0, 1]) and returns its t
    /// messages, randomized with the OS-seeded generator.
    pub fn randomize(
        &self,
        x: &[f64],
        rng: &mut SecureRng,
    ) -> Result<Vec<CoordinateMessage>, VectorSumError> {
        let row = UnitVectors::new(u64::from(self.d), [x])?;
        let mut out = Vec::with_capacity(self.t as usize);
        let mut scratch = Vec::new();
        self.randomize_row_with(row.row(0), rng, &mut scratch, |m| out.push(m));
        Ok(out)
    }

    /// Client side for a validated row of length d (see [`UnitVectors`]): emits the t
    /// messages. Allocation-free for t = 1; for t >= 2 `scratch` is resized to t once and
    /// reused across calls.
    #[inline]
    pub fn randomize_row<F: FnMut(CoordinateMessage)>(
        &self,
        x: &[UnitValue],
        rng: &mut SecureRng,
        scratch: &mut Vec<u32>,
        emit: F,
    ) {
        self.randomize_row_with(x, rng, scratch, emit)
    }

    /// [`VectorSum::randomize_row`] for simulations (a seeded generator).
    #[inline]
    pub fn randomize_row_simulated<F: FnMut(CoordinateMessage)>(
        &self,
        x: &[UnitValue],
        rng: &mut SimulationRng,
        scratch: &mut Vec<u32>,
        emit: F,
    ) {
        self.randomize_row_with(x, rng, scratch, emit)
    }

    #[inline]
    fn randomize_row_with<R: BitSource + ?Sized, F: FnMut(CoordinateMessage)>(
        &self,
        x: &[UnitValue],
        rng: &mut R,
        scratch: &mut Vec<u32>,
        mut emit: F,
    ) {
        debug_assert_eq!(x.len(), self.d as usize);
        if self.t == 1 {
            let j = uniform_bits(rng, self.d);
            if let Some(&v) = x.get(j as usize) {
                emit((j, self.scalar(v, rng)));
            }
            return;
        }
        scratch.resize(self.t as usize, 0);
        if sample_coordinates(self.d, scratch, rng).is_some() {
            for &j in scratch.iter() {
                if let Some(&v) = x.get(j as usize) {
                    emit((j, self.scalar(v, rng)));
                }
            }
        }
    }

    /// The same messages as [`VectorSum::randomize_row_with`] for the same generator state (the
    /// same draws in the same order: Floyd's sampling of [`sample_coordinates`], then each
    /// coordinate's rounding and GRR), appended to `buf` with no scratch space: the t sampled
    /// coordinates are kept in `buf`'s tail while they are drawn. For the simulation's chunk
    /// buffers.
    #[inline]
    pub(crate) fn randomize_row_into<R: BitSource + ?Sized>(
        &self,
        x: &[UnitValue],
        rng: &mut R,
        buf: &mut Vec<CoordinateMessage>,
    ) {
        debug_assert_eq!(x.len(), self.d as usize);
        let (d, t) = (self.d, self.t);
        let start = buf.len();
        if t == 1 {
            buf.push((uniform_bits(rng, d), 0));
        } else if t == d {
            buf.extend((0..d).map(|j| (j, 0)));
        } else {
            for j in d - t..d {
                let r = uniform_u32(rng, j + 1);
                let c = if buf[start..].iter().any(|m| m.0 == r) {
                    j
                } else {
                    r
                };
                buf.push((c, 0));
            }
        }
        for m in &mut buf[start..] {
            if let Some(&v) = x.get(m.0 as usize) {
                m.1 = self.scalar(v, rng);
            }
        }
    }

    #[inline]
    fn scalar<R: BitSource + ?Sized>(&self, v: UnitValue, rng: &mut R) -> u32 {
        let level = randomized_round_pool(v.get(), self.k, rng);
        self.grr.randomize_in_domain(level, rng)
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn bad_parameters_and_inputs_are_typed_errors() {
        let k = Precision::new(3).unwrap();
        let g = Gamma::new(0.2).unwrap();
        let e = VectorSum::new(0, 1, k, g).unwrap_err().to_string();
        assert!(e.starts_with("d must be an integer from 1"), "{e}");
        let e = VectorSum::new(5, 6, k, g).unwrap_err().to_string();
        assert!(e.starts_with("t must be an integer from 1 to d"), "{e}");
        assert!(VectorSum::new(5, 0, k, g).is_err());
        let p = VectorSum::new(3, 1, k, g).unwrap();
        let mut rng = SecureRng::from_os().unwrap();
        let e = p.randomize(&[0.1, 0.2], &mut rng).unwrap_err();
        assert!(
            e.to_string()
                .contains("expected d = 3 coordinates, found 2"),
            "{e}"
        );
        let e = p.randomize(&[0.1, f64::NAN, 0.3], &mut rng).unwrap_err();
        assert!(e.to_string().contains("coordinate 1: value must be"), "{e}");
        let e = p.randomize(&[0.1, 0.2, 1.5], &mut rng).unwrap_err();
        assert!(e.to_string().contains("got 1.5"), "{e}");
        assert!(UnitVectors::from_flat(3, &[0.1; 7]).is_err());
    }

    #[test]
    fn buffered_randomizer_matches_the_scratch_one() {
        let x: Vec<UnitValue> = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
            .iter()
            .map(|&v| UnitValue::new(v).unwrap())
            .collect();
        for t in [1, 2, 3, 6] {
            let p =
                VectorSum::new(6, t, Precision::new(4).unwrap(), Gamma::new(0.3).unwrap()).unwrap();
            let (mut a, mut b) = (crate::rng::simulation_rng(5), crate::rng::simulation_rng(5));
            let mut buf = vec![(9, 9)];
            let mut want = vec![(9, 9)];
            let mut scratch = Vec::new();
            for _ in 0..500 {
                p.randomize_row_simulated(&x, &mut a, &mut scratch, |m| want.push(m));
                p.randomize_row_into(&x, &mut b, &mut buf);
            }
            assert_eq!(buf, want, "t = {t}");
        }
    }

    #[test]
    fn randomizer_sends_t_distinct_coordinates() {
        let p = VectorSum::new(6, 3, Precision::new(4).unwrap(), Gamma::new(0.3).unwrap()).unwrap();
        let mut rng = SecureRng::from_os().unwrap();
        for _ in 0..1000 {
            let msgs = p
                .randomize(&[0.0, 0.2, 0.4, 0.6, 0.8, 1.0], &mut rng)
                .unwrap();
            assert_eq!(msgs.len(), 3);
            let mut cs: Vec<u32> = msgs.iter().map(|m| m.0).collect();
            cs.sort_unstable();
            cs.dedup();
            assert_eq!(cs.len(), 3);
            assert!(msgs.iter().all(|&(j, y)| j < 6 && y <= 4));
        }
    }
}
