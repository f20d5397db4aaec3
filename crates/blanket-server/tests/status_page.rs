//! The analyzer's status page and OpenAPI description over HTTP; and a screenshot of the page
//! in headless Chromium (BLANKET_CHROMIUM, set by scripts/test.d/setup-chromium.sh; skipped
//! loudly without it) checked to show the chart's bars and the trust warning.

mod common;

use blanket::rng::SecureRng;
use common::{loose, Service};
use std::process::Command;

/// Every route the servers answer (method, OpenAPI path).
const ROUTES: [(&str, &str); 14] = [
    ("get", "/healthz"),
    ("post", "/tasks"),
    ("get", "/tasks"),
    ("get", "/tasks/{id}"),
    ("get", "/tasks/{id}/status"),
    ("post", "/tasks/{id}/release"),
    ("get", "/tasks/{id}/releases"),
    ("post", "/tasks/{id}/reports"),
    ("post", "/tasks/{id}/reports/bulk"),
    ("get", "/tasks/{id}/intake"),
    ("put", "/internal/tasks/{id}"),
    ("post", "/internal/batches"),
    ("get", "/"),
    ("get", "/openapi.json"),
];

/// Pixels of the PNG (RGB or RGBA, 8-bit) within `tol` of `rgb`.
fn count_color(png_bytes: &[u8], rgb: [u8; 3], tol: u8) -> usize {
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let step = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("unexpected color type {other:?}"),
    };
    buf[..info.buffer_size()]
        .chunks_exact(step)
        .filter(|p| (0..3).all(|i| p[i].abs_diff(rgb[i]) <= tol))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_page_openapi_and_screenshot() {
    let svc = Service::start("page").await;
    let client = svc.create(loose(6, 60)).await;
    let id = client.params().task_id.clone();
    let http = reqwest::Client::new();
    let mut rng = SecureRng::from_os().unwrap();
    for i in 0..60 {
        let r = client.report(f64::from(i % 6), &mut rng).unwrap();
        client.upload(&http, r).await.unwrap();
    }
    svc.wait_status(&id, |v| v["reports"] == 60).await;
    let resp = http
        .post(svc.url(&format!("/tasks/{id}/release")))
        .bearer_auth(common::ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);

    // OpenAPI: parses, and describes every route served.
    let api: serde_json::Value = http
        .get(svc.url("/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(api["openapi"].as_str().unwrap().starts_with("3."));
    for (method, path) in ROUTES {
        assert!(
            api["paths"][path][method].is_object(),
            "{method} {path} not described"
        );
    }
    // ... and the relay role's six /relay/... paths (tests/relay_budget.rs).
    assert_eq!(api["paths"].as_object().unwrap().len(), 19);

    // The page: task row, one bar per category, the trust warning (role all).
    let html = http
        .get(svc.url("/"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains(&id));
    assert_eq!(html.matches("class=\"bar\"").count(), 6);
    assert!(html.contains("trust-warning"));

    let Some(chromium) = std::env::var("BLANKET_CHROMIUM")
        .ok()
        .filter(|s| !s.is_empty())
    else {
        eprintln!(
            "\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\
             !!! SKIPPED: the status page screenshot needs BLANKET_CHROMIUM          !!!\n\
             !!! (scripts/test sources scripts/test.d/setup-chromium.sh to set it). !!!\n\
             !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
        );
        svc.stop().await;
        return;
    };
    let shot = svc.dir.join("status.png");
    let url = svc.url("/");
    let profile = svc.dir.join("chromium-profile");
    let out = tokio::task::spawn_blocking({
        let shot = shot.clone();
        move || {
            Command::new(chromium)
                .args([
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--hide-scrollbars",
                    "--window-size=1000,1200",
                ])
                .arg(format!("--user-data-dir={}", profile.display()))
                .arg(format!("--screenshot={}", shot.display()))
                .arg(url)
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&shot).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    // The bars (#3b6ea5) and the warning's background (#fdd) are drawn.
    let bars = count_color(&bytes, [0x3b, 0x6e, 0xa5], 6);
    let warn = count_color(&bytes, [0xff, 0xdd, 0xdd], 6);
    assert!(
        bars > 2000,
        "only {bars} bar pixels: the chart did not render"
    );
    assert!(
        warn > 2000,
        "only {warn} warning pixels: the warning did not render"
    );
    svc.stop().await;
}
