//! The client side: fetch a task's parameters, randomize a value locally with the OS-seeded
//! generator, seal the message to the analyzer, and upload the report to the shuffler.

use crate::crypto::{self, CryptoError};
use crate::problem::{Problem, PROBLEM_JSON};
use crate::shuffler::BulkOutcome;
use crate::task::{ClientParams, Protocol};
use crate::wire::{hex_decode, Report, Sealed, TaskId, CIPHERTEXT_LEN, WIRE_VERSION};
use blanket::params::{DomainSize, Gamma, ParamError, Precision};
use blanket::protocol::{Histogram, ScalarSum};
use blanket::rng::{RngCore, SecureRng};
use thiserror::Error;

/// A client-side failure.
#[derive(Debug, Error)]
pub enum ClientError {
    /// The value is outside the protocol's range.
    #[error(transparent)]
    Value(#[from] ParamError),
    /// The task's parameters are unusable.
    #[error("bad task parameters: {0}")]
    Params(String),
    /// Encryption failed.
    #[error(transparent)]
    Crypto(#[from] CryptoError),
    /// The server refused, with its typed reason.
    #[error("refused ({}, HTTP {}): {}", .0.reason, .0.status, .0.detail)]
    Rejected(Problem),
    /// The server could not be reached or answered something unexpected.
    #[error("HTTP: {0}")]
    Http(String),
}

impl From<reqwest::Error> for ClientError {
    fn from(e: reqwest::Error) -> Self {
        Self::Http(e.to_string())
    }
}

/// The server's problem body, or a generic error.
pub async fn problem_of(resp: reqwest::Response) -> ClientError {
    let status = resp.status();
    let is_problem = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with(PROBLEM_JSON));
    let text = resp.text().await.unwrap_or_default();
    match serde_json::from_str::<Problem>(&text) {
        Ok(p) if is_problem => ClientError::Rejected(p),
        _ => ClientError::Http(format!("HTTP {status}: {text}")),
    }
}

/// `GET` a task URL: its client parameters.
pub async fn fetch_params(http: &reqwest::Client, url: &str) -> Result<ClientParams, ClientError> {
    let resp = http.get(url).send().await?;
    if !resp.status().is_success() {
        return Err(problem_of(resp).await);
    }
    Ok(resp.json().await?)
}

/// A task's client: the protocol's randomizer and the analyzer's key.
pub struct TaskClient {
    params: ClientParams,
    task: TaskId,
    public_key: Vec<u8>,
    randomizer: Randomizer,
}

enum Randomizer {
    Histogram(Histogram),
    ScalarSum(ScalarSum),
}

impl TaskClient {
    /// Checks the parameters and builds the randomizer.
    pub fn new(params: ClientParams) -> Result<Self, ClientError> {
        if params.wire_version != WIRE_VERSION {
            return Err(ClientError::Params(format!(
                "wire version {} (this client speaks {WIRE_VERSION})",
                params.wire_version
            )));
        }
        let task = TaskId::parse(&params.task_id)
            .ok_or_else(|| ClientError::Params(format!("task id {}", params.task_id)))?;
        let public_key = hex_decode(&params.hpke_public_key)
            .ok_or_else(|| ClientError::Params("hpke_public_key is not hex".into()))?;
        let gamma = Gamma::new(params.gamma)?;
        let randomizer = match params.protocol {
            Protocol::Histogram { domain } => {
                Randomizer::Histogram(Histogram::new(DomainSize::new(domain)?, gamma))
            }
            Protocol::ScalarSum { k } => {
                let k = k.ok_or_else(|| ClientError::Params("scalar-sum without k".into()))?;
                Randomizer::ScalarSum(ScalarSum::new(Precision::new(k)?, gamma))
            }
        };
        Ok(Self {
            params,
            task,
            public_key,
            randomizer,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &ClientParams {
        &self.params
    }

    /// Randomizes one value and seals it: the report's bytes. A histogram takes a category
    /// (an integer in 0..domain), a scalar sum a real in [0, 1].
    pub fn report(&self, value: f64, rng: &mut SecureRng) -> Result<Vec<u8>, ClientError> {
        let message = match &self.randomizer {
            Randomizer::Histogram(h) => {
                let m = h.randomizer().m().get();
                if !(value.fract() == 0.0 && value >= 0.0 && value < f64::from(m)) {
                    return Err(ParamError::OutOfRange {
                        field: "value",
                        allowed: "a category: an integer from 0 to domain - 1",
                        value: value.to_string(),
                    }
                    .into());
                }
                h.randomize(value as u32, rng).map_err(|e| {
                    ClientError::Params(format!("randomizer refused the category: {e}"))
                })?
            }
            Randomizer::ScalarSum(s) => s.randomize(value, rng).map_err(|e| match e {
                ParamError::OutOfRange { allowed, value, .. } => ParamError::OutOfRange {
                    field: "value",
                    allowed,
                    value,
                },
            })?,
        };
        let (enc, ct) = crypto::seal(&self.public_key, &self.task, message, rng)?;
        let ct: [u8; CIPHERTEXT_LEN] = ct
            .try_into()
            .map_err(|_| ClientError::Crypto(CryptoError::Seal))?;
        let mut id = [0u8; 16];
        rng.fill_bytes(&mut id);
        Ok(Report {
            task: self.task,
            id,
            sealed: Sealed { enc, ct },
        }
        .encode())
    }

    /// Uploads a report to the shuffler; `Ok` once it is durably stored.
    pub async fn upload(&self, http: &reqwest::Client, report: Vec<u8>) -> Result<(), ClientError> {
        let resp = http
            .post(&self.params.upload_url)
            .header("content-type", "application/octet-stream")
            .body(report)
            .send()
            .await?;
        if resp.status().is_success() {
            Ok(())
        } else {
            Err(problem_of(resp).await)
        }
    }

    /// Uploads several reports (at most [`crate::shuffler::BULK_MAX`]) in one request to the
    /// shuffler's bulk endpoint; answers each report's outcome once all are durably stored.
    pub async fn upload_bulk(
        &self,
        http: &reqwest::Client,
        reports: &[Vec<u8>],
    ) -> Result<BulkOutcome, ClientError> {
        let body: Vec<u8> = reports.concat();
        let resp = http
            .post(format!("{}/bulk", self.params.upload_url))
            .header("content-type", "application/octet-stream")
            .body(body)
            .send()
            .await?;
        if resp.status().is_success() {
            Ok(resp.json().await?)
        } else {
            Err(problem_of(resp).await)
        }
    }
}
