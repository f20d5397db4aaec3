//! The shuffler's durable intake: group commit with multi-row statements keeps replay
//! protection exact, also between copies of one report inside one group (one transaction),
//! across chunk boundaries, and between single and bulk uploads racing each other.
//! The store-level tests run on SQLite always and on PostgreSQL when BLANKET_TEST_PG_URL is
//! set (scripts/test.d/setup-postgres.sh); without it they say so and run SQLite only.

mod common;

use blanket::rng::{RngCore, SecureRng};
use blanket_server::client::ClientError;
use blanket_server::shuffler::ShufflerTask;
use blanket_server::store::{Incoming, Store};
use blanket_server::wire::{ReportId, Sealed, TaskId, CIPHERTEXT_LEN, ENC_LEN, REPORT_LEN};
use common::{loose, temp_dir, Service};
use sqlx::Connection;

fn sealed(i: u32) -> Sealed {
    let mut enc = [0u8; ENC_LEN];
    enc[..4].copy_from_slice(&i.to_be_bytes());
    Sealed {
        enc,
        ct: [7u8; CIPHERTEXT_LEN],
    }
}

/// A report for `commit_reports`, in upload `upload`.
fn inc(task: TaskId, id: u32, enc: u32, upload: i64) -> Incoming {
    Incoming {
        task,
        id: rid(id),
        sealed: sealed(enc),
        upload,
    }
}

/// A shuffler task of `min_batch` reports, no deadline, `k` reports per upload.
fn open_task(min_batch: u64, k: u64) -> ShufflerTask {
    ShufflerTask {
        min_batch,
        deadline_unix: u64::MAX,
        reports_per_upload: k,
    }
}

fn rid(i: u32) -> ReportId {
    let mut id = [0u8; 16];
    id[12..].copy_from_slice(&i.to_be_bytes());
    id
}

