//! `blanket protocol run`'s arguments and their validation: the layout, the key committees
//! (`--key-committees per-lane|single`, per-lane the default of `--variant alternating`), the
//! DP protocol and the refusals that name the flag and its allowed values.

use crate::usage_bail;
use anyhow::Result;
use blanket_protocol::params::{KeyCommittees, ParamsError, ProofSystem, Variant as Layout};
use blanket_protocol::ProtocolParams;
use clap::{Args, Subcommand, ValueEnum};

#[derive(Subcommand)]
pub enum ProtocolCommand {
    /// Run the protocol in memory: n clients and the relay in one process, with honest
    /// dropouts and malicious clients; prints delivery, correctness, cheaters named, rounds,
    /// bytes and CPU per role.
    Run(ProtocolRunArgs),
}

/// Shuffle layouts.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// One chain of k shufflers over all ciphertexts (the amortized shuffler).
    Amortized,
    /// The 2-round alternating shuffle: a chain per row of the sqrt(n) x sqrt(n) grid (rows
    /// in parallel), then a chain per column; each shuffler moves about sqrt(n) ciphertexts.
    Alternating,
}

/// Who holds the decryption keys (`--key-committees`).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyCommitteesArg {
    /// A key committee per row and per column, threshold re-encryption between them.
    PerLane,
    /// One key committee for the whole run.
    Single,
}

impl From<KeyCommitteesArg> for KeyCommittees {
    fn from(k: KeyCommitteesArg) -> Self {
        match k {
            KeyCommitteesArg::PerLane => KeyCommittees::PerLane,
            KeyCommitteesArg::Single => KeyCommittees::Single,
        }
    }
}

/// DP protocols that can run over the shuffle.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DpProtocol {
    /// Histogram over m categories with the privacy-blanket GRR randomizer.
    Histogram,
    /// Sum of vectors in [0, 1]^d (Scott, Cormode, Maple 2021): t (coordinate, level) pairs
    /// per client.
    VectorSum,
    /// DP sum of reals in [0, 1] by split-and-mix with distributed Polya noise: m IKOS
    /// shares per client.
    IkosSum,
}

