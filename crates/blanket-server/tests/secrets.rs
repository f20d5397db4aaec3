//! Secrets at rest and small leaks (issue 25, items 6 and 9): the database files are private
//! to their owner; a storage failure is answered `503 storage` without its cause.

mod common;

use blanket_server::store::{Store, DB_FILE_MODE};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

fn with_suffix(p: &Path, suffix: &str) -> std::path::PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(suffix);
    s.into()
}

/// Another local user reading the analyzer's database (every task's HPKE private key): the
/// database, its -wal and its -shm are created 0600 whatever the umask (tests run under
/// 022, which gave 0644 before), and an existing world-readable database is made private.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_local_user_cannot_read_the_database_files() {
    let svc = common::Service::start("db-mode").await;
    svc.create(common::loose(4, 100)).await;
    let db = svc.dir.join("db.sqlite");
    for p in [
        db.clone(),
        with_suffix(&db, "-wal"),
        with_suffix(&db, "-shm"),
    ] {
        assert_eq!(mode(&p), DB_FILE_MODE, "{}", p.display());
    }
    svc.stop().await;

    // The relay role's database (its event log) too.
    let dir = common::temp_dir("relay-db-mode");
    let db = dir.join("relay.sqlite");
    let relay = common::relay_on(&format!("sqlite://{}", db.display())).await;
    for p in [
        db.clone(),
        with_suffix(&db, "-wal"),
        with_suffix(&db, "-shm"),
    ] {
        assert_eq!(mode(&p), DB_FILE_MODE, "{}", p.display());
    }
    relay.stop().await;

    // A database left world-readable (created by an older version): made private on open.
    let old = dir.join("old.sqlite");
    std::fs::write(&old, b"").unwrap();
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
    let store = Store::open(&format!("sqlite://{}", old.display()))
        .await
        .unwrap();
    assert_eq!(mode(&old), DB_FILE_MODE);
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A caller provoking a storage failure learns nothing about the database (paths, tables,
/// driver messages): a typed `503 storage` with a fixed detail and `Retry-After`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_errors_are_not_echoed_to_callers() {
    use sqlx::Connection;
    let svc = common::Service::start("storage-leak").await;
    let client = svc.create(common::loose(4, 100)).await;
    let id = common::id_of(&client).hex();
    // The operator's database breaks under the running service (a table gone).
    let db = svc.dir.join("db.sqlite");
    let mut c = sqlx::SqliteConnection::connect(&format!("sqlite://{}", db.display()))
        .await
        .unwrap();
    sqlx::query("DROP TABLE analyzer_releases")
        .execute(&mut c)
        .await
        .unwrap();
    drop(c);
    let resp = reqwest::get(svc.url(&format!("/tasks/{id}/releases")))
        .await
        .unwrap();
    assert_eq!(resp.status(), 503);
    assert_eq!(resp.headers()["retry-after"], "5");
    let body = resp.text().await.unwrap();
    let p: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(p["reason"], "storage");
    assert_eq!(p["detail"], blanket_server::problem::STORAGE_DETAIL);
    for leak in [
        "analyzer_releases",
        "no such table",
        "sqlite",
        "db.sqlite",
        "database:",
    ] {
        assert!(!body.contains(leak), "{leak:?} in {body}");
    }
    svc.stop().await;
}