/// The stores to test: a SQLite file, and PostgreSQL (a fresh database) when configured.
async fn stores(label: &str) -> Vec<(String, Store)> {
    let dir = temp_dir(label);
    let mut out = vec![(
        "sqlite".to_string(),
        Store::open(&format!("sqlite://{}", dir.join("db.sqlite").display()))
            .await
            .unwrap(),
    )];
    match std::env::var("BLANKET_TEST_PG_URL") {
        Ok(base) if !base.is_empty() => {
            let mut c = sqlx::PgConnection::connect(&base).await.unwrap();
            let mut b = [0u8; 8];
            SecureRng::from_os().unwrap().fill_bytes(&mut b);
            let name = format!("blanket_intake_{}", blanket_server::wire::hex_encode(&b));
            sqlx::query(&format!("CREATE DATABASE {name}"))
                .execute(&mut c)
                .await
                .unwrap();
            let (prefix, _) = base.rsplit_once('/').unwrap();
            let url = format!("{prefix}/{name}");
            out.push(("postgres".to_string(), Store::open(&url).await.unwrap()));
        }
        _ => eprintln!(
            "!!! intake store tests: BLANKET_TEST_PG_URL not set, PostgreSQL part SKIPPED !!!"
        ),
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicates_inside_one_group_are_stored_once() {
    let t = TaskId([3u8; 16]);
    let other = TaskId([4u8; 16]);
    for (name, store) in stores("group-dups").await {
        store
            .put_shuffler_task(t, open_task(1_000_000, 1))
            .await
            .unwrap();
        store
            .put_shuffler_task(other, open_task(1_000_000, 1))
            .await
            .unwrap();
        // An earlier group stores report 9.
        let first = store.commit_reports(&[inc(t, 9, 9, 1)]).await.unwrap();
        assert_eq!(first, vec![true], "{name}");
        // One group: three copies of 1 (the first wins), 2, a copy of the stored 9, the same
        // report id under another task (a different key), two copies of 3.
        let group = vec![
            inc(t, 1, 1, 2),
            inc(t, 2, 2, 3),
            inc(t, 1, 101, 4),
            inc(t, 9, 109, 5),
            inc(other, 1, 201, 6),
            inc(t, 3, 3, 7),
            inc(t, 1, 102, 8),
            inc(t, 3, 103, 9),
        ];
        let fresh = store.commit_reports(&group).await.unwrap();
        assert_eq!(
            fresh,
            vec![true, true, false, false, true, true, false, false],
            "{name}"
        );
        assert_eq!(store.accepted_count(t).await.unwrap(), 4, "{name}");
        assert_eq!(store.pending_count(t).await.unwrap(), 4, "{name}");
        assert_eq!(store.accepted_count(other).await.unwrap(), 1, "{name}");
        assert_eq!(store.pending_count(other).await.unwrap(), 1, "{name}");
        // The first copy's sealed report is the one stored.
        let batch = [0x55u8; 16];
        assert_eq!(
            store.cut_batch(t, batch, 4, 100).await.unwrap(),
            Some(4),
            "{name}"
        );
        let mut encs: Vec<u32> = store
            .batch_reports(&batch)
            .await
            .unwrap()
            .iter()
            .map(|(_, s)| u32::from_be_bytes(s.enc[..4].try_into().unwrap()))
            .collect();
        encs.sort_unstable();
        assert_eq!(encs, vec![1, 2, 3, 9], "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_groups_with_copies_across_chunks_count_each_id_once() {
    let t = TaskId([5u8; 16]);
    for (name, store) in stores("group-large").await {
        store
            .put_shuffler_task(t, open_task(1_000_000, 1))
            .await
            .unwrap();
        // 1,300 ids, each twice, the copies 1,300 positions apart (statements hold at most
        // 512 rows): 2,600 reports in one group.
        let n = 1300u32;
        let group: Vec<_> = (0..2 * n).map(|i| inc(t, i % n, i, 1)).collect();
        let fresh = store.commit_reports(&group).await.unwrap();
        assert_eq!(fresh.iter().filter(|f| **f).count(), n as usize, "{name}");
        assert!(
            fresh[..n as usize].iter().all(|f| *f),
            "{name}: first copies win"
        );
        assert_eq!(
            store.accepted_count(t).await.unwrap(),
            u64::from(n),
            "{name}"
        );
        assert_eq!(
            store.pending_count(t).await.unwrap(),
            u64::from(n),
            "{name}"
        );
        // A second group with the same ids and 3 new ones (group sizes that are not a power
        // of two, to use every statement shape).
        let again: Vec<_> = (0..n + 3).map(|i| inc(t, i, i, 2)).collect();
        let fresh = store.commit_reports(&again).await.unwrap();
        let new: Vec<usize> = (0..fresh.len()).filter(|&i| fresh[i]).collect();
        assert_eq!(new, vec![1300, 1301, 1302], "{name}");
        assert_eq!(
            store.pending_count(t).await.unwrap(),
            u64::from(n + 3),
            "{name}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capped_cut_takes_whole_uploads_only() {
    let t = TaskId([6u8; 16]);
    for (name, store) in stores("upload-cut").await {
        store.put_shuffler_task(t, open_task(3, 3)).await.unwrap();
        // Five uploads of 3 reports in one group, their report ids interleaved (the group is
        // written in report-id order, so storage order interleaves the uploads).
        let group: Vec<_> = (0..15u32)
            .map(|i| inc(t, 5 * (i % 3) + i / 3, i, 100 + i64::from(i / 3)))
            .collect();
        let fresh = store.commit_reports(&group).await.unwrap();
        assert!(fresh.iter().all(|f| *f), "{name}");
        // A cap of 7 reports fits two whole uploads: 6, never 7.
        let mut left = 15u64;
        let mut seen: Vec<u32> = Vec::new();
        for (b, cap) in [(1u8, 7u64), (2, 4), (3, 2), (4, 100)] {
            let batch = [b; 16];
            let cut = store.cut_batch(t, batch, 3, cap).await.unwrap();
            let expect = match cap {
                7 => Some(6),
                4 => Some(3),
                2 => None,
                _ => Some(left),
            };
            assert_eq!(cut, expect, "{name}: cap {cap}");
            if let Some(n) = cut {
                left -= n;
                let encs: Vec<u32> = store
                    .batch_reports(&batch)
                    .await
                    .unwrap()
                    .iter()
                    .map(|(_, s)| u32::from_be_bytes(s.enc[..4].try_into().unwrap()))
                    .collect();
                // Whole uploads: each upload u holds encs 3u, 3u + 1, 3u + 2.
                let mut uploads: Vec<u32> = encs.iter().map(|e| e / 3).collect();
                uploads.sort_unstable();
                for c in uploads.chunks(3) {
                    assert!(
                        c.len() == 3 && c[0] == c[2],
                        "{name}: split upload {encs:?}"
                    );
                }
                seen.extend(encs);
            }
        }
        seen.sort_unstable();
        assert_eq!(
            seen,
            (0..15).collect::<Vec<_>>(),
            "{name}: every report once"
        );
        assert_eq!(store.pending_count(t).await.unwrap(), 0, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn single_and_bulk_uploads_racing_accept_each_report_once() {
    let svc = Service::start("bulk-race").await;
    let client = svc.create(loose(3, 1_000_000)).await;
    let id = client.params().task_id.clone();
    let http = reqwest::Client::new();
    let mut rng = SecureRng::from_os().unwrap();
    let reports: Vec<Vec<u8>> = (0..200)
        .map(|i| client.report(f64::from(i % 3), &mut rng).unwrap())
        .collect();
    // Each report goes out three times at once: alone, in bulk upload A, in bulk upload B
    // (B also carries each report twice).
    let mut singles = tokio::task::JoinSet::new();
    for r in &reports {
        let (c, h, r) = (client.clone(), http.clone(), r.clone());
        singles.spawn(async move { c.upload(&h, r).await });
    }
    let a: Vec<Vec<u8>> = reports.clone();
    let b: Vec<Vec<u8>> = reports
        .iter()
        .rev()
        .flat_map(|r| [r.clone(), r.clone()])
        .collect();
    let (ca, ha) = (client.clone(), http.clone());
    let bulk_a = tokio::spawn(async move { ca.upload_bulk(&ha, &a).await });
    let (cb, hb) = (client.clone(), http.clone());
    let bulk_b = tokio::spawn(async move { cb.upload_bulk(&hb, &b[..400]).await });
    let mut single_ok = 0u64;
    while let Some(r) = singles.join_next().await {
        match r.unwrap() {
            Ok(()) => single_ok += 1,
            Err(ClientError::Rejected(p)) => assert_eq!(p.reason, "duplicate"),
            Err(e) => panic!("{e}"),
        }
    }
    let a = bulk_a.await.unwrap().unwrap();
    let b = bulk_b.await.unwrap().unwrap();
    assert_eq!(a.results.len(), 200);
    assert_eq!(b.results.len(), 400);
    assert_eq!(a.accepted + a.duplicates, 200);
    // In B the second copy of each report is always a duplicate.
    assert!(b
        .results
        .iter()
        .skip(1)
        .step_by(2)
        .all(|r| r == "duplicate"));
    assert_eq!(
        single_ok + a.accepted + b.accepted,
        200,
        "each report exactly once"
    );
    let intake: serde_json::Value = reqwest::get(svc.url(&format!("/tasks/{id}/intake")))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(intake["accepted"], 200);
    assert_eq!(intake["pending"], 200);
    // Later, in bulk: all duplicates, and nothing more stored.
    let later = client.upload_bulk(&http, &reports[..10]).await.unwrap();
    assert_eq!((later.accepted, later.duplicates), (0, 10));
    svc.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bulk_framing_errors_refuse_the_whole_upload() {
    let svc = Service::start("bulk-bad").await;
    let client = svc.create(loose(3, 1_000_000)).await;
    let other = svc.create(loose(3, 1_000_000)).await;
    let id = client.params().task_id.clone();
    let http = reqwest::Client::new();
    let mut rng = SecureRng::from_os().unwrap();
    let good = client.report(1.0, &mut rng).unwrap();
    let foreign = other.report(1.0, &mut rng).unwrap();
    let post = |body: Vec<u8>| {
        let (h, u) = (http.clone(), svc.url(&format!("/tasks/{id}/reports/bulk")));
        async move {
            let r = h.post(u).body(body).send().await.unwrap();
            let status = r.status().as_u16();
            let v: serde_json::Value = r.json().await.unwrap();
            (status, v["reason"].as_str().unwrap_or("").to_string())
        }
    };
    // Not a multiple of the report length; empty; over 1000 reports.
    let mut cut = good.clone();
    cut.pop();
    assert_eq!(post(cut).await, (400, "wrong-length".into()));
    assert_eq!(post(Vec::new()).await, (400, "wrong-length".into()));
    let many: Vec<u8> = good.repeat(1001);
    assert_eq!(many.len(), 1001 * REPORT_LEN);
    let (status, reason) = post(many).await;
    assert!(
        (status, reason.as_str()) == (400, "wrong-length")
            || (status, reason.as_str()) == (413, "too-large"),
        "{status} {reason}"
    );
    // A report for another task, or of another version, refuses the whole upload.
    assert_eq!(
        post([good.clone(), foreign].concat()).await,
        (400, "wrong-task".into())
    );
    let mut v1 = good.clone();
    v1[0] = 1;
    assert_eq!(
        post([good.clone(), v1].concat()).await,
        (400, "unsupported-version".into())
    );
    let intake: serde_json::Value = reqwest::get(svc.url(&format!("/tasks/{id}/intake")))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        intake["accepted"], 0,
        "nothing of a refused upload is stored"
    );
    // Unknown task (the report names it too: otherwise it is `wrong-task`).
    let mut unknown = good.clone();
    unknown[1..17].copy_from_slice(&[0xab; 16]);
    let r = http
        .post(svc.url(&format!("/tasks/{}/reports/bulk", "ab".repeat(16))))
        .body(unknown)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    svc.stop().await;
}
