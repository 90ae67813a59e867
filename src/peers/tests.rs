use super::*;
use std::path::Path;

fn lenet() -> NetworksFile {
    NetworksFile::of_models(&["lenet".to_string()]).expect("lenet is in the zoo")
}

fn output(params: usize, forward_flops: u64) -> PeerOutput {
    PeerOutput {
        description: PeerDescription {
            backend: "torch-cpu".into(),
            version: "torch 2.15.0".into(),
            device: "cpu: test, 2 threads".into(),
            device_kind: "cpu".into(),
            timing_method: TimingMethod::WallClock,
            notes: "total: one training step".into(),
        },
        benchmarks: vec![PeerBenchmark {
            model: "lenet".into(),
            stage: Stage::Train,
            batch: 8,
            precision: Precision::F32,
            params,
            forward_flops,
            warmup_iterations: 3,
            phases: [Phase::Forward, Phase::GradInput, Phase::Total]
                .into_iter()
                .map(|phase| PeerPhase {
                    phase,
                    samples_ns: vec![1_000, 3_000, 2_000],
                })
                .collect(),
        }],
    }
}

#[test]
fn a_peer_benchmark_becomes_a_record_entry_of_its_backend() {
    let networks = lenet();
    let expected = &networks.networks[0];
    let flops = expected.forward_flops_per_image * 8;
    let results = output(expected.params, flops)
        .into_benchmarks(&networks)
        .expect("the counts match");
    let bench = &results[0];
    assert_eq!(bench.id, "lenet/train/b8/f32/torch-cpu");
    assert_eq!(bench.backend, "torch-cpu");
    assert_eq!(bench.adapter.runtime_version, "torch 2.15.0");
    assert_eq!(bench.timing_method, TimingMethod::WallClock);
    assert_eq!(bench.iteration_flops, 3 * flops);
    assert_eq!(
        bench.phase(Phase::Total).expect("total").summary.median_ns,
        2_000.0
    );
    assert_eq!(bench.round_sizes(), vec![3]);

    let mut record = RunRecord::new(None);
    merge(&mut record, results.clone());
    merge(&mut record, results);
    assert_eq!(record.benchmarks.len(), 1);
    assert_eq!(record.benchmarks[0].round_sizes(), vec![3, 3]);
    record.validate("the merged record").expect("two rounds add up");
}

#[test]
fn a_peer_that_built_another_network_is_a_verification_error() {
    let networks = lenet();
    let expected = &networks.networks[0];
    let error = output(expected.params + 1, expected.forward_flops_per_image * 8)
        .into_benchmarks(&networks)
        .expect_err("one parameter too many");
    assert_eq!(error.kind(), crate::ErrorKind::Verification);
    assert!(error.to_string().contains("another network"), "{error}");
}

#[test]
fn a_peer_that_cannot_start_says_how_to_install_it() {
    let not_installed = PeerError::NotStarted {
        peer: Peer::Torch,
        command: Peer::Torch.default_command(),
        default: true,
        source: std::io::ErrorKind::NotFound.into(),
    };
    let message = not_installed.to_string();
    assert!(
        message.starts_with("the torch peer is not installed"),
        "{message}"
    );
    // The command between the backticks can be copied as it is.
    assert!(
        message.contains("install it with `pip install ./peers/torch` (it pulls torch from PyPI)"),
        "{message}"
    );
    let unknown = "pytorch".parse::<Peer>().expect_err("not a peer");
    assert!(
        matches!(&unknown, PeerError::UnknownPeer { name } if name == "pytorch"),
        "{unknown:?}"
    );
    assert_eq!(
        unknown.to_string(),
        "unknown peer `pytorch`; use one of torch, jax (Burn is timed per layer by \
         scripts/burn-vs-convbench.sh, see docs/peers.md)"
    );
    assert_eq!("jax".parse::<Peer>().expect("known"), Peer::Jax);
}

#[test]
fn the_networks_file_carries_convbench_s_definitions_and_counts() {
    let networks = lenet();
    let text = serde_json::to_string(&networks).expect("serialises");
    let back: NetworksFile = serde_json::from_str(&text).expect("reads back");
    assert_eq!(back, networks);
    assert_eq!(back.networks[0].network.name, "lenet");
    assert_eq!(back.networks[0].params, back.networks[0].network.param_count());
}

