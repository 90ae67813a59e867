//! Other frameworks (peers) timed on convbench's own selection, into convbench records.
//!
//! A peer is a program that speaks the peer protocol (documented in `docs/peers.md`):
//!
//! - `COMMAND --describe` prints one JSON object, [`PeerDescription`]: what the peer is, its
//!   version, the device it runs on and how it times. A command that cannot be started or
//!   that fails here is a peer that is not installed (the [`PeerError`] says how to install it).
//! - `COMMAND --networks FILE --batch 1,8 --stage eval,train --precision f32 --samples N
//!   --warmup N --warmup-ms MS --out FILE` reads the networks convbench wrote to the first
//!   `FILE` ([`NetworksFile`]: the zoo's own definitions, with their parameter counts and
//!   FLOPs), builds them, times them, and writes a [`PeerOutput`].
//!
//! [`PeerOutput::into_benchmarks`] checks every network the peer ran against convbench's
//! parameter count and FLOPs, and turns it into [`BenchmarkResult`]s whose backend is the
//! peer's (e.g. `torch-cpu`) and whose adapter fingerprint names the peer's version and device:
//! records that `report --pivot --columns backend --ratio-to torch-cpu` reads like any other.
//! [`PeerSession`] alternates rounds of convbench and rounds of the peer (A B A B), so that the
//! drift of a shared machine touches both alike.

use crate::harness::sweep::SweepRequest;
use crate::model::{Network, Precision};
use crate::report::{PivotAxis, PivotRows, PivotSpec};
use crate::results::{
    AdapterFingerprint, BenchmarkResult, Phase, PhaseResult, RunRecord, Stage, Summary, TimingMethod,
};
use crate::{Error, Result};

mod error;
pub use error::PeerError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The peers convbench knows how to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// PyTorch, the `convbench_torch` package of `peers/torch`.
    Torch,
    /// JAX on the CPU, `scripts/cpu-peer.py` (LeNet and AlexNet; no separate gradients).
    Jax,
}

impl Peer {
    /// Every peer, in the order `--peer` lists them.
    pub const ALL: [Peer; 2] = [Peer::Torch, Peer::Jax];

    /// The name `--peer` takes.
    pub const fn name(self) -> &'static str {
        match self {
            Peer::Torch => "torch",
            Peer::Jax => "jax",
        }
    }

    /// The command that starts the peer when none is given, split into words.
    pub fn default_command(self) -> Vec<String> {
        let words: &[&str] = match self {
            Peer::Torch => &["python3", "-m", "convbench_torch"],
            Peer::Jax => &[".venv/bin/python", "scripts/cpu-peer.py"],
        };
        words.iter().map(|word| (*word).to_string()).collect()
    }

    /// How to install the peer.
    pub const fn install(self) -> &'static str {
        match self {
            Peer::Torch => "pip install ./peers/torch (it pulls torch from PyPI)",
            Peer::Jax => "python3 -m venv .venv && .venv/bin/pip install 'jax[cpu]'",
        }
    }
}

impl std::str::FromStr for Peer {
    type Err = PeerError;

    fn from_str(name: &str) -> Result<Self, PeerError> {
        Peer::ALL
            .into_iter()
            .find(|peer| peer.name() == name)
            .ok_or_else(|| PeerError::UnknownPeer {
                name: name.to_string(),
            })
    }
}

/// What a peer says of itself (`--describe`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerDescription {
    /// The backend name its benchmarks carry, e.g. `torch-cpu`.
    pub backend: String,
    /// The framework and its version, e.g. `torch 2.15.0`.
    pub version: String,
    /// The device, e.g. `cpu: AMD EPYC 7B13, 2 threads`.
    pub device: String,
    /// `cpu`, `cuda`, `wgpu`...: the kind of device, as an adapter fingerprint's backend.
    pub device_kind: String,
    /// How it times each phase.
    pub timing_method: TimingMethod,
    /// How it was set up and what it times, in a sentence or two (threads, cudnn.benchmark,
    /// what its `total` is).
    #[serde(default)]
    pub notes: String,
}

