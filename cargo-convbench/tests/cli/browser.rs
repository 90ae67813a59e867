//! The history dashboard in a real headless browser (Debian's chromium): its script runs
//! without console errors and its charts are drawn.
//!
//! Without a browser the test says so and passes, unless `CONVBENCH_REQUIRE_BROWSER` is set
//! (`.ci/run` sets it and installs chromium), when it fails instead.

use crate::support::assert_code;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The browser: `CONVBENCH_CHROMIUM`, else the first of `chromium`, `chromium-browser`,
/// `google-chrome` on `PATH`.
fn browser() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CONVBENCH_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// Whether CI demands the browser test run (`CONVBENCH_REQUIRE_BROWSER` set, and not `0`).
fn browser_required() -> bool {
    std::env::var("CONVBENCH_REQUIRE_BROWSER").is_ok_and(|value| !value.is_empty() && value != "0")
}

/// Runs the headless browser on `page` with `mode` (`--dump-dom` or `--screenshot=FILE`), with
/// the flags a sandboxed root user needs, logging the page's console to stderr.
fn headless(browser: &Path, profile: &Path, mode: &str, page: &Path) -> std::process::Output {
    assert_cmd::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=900,1200",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(mode)
        .arg(page)
        .timeout(Duration::from_secs(90))
        .output()
        .expect("the browser runs")
}

#[test]
fn the_dashboard_renders_in_headless_chromium_without_console_errors() {
    let Some(browser) = browser() else {
        assert!(
            !browser_required(),
            "CONVBENCH_REQUIRE_BROWSER is set but no chromium is on PATH; install it (Debian: chromium)"
        );
        eprintln!(
            "notice: skipping the browser test: no chromium on PATH (set CONVBENCH_REQUIRE_BROWSER=1 to fail instead)"
        );
        return;
    };
    let (package, _) = crate::git_flow::ten_blessed_runs(1.15);
    let output = package
        .convbench()
        .args(["history", "--html", "site"])
        .output()
        .expect("history --html");
    assert_code(&output, 0);
    let page = package.path("site/index.html");
    let profile = package.path("browser-profile");

    let dom = headless(&browser, &profile, "--dump-dom", &page);
    assert!(dom.status.success(), "{}", String::from_utf8_lossy(&dom.stderr));
    let dom_text = String::from_utf8_lossy(&dom.stdout);
    let console = String::from_utf8_lossy(&dom.stderr);
    let logged: Vec<&str> = console
        .lines()
        .filter(|line| line.contains("CONSOLE") || line.contains("Uncaught"))
        .collect();
    assert!(logged.is_empty(), "the page logged to the console: {logged:?}");
    let charts = dom_text.matches("<section class=\"chart\"").count();
    assert!(charts >= 2, "{dom_text}");
    // The script ran: it counts the charts it shows.
    assert!(
        dom_text.contains(&format!("{charts} of {charts} charts shown")),
        "the filter script did not run: {dom_text}"
    );
    assert_eq!(
        dom_text.matches("class=\"change-point\"").count(),
        charts,
        "every phase of the scaled record steps at the sixth blessing"
    );

    let screenshot = package.path("dashboard.png");
    let shot = headless(
        &browser,
        &profile,
        &format!("--screenshot={}", screenshot.display()),
        &page,
    );
    assert!(shot.status.success(), "{}", String::from_utf8_lossy(&shot.stderr));
    let png = std::fs::read(&screenshot).expect("the screenshot");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    // A blank 900x1200 page compresses to a few kB; charts, bands and text do not.
    assert!(
        png.len() > 30_000,
        "the screenshot looks empty: {} bytes",
        png.len()
    );
}
