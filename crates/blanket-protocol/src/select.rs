//! Roles from public randomness (spec `05-secure-shuffle.md`, block 2).
//!
//! A 32-byte public seed (a beacon value fixed after the clients and the
//! adversary are, see [`crate::params`]) and the run id are hashed with
//! SHA-256 under a domain separator into a ChaCha20 key; Fisher-Yates with
//! rejection sampling turns its stream into a uniform permutation of the
//! client ids. Positions `0..k+b` are the public shuffler list in order
//! (chain, then backups), the next `c` the key committee (member index =
//! position in the committee + 1). Everybody can recompute the roles.

use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use sha2::{Digest, Sha256};

use crate::params::ProtocolParams;
use crate::wire::RunId;

const DOMAIN: &[u8] = b"blanket/protocol/v1/roles";
const PLACEMENT: &[u8] = b"blanket/protocol/v1/placement";

/// The public roles of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Roles {
    /// Shuffler lists, concatenated: list `j` is
    /// `shufflers[j * list_len..(j + 1) * list_len]`; in each the first `k`
    /// form the chain, the rest are backups in order.
    pub shufflers: Vec<u32>,
    /// Length of one list (`k + b`).
    pub list_len: usize,
    /// Key committee; member `i` (1-based) is `committee[i - 1]`. With
    /// per-lane key committees: every lane committee's members, concatenated.
    pub committee: Vec<u32>,
    /// The key committees: `[committee]` for the single committee; with
    /// per-lane key committees (`ProtocolParams::lane_committees =
    /// Some((K_r, K_c))`), the `K_r` row committees then the `K_c` column
    /// committees, cut in order from the permutation after the lists
    /// (member `i` of committee `q` is `committees[q][i - 1]`).
    pub committees: Vec<Vec<u32>>,
}

fn uniform_below(rng: &mut ChaCha20Rng, bound: u64) -> u64 {
    // Rejection sampling: the accepted range is a multiple of `bound`.
    let zone = u64::MAX - (u64::MAX % bound);
    loop {
        let x = rng.next_u64();
        if x < zone {
            return x % bound;
        }
    }
}

/// The uniform permutation of `0..n` derived from the public seed.
pub fn permutation(run: &RunId, seed: &[u8; 32], n: u32) -> Vec<u32> {
    permutation_in(DOMAIN, run, seed, n)
}

fn permutation_in(domain: &[u8], run: &RunId, seed: &[u8; 32], n: u32) -> Vec<u32> {
    let key: [u8; 32] = Sha256::new()
        .chain_update((domain.len() as u64).to_le_bytes())
        .chain_update(domain)
        .chain_update(run)
        .chain_update(seed)
        .chain_update(n.to_le_bytes())
        .finalize()
        .into();
    let mut rng = ChaCha20Rng::from_seed(key);
    let mut p: Vec<u32> = (0..n).collect();
    for i in (1..n as usize).rev() {
        let j = uniform_below(&mut rng, i as u64 + 1) as usize;
        p.swap(i, j);
    }
    p
}

/// Roles for `params` from the public seed.
pub fn roles(params: &ProtocolParams, run: &RunId, seed: &[u8; 32]) -> Roles {
    let p = permutation(run, seed, params.clients);
    let l = params.shufflers_total() as usize;
    let c = params.committee as usize;
    let k = match params.lane_committees {
        Some((kr, kc)) => (kr + kc) as usize,
        None => 1,
    };
    let committees: Vec<Vec<u32>> = (0..k)
        .map(|q| p[l + q * c..l + (q + 1) * c].to_vec())
        .collect();
    Roles {
        shufflers: p[..l].to_vec(),
        list_len: params.shuffler_list() as usize,
        committee: p[l..l + k * c].to_vec(),
        committees,
    }
}

impl Roles {
    /// Shuffler list `j`.
    pub fn list(&self, j: usize) -> &[u32] {
        let s = (j * self.list_len).min(self.shufflers.len());
        let e = (s + self.list_len).min(self.shufflers.len());
        &self.shufflers[s..e]
    }
}

/// The public placement pi of the alternating layout: message `i` of the
/// accepted list goes to row-major cell `placement[i]` (a uniform
/// permutation from the same public seed under another domain separator).
pub fn placement(run: &RunId, seed: &[u8; 32], len: usize) -> Vec<usize> {
    permutation_in(PLACEMENT, run, seed, len as u32)
        .into_iter()
        .map(|c| c as usize)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_deterministic_and_a_permutation() {
        let a = permutation(&[1; 16], &[2; 32], 1000);
        assert_eq!(a, permutation(&[1; 16], &[2; 32], 1000));
        let mut s = a.clone();
        s.sort_unstable();
        assert_eq!(s, (0..1000).collect::<Vec<_>>());
        assert_ne!(a, permutation(&[1; 16], &[3; 32], 1000));
        assert_ne!(a, permutation(&[9; 16], &[2; 32], 1000));
    }

    #[test]
    fn first_position_is_uniform() {
        // 3,000 seeds, n = 6: each id first about 500 times; chi-square with
        // 5 degrees of freedom below 20.5 (p = 0.001).
        let mut counts = [0u32; 6];
        for s in 0..3000u32 {
            let mut seed = [0u8; 32];
            seed[..4].copy_from_slice(&s.to_le_bytes());
            counts[permutation(&[0; 16], &seed, 6)[0] as usize] += 1;
        }
        let chi: f64 = counts
            .iter()
            .map(|&c| (c as f64 - 500.0).powi(2) / 500.0)
            .sum();
        assert!(chi < 20.5, "{counts:?} chi2 = {chi}");
    }

    #[test]
    fn roles_are_disjoint() {
        let params = ProtocolParams::new(200, 0.05, 0.05, 20, 5, 1).unwrap();
        let r = roles(&params, &[0; 16], &[1; 32]);
        assert_eq!(r.shufflers.len() as u32, params.chain + params.backups);
        assert_eq!(r.committee.len() as u32, params.committee);
        assert!(r.committee.iter().all(|c| !r.shufflers.contains(c)));
        assert_eq!(r.committees, vec![r.committee.clone()]);
    }

    #[test]
    fn lane_committees_are_disjoint_and_cut_in_order() {
        let params = ProtocolParams::for_variant(
            crate::params::Variant::Alternating,
            2000,
            0.05,
            0.05,
            40,
            10,
            1,
        )
        .unwrap()
        .with_lane_keys()
        .unwrap();
        let (kr, kc) = params.lane_committees.unwrap();
        let r = roles(&params, &[0; 16], &[1; 32]);
        assert_eq!(r.committees.len() as u32, kr + kc);
        assert!(r
            .committees
            .iter()
            .all(|q| q.len() as u32 == params.committee));
        let all: std::collections::BTreeSet<u32> = r.committee.iter().copied().collect();
        assert_eq!(all.len(), r.committee.len());
        assert_eq!(r.committees.concat(), r.committee);
        assert!(r.committee.iter().all(|c| !r.shufflers.contains(c)));
    }
}