/// One network as the peer protocol hands it over: convbench's definition, and the counts the
/// peer must reproduce.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerNetwork {
    /// Learnable parameters.
    pub params: usize,
    /// Forward FLOPs of one image (`2 x` multiply-adds of convolutions and fully connected
    /// layers).
    pub forward_flops_per_image: u64,
    /// The network, as `src/model` defines it.
    pub network: Network,
}

/// The file convbench hands a peer (`--networks`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetworksFile {
    /// The networks to time.
    pub networks: Vec<PeerNetwork>,
}

impl NetworksFile {
    /// The zoo's networks `names`, with their counts.
    pub fn of_models(names: &[String]) -> Result<Self> {
        let mut networks = Vec::new();
        for name in names {
            let network = crate::model::network(name)?;
            let forward_flops_per_image =
                network
                    .forward_flops_per_image()
                    .map_err(|source| PeerError::Flops {
                        model: name.clone(),
                        source,
                    })?;
            networks.push(PeerNetwork {
                params: network.param_count(),
                forward_flops_per_image,
                network,
            });
        }
        Ok(Self { networks })
    }
}

/// One benchmark a peer ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerBenchmark {
    /// The network's name.
    pub model: String,
    /// Train or eval.
    pub stage: Stage,
    /// Images per iteration.
    pub batch: usize,
    /// Storage precision.
    pub precision: Precision,
    /// Learnable parameters of the network the peer built.
    pub params: usize,
    /// Forward FLOPs of the whole batch, counted on the network the peer built.
    pub forward_flops: u64,
    /// Untimed iterations before the samples.
    pub warmup_iterations: usize,
    /// Every phase timed, with its raw samples (ns).
    pub phases: Vec<PeerPhase>,
}

/// The samples of one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerPhase {
    /// Named as convbench names its phases.
    pub phase: Phase,
    /// Raw samples (ns).
    pub samples_ns: Vec<u64>,
}

/// What a peer writes (`--out`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerOutput {
    /// The peer, as `--describe` says.
    #[serde(flatten)]
    pub description: PeerDescription,
    /// What it ran.
    pub benchmarks: Vec<PeerBenchmark>,
}

impl PeerOutput {
    /// Reads a peer's output file.
    pub fn read(path: &Path) -> Result<Self> {
        let text = crate::fs::read_text(path, crate::fs::MAX_RECORD_FILE_BYTES)?;
        serde_json::from_str(&text).map_err(|source| {
            PeerError::NotPeerOutput {
                path: path.to_path_buf(),
                source,
            }
            .into()
        })
    }

