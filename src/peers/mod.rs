//! Other frameworks (peers) timed on convbench's own selection, into convbench records.
//!
//! A peer is a program that speaks the peer protocol (documented in `docs/peers.md`):
//!
//! - `COMMAND --describe` prints one JSON object, [`PeerDescription`]: what the peer is, its
//!   version, the device it runs on and how it times. A default command that cannot be started
//!   or that fails here is a peer that is not installed (the [`PeerError`] says how to install
//!   it); a `--peer-command` that does is a wrong command.
//! - `COMMAND --networks FILE --batch 1,8 --stage eval,train --precision f32 --samples N
//!   --warmup N --warmup-ms MS --out FILE` reads the networks convbench wrote to the first
//!   `FILE` ([`NetworksFile`]: the zoo's own definitions, with their parameter counts and
//!   FLOPs), builds them, times them, and writes a [`PeerOutput`].
//!
//! [`PeerOutput::into_benchmarks`] checks every network the peer ran against convbench's
//! parameter count and FLOPs, and turns it into [`BenchmarkResult`]s whose backend is the
//! peer's (e.g. `torch-cpu`) and whose adapter fingerprint names the peer's version and device:
//! records that `report --pivot --columns backend --ratio-to torch-cpu` reads like any other.
//! Its output is checked as a record is ([`RunRecord::validate`]), and against what it was
//! asked: every model, batch, stage and precision, once. A peer is another program: what
//! convbench reads of it is bounded in size, and a peer that outlives its deadline is killed.
//! [`PeerSession`] alternates rounds of convbench and rounds of the peer (A B A B), so that the
//! drift of a shared machine touches both alike.

use crate::harness::sweep::SweepRequest;
use crate::harness::{Interrupt, Interrupted};
use crate::model::{Network, Precision};
use crate::report::{PivotAxis, PivotRows, PivotSpec};
use crate::results::{
    AdapterFingerprint, BenchmarkResult, Phase, PhaseResult, RunRecord, Stage, Summary, TimingMethod,
};
use crate::{Error, Result};

