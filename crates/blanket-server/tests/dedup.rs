//! No censorship by duplicate (issue 25, item 7): the analyzer deduplicates on reports that
//! opened only, and the seal binds the report id, so neither a forged report carrying a
//! victim's encapsulated key nor a shuffler swapping report ids suppresses or moves a report.

mod common;

use blanket::rng::SecureRng;
use blanket_server::wire::{Batch, Report, ReportId, Sealed, TaskId};
use common::{loose, Service};

/// Posts a batch to the analyzer as its shuffler does (peer token); its JSON answer.
async fn post_batch(svc: &Service, task: TaskId, id: u8, items: Vec<(ReportId, Sealed)>) {
    let body = Batch {
        task,
        id: [id; 16],
        sealed: items,
    }
    .encode();
    let resp = reqwest::Client::new()
        .post(svc.url("/internal/batches"))
        .bearer_auth("test-token")
        .header("content-type", "application/octet-stream")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201, "{}", resp.text().await.unwrap());
}

async fn counts(svc: &Service, task: TaskId) -> (u64, u64, u64) {
    let v: serde_json::Value = reqwest::get(svc.url(&format!("/tasks/{}/status", task.hex())))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let n = |k: &str| v[k].as_u64().unwrap();
    (n("reports"), n("rejected"), n("duplicates"))
}

/// The censorship attack: a forged report with the victim's encapsulated key and a garbage
/// ciphertext, placed before the victim's genuine report in the same batch (and again in a
/// later batch), used to make the analyzer count the genuine one as a duplicate. Now the
/// forgery does not open, claims nothing, and the genuine report is counted; a real replay
/// (the same report again) still counts once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_report_with_a_victims_enc_does_not_suppress_it() {
    let svc = Service::start("censor").await;
    let client = svc.create(loose(4, 100)).await;
    let task = common::id_of(&client);
    let mut rng = SecureRng::from_os().unwrap();
    let victim = Report::decode(&client.report(2.0, &mut rng).unwrap()).unwrap();
    let forged = |id: u8, garbage: u8| {
        (
            [id; 16],
            Sealed {
                enc: victim.sealed.enc,
                ct: [garbage; blanket_server::wire::CIPHERTEXT_LEN],
            },
        )
    };
    // Forgery first, then the genuine report.
    post_batch(
        &svc,
        task,
        1,
        vec![forged(0xf0, 0), (victim.id, victim.sealed.clone())],
    )
    .await;
    assert_eq!(
        counts(&svc, task).await,
        (1, 1, 0),
        "the genuine report counts"
    );
    // A forgery in a later batch neither suppresses nor counts; the genuine report replayed
    // (same id, same seal) is a duplicate.
    let other = Report::decode(&client.report(1.0, &mut rng).unwrap()).unwrap();
    post_batch(
        &svc,
        task,
        2,
        vec![
            forged(0xf1, 7),
            (victim.id, victim.sealed.clone()),
            (other.id, other.sealed),
        ],
    )
    .await;
    assert_eq!(counts(&svc, task).await, (2, 2, 1));
    svc.stop().await;
}

/// A shuffler (or anyone replaying a sealed message) moving reports to other report ids: the
/// seal binds the id, so the swapped reports do not open and nothing is counted; put back
/// under their own ids they open and count.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swapped_report_ids_do_not_open() {
    let svc = Service::start("swap").await;
    let client = svc.create(loose(4, 100)).await;
    let task = common::id_of(&client);
    let mut rng = SecureRng::from_os().unwrap();
    let a = Report::decode(&client.report(0.0, &mut rng).unwrap()).unwrap();
    let b = Report::decode(&client.report(3.0, &mut rng).unwrap()).unwrap();
    post_batch(
        &svc,
        task,
        1,
        vec![(b.id, a.sealed.clone()), (a.id, b.sealed.clone())],
    )
    .await;
    assert_eq!(
        counts(&svc, task).await,
        (0, 2, 0),
        "swapped ids: nothing opens"
    );
    // A sealed message replayed under a fresh report id does not open either.
    post_batch(&svc, task, 2, vec![([9; 16], a.sealed.clone())]).await;
    assert_eq!(counts(&svc, task).await, (0, 3, 0));
    // The same reports under their own ids: counted (the failed attempts claimed nothing).
    post_batch(&svc, task, 3, vec![(a.id, a.sealed), (b.id, b.sealed)]).await;
    assert_eq!(counts(&svc, task).await, (2, 3, 0));
    svc.stop().await;
}