    /// The peer's benchmarks as convbench's, after checking that each network it built has
    /// convbench's parameter count and FLOPs (a mismatch is a verification error: the peer
    /// timed another network). Each benchmark is one round.
    pub fn into_benchmarks(self, networks: &NetworksFile) -> Result<Vec<BenchmarkResult>> {
        let description = &self.description;
        let adapter = AdapterFingerprint {
            backend: description.device_kind.clone(),
            vendor_id: 0,
            device_id: 0,
            name: description.device.clone(),
            device_type: description.device_kind.clone(),
            driver: description.backend.clone(),
            driver_info: description.notes.clone(),
            runtime_version: description.version.clone(),
        };
        let mut results = Vec::new();
        for bench in self.benchmarks {
            let Some(expected) = networks.networks.iter().find(|n| n.network.name == bench.model) else {
                return Err(PeerError::NotAsked {
                    backend: description.backend.clone(),
                    model: bench.model,
                }
                .into());
            };
            let flops = expected.forward_flops_per_image * bench.batch as u64;
            if bench.params != expected.params || bench.forward_flops != flops {
                return Err(crate::harness::VerificationError::PeerNetwork {
                    peer: description.backend.to_string(),
                    model: bench.model.clone(),
                    params: (bench.params, expected.params),
                    flops: (bench.forward_flops, flops),
                    batch: bench.batch,
                }
                .into());
            }
            let samples = bench.phases.first().map_or(0, |phase| phase.samples_ns.len());
            if samples == 0 || bench.phases.iter().any(|phase| phase.samples_ns.len() != samples) {
                return Err(PeerError::UnevenSamples {
                    backend: description.backend.clone(),
                    model: bench.model,
                    batch: bench.batch,
                }
                .into());
            }
            let phases = bench
                .phases
                .into_iter()
                .map(|phase| PhaseResult {
                    phase: phase.phase,
                    summary: Summary::of(&phase.samples_ns).expect("at least one sample"),
                    samples_ns: phase.samples_ns,
                })
                .collect();
            results.push(BenchmarkResult {
                id: BenchmarkResult::make_id(
                    &bench.model,
                    bench.stage,
                    bench.batch,
                    bench.precision,
                    &description.backend,
                ),
                model: bench.model,
                stage: bench.stage,
                batch: bench.batch,
                precision: bench.precision,
                backend: description.backend.clone(),
                adapter: adapter.clone(),
                timing_method: description.timing_method,
                warmup_iterations: bench.warmup_iterations,
                verified: false,
                params: bench.params,
                forward_flops: bench.forward_flops,
                // Forward, and when training two backward passes of the same work.
                iteration_flops: bench.forward_flops * if bench.stage == Stage::Train { 3 } else { 1 },
                device_memory_bytes: 0,
                phases,
                layers: Vec::new(),
                peak: None,
                kernels: std::collections::BTreeMap::new(),
                rounds: vec![samples],
                runs: Vec::new(),
            });
        }
        Ok(results)
    }
}

/// What to run: convbench's sweep (one round at a time) and each peer on the same models,
/// batches, precisions and stages.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerRequest {
    /// The peers, each with the command that starts it, split into words (the peer's default
    /// when empty). The first is the reference of the printed ratios.
    pub peers: Vec<(Peer, Vec<String>)>,
    /// convbench's side: the selection (models, batches, precisions, stages), device, kernels,
    /// samples and warm-up the peer uses too. Its rounds are replaced.
    pub sweep: SweepRequest,
    /// Rounds: each one convbench run of every stage, then one run of each peer.
    pub rounds: usize,
}

impl PeerRequest {
    /// The request of `peers --peer NAMES --peer-command COMMANDS`: each peer by name with its
    /// command ([`peer_command`]), at the sweep's stages, for the sweep's rounds.
    pub fn new(names: &[String], commands: &[String], sweep: SweepRequest) -> Result<Self> {
        let peers = (names.iter())
            .map(|name| Ok((name.parse()?, peer_command(name, commands, names.len()))))
            .collect::<Result<_>>()?;
        Ok(Self {
            peers,
            rounds: sweep.rounds,
            sweep,
        })
    }

    fn check(&self) -> Result<()> {
        if self.peers.is_empty() {
            return Err(PeerError::NoPeer.into());
        }
        let selection = &self.sweep.selection;
        if selection.models.is_empty() || !selection.suites.is_empty() || selection.shapes.is_some() {
            return Err(PeerError::NotZooModels.into());
        }
        if selection.batches.is_empty() {
            return Err(PeerError::NoBatch.into());
        }
        if self.sweep.samples == 0 || self.rounds == 0 {
            return Err(PeerError::ZeroCount.into());
        }
        Ok(())
    }

    /// convbench's sweep of one round.
    fn sweep_round(&self, verify: bool) -> SweepRequest {
        let mut sweep = self.sweep.clone();
        sweep.rounds = 1;
        sweep.verify &= verify;
        sweep
    }
}