#[test]
fn a_peer_command_is_named_or_bare_with_one_peer() {
    let given = [
        "jax=.venv/bin/python cpu-peer.py".to_string(),
        "python3 -m torch_peer".to_string(),
    ];
    assert_eq!(
        peer_command("jax", &given, 2),
        [".venv/bin/python", "cpu-peer.py"]
    );
    assert!(
        peer_command("torch", &given, 2).is_empty(),
        "a bare command is ambiguous with two peers"
    );
    assert_eq!(
        peer_command("torch", &given[1..], 1),
        ["python3", "-m", "torch_peer"]
    );
    assert!(peer_command("torch", &[], 1).is_empty());
}

#[test]
fn without_stages_a_peer_request_runs_the_train_stage() {
    let sweep = SweepRequest {
        rounds: 4,
        ..SweepRequest::default()
    };
    let request = PeerRequest::new(&["torch".to_string()], &[], sweep).expect("torch is a peer");
    assert_eq!(request.sweep.selection.stages(), [Stage::Train]);
    assert_eq!(request.rounds, 4);
    assert_eq!(request.peers, [(Peer::Torch, Vec::new())]);
    assert!(PeerRequest::new(&["caffe".to_string()], &[], SweepRequest::default()).is_err());
}

/// A session of convbench alone (no peer process), `rounds` rounds of the train stage.
fn session(rounds: usize) -> PeerSession {
    let sweep = SweepRequest {
        rounds,
        ..SweepRequest::default()
    };
    PeerSession {
        request: PeerRequest::new(&["torch".to_string()], &[], sweep).expect("torch is a peer"),
        networks: lenet(),
        peers: Vec::new(),
        dir: std::env::temp_dir(),
        interrupt: Interrupt::default(),
    }
}

/// convbench's side of a round: one benchmark with one sample per round, until round `fails`,
/// which ends in an interrupt.
fn convbench_until(fails: usize) -> impl FnMut(&SweepRequest) -> Result<RunRecord> {
    use crate::results::fixtures::{benchmark, phase, record};
    let mut round = 0;
    move |_| {
        round += 1;
        if round == fails {
            return Err(crate::harness::Interrupted::Measuring {
                target: "lenet".into(),
                batch: 8,
            }
            .into());
        }
        let sample = 1_000 * round as u64;
        Ok(record(vec![benchmark(
            "lenet/train/b8/f32/wgpu",
            vec![phase(Phase::Total, vec![sample])],
        )]))
    }
}

#[test]
fn an_interrupted_session_keeps_the_rounds_that_finished() {
    let mut rounds_done = Vec::new();
    let (record, error) = session(3).run(&mut convbench_until(3), &mut |event| {
        if let PeerEvent::RoundDone { round, .. } = event {
            rounds_done.push(round);
        }
    });
    let record = record.expect("two rounds finished");
    assert_eq!(rounds_done, [1, 2]);
    assert!(!record.complete, "a record cut short says so");
    assert_eq!(record.settings.rounds, 2);
    assert_eq!(record.benchmarks.len(), 1);
    assert_eq!(record.benchmarks[0].phases[0].samples_ns, [1_000, 2_000]);
    assert_eq!(
        error.expect("the interrupt").kind(),
        crate::ErrorKind::Interrupted
    );

    let (record, error) = session(3).run(&mut convbench_until(1), &mut |_| {});
    assert!(record.is_none(), "no round finished");
    assert!(error.is_some());

    let (record, error) = session(2).run(&mut convbench_until(0), &mut |_| {});
    assert!(error.is_none());
    let record = record.expect("every round");
    assert!(record.complete);
    assert_eq!(record.settings.rounds, 2);
}

/// A peer of LeNet's train stage at batch 8 whose runs are the shell `script` (it gets the
/// protocol's arguments, `$out` set to the file --out names), in the scratch folder `dir`,
/// with each call given `timeout` when set.
fn peer_session(dir: &Path, script: &str, timeout: Option<Duration>) -> PeerSession {
    let path = dir.join("peer.sh");
    let script =
        format!("while [ $# -gt 0 ]; do if [ \"$1\" = --out ]; then out=\"$2\"; fi; shift; done\n{script}\n");
    std::fs::write(&path, script).expect("write the fake peer");
    let mut sweep = SweepRequest {
        samples: 3,
        ..SweepRequest::default()
    };
    sweep.selection.models = vec!["lenet".to_string()];
    sweep.selection.batches = vec![8];
    let mut request = PeerRequest::new(&["torch".to_string()], &[], sweep).expect("torch is a peer");
    request.timeout = timeout;
    let command = vec!["sh".to_string(), path.display().to_string()];
    PeerSession {
        request,
        networks: lenet(),
        peers: vec![ReadyPeer {
            peer: Peer::Torch,
            command,
            description: output(0, 0).description,
        }],
        dir: dir.to_path_buf(),
        interrupt: Interrupt::default(),
    }
}

