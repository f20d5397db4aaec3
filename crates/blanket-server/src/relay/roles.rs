//! The public seed of a run and the roles it selects (`docs/protocol.md`, "The public
//! seed"): fixed when registration closes, from every registered key and a nonce the relay
//! draws from the OS CSPRNG at that moment, logged with the run's start (a restart replays the
//! same roles) and published (`GET /relay/tasks/{task}/roles`) with everything a client needs
//! to recompute it ([`check_roles`]).

use super::api::{RolesJson, TaskSpec};
use crate::problem::Rejection;
use crate::wire::{hex_decode, hex_encode};
use blanket_crypto::PublicKey;
use blanket_protocol::select::{self, Roles};
use sha2::{Digest, Sha256};

/// Bytes of the relay's nonce, drawn from the OS CSPRNG when registration closes.
pub const SEED_NONCE_BYTES: usize = 32;

/// The public seed of a run (`docs/protocol.md`, "The public seed"):
///
/// - a simulation (`sim_seed`): the in-memory driver's seed, so that the networked run can be
///   compared with `blanket protocol run` (its roles are known from the task's creation on: a
///   simulation, not a deployment);
/// - else, with the nonce the relay drew from the OS CSPRNG when registration closed:
///   SHA-256 of a domain separator, the task id, every registered key in index order and the
///   nonce. No registrant knows the nonce while it can still choose its key, so grinding keys
///   gives it nothing (the roles are a uniform permutation whatever the keys);
/// - `nonce = None`: a run whose log predates the nonce (its `Start` entry carries none):
///   SHA-256 of the task id and the keys, as such runs were started, so that they replay the
///   same roles (that seed could be ground by the last registrant; no new run uses it).
pub fn public_seed(
    spec: &TaskSpec,
    task: &[u8; 16],
    keys: &[PublicKey],
    nonce: Option<&[u8; SEED_NONCE_BYTES]>,
) -> [u8; 32] {
    if let Some(s) = spec.sim_seed {
        return blanket_protocol::driver::run_id_and_seed(s).1;
    }
    let mut h = Sha256::new();
    match nonce {
        Some(_) => h.update(b"blanket/relay/v2/seed"),
        None => h.update(b"blanket/relay/v1/seed"),
    }
    h.update(task);
    for k in keys {
        h.update(k.to_bytes());
    }
    if let Some(nonce) = nonce {
        h.update(nonce);
    }
    h.finalize().into()
}

/// The nonce of a run whose registration just closed: 32 bytes from the OS CSPRNG (none for a
/// simulation, whose seed is fixed by `sim_seed`).
pub fn draw_seed_nonce(spec: &TaskSpec) -> Result<Option<[u8; SEED_NONCE_BYTES]>, Rejection> {
    if spec.sim_seed.is_some() {
        return Ok(None);
    }
    let mut nonce = [0u8; SEED_NONCE_BYTES];
    let mut rng =
        blanket::rng::SecureRng::from_os().map_err(|e| Rejection::Storage(e.to_string()))?;
    blanket::rng::RngCore::fill_bytes(&mut rng, &mut nonce);
    Ok(Some(nonce))
}

/// The roles document of a started run (`GET /relay/tasks/{task}/roles`).
pub fn roles_json(
    task: &[u8; 16],
    params: &blanket_protocol::ProtocolParams,
    keys: &[PublicKey],
    nonce: Option<&[u8; SEED_NONCE_BYTES]>,
    seed: &[u8; 32],
) -> RolesJson {
    let roles = select::roles(params, task, seed);
    RolesJson {
        task: hex_encode(task),
        nonce: nonce.map(|n| hex_encode(n)),
        public_seed: hex_encode(seed),
        keys: keys.iter().map(|k| hex_encode(&k.to_bytes())).collect(),
        shufflers: roles.shufflers,
        list_len: roles.list_len,
        committees: roles.committees,
    }
}

/// Why a roles document does not check.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RolesMismatch {
    /// A field does not decode.
    #[error("roles: {0} does not decode")]
    Malformed(&'static str),
    /// The task's parameters are refused.
    #[error("roles: the task's parameters: {0}")]
    Params(String),
    /// The seed is not the one the keys and the nonce give.
    #[error("roles: the public seed is not SHA-256 of the task, the keys and the nonce")]
    Seed,
    /// The roles are not the ones the seed selects.
    #[error("roles: the shufflers or committees are not the ones the public seed selects")]
    Roles,
    /// This client's key is not at its index.
    #[error("roles: client {0}'s key is not the one it registered")]
    OwnKey(u32),
}

/// The registered keys of a roles document, by index: the directory a networked client
/// checks the relay's later messages against (after [`check_roles`] accepted the document).
pub fn directory(doc: &RolesJson) -> Result<std::sync::Arc<[PublicKey]>, RolesMismatch> {
    doc.keys
        .iter()
        .map(|k| {
            hex_decode(k)
                .and_then(|b| <[u8; 32]>::try_from(b).ok())
                .and_then(|b| PublicKey::from_bytes(&b).ok())
                .ok_or(RolesMismatch::Malformed("keys"))
        })
        .collect()
}

/// Recomputes the public seed of a roles document from its keys and nonce (and the task's
/// spec), and the roles from the seed; checks that `me = (index, key)` is in the directory
/// (a client checking its run). The roles, if everything matches.
pub fn check_roles(
    spec: &TaskSpec,
    doc: &RolesJson,
    me: Option<(u32, &PublicKey)>,
) -> Result<Roles, RolesMismatch> {
    let params = spec
        .params()
        .map_err(|e| RolesMismatch::Params(e.to_string()))?;
    let task: [u8; 16] = hex_decode(&doc.task)
        .and_then(|b| b.try_into().ok())
        .ok_or(RolesMismatch::Malformed("task"))?;
    let nonce: Option<[u8; SEED_NONCE_BYTES]> = match &doc.nonce {
        None => None,
        Some(n) => Some(
            hex_decode(n)
                .and_then(|b| b.try_into().ok())
                .ok_or(RolesMismatch::Malformed("nonce"))?,
        ),
    };
    let keys = directory(doc)?;
    if keys.len() != params.clients as usize {
        return Err(RolesMismatch::Malformed("keys"));
    }
    if let Some((i, k)) = me {
        if keys.get(i as usize) != Some(k) {
            return Err(RolesMismatch::OwnKey(i));
        }
    }
    let seed = public_seed(spec, &task, &keys, nonce.as_ref());
    if hex_encode(&seed) != doc.public_seed {
        return Err(RolesMismatch::Seed);
    }
    let roles = select::roles(&params, &task, &seed);
    if roles.shufflers != doc.shufflers
        || roles.committees != doc.committees
        || roles.list_len != doc.list_len
    {
        return Err(RolesMismatch::Roles);
    }
    Ok(roles)
}