/// The words of the `--peer-command` of peer `name` among `given`: its `NAME=COMMAND`, or a bare
/// `COMMAND` when there is one peer of `peers`; none (the peer's default) otherwise.
pub fn peer_command(name: &str, given: &[String], peers: usize) -> Vec<String> {
    let prefix = format!("{name}=");
    (given.iter())
        .find_map(|c| (c.strip_prefix(&prefix)).or((peers == 1 && !c.contains('=')).then_some(c.as_str())))
        .map(|c| c.split_whitespace().map(String::from).collect())
        .unwrap_or_default()
}

/// Asks the peer to describe itself: the check that it is installed.
pub fn describe(peer: Peer, command: &[String]) -> Result<PeerDescription> {
    let Some((program, args)) = command.split_first() else {
        return Err(PeerError::EmptyCommand.into());
    };
    let output = match Command::new(program).args(args).arg("--describe").output() {
        Ok(output) => output,
        Err(source) => {
            return Err(PeerError::NotStarted {
                peer,
                command: command.to_vec(),
                source,
            }
            .into());
        }
    };
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr
            .lines()
            .rev()
            .find(|line| !line.trim().is_empty())
            .unwrap_or("");
        return Err(PeerError::DescribeFailed {
            peer,
            command: command.to_vec(),
            status: output.status,
            last_line: last.trim().to_string(),
        }
        .into());
    }
    serde_json::from_slice(&output.stdout).map_err(|source| {
        PeerError::NoDescription {
            command: command.to_vec(),
            source,
        }
        .into()
    })
}

/// One peer of a session, installed and described.
#[derive(Debug)]
pub struct ReadyPeer {
    /// Which peer.
    pub peer: Peer,
    /// The command that starts it.
    pub command: Vec<String>,
    /// What it said of itself.
    pub description: PeerDescription,
}

/// Interleaved rounds of convbench and peers on one selection.
#[derive(Debug)]
pub struct PeerSession {
    request: PeerRequest,
    networks: NetworksFile,
    /// The peers, in the order asked.
    pub peers: Vec<ReadyPeer>,
    dir: PathBuf,
}

impl PeerSession {
    /// Checks the request, that every peer is installed, and writes the networks they will
    /// build into `dir` (a scratch folder).
    pub fn prepare(request: PeerRequest, dir: &Path) -> Result<Self> {
        request.check()?;
        let mut peers = Vec::new();
        for (peer, command) in &request.peers {
            let command = if command.is_empty() {
                peer.default_command()
            } else {
                command.clone()
            };
            let description = describe(*peer, &command)?;
            peers.push(ReadyPeer {
                peer: *peer,
                command,
                description,
            });
        }
        let networks = NetworksFile::of_models(&request.sweep.selection.models)?;
        std::fs::create_dir_all(dir).map_err(|error| Error::io(dir, error))?;
        let text = serde_json::to_string(&networks).expect("networks serialise to JSON");
        crate::fs::write_atomically(&dir.join("networks.json"), text.as_bytes())?;
        Ok(Self {
            request,
            networks,
            peers,
            dir: dir.to_path_buf(),
        })
    }

    /// One run of `peer` on the whole selection: one round of each of its benchmarks.
    pub fn run_peer(&self, peer: &ReadyPeer, round: usize) -> Result<Vec<BenchmarkResult>> {
        let request = &self.request;
        let selection = &request.sweep.selection;
        let command = &peer.command;
        let (program, args) = command.split_first().expect("checked by describe");
        let out = self.dir.join(format!("{}-{round}.json", peer.peer.name()));
        let list = |values: Vec<String>| values.join(",");
        let status = Command::new(program)
            .args(args)
            .arg("--networks")
            .arg(self.dir.join("networks.json"))
            .args([
                "--batch",
                &list(selection.batches.iter().map(usize::to_string).collect()),
            ])
            .args([
                "--stage",
                &list(
                    request
                        .sweep
                        .selection
                        .stages()
                        .iter()
                        .map(|s| s.as_str().to_string())
                        .collect(),
                ),
            ])
            .args([
                "--precision",
                &if selection.precisions.is_empty() {
                    // What convbench runs when no precision is named.
                    Precision::F32.as_str().to_string()
                } else {
                    list(
                        selection
                            .precisions
                            .iter()
                            .map(|p| p.as_str().to_string())
                            .collect(),
                    )
                },
            ])
            .args(["--samples", &request.sweep.samples.to_string()])
            .args(["--warmup", &request.sweep.warmup_iterations.to_string()])
            .args(["--warmup-ms", &request.sweep.warmup_min_ms.to_string()])
            .arg("--out")
            .arg(&out)
            .status()
            .map_err(|source| PeerError::RunNotStarted {
                command: command.clone(),
                source,
            })?;
        if !status.success() {
            return Err(PeerError::RunFailed {
                peer: peer.peer,
                status,
            }
            .into());
        }
        PeerOutput::read(&out)?.into_benchmarks(&self.networks)
    }