#[derive(Args, Clone)]
pub struct ProtocolRunArgs {
    /// Number of clients n (>= 3).
    #[arg(long, value_parser = crate::numeric::parse_u64)]
    pub clients: u64,
    /// Dropout fraction alpha in [0, 0.5): the bound the parameters assume, and the
    /// fraction of honest clients that drop out (at a step of their role) in the run.
    #[arg(long, default_value_t = 0.0, value_parser = crate::numeric::parse_f64)]
    pub dropout: f64,
    /// Malicious fraction gamma in [0, 0.5): the bound the parameters assume, and the
    /// fraction of clients that misbehave in the run (silent, garbage, bad proofs, replaced
    /// or duplicated ciphertexts, wrong partials, bad shares, equivocation, replays, in turn).
    #[arg(long, default_value_t = 0.0, value_parser = crate::numeric::parse_f64)]
    pub malicious: f64,
    /// Shuffle layout.
    #[arg(long, value_enum, default_value_t = Variant::Amortized)]
    pub variant: Variant,
    /// Proof of shuffle every shuffler gives and the relay checks: `tw` (Terelius-Wikstrom,
    /// about 160 bytes per ciphertext) or `bg` (Bayer-Groth, O(sqrt N) group elements).
    #[arg(long, default_value = "tw")]
    pub proof: ProofSystem,
    /// Who holds the decryption keys: `per-lane` (alternating variant only, its default):
    /// every row and every column has its own key committee with threshold re-encryption from
    /// rows to columns (docs/protocol.md, "Per-lane key committees and threshold
    /// re-encryption"), so no client handles the whole list; the cells of absent clients hold
    /// public dummies, counted as bad cells in the guarantee. `single`: one key committee
    /// decrypts all N ciphertexts (the amortized variant's only choice). Without the flag the
    /// alternating variant uses per-lane committees when the lane rule has a solution at this
    /// n, sigma, eta, and falls back to one committee otherwise (said in the output).
    #[arg(long, value_enum)]
    pub key_committees: Option<KeyCommitteesArg>,
    /// Same as `--key-committees per-lane` (kept for earlier scripts).
    #[arg(long, conflicts_with = "key_committees")]
    pub lane_keys: bool,
    /// Statistical security: privacy fails with probability at most 2^-sigma.
    #[arg(long, default_value_t = 40)]
    pub sigma: u32,
    /// Output delivery fails with probability at most 2^-eta.
    #[arg(long, default_value_t = 10)]
    pub eta: u32,
    /// Messages per client (default 1 without --protocol; with --protocol it is the
    /// protocol's count: 1 for histogram, t for vector-sum, the IKOS share count m for
    /// ikos-sum, and if given it must equal that count).
    #[arg(long)]
    pub messages: Option<u32>,
    /// Run a DP protocol over the shuffle and end with its estimate and certified guarantee
    /// for the honest, present users only (amortized variant: histogram, vector-sum,
    /// ikos-sum; alternating variant: histogram, and vector-sum with --t 1, with the
    /// malicious cells placed at worst).
    #[arg(long, value_enum)]
    pub protocol: Option<DpProtocol>,
    /// Target epsilon of --protocol (> 0, natural log).
    #[arg(long, requires = "protocol")]
    pub eps: Option<f64>,
    /// Target delta of --protocol, in (0, 1).
    #[arg(long, requires = "protocol")]
    pub delta: Option<f64>,
    /// Number of categories m of --protocol histogram.
    #[arg(long, default_value_t = 32, value_parser = crate::numeric::parse_u64)]
    pub domain: u64,
    /// Dimension d of --protocol vector-sum.
    #[arg(long, default_value_t = 4, value_parser = crate::numeric::parse_u64)]
    pub d: u64,
    /// Coordinates each client reports, t, of --protocol vector-sum.
    #[arg(long, default_value_t = 1, value_parser = crate::numeric::parse_u64)]
    pub t: u64,
    /// Fixed precision k of --protocol vector-sum (default: the best k).
    #[arg(long, value_parser = crate::numeric::parse_u64)]
    pub k: Option<u64>,
    /// Seed of the simulation (reproducible; real clients never use a seed).
    #[arg(long, default_value_t = 1, value_parser = crate::numeric::parse_u64)]
    pub seed: u64,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// The run's parameters and, when the default per-lane key committees of the alternating
/// variant have no solution at this n (so the run uses one committee), why.
pub(super) struct Resolved {
    pub params: ProtocolParams,
    pub key_committees_note: Option<String>,
}

impl ProtocolRunArgs {
    /// `--clients` as a `u32`, or the allowed range.
    pub(super) fn clients(&self) -> Result<u32> {
        if self.clients < 3 || self.clients > u32::MAX as u64 / 2 {
            usage_bail!(
                "--clients = {} is out of range (allowed 3..=2147483647)",
                self.clients
            );
        }
        Ok(self.clients as u32)
    }

    pub(super) fn layout(&self) -> Layout {
        match self.variant {
            Variant::Amortized => Layout::Amortized,
            Variant::Alternating => Layout::Alternating,
        }
    }

    /// The key committees asked for (`--key-committees`, or `--lane-keys`), if any.
    pub(super) fn key_committees_asked(&self) -> Option<KeyCommittees> {
        if self.lane_keys {
            return Some(KeyCommittees::PerLane);
        }
        self.key_committees.map(KeyCommittees::from)
    }

    /// Refuse `--key-committees per-lane` (or `--lane-keys`) with the amortized variant.
    pub(super) fn check_key_committees(&self) -> Result<()> {
        if self.variant == Variant::Amortized
            && self.key_committees_asked() == Some(KeyCommittees::PerLane)
        {
            let flag = if self.lane_keys {
                "--lane-keys (= --key-committees per-lane)"
            } else {
                "--key-committees per-lane"
            };
            usage_bail!("{flag} needs --variant alternating: the amortized variant has one list and one key committee (allowed --key-committees with --variant amortized: single; with --variant alternating: per-lane (the default) or single)");
        }
        Ok(())
    }

