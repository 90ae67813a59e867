//! `peers`: a peer's benchmarks land in the record beside convbench's, in the record format
//! `report --pivot` reads; a peer command that cannot start is exit 3 naming it.
//! A fake peer (a shell script speaking the peer protocol of docs/peers.md) stands in for
//! PyTorch, which the tests never install.

use crate::support::{Package, TRAIN_PHASES, assert_code, read_record, stderr_of, stdout_of, tiny};
use std::os::unix::fs::PermissionsExt;

/// A peer that describes itself as `torch-cpu` and reports LeNet at batch 1 with convbench's
/// own counts (or one parameter more, with `extra_param`).
fn fake_peer(package: &Package, extra_param: usize) -> String {
    let lenet = convbench::model::network("lenet").expect("lenet");
    let params = lenet.param_count() + extra_param;
    let flops = lenet.forward_flops_per_image().expect("flops");
    let phases: Vec<String> = TRAIN_PHASES
        .iter()
        .map(|phase| format!(r#"{{"phase": "{phase}", "samples_ns": [1000, 1200, 1100]}}"#))
        .collect();
    let description = r#""backend": "torch-cpu", "version": "torch 0.0-fake", "device": "cpu: fake", "device_kind": "cpu", "timing_method": "wall_clock", "notes": "a test double""#;
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = --describe ]; then echo '{{{description}}}'; exit 0; fi\n\
         while [ $# -gt 0 ]; do if [ \"$1\" = --out ]; then out=\"$2\"; fi; shift; done\n\
         cat > \"$out\" <<'JSON'\n{{{description}, \"benchmarks\": [{{\"model\": \"lenet\", \"stage\": \"train\", \
         \"batch\": 1, \"precision\": \"f32\", \"params\": {params}, \"forward_flops\": {flops}, \
         \"warmup_iterations\": 3, \"phases\": [{}]}}]}}\nJSON\n",
        phases.join(", ")
    );
    let path = package.path("fake-peer.sh");
    std::fs::write(&path, script).expect("write the fake peer");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.display().to_string()
}

fn peers(package: &Package, command: &str) -> std::process::Output {
    package
        .convbench()
        .args([
            "peers",
            "--peer",
            "torch",
            "--peer-command",
            command,
            "--backend",
            "cpu",
            "--quiet",
        ])
        .args(tiny(&[("--out", "both.json")]))
        .output()
        .expect("peers")
}

#[test]
fn peers_records_the_peer_beside_convbench_and_report_pivots_them() {
    let package = Package::plain();
    let output = peers(&package, &fake_peer(&package, 0));
    assert_code(&output, 0);
    let stdout = stdout_of(&output);
    assert!(
        stdout.contains("torch-cpu") && stdout.contains("lenet"),
        "{stdout}"
    );
    let record = read_record(&package.path("both.json"));
    let ids: Vec<&str> = record.benchmarks.iter().map(|b| b.id.as_str()).collect();
    assert_eq!(ids, ["lenet/train/b1/f32/cpu", "lenet/train/b1/f32/torch-cpu"]);
    let peer = &record.benchmarks[1];
    assert_eq!(peer.adapter.runtime_version, "torch 0.0-fake");
    assert_eq!(peer.timing_method.as_str(), "synchronized wall clock");
    assert_eq!(peer.phases.len(), 7);
    assert_eq!(peer.phases[0].samples_ns, [1000, 1200, 1100]);

    let report = package
        .convbench()
        .args([
            "report",
            "--pivot",
            "--columns",
            "backend",
            "--ratio-to",
            "torch-cpu",
            "both.json",
        ])
        .output()
        .expect("report");
    assert_code(&report, 0);
    let table = stdout_of(&report);
    assert!(table.contains("torch-cpu") && table.contains("x)"), "{table}");
}

#[test]
fn a_peer_command_that_cannot_start_exits_3_naming_it_without_the_install_command() {
    let package = Package::plain();
    let output = peers(&package, "/nonexistent/python3 -m convbench_torch");
    assert_code(&output, 3);
    let stderr = stderr_of(&output);
    assert!(
        stderr.contains("the --peer-command of the torch peer does not start a peer"),
        "{stderr}"
    );
    assert!(
        stderr.contains("/nonexistent/python3 -m convbench_torch --describe"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("pip install"),
        "the install command is for the default: {stderr}"
    );
    assert_eq!(stdout_of(&output), "");
}

#[test]
fn a_peer_that_built_another_network_exits_4() {
    let package = Package::plain();
    let output = peers(&package, &fake_peer(&package, 1));
    assert_code(&output, 4);
    assert!(
        stderr_of(&output).contains("another network"),
        "{}",
        stderr_of(&output)
    );
}

#[test]
fn a_peer_that_fails_in_a_later_round_leaves_the_rounds_that_finished() {
    let package = Package::plain();
    let peer = fake_peer(&package, 0);
    // The peer's second run (its output is `torch-2.json`) fails.
    let wrapper = package.path("second-round-fails.sh");
    let script = format!("#!/bin/sh\ncase \"$*\" in *torch-2.json*) exit 1;; esac\nexec {peer} \"$@\"\n");
    std::fs::write(&wrapper, script).expect("write the wrapper");
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let output = package
        .convbench()
        .args(["peers", "--peer", "torch", "--peer-command"])
        .arg(&wrapper)
        .args(["--backend", "cpu"])
        .args(tiny(&[("--rounds", "2"), ("--out", "both.json")]))
        .output()
        .expect("peers");
    assert_code(&output, 3);
    let stderr = stderr_of(&output);
    assert!(stderr.contains("incomplete: 1 of 2 rounds"), "{stderr}");
    assert!(
        stdout_of(&output).contains("torch-cpu"),
        "the finished round is printed"
    );
    let record = read_record(&package.path("both.json"));
    assert!(!record.complete);
    assert_eq!(record.settings.rounds, 1);
    let samples: Vec<usize> = (record.benchmarks.iter())
        .map(|b| b.phases[0].samples_ns.len())
        .collect();
    assert_eq!(
        samples,
        [3, 3],
        "one round of each side, none of the round in flight"
    );
}
