use super::*;

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
    let command = vec!["/nonexistent/convbench-peer".to_string()];
    let error = describe(Peer::Torch, &command).expect_err("no such program");
    assert_eq!(error.kind(), crate::ErrorKind::Environment);
    assert!(
        matches!(&error, crate::Error::Peer(e) if matches!(&**e, PeerError::NotStarted { peer: Peer::Torch, .. })),
        "{error:?}"
    );
    assert!(error.to_string().contains("pip install ./peers/torch"), "{error}");
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
    let (record, error) = session(3).run(&mut convbench_until(3), &mut |round, _| rounds_done.push(round));
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

    let (record, error) = session(3).run(&mut convbench_until(1), &mut |_, _| {});
    assert!(record.is_none(), "no round finished");
    assert!(error.is_some());

    let (record, error) = session(2).run(&mut convbench_until(0), &mut |_, _| {});
    assert!(error.is_none());
    let record = record.expect("every round");
    assert!(record.complete);
    assert_eq!(record.settings.rounds, 2);
}
