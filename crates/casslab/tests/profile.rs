//! Profiles end to end against the real test node: `run --profile` records the node with
//! async-profiler (loaded at the node's start), the HTML report carries the flame graphs (each drawing rendered in
//! headless Chromium, where inferno's script runs and Cassandra's request path frames are
//! drawn), the Markdown report lists the top frames, the JSON report and `--profile-out` carry
//! folded stacks; two profiled runs compared get a differential flame graph; a profile made
//! elsewhere (`--profile-file`) is shown the same way; casslab's own profile
//! (`--profile-client`) is drawn apart from the servers'; and `--profile` against `--hosts` is
//! refused with what to do instead.

mod common;
use base64::Engine;
use common::chromium::headless;
use common::{casslab, load_lock, node, run, store_arg, temp_store};
use std::path::{Path, PathBuf};

/// A short profiled run of kv at a fixed rate; returns the run's id.
fn profiled_run(store: &Path, extra: &[&str]) -> String {
    let (code, out, err) = run(casslab()
        .args(["run", "kv", "--profile", "-P", "rows=5000", "-P", "keyspace=casslab_profile", "--rate", "400", "-d", "12s", "--warmup", "3s", "--no-lint"])
        .args(store_arg(store))
        .args(extra));
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    assert!(err.contains("profile: 1 node") && err.contains("CPU samples"), "the run says what it recorded: {err}");
    err.split("saved as run ").nth(1).and_then(|r| r.split_whitespace().next()).expect("the run id").to_string()
}

/// The SVG documents of a page's flame graphs, with their titles.
fn flame_graphs(html: &str) -> Vec<(String, String)> {
    html.split("<iframe class=\"flame\" title=\"")
        .skip(1)
        .map(|rest| {
            let title = rest.split('"').next().unwrap().to_string();
            let b64 = rest.split("base64,").nth(1).unwrap().split('"').next().unwrap();
            (title, String::from_utf8(base64::engine::general_purpose::STANDARD.decode(b64).unwrap()).unwrap())
        })
        .collect()
}

/// Renders an SVG in headless Chromium (its script runs) and returns the DOM.
fn rendered(dir: &Path, name: &str, svg: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, svg).unwrap();
    headless(&path, &["--window-size=1280,900".into(), "--dump-dom".into()])
}

