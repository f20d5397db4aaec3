//! The analyzer's status page (`GET /`): tasks, report counts, budget spent, and each task's
//! latest release with its certified guarantee and a bar chart (inline SVG) of the estimate.
//! The page is generated HTML with no script and no external resource.

use crate::analyzer::{Analyzer, TaskView};
use crate::problem::Rejection;
use crate::release::Release;
use crate::server::ALL_IN_ONE_WARNING;
use crate::wire::TaskId;
use axum::extract::State;
use axum::response::Html;
use std::fmt::Write as _;
use std::sync::Arc;

/// Escapes text for HTML.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A number with 4 significant digits.
pub fn n4(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let mag = x.abs().log10().floor() as i32;
    if (-3..6).contains(&mag) {
        format!("{:.*}", (3 - mag).max(0) as usize, x)
    } else {
        format!("{x:.3e}")
    }
}

/// An SVG bar chart of `values` (negative estimates drawn below the axis).
pub fn bar_chart(values: &[f64], title: &str) -> String {
    let (w, h, pad) = (480.0, 200.0, 24.0);
    let max = values.iter().fold(0.0f64, |m, v| m.max(*v));
    let min = values.iter().fold(0.0f64, |m, v| m.min(*v));
    let span = (max - min).max(1e-12);
    let zero_y = pad + (max / span) * (h - 2.0 * pad);
    let bw = (w - 2.0 * pad) / values.len().max(1) as f64;
    let mut s = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img" aria-label="{}"><title>{}</title><rect width="{w}" height="{h}" fill="#fafafa" stroke="#ccc"/>"##,
        escape(title),
        escape(title)
    );
    for (i, v) in values.iter().enumerate() {
        let x = pad + i as f64 * bw;
        let y_end = pad + ((max - v) / span) * (h - 2.0 * pad);
        let (y, hh) = if y_end < zero_y {
            (y_end, zero_y - y_end)
        } else {
            (zero_y, y_end - zero_y)
        };
        let _ = write!(
            s,
            r##"<rect class="bar" x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#3b6ea5"><title>{i}: {}</title></rect>"##,
            x + 1.0,
            y,
            (bw - 2.0).max(1.0),
            hh.max(0.5),
            n4(*v)
        );
    }
    let _ = write!(
        s,
        r##"<line x1="{pad}" x2="{}" y1="{zero_y:.1}" y2="{zero_y:.1}" stroke="#333"/></svg>"##,
        w - pad
    );
    s
}

fn release_block(r: &Release) -> String {
    let mut s = format!(
        "<p>Release {} &middot; {} reports in {} batches (smallest {}) &middot; certified \
         <b>eps = {}</b>, delta = {} ({}) &middot; predicted RMSE {}</p>",
        r.release_id,
        r.reports,
        r.batches,
        r.smallest_batch,
        n4(r.guarantee.epsilon),
        n4(r.guarantee.delta),
        escape(&r.guarantee.method),
        n4(r.predicted_rmse)
    );
    if let Some(counts) = r.estimate["counts"].as_array() {
        let v: Vec<f64> = counts.iter().filter_map(|x| x.as_f64()).collect();
        s.push_str(&bar_chart(
            &v,
            &format!("estimated counts, release {}", r.release_id),
        ));
    } else if let Some(mean) = r.estimate["mean"].as_array() {
        let v: Vec<f64> = mean.iter().filter_map(|x| x.as_f64()).collect();
        s.push_str(&bar_chart(
            &v,
            &format!("estimated mean vector, release {}", r.release_id),
        ));
    } else if let (Some(sum), Some(mean)) =
        (r.estimate["sum"].as_f64(), r.estimate["mean"].as_f64())
    {
        let _ = write!(s, "<p>estimated sum {} (mean {})</p>", n4(sum), n4(mean));
    }
    s
}

/// The page for these tasks and their latest releases.
pub fn render(views: &[(TaskView, Option<Release>)], all_in_one: bool) -> String {
    let mut s = String::from(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>blanket analyzer</title>\
         <style>body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse}\
         td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}th{background:#eee}\
         .warn{background:#fdd;border:2px solid #c00;padding:8px;font-weight:bold}</style></head><body>\
         <h1>blanket analyzer</h1>",
    );
    if all_in_one {
        let _ = write!(
            s,
            "<p class=\"warn\" id=\"trust-warning\">{}</p>",
            escape(ALL_IN_ONE_WARNING)
        );
    }
    s.push_str(
        "<table id=\"tasks\"><tr><th>task</th><th>protocol</th><th>reports</th><th>rejected</th>\
         <th>duplicates</th><th>unreleased</th><th>releases</th><th>eps spent / budget</th>\
         <th>delta spent / budget</th></tr>",
    );
    for (v, _) in views {
        let _ = write!(
            s,
            "<tr><td><a href=\"#t{id}\">{id}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{} / {}</td><td>{} / {}</td></tr>",
            v.config.request.protocol.name(),
            v.reports,
            v.rejected,
            v.duplicates,
            v.unreleased,
            v.releases,
            n4(v.budget.spent_eps),
            n4(v.budget.total_eps),
            n4(v.budget.spent_delta),
            n4(v.budget.total_delta),
            id = escape(&v.config.id),
        );
    }
    s.push_str("</table>");
    for (v, r) in views {
        let _ = write!(
            s,
            "<h2 id=\"t{id}\">Task {id}</h2><p>{} &middot; gamma {} &middot; calibrated for \
             eps = {}, delta = {} at min_batch = {} users</p>",
            v.config.request.protocol.name(),
            n4(v.config.gamma),
            n4(v.config.certified.epsilon),
            n4(v.config.certified.delta),
            v.config.request.min_batch,
            id = escape(&v.config.id),
        );
        match r {
            Some(r) => s.push_str(&release_block(r)),
            None => s.push_str("<p>No release yet.</p>"),
        }
    }
    s.push_str("<p><a href=\"/openapi.json\">API description (OpenAPI)</a></p></body></html>");
    s
}

/// `GET /`.
pub async fn page(State(a): State<Arc<Analyzer>>) -> Result<Html<String>, Rejection> {
    let mut rows = Vec::new();
    for v in a.views().await? {
        let id = TaskId::parse(&v.config.id)
            .ok_or_else(|| Rejection::Storage("stored task id".into()))?;
        let last = a.release_list(id).await?.pop();
        rows.push((v, last));
    }
    Ok(Html(render(&rows, a.all_in_one)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_has_one_bar_per_value_and_escapes() {
        let svg = bar_chart(&[1.0, -2.0, 3.0], "a<b");
        assert_eq!(svg.matches("class=\"bar\"").count(), 3);
        assert!(svg.contains("a&lt;b"));
        assert_eq!(n4(1234.5678), "1235");
        assert_eq!(n4(0.012345), "0.01235");
    }

    #[test]
    fn warning_only_when_all_in_one() {
        assert!(render(&[], true).contains("trust-warning"));
        assert!(!render(&[], false).contains("trust-warning"));
    }
}