mod child;
mod error;
use child::Ended;
pub use error::PeerError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The variable that fixes the deadline of every call of a peer, e.g. `2h` (the flag
/// `--peer-timeout` reads it).
pub const TIMEOUT_ENV: &str = "CONVBENCH_PEER_TIMEOUT";

/// How long `COMMAND --describe` may take by default: importing a framework from a cold disk
/// takes seconds, rarely a minute.
pub const DESCRIBE_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// The least time a peer's run is given by default, whatever little work it holds; the work's
/// FLOPs at [`crate::gpu::SLOWEST_FLOPS_PER_SECOND`] are added (see [`PeerSession::run_deadline`]).
pub const RUN_FLOOR: Duration = Duration::from_secs(10 * 60);

/// The most bytes read from `COMMAND --describe` (1 MiB; a description is a few hundred).
pub const MAX_DESCRIPTION_BYTES: u64 = 1 << 20;

/// Bytes of a peer's output file allowed whatever the request (16 MiB: the description, the
/// JSON's punctuation and every benchmark's fields).
const OUTPUT_FLOOR_BYTES: u64 = 16 << 20;

/// Bytes allowed per sample in a peer's output file: a `u64` is at most 20 digits, with its
/// separator and an indentation of a pretty printer.
const OUTPUT_BYTES_PER_SAMPLE: u64 = 64;

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

    /// How to install the peer: a command to copy.
    pub const fn install(self) -> &'static str {
        match self {
            Peer::Torch => "pip install ./peers/torch",
            Peer::Jax => "python3 -m venv .venv && .venv/bin/pip install 'jax[cpu]'",
        }
    }

    /// What to know of [`Peer::install`] before running it, as a parenthesis after it (empty
    /// when nothing).
    pub const fn install_note(self) -> &'static str {
        match self {
            Peer::Torch => " (it pulls torch from PyPI)",
            Peer::Jax => "",
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
    /// Reads a peer's output file, of at most `max_bytes`.
    pub fn read(path: &Path, max_bytes: u64) -> Result<Self> {
        let text = crate::fs::read_text(path, max_bytes)?;
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
    /// timed another network), and that they hold what a record may ([`RunRecord::validate`]:
    /// no sample of 0 ns, no benchmark or phase twice). Each benchmark is one round.
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
                    what: bench.model,
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
        let record = RunRecord {
            benchmarks: results,
            ..RunRecord::new(None)
        };
        match record.validate("the peer's output") {
            Ok(()) => Ok(record.benchmarks),
            Err(crate::results::RecordError::Unjudgeable { problems, .. }) => Err(PeerError::Invalid {
                backend: description.backend.clone(),
                problems,
            }
            .into()),
            // No benchmark: the session names what the peer did not report.
            Err(_) => Ok(Vec::new()),
        }
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
    /// The deadline of every call of a peer (`--peer-timeout`); `None`: [`DESCRIBE_TIMEOUT`]
    /// to describe itself, [`PeerSession::run_deadline`] to run.
    pub timeout: Option<Duration>,
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
            timeout: None,
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

    /// The precisions the peer runs: the selection's, else what convbench runs when none is
    /// named.
    fn precisions(&self) -> Vec<Precision> {
        if self.sweep.selection.precisions.is_empty() {
            vec![Precision::F32]
        } else {
            self.sweep.selection.precisions.clone()
        }
    }

    /// Every benchmark a peer is asked to run: model, stage, batch and precision.
    fn asked(&self) -> Vec<(&str, Stage, usize, Precision)> {
        let selection = &self.sweep.selection;
        let mut asked = Vec::new();
        for model in &selection.models {
            for stage in selection.stages() {
                for &batch in &selection.batches {
                    for precision in self.precisions() {
                        asked.push((model.as_str(), stage, batch, precision));
                    }
                }
            }
        }
        asked
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

/// Asks the peer to describe itself, within `deadline`: the check that it is installed.
pub fn describe(peer: Peer, command: &[String], deadline: Duration) -> Result<PeerDescription> {
    let Some((program, args)) = command.split_first() else {
        return Err(PeerError::EmptyCommand.into());
    };
    let default = command == peer.default_command().as_slice();
    let mut describe = Command::new(program);
    describe.args(args).arg("--describe");
    // Asked before a sweep installs the handlers of SIGINT and SIGTERM: they end it.
    let ended = child::run(
        describe,
        true,
        MAX_DESCRIPTION_BYTES,
        deadline,
        &Interrupt::default(),
    )
    .map_err(|source| PeerError::NotStarted {
        peer,
        command: command.to_vec(),
        default,
        source,
    })?;
    let (status, stdout, stderr_tail) = match ended {
        Ended::Exited {
            status,
            stdout,
            stderr_tail,
        } => (status, stdout, stderr_tail),
        Ended::TooMuchOutput => {
            return Err(PeerError::DescriptionTooLarge {
                command: command.to_vec(),
                max_bytes: MAX_DESCRIPTION_BYTES,
            }
            .into());
        }
        Ended::TimedOut | Ended::Interrupted => {
            return Err(PeerError::TimedOut {
                peer,
                command: command.to_vec(),
                what: "--describe",
                deadline: humantime::format_duration(deadline).to_string(),
            }
            .into());
        }
    };
    if !status.success() {
        let last = (stderr_tail.lines().rev())
            .find(|line| !line.trim().is_empty())
            .unwrap_or("");
        return Err(PeerError::DescribeFailed {
            peer,
            command: command.to_vec(),
            default,
            status,
            last_line: last.trim().to_string(),
        }
        .into());
    }
    serde_json::from_slice(&stdout).map_err(|source| {
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

/// What a [`PeerSession`] tells as it runs, for the binary to show.
#[derive(Debug, Clone, Copy)]
pub enum PeerEvent<'a> {
    /// A peer's run of a round starts: convbench waits for it, at most `deadline`.
    PeerStarted {
        /// The peer.
        peer: &'a ReadyPeer,
        /// The round, from 1.
        round: usize,
        /// Rounds in all.
        rounds: usize,
        /// How long it may take before it is killed.
        deadline: Duration,
    },
    /// A round ended: convbench's and every peer's.
    RoundDone {
        /// The round, from 1.
        round: usize,
        /// Rounds in all.
        rounds: usize,
        /// The peers that ran in it.
        peers: &'a [ReadyPeer],
    },
}

/// A line of progress, as the binary prints it.
impl std::fmt::Display for PeerEvent<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PeerEvent::PeerStarted {
                peer,
                round,
                rounds,
                deadline,
            } => write!(
                f,
                "round {round} of {rounds}: waiting for the {} peer (`{}`), at most {} \
                 (--peer-timeout)",
                peer.peer.name(),
                peer.command.join(" "),
                humantime::format_duration(*deadline)
            ),
            PeerEvent::RoundDone { round, rounds, peers } => write!(
                f,
                "round {round} of {rounds} done: convbench, then {}",
                peers
                    .iter()
                    .map(|peer| peer.peer.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

/// Interleaved rounds of convbench and peers on one selection.
#[derive(Debug)]
pub struct PeerSession {
    request: PeerRequest,
    networks: NetworksFile,
    /// The peers, in the order asked.
    pub peers: Vec<ReadyPeer>,
    dir: PathBuf,
    /// Stops a running peer ([`PeerSession::with_interrupt`]); never set by default.
    interrupt: Interrupt,
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
            let description = describe(*peer, &command, request.timeout.unwrap_or(DESCRIBE_TIMEOUT))?;
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
            interrupt: Interrupt::default(),
        })
    }

    /// Stops a running peer when `interrupt` is requested (the binary's SIGINT and SIGTERM
    /// handlers): the peer is killed, its round dropped, and [`PeerSession::run`] returns the
    /// rounds that finished with an [`Interrupted::Peer`] error.
    pub fn with_interrupt(mut self, interrupt: Interrupt) -> Self {
        self.interrupt = interrupt;
        self
    }

    /// How long a run of a peer may take: `--peer-timeout`, else [`RUN_FLOOR`] plus the FLOPs
    /// of its iterations (forward, and two backward passes in training; twice, for the phases
    /// a peer times on their own beside the total) at [`crate::gpu::SLOWEST_FLOPS_PER_SECOND`],
    /// plus its warm-up time: a slow CPU is never cut short, a peer that hangs is stopped.
    pub fn run_deadline(&self) -> Duration {
        if let Some(timeout) = self.request.timeout {
            return timeout;
        }
        let sweep = &self.request.sweep;
        let iterations = (sweep.samples + sweep.warmup_iterations) as f64;
        let (mut flops, mut benchmarks) = (0.0, 0_u32);
        for (model, stage, batch, _) in self.request.asked() {
            let per_image = (self.networks.networks.iter())
                .find(|network| network.network.name == model)
                .map_or(0, |network| network.forward_flops_per_image);
            let passes = if stage == Stage::Train { 3.0 } else { 1.0 };
            flops += 2.0 * passes * per_image as f64 * batch as f64 * iterations;
            benchmarks = benchmarks.saturating_add(1);
        }
        // Whole minutes, a deadline people read.
        let minutes = (flops / crate::gpu::SLOWEST_FLOPS_PER_SECOND / 60.0)
            .ceil()
            .min(1e7);
        let work = Duration::from_secs(minutes as u64 * 60);
        let warmup_minutes = (sweep.warmup_min_ms.saturating_mul(u64::from(benchmarks))).div_ceil(60_000);
        let warmup = Duration::from_secs(warmup_minutes.saturating_mul(60));
        RUN_FLOOR.saturating_add(work).saturating_add(warmup)
    }

    /// The most bytes a peer's output file may hold: `OUTPUT_FLOOR_BYTES`, and room for every
    /// sample of every phase of every benchmark asked (at most [`crate::fs::MAX_RECORD_FILE_BYTES`]).
    pub fn max_output_bytes(&self) -> u64 {
        let samples = (self.request.asked().len() as u64)
            .saturating_mul(Phase::ALL.len() as u64)
            .saturating_mul(self.request.sweep.samples as u64);
        OUTPUT_FLOOR_BYTES
            .saturating_add(samples.saturating_mul(OUTPUT_BYTES_PER_SAMPLE))
            .min(crate::fs::MAX_RECORD_FILE_BYTES)
    }

    /// The file a peer's run of `round` writes.
    fn output_path(&self, peer: &ReadyPeer, round: usize) -> PathBuf {
        self.dir.join(format!("{}-{round}.json", peer.peer.name()))
    }

    /// One run of `peer` on the whole selection: one round of each of its benchmarks. Its
    /// output file is removed first (a peer that writes nothing does not pass off an older
    /// run's); it must hold every benchmark asked, once.
    pub fn run_peer(&self, peer: &ReadyPeer, round: usize) -> Result<Vec<BenchmarkResult>> {
        let request = &self.request;
        let selection = &request.sweep.selection;
        let command = &peer.command;
        let Some((program, args)) = command.split_first() else {
            return Err(PeerError::EmptyCommand.into());
        };
        let out = self.output_path(peer, round);
        match std::fs::remove_file(&out) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                return Err(Error::io(&out, error));
            }
            _ => {}
        }
        let list = |values: Vec<String>| values.join(",");
        let mut run = Command::new(program);
        run.args(args)
            .arg("--networks")
            .arg(self.dir.join("networks.json"))
            .args([
                "--batch",
                &list(selection.batches.iter().map(usize::to_string).collect()),
            ])
            .args([
                "--stage",
                &list(
                    selection
                        .stages()
                        .iter()
                        .map(|s| s.as_str().to_string())
                        .collect(),
                ),
            ])
            .args([
                "--precision",
                &list(
                    request
                        .precisions()
                        .iter()
                        .map(|p| p.as_str().to_string())
                        .collect(),
                ),
            ])
            .args(["--samples", &request.sweep.samples.to_string()])
            .args(["--warmup", &request.sweep.warmup_iterations.to_string()])
            .args(["--warmup-ms", &request.sweep.warmup_min_ms.to_string()])
            .arg("--out")
            .arg(&out);
        let deadline = self.run_deadline();
        let ended = child::run(run, false, 0, deadline, &self.interrupt).map_err(|source| {
            PeerError::RunNotStarted {
                peer: peer.peer,
                command: command.clone(),
                source,
            }
        })?;
        let interrupted = Interrupted::Peer {
            peer: peer.peer.name().to_string(),
            round,
        };
        match ended {
            // Killed by convbench, or ended by the terminal's Ctrl-C that stopped convbench too.
            Ended::Interrupted => return Err(interrupted.into()),
            Ended::Exited { status, .. } if !status.success() && self.interrupt.requested() => {
                return Err(interrupted.into());
            }
            Ended::Exited { status, .. } if !status.success() => {
                return Err(PeerError::RunFailed {
                    peer: peer.peer,
                    command: command.clone(),
                    status,
                }
                .into());
            }
            Ended::Exited { .. } => {}
            // Its stdout is not read, so it cannot print too much: only the deadline ends it.
            Ended::TimedOut | Ended::TooMuchOutput => {
                return Err(PeerError::TimedOut {
                    peer: peer.peer,
                    command: command.clone(),
                    what: "--networks ...",
                    deadline: humantime::format_duration(deadline).to_string(),
                }
                .into());
            }
        }
        let max_bytes = self.max_output_bytes();
        match std::fs::symlink_metadata(&out) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(PeerError::NoOutput {
                    peer: peer.peer,
                    command: command.clone(),
                    path: out,
                }
                .into());
            }
            Ok(metadata) if metadata.len() > max_bytes => {
                return Err(PeerError::OutputTooLarge {
                    peer: peer.peer,
                    path: out,
                    bytes: metadata.len(),
                    max_bytes,
                }
                .into());
            }
            // Anything else is read_text's to name.
            _ => {}
        }
        let results = PeerOutput::read(&out, max_bytes)?.into_benchmarks(&self.networks)?;
        self.check_asked(&peer.description.backend, &results)?;
        Ok(results)
    }

    /// That a peer's `results` are every benchmark it was asked to run, and no other.
    fn check_asked(&self, backend: &str, results: &[BenchmarkResult]) -> Result<()> {
        let asked = self.request.asked();
        for &(model, stage, batch, precision) in &asked {
            let id = BenchmarkResult::make_id(model, stage, batch, precision, backend);
            if !results.iter().any(|result| result.id == id) {
                return Err(PeerError::NothingFor {
                    backend: backend.to_string(),
                    model: model.to_string(),
                    stage,
                    batch,
                    precision,
                }
                .into());
            }
        }
        if let Some(extra) = results.iter().find(|result| {
            !(asked.iter()).any(|&(model, stage, batch, precision)| {
                result.id == BenchmarkResult::make_id(model, stage, batch, precision, backend)
            })
        }) {
            return Err(PeerError::NotAsked {
                backend: backend.to_string(),
                what: extra.id.clone(),
            }
            .into());
        }
        Ok(())
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
        on_event: &mut dyn FnMut(PeerEvent<'_>),
    ) -> (Option<RunRecord>, Option<Error>) {
        let mut record: Option<RunRecord> = None;
        for round in 1..=self.request.rounds {
            let finished = self.round(round, convbench, on_event).map(|(run, results)| {
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
            on_event(PeerEvent::RoundDone {
                round,
                rounds: self.request.rounds,
                peers: &self.peers,
            });
        }
        (record, None)
    }

    /// One round: convbench at every stage, then each peer. convbench's record (for its
    /// header) and every benchmark of the round.
    fn round(
        &self,
        round: usize,
        convbench: &mut dyn FnMut(&SweepRequest) -> Result<RunRecord>,
        on_event: &mut dyn FnMut(PeerEvent<'_>),
    ) -> Result<(RunRecord, Vec<BenchmarkResult>)> {
        let mut run = convbench(&self.request.sweep_round(round == 1))?;
        let mut results = std::mem::take(&mut run.benchmarks);
        for peer in &self.peers {
            on_event(PeerEvent::PeerStarted {
                peer,
                round,
                rounds: self.request.rounds,
                deadline: self.run_deadline(),
            });
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