#[test]
fn a_profiled_run_shows_where_the_node_spent_its_time_and_two_runs_show_where_it_moved() {
    let _g = load_lock();
    node();
    let (dir, store) = temp_store();
    let first = profiled_run(&store, &["--profile-client"]);
    let out_dir = dir.path().join("folded");
    let second = profiled_run(&store, &["--profile-out", out_dir.to_str().unwrap()]);

    // the HTML report: a flame graph per kind, drawn by inferno, with the request path
    let page = dir.path().join("report.html");
    let (code, _, err) = run(casslab().args(["report", &first, "-o", page.to_str().unwrap()]).args(store_arg(&store)));
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("Where the servers spent their time"), "the section is there");
    let graphs = flame_graphs(&html);
    let cpu = graphs.iter().find(|(t, _)| t.starts_with("CPU")).expect("a CPU flame graph");
    assert!(graphs.iter().any(|(t, _)| t.starts_with("allocation")), "an allocation flame graph: {:?}", graphs.iter().map(|g| &g.0).collect::<Vec<_>>());
    let dom = rendered(dir.path(), "cpu.svg", &cpu.1);
    let frames = dom.matches("<g").count();
    assert!(frames > 50, "the drawing has its frames after the browser ran it: {frames}");
    for path in ["org.apache.cassandra.transport", "org.apache.cassandra.db"] {
        assert!(dom.contains(path), "Cassandra's request path ({path}) is drawn");
    }
    assert!(dom.contains("id=\"search\""), "inferno's search control is there");
    assert!(html.contains("Cassandra's frames with the most samples"), "the frames of the request path are named in words");
    assert!(html.contains("Source: async-profiler (") && html.contains(" every 1 ms of CPU"), "recorded with async-profiler");
    // every graph states its sample count, the same the JSON report holds; shares have intervals
    let stated: u64 = html
        .split(r#"data-kind="cpu"><h4>"#)
        .nth(1)
        .and_then(|h| h.split(r#"<span class="sub">"#).nth(1))
        .and_then(|c| c.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("the CPU graph states its sample count");
    assert!(cpu.1.contains(&format!("{stated} samples")), "the drawing states it too");
    let line = html.split("Cassandra's frames with the most samples").nth(1).unwrap().split("</p>").next().unwrap();
    assert!(line.contains(&format!("95% interval from {stated} samples")) && line.contains("% (") && line.contains("–"), "{line}");
    // the client's own profile, apart from the node's: where casslab spent its CPU
    let (_, client) = graphs.iter().find(|(t, _)| t.starts_with("CPU — casslab (client)")).expect("the client's flame graph");
    assert!(client.contains("casslab_core::engine"), "casslab's engine frames are in the client's profile");
    assert!(!cpu.1.contains("casslab_core::"), "the client is not merged into the servers' profile");

    // Markdown: the top frames; JSON: folded stacks of the measured phase
    let (code, md, _) = run(casslab().args(["report", &first, "--format", "md"]).args(store_arg(&store)));
    assert_eq!(code, 0);
    assert!(md.contains("**Where the servers spent their time**") && md.contains("| frame | self % | total % |") && md.contains("with 95% intervals"), "{md}");
    let (code, json, _) = run(casslab().args(["report", &first, "--format", "json"]).args(store_arg(&store)));
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let profiles = v["runs"][0]["profiles"].as_array().expect("profiles in the JSON report");
    let cpu_json = profiles.iter().find(|p| p["kind"] == "cpu").unwrap();
    let folded = cpu_json["folded"].as_object().unwrap();
    assert!(folded.keys().any(|k| k.contains("org.apache.cassandra.")), "folded stacks with Cassandra's frames");
    assert_eq!(cpu_json["samples"].as_u64(), Some(stated), "the JSON report's sample count is the page's");
    let window = cpu_json["window_ms"].as_array().unwrap();
    assert!(window[0].as_i64().unwrap() >= 2500, "the warm-up is left out: {window:?}");

    // --profile-out: one folded file per kind of the one node
    let files: Vec<PathBuf> = std::fs::read_dir(&out_dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(files.iter().any(|f| f.to_string_lossy().ends_with("-cpu.folded")), "{files:?}");
    let text = std::fs::read_to_string(files.iter().find(|f| f.to_string_lossy().ends_with("-cpu.folded")).unwrap()).unwrap();
    let first_line = text.lines().next().unwrap();
    let weight: u64 = first_line.rsplit_once(' ').unwrap().1.parse().unwrap();
    assert!(weight > 0 && first_line.contains(';'), "{first_line}");

    // two runs compared: a differential flame graph per operation
    let cmp = dir.path().join("compare.html");
    let (code, out, err) = run(casslab().args(["compare", &first, &second, "-o", cmp.to_str().unwrap()]).args(store_arg(&store)));
    assert!(code == 0 || code == 1, "stdout: {out}\nstderr: {err}");
    let html = std::fs::read_to_string(&cmp).unwrap();
    assert!(html.contains("Where the time moved"), "the comparison page has the section");
    let diffs = flame_graphs(&html);
    let (title, svg) = diffs.iter().find(|(t, _)| t.starts_with("CPU")).expect("a differential CPU flame graph");
    assert!(title.contains("per operation"), "{title}");
    let dom = rendered(dir.path(), "diff.svg", svg);
    assert!(dom.contains("org.apache.cassandra."), "the difference is drawn with Cassandra's frames");
    assert!(html.contains("per operation:"), "the totals per operation are stated");
}

#[test]
fn a_profiled_experiment_page_shows_where_the_time_moved_between_compaction_strategies() {
    let _g = load_lock();
    node();
    let (dir, store) = temp_store();
    let page = dir.path().join("compaction.html");
    let path = format!("{}/../../experiments/compaction-strategies.yaml", env!("CARGO_MANIFEST_DIR"));
    let (code, out, err) = run(casslab()
        .args(["experiment", &path, "--profile", "-P", "rows=300", "--repetitions", "1", "--duration", "4s", "--warmup", "1s", "--window", "1s"])
        .args(["--resamples", "200", "--min-windows", "2", "--concurrency", "8", "--allow-invalid", "-o", page.to_str().unwrap()])
        .args(store_arg(&store)));
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("Where the time moved"), "the experiment's page has the section");
    let diffs = flame_graphs(&html);
    for v in ["size-tiered", "unified"] {
        let title = format!("CPU: {v} against leveled, per operation");
        let (_, svg) = diffs.iter().find(|(t, _)| *t == title).unwrap_or_else(|| panic!("no {title}: {:?}", diffs.iter().map(|d| &d.0).collect::<Vec<_>>()));
        let dom = rendered(dir.path(), &format!("{v}.svg"), svg);
        assert!(dom.contains("org.apache.cassandra."), "{v}: the difference is drawn with Cassandra's frames");
    }
}

#[test]
fn a_profile_made_elsewhere_is_shown_the_same_way_and_recording_a_cluster_not_ours_is_refused() {
    let _g = load_lock();
    let host = node();
    let (dir, store) = temp_store();
    let stacks = dir.path().join("node1-cpu.folded");
    std::fs::write(&stacks, "java.lang.Thread.run;org.apache.cassandra.concurrent.SEPWorker.run;org.apache.cassandra.db.ReadCommand.executeLocally 40\njava.lang.Thread.run;org.apache.cassandra.db.compaction.CompactionTask.run 10\n").unwrap();
    let (code, out, err) = run(casslab()
        .args(["run", "kv", "--hosts", host, "-P", "rows=2000", "-P", "keyspace=casslab_profile_file", "--rate", "200", "-d", "3s", "--no-lint"])
        .args(["--profile-file", &format!("10.0.0.9={}", stacks.display())])
        .args(store_arg(&store)));
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    assert!(err.contains("profile: 1 node") && err.contains("50 CPU samples"), "{err}");
    let (code, md, _) = run(casslab().args(["report", "latest", "--format", "md"]).args(store_arg(&store)));
    assert_eq!(code, 0);
    assert!(md.contains("10.0.0.9") && md.contains("`org.apache.cassandra.db.ReadCommand.executeLocally` | 80.0% (67.0–88.8%) | 80.0% (67.0–88.8%) |"), "{md}");
    assert!(md.contains("50 samples: too thin to read"), "{md}");

    // refused before anything runs, saying what to do
    let (code, _, err) = run(casslab().args(["run", "kv", "--hosts", host, "--profile", "-d", "1s"]).args(store_arg(&store)));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--profile records the nodes casslab starts") && err.contains("--profile-file"), "{err}");
    let (code, _, err) = run(casslab().args(["run", "kv", "--profile-file", "n1=/nonexistent.jfr", "-d", "1s"]).args(store_arg(&store)));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("there is no file /nonexistent.jfr"), "{err}");
}