    /// Rounds of convbench (`convbench(sweep)` runs one sweep: the binary's progress bars) and
    /// of each peer, alternating A B A B, merged into one record whose benchmarks are
    /// convbench's and the peer's. The first convbench round verifies (when asked), the others
    /// do not.
    ///
    /// Rounds are the unit kept: when a run fails or is interrupted (a time limit's SIGTERM),
    /// the rounds that finished, convbench's and every peer's, come back as a record marked
    /// incomplete, beside the error; the round in flight is dropped, so that each benchmark
    /// of the record has the same rounds as its peers. No record when the first round did not
    /// finish.
    pub fn run(
        &self,
        convbench: &mut dyn FnMut(&SweepRequest) -> Result<RunRecord>,
        on_round: &mut dyn FnMut(usize, usize),
    ) -> (Option<RunRecord>, Option<Error>) {
        let mut record: Option<RunRecord> = None;
        for round in 1..=self.request.rounds {
            let finished = self.round(round, convbench).map(|(run, results)| {
                let complete = run.complete;
                let record = record.get_or_insert_with(|| RunRecord {
                    benchmarks: Vec::new(),
                    ..run
                });
                record.complete &= complete;
                merge(record, results);
                record.settings.rounds = round;
            });
            if let Err(error) = finished {
                if let Some(record) = &mut record {
                    record.complete = false;
                }
                return (record, Some(error));
            }
            on_round(round, self.request.rounds);
        }
        (record, None)
    }

    /// One round: convbench at every stage, then each peer. convbench's record (for its
    /// header) and every benchmark of the round.
    fn round(
        &self,
        round: usize,
        convbench: &mut dyn FnMut(&SweepRequest) -> Result<RunRecord>,
    ) -> Result<(RunRecord, Vec<BenchmarkResult>)> {
        let mut run = convbench(&self.request.sweep_round(round == 1))?;
        let mut results = std::mem::take(&mut run.benchmarks);
        for peer in &self.peers {
            results.extend(self.run_peer(peer, round)?);
        }
        Ok((run, results))
    }

    /// The seeds' tables of a record `run` returned: total and forward medians by model and
    /// stage (rows) and backend (columns), each with its ratio to the first peer.
    pub fn tables(&self, record: &RunRecord) -> Result<String> {
        let mut text = String::new();
        for phase in [Phase::Total, Phase::Forward] {
            let spec = PivotSpec {
                rows: PivotRows::Model,
                columns: vec![PivotAxis::Backend],
                phase,
                ratio_to: Some(self.peers[0].description.backend.clone()),
            };
            text.push_str(&crate::report::pivot_table(&crate::report::pivot(
                std::slice::from_ref(record),
                &spec,
            )?));
            text.push('\n');
        }
        Ok(text)
    }
}

/// Adds a round of `results` to `record`: a benchmark seen before gets the round appended.
pub fn merge(record: &mut RunRecord, results: Vec<BenchmarkResult>) {
    for result in results {
        match record.benchmarks.iter_mut().find(|b| b.id == result.id) {
            Some(existing) => existing.append_round(result),
            None => record.benchmarks.push(result),
        }
    }
}

#[cfg(test)]
mod tests;