    /// Refuse the DP protocols the alternating variant does not certify and a `--messages`
    /// that contradicts the protocol's count.
    pub(super) fn check_protocol(&self) -> Result<()> {
        if self.variant == Variant::Alternating {
            match self.protocol {
                Some(DpProtocol::VectorSum) if self.t != 1 => usage_bail!("--protocol vector-sum --t {} with --variant alternating is refused: the bad-cell bound for the alternating shuffler (docs/alternating.md) is for single-message protocols; vector sum with t = 1 reduces to one GRR report per client and is certified, but t >= 2 conditions on every user's coordinates and needs independent per-coordinate uniform shuffles, which A^2_pi does not give; use --t 1 or --variant amortized", self.t),
                Some(DpProtocol::IkosSum) => usage_bail!("--protocol ikos-sum with --variant alternating is refused: the relay's alternating variant is not wired to blanket's A^2_pi share count (m_required_alternating, docs/multi-message.md: honest clients, any n under the GridLayout rule; the malicious cells of this variant are not analysed for split-and-mix); use --variant amortized"),
                _ => {}
            }
        }
        let fixed = match self.protocol {
            Some(DpProtocol::Histogram) => Some(1),
            Some(DpProtocol::VectorSum) => u32::try_from(self.t).ok(),
            _ => None,
        };
        if let (Some(m), Some(want)) = (self.messages, fixed) {
            if m != want {
                usage_bail!("--messages = {m} differs from the {want} messages per client of this --protocol (leave --messages out)");
            }
        }
        Ok(())
    }

    /// The parameters of a run with `messages` per client: layout, bounds, proof system and
    /// key committees (per-lane by default for the alternating variant, falling back to one
    /// committee, with a note, when the lane rule has no solution; an explicit
    /// `--key-committees per-lane` that has none is an error).
    pub(super) fn params(&self, messages: u32) -> Result<Resolved> {
        self.check_key_committees()?;
        let p = ProtocolParams::for_variant(
            self.layout(),
            self.clients()?,
            self.dropout,
            self.malicious,
            self.sigma,
            self.eta,
            messages,
        )
        .map_err(flag_names)?
        .with_proof(self.proof);
        let asked = self.key_committees_asked();
        let kc = asked.unwrap_or(KeyCommittees::default_for(p.variant));
        match p.with_key_committees(kc) {
            Ok(params) => Ok(Resolved {
                params,
                key_committees_note: None,
            }),
            Err(e @ ParamsError::Infeasible { .. }) if asked.is_none() => Ok(Resolved {
                params: p,
                key_committees_note: Some(format!(
                    "per-lane key committees (the default of --variant alternating) have no solution here ({e}); this run uses one key committee (--key-committees single)"
                )),
            }),
            Err(e) => Err(anyhow::Error::new(crate::exit::Usage(format!(
                "--key-committees {} (allowed: {}): {e}",
                kc.name(),
                KeyCommittees::ALLOWED
            )))),
        }
    }
}

/// A parameter error of the protocol library named by this command's flags (the library
/// names them as the relay's JSON keys: alpha is --dropout, gamma is --malicious).
fn flag_names(e: ParamsError) -> anyhow::Error {
    match e {
        ParamsError::OutOfRange {
            field,
            value,
            allowed,
        } => {
            let flag = match field {
                "alpha" => "--dropout",
                "gamma" => "--malicious",
                "clients" => "--clients",
                "sigma" => "--sigma",
                "eta" => "--eta",
                "messages" => "--messages",
                other => other,
            };
            anyhow::Error::new(crate::exit::Usage(format!(
                "{flag} = {} is out of range (allowed {allowed})",
                crate::output::echo(value)
            )))
        }
        e => anyhow::Error::new(e),
    }
}
