//! The client side: fetch a task's parameters, randomize a value locally with the OS-seeded
//! generator, seal each message to the analyzer, and upload the reports to the shuffler.
//! A user of a multi-message task (vector sum: t reports; IKOS sum: m shares) sends each
//! message as its own report, all in one bulk upload ([`TaskClient::upload_user`]).

use crate::crypto::{self, CryptoError};
use crate::multi;
use crate::problem::{Problem, PROBLEM_JSON};
use crate::shuffler::BulkOutcome;
use crate::task::{ikos_parts, ClientParams, Protocol};
use crate::wire::{hex_decode, Report, Sealed, TaskId, CIPHERTEXT_LEN, WIRE_VERSION};
use blanket::params::{DomainSize, Gamma, ParamError, Precision};
use blanket::protocol::{Histogram, IkosSum, ScalarSum, VectorSum};
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
    VectorSum(VectorSum),
    IkosSum(IkosSum),
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
        let gamma = || Gamma::new(params.gamma);
        let bad = |e: crate::problem::Rejection| ClientError::Params(e.to_string());
        let randomizer = match params.protocol {
            Protocol::Histogram { domain } => {
                Randomizer::Histogram(Histogram::new(DomainSize::new(domain)?, gamma()?))
            }
            Protocol::ScalarSum { k } => {
                let k = k.ok_or_else(|| ClientError::Params("scalar-sum without k".into()))?;
                Randomizer::ScalarSum(ScalarSum::new(Precision::new(k)?, gamma()?))
            }
            Protocol::VectorSum { d, t, k } => {
                Randomizer::VectorSum(multi::vector_protocol(d, t, k, params.gamma).map_err(bad)?)
            }
            Protocol::IkosSum { sigma, calibrated } => {
                let (sigma, c) = ikos_parts(sigma, calibrated).map_err(bad)?;
                Randomizer::IkosSum(
                    multi::ikos_protocol(params.config.request.eps, sigma, &c).map_err(bad)?,
                )
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

    /// Reports each user sends (1, t or m).
    pub fn messages_per_user(&self) -> u64 {
        self.params.protocol.messages_per_user()
    }

    /// Randomizes one user's value and seals each of its messages: the reports' bytes. A
    /// histogram takes a category (one integer in 0..domain), a scalar or IKOS sum one real
    /// in [0, 1], a vector sum d reals in [0, 1]. Errors name the field `value`.
    pub fn reports(&self, value: &[f64], rng: &mut SecureRng) -> Result<Vec<Vec<u8>>, ClientError> {
        let one = || match value {
            [v] => Ok(*v),
            _ => Err(ParamError::OutOfRange {
                field: "value",
                allowed: "one number (this task's protocol takes a scalar)",
                value: format!("{} numbers", value.len()),
            }),
        };
        let messages: Vec<u32> = match &self.randomizer {
            Randomizer::Histogram(_) | Randomizer::ScalarSum(_) => {
                return Ok(vec![self.report(one()?, rng)?])
            }
            Randomizer::VectorSum(p) => {
                multi::check_vector(value, p.d())?;
                let k = p.k().get();
                p.randomize(value, rng)
                    .map_err(|e| ClientError::Params(format!("vector randomizer: {e}")))?
                    .into_iter()
                    .map(|(j, y)| multi::encode_coordinate(j, y, k))
                    .collect()
            }
            Randomizer::IkosSum(p) => {
                let shares = p.randomize(one()?, rng).map_err(|e| match e {
                    blanket::protocol::IkosSumError::Param(ParamError::OutOfRange {
                        allowed,
                        value,
                        ..
                    }) => ClientError::Value(ParamError::OutOfRange {
                        field: "value",
                        allowed,
                        value,
                    }),
                    other => ClientError::Params(format!("IKOS randomizer: {other}")),
                })?;
                shares
                    .into_iter()
                    .map(|y| {
                        u32::try_from(y).map_err(|_| {
                            ClientError::Params(format!("share {y} does not fit the u32 message"))
                        })
                    })
                    .collect::<Result<_, _>>()?
            }
        };
        messages.into_iter().map(|m| self.seal(m, rng)).collect()
    }

    /// Randomizes one value and seals it: the report's bytes. A histogram takes a category
    /// (an integer in 0..domain), a scalar sum a real in [0, 1]. Multi-message tasks:
    /// [`TaskClient::reports`].
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
            Randomizer::VectorSum(_) | Randomizer::IkosSum(_) => {
                return Err(ClientError::Params(format!(
                    "a {} user sends {} reports: use TaskClient::reports",
                    self.params.protocol.name(),
                    self.messages_per_user()
                )))
            }
        };
        self.seal(message, rng)
    }

    fn seal(&self, message: u32, rng: &mut SecureRng) -> Result<Vec<u8>, ClientError> {
        // The report id first: the seal binds it (associated data, wire version 2).
        let mut id = [0u8; 16];
        rng.fill_bytes(&mut id);
        let (enc, ct) = crypto::seal(&self.public_key, &self.task, &id, message, rng)?;
        let ct: [u8; CIPHERTEXT_LEN] = ct
            .try_into()
            .map_err(|_| ClientError::Crypto(CryptoError::Seal))?;
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

    /// Uploads one user's reports: one report alone, several in one bulk upload (one
    /// transaction at the shuffler, so the user's messages land in one batch). A refusal of
    /// the upload is an error; the outcome says which reports were duplicates.
    pub async fn upload_user(
        &self,
        http: &reqwest::Client,
        reports: Vec<Vec<u8>>,
    ) -> Result<BulkOutcome, ClientError> {
        if let [one] = &reports[..] {
            self.upload(http, one.clone()).await?;
            return Ok(BulkOutcome {
                accepted: 1,
                duplicates: 0,
                results: vec!["accepted".into()],
            });
        }
        self.upload_bulk(http, &reports).await
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