/// A fake peer that writes `output` as its output.
fn peer_writing(dir: &Path, output: &PeerOutput) -> PeerSession {
    let prepared = dir.join("prepared.json");
    let text = serde_json::to_string(output).expect("serialises");
    std::fs::write(&prepared, text).expect("write the peer's output");
    peer_session(dir, &format!("cp '{}' \"$out\"", prepared.display()), None)
}

/// LeNet's output at batch 8 with convbench's counts.
fn good_output() -> PeerOutput {
    let networks = lenet();
    let expected = &networks.networks[0];
    output(expected.params, expected.forward_flops_per_image * 8)
}

fn peer_error(error: &Error) -> &PeerError {
    match error {
        Error::Peer(peer) => peer,
        other => panic!("not a peer's error: {other:?}"),
    }
}

#[test]
fn a_peer_s_run_becomes_its_benchmarks() {
    let dir = tempfile::tempdir().expect("a scratch folder");
    let session = peer_writing(dir.path(), &good_output());
    let results = session.run_peer(&session.peers[0], 1).expect("a good peer");
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].id, "lenet/train/b8/f32/torch-cpu");
}

#[test]
fn a_peer_that_writes_nothing_does_not_pass_off_the_last_run_s_output() {
    let dir = tempfile::tempdir().expect("a scratch folder");
    let session = peer_writing(dir.path(), &good_output());
    session
        .run_peer(&session.peers[0], 1)
        .expect("the first run writes");
    let silent = peer_session(dir.path(), "exit 0", None);
    let error = silent
        .run_peer(&silent.peers[0], 1)
        .expect_err("nothing written this time");
    assert!(
        matches!(
            peer_error(&error),
            PeerError::NoOutput {
                peer: Peer::Torch,
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(error.kind(), crate::ErrorKind::Environment);
    let message = error.to_string();
    assert!(
        message.contains("the torch peer's run `sh ") && message.contains("wrote nothing to"),
        "{message}"
    );
    assert!(
        !dir.path().join("torch-1.json").exists(),
        "the old output is gone"
    );
}

#[test]
fn a_peer_s_invalid_output_is_refused_as_a_record_would_be() {
    let dir = tempfile::tempdir().expect("a scratch folder");
    let mut zero = good_output();
    for phase in &mut zero.benchmarks[0].phases {
        phase.samples_ns = vec![0, 0, 0];
    }
    let session = peer_writing(dir.path(), &zero);
    let error = session.run_peer(&session.peers[0], 1).expect_err("0 ns");
    assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
    assert!(
        matches!(peer_error(&error), PeerError::Invalid { .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("has a sample of 0 ns"), "{error}");

    let mut twice = good_output();
    twice.benchmarks.push(twice.benchmarks[0].clone());
    let session = peer_writing(dir.path(), &twice);
    let error = session
        .run_peer(&session.peers[0], 1)
        .expect_err("the same benchmark twice");
    assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
    assert!(
        error
            .to_string()
            .contains("benchmark lenet/train/b8/f32/torch-cpu appears 2 times"),
        "{error}"
    );
}

#[test]
fn a_peer_that_reports_nothing_is_named_with_the_model_and_batch() {
    let dir = tempfile::tempdir().expect("a scratch folder");
    let mut empty = good_output();
    empty.benchmarks.clear();
    let session = peer_writing(dir.path(), &empty);
    let error = session
        .run_peer(&session.peers[0], 1)
        .expect_err("nothing reported");
    assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
    assert_eq!(
        error.to_string(),
        "the torch-cpu peer reported nothing for lenet at batch 8 (train, f32); a peer reports \
         every model, batch, stage and precision it is given (see docs/peers.md)"
    );

    let mut other_batch = good_output();
    let mut extra = other_batch.benchmarks[0].clone();
    extra.batch = 1;
    extra.forward_flops /= 8;
    other_batch.benchmarks.push(extra);
    let session = peer_writing(dir.path(), &other_batch);
    let error = session
        .run_peer(&session.peers[0], 1)
        .expect_err("batch 1 was not asked");
    assert!(
        matches!(peer_error(&error), PeerError::NotAsked { what, .. } if what == "lenet/train/b1/f32/torch-cpu"),
        "{error:?}"
    );
}

#[test]
fn what_a_peer_prints_or_writes_is_read_up_to_a_limit() {
    let command = ["sh".to_string(), "-c".to_string(), "yes".to_string()];
    let error = describe(Peer::Torch, &command, Duration::from_secs(60)).expect_err("yes never ends");
    assert!(
        matches!(peer_error(&error), PeerError::DescriptionTooLarge { max_bytes, .. } if *max_bytes == MAX_DESCRIPTION_BYTES),
        "{error:?}"
    );

    let dir = tempfile::tempdir().expect("a scratch folder");
    // A sparse file: large, without writing its bytes.
    let session = peer_session(
        dir.path(),
        "dd if=/dev/zero of=\"$out\" bs=1 count=0 seek=100000000 2>/dev/null",
        None,
    );
    let error = session
        .run_peer(&session.peers[0], 1)
        .expect_err("100 MB of nothing");
    assert!(
        matches!(
            peer_error(&error),
            PeerError::OutputTooLarge {
                bytes: 100_000_000,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(
        session.max_output_bytes() < 100_000_000,
        "{}",
        session.max_output_bytes()
    );
}

#[test]
fn a_peer_that_hangs_is_killed_at_its_deadline() {
    let deadline = Duration::from_millis(300);
    let started = std::time::Instant::now();
    let command = ["sh".to_string(), "-c".to_string(), "exec sleep 30".to_string()];
    let error = describe(Peer::Torch, &command, deadline).expect_err("sleeps past its deadline");
    assert!(
        matches!(
            peer_error(&error),
            PeerError::TimedOut {
                what: "--describe",
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(error.kind(), crate::ErrorKind::Environment);
    assert!(error.to_string().contains("within 300ms"), "{error}");
    assert!(error.to_string().contains(TIMEOUT_ENV), "{error}");

    let dir = tempfile::tempdir().expect("a scratch folder");
    let session = peer_session(dir.path(), "exec sleep 30", Some(deadline));
    assert_eq!(session.run_deadline(), deadline);
    let error = session
        .run_peer(&session.peers[0], 1)
        .expect_err("sleeps past its deadline");
    assert!(
        matches!(peer_error(&error), PeerError::TimedOut { .. }),
        "{error:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );

    let unbounded = peer_session(dir.path(), "exit 0", None);
    assert!(unbounded.run_deadline() >= RUN_FLOOR);
}

#[test]
fn an_interrupt_stops_a_running_peer_at_once() {
    let dir = tempfile::tempdir().expect("a scratch folder");
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let session = peer_session(dir.path(), "exec sleep 30", None)
        .with_interrupt(crate::harness::Interrupt::new(std::sync::Arc::clone(&flag)));
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let started = std::time::Instant::now();
    let error = session.run_peer(&session.peers[0], 2).expect_err("interrupted");
    setter.join().expect("the setter");
    assert_eq!(error.kind(), crate::ErrorKind::Interrupted);
    assert!(
        matches!(&error, Error::Interrupted(Interrupted::Peer { round: 2, .. })),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .starts_with("interrupted while the torch peer ran round 2"),
        "{error}"
    );
    // Well before the peer's 30 s and its deadline.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_given_command_that_fails_is_named_without_an_install_hint() {
    let missing = ["/nonexistent/convbench-peer".to_string()];
    let error = describe(Peer::Torch, &missing, DESCRIBE_TIMEOUT).expect_err("no such program");
    assert_eq!(error.kind(), crate::ErrorKind::Environment);
    assert!(
        matches!(
            peer_error(&error),
            PeerError::NotStarted {
                peer: Peer::Torch,
                default: false,
                ..
            }
        ),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.starts_with("the --peer-command of the torch peer does not start a peer: `/nonexistent/convbench-peer --describe` could not start"),
        "{message}"
    );
    assert!(!message.contains("pip install"), "{message}");

    let failing = [
        "sh".to_string(),
        "-c".to_string(),
        "echo 'no module named torch' >&2; exit 3".to_string(),
    ];
    let error = describe(Peer::Torch, &failing, DESCRIBE_TIMEOUT).expect_err("exits 3");
    let message = error.to_string();
    assert!(
        message.contains("failed (exit status: 3): no module named torch"),
        "{message}"
    );
    assert!(!message.contains("pip install"), "{message}");
}
