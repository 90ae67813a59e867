//! Process mode of `ab` (`--base-bin PATH`): for changes outside the shaders (the harness, the
//! planner), a `cargo-convbench` built from the base revision and this one alternate whole
//! `run --rounds 1` invocations, round by round (ABBA), and each round's total medians make a
//! pair, judged like the pairs of shader mode ([`AbOutcome::judge`]).

use super::ab::{AbOutcome, Measured};
use super::sweep::{KernelRequest, Selection, WARMUP_ITERATIONS, WARMUP_MIN_MS};
use super::{AbError, Interrupted};
use crate::compare::CompareConfig;
use crate::results::{BenchmarkResult, Phase, RunRecord, Stage};
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Pairs of rounds by default: each is two whole `run` processes.
pub const PROCESS_PAIRS: usize = 20;

/// Timed iterations per round by default.
pub const PROCESS_SAMPLES: usize = 10;

/// What process mode asks for: two binaries, and the `run` each round of both makes.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessRequest {
    /// Side A: a `cargo-convbench` built from the base revision.
    pub base_bin: PathBuf,
    /// Side B: this build.
    pub head_bin: PathBuf,
    /// The workspace's `Cargo.toml`, passed on to both sides.
    pub manifest_path: Option<PathBuf>,
    /// What both sides benchmark.
    pub selection: Selection,
    /// The wgpu adapter of both sides.
    pub adapter: Option<String>,
    /// Pairs of rounds.
    pub pairs: usize,
    /// Timed iterations per round.
    pub samples: usize,
    /// Minimum warm-up iterations per process; `None`: `run`'s default.
    pub warmup_iterations: Option<usize>,
    /// Minimum warm-up time (ms) per process; `None`: `run`'s default.
    pub warmup_min_ms: Option<u64>,
    /// Which kernels run (the same choice on both sides).
    pub kernels: KernelRequest,
}

impl ProcessRequest {
    /// A request to compare `base_bin` (A) with `head_bin` (B), nothing selected, every count
    /// at its default: commands fill in what their flags say with struct update syntax.
    pub fn new(base_bin: PathBuf, head_bin: PathBuf) -> Self {
        Self {
            base_bin,
            head_bin,
            manifest_path: None,
            selection: Selection::default(),
            adapter: None,
            pairs: PROCESS_PAIRS,
            samples: PROCESS_SAMPLES,
            warmup_iterations: None,
            warmup_min_ms: None,
            kernels: KernelRequest::Auto,
        }
    }

    /// The `run` arguments of one round, whose record goes to `out`: the same selection on
    /// both builds, every count spelled out so that both sides warm up and time alike even if
    /// their defaults differ.
    pub fn round_args(&self, out: &Path) -> Vec<String> {
        let mut args: Vec<String> = vec!["run".into(), "--quiet".into(), "--rounds".into(), "1".into()];
        if let Some(manifest) = &self.manifest_path {
            args.extend(["--manifest-path".into(), manifest.display().to_string()]);
        }
        let mut list = |flag: &str, values: Vec<String>| {
            if !values.is_empty() {
                args.extend([flag.to_string(), values.join(",")]);
            }
        };
        let s = &self.selection;
        list("--model", s.models.clone());
        list("--suite", s.suites.clone());
        if let Some(shapes) = &s.shapes {
            list("--shapes", vec![shapes.display().to_string()]);
        }
        list("--batch", s.batches.iter().map(ToString::to_string).collect());
        list(
            "--precision",
            s.precisions.iter().map(ToString::to_string).collect(),
        );
        // Named only when not the default, which a build from before `--stage` took a list reads.
        let stages = s.stages();
        if stages != [Stage::Train] {
            list(
                "--stage",
                stages.iter().map(|stage| stage.as_str().to_string()).collect(),
            );
        }
        if let Some(adapter) = &self.adapter {
            args.extend(["--adapter".into(), adapter.clone()]);
        }
        args.extend([
            "--samples".into(),
            self.samples.to_string(),
            "--warmup".into(),
            self.warmup_iterations.unwrap_or(WARMUP_ITERATIONS).to_string(),
            "--warmup-ms".into(),
            self.warmup_min_ms.unwrap_or(WARMUP_MIN_MS).to_string(),
            "--out".into(),
            out.display().to_string(),
        ]);
        match &self.kernels {
            KernelRequest::Auto => {}
            KernelRequest::Heuristic => args.push("--no-tune".into()),
            KernelRequest::Named(name) => args.extend(["--kernel".into(), name.clone()]),
        }
        args
    }

    /// Runs the rounds and judges the pairs with `config`'s threshold and alpha. When
    /// `interrupted` says so (SIGINT or SIGTERM), it stops after the round in flight: the
    /// outcome judges the pairs finished, and the interruption comes beside it. `on_round`
    /// hears each pair of rounds done.
    pub fn run(
        &self,
        config: &CompareConfig,
        interrupted: &dyn Fn() -> bool,
        on_round: &mut dyn FnMut(usize),
    ) -> Result<(AbOutcome, Option<Error>)> {
        let (label, measured, stopped) = process_pairs(
            &self.base_bin,
            &self.head_bin,
            self.pairs,
            &|out| self.round_args(out),
            interrupted,
            on_round,
        )?;
        let mut description = format!(
            "process mode: {} (A) against this build (B)",
            self.base_bin.display()
        );
        if stopped.is_some() {
            let pairs = measured.first().map_or(0, |m| m.base_ns.len());
            description.push_str(&format!("; interrupted after {pairs} pairs of rounds"));
        }
        Ok((AbOutcome::judge(description, label, measured, config, 1), stopped))
    }
}

/// Process mode of `ab`: `pairs` rounds of each binary, alternating ABBA, each round one `run`
/// with `round_args(out)` (which must write its record to `out`); a pair is the two rounds'
/// total medians per benchmark. When `interrupted` says so (SIGINT or SIGTERM), the loop ends
/// after the round in flight; the third value is then the interruption, beside the pairs
/// finished. `on_round` hears each pair of rounds done. Returns the adapter's label too.
#[allow(clippy::type_complexity)]
fn process_pairs(
    base_bin: &Path,
    head_bin: &Path,
    pairs: usize,
    round_args: &dyn Fn(&Path) -> Vec<String>,
    interrupted: &dyn Fn() -> bool,
    on_round: &mut dyn FnMut(usize),
) -> Result<(String, Vec<Measured>, Option<Error>)> {
    if !base_bin.is_file() {
        return Err(AbError::BaseBinNotAFile {
            path: base_bin.to_path_buf(),
        }
        .into());
    }
    let dir = tempfile::tempdir().map_err(|source| AbError::RoundsFolder { source })?;
    let mut by_id: BTreeMap<String, Measured> = BTreeMap::new();
    let mut adapter_label = String::new();
    let finished = |by_id: BTreeMap<String, Measured>, label: String, index: usize| {
        let stop = Error::from(Interrupted::RoundPairs { run: index, pairs });
        Ok((label, by_id.into_values().collect(), Some(stop)))
    };
    for index in 0..pairs {
        let order = if index % 2 == 0 {
            ["base", "head"]
        } else {
            ["head", "base"]
        };
        let mut records: BTreeMap<&str, RunRecord> = BTreeMap::new();
        for side in order {
            if interrupted() {
                return finished(by_id, adapter_label, index);
            }
            let bin = if side == "base" { base_bin } else { head_bin };
            let out = dir.path().join(format!("{side}-{index}.json"));
            let status = std::process::Command::new(bin)
                .args(round_args(&out))
                .stdout(std::process::Stdio::null())
                .status()
                .map_err(|source| AbError::CannotStart {
                    bin: bin.to_path_buf(),
                    source,
                })?;
            // Ctrl-C reaches the round's process too: its failure is the interruption.
            if interrupted() {
                return finished(by_id, adapter_label, index);
            }
            if !status.success() {
                return Err(AbError::SideFailed {
                    side,
                    bin: bin.to_path_buf(),
                    status,
                }
                .into());
            }
            if !out.is_file() {
                return Err(AbError::NoRecord {
                    side,
                    bin: bin.to_path_buf(),
                }
                .into());
            }
            records.insert(side, RunRecord::read(&out)?);
        }
        for benchmark in &records["head"].benchmarks {
            adapter_label = benchmark.adapter.label();
            let Some(base) = records["base"].benchmarks.iter().find(|b| b.id == benchmark.id) else {
                continue;
            };
            let total = |b: &BenchmarkResult| {
                b.phases
                    .iter()
                    .find(|p| p.phase == Phase::Total)
                    .map_or(0, |p| p.summary.median_ns.round() as u64)
            };
            let entry = by_id.entry(benchmark.id.clone()).or_insert_with(|| Measured {
                id: benchmark.id.clone(),
                base_ns: Vec::new(),
                head_ns: Vec::new(),
                base_first: Vec::new(),
                phases: Vec::new(),
                layers: Vec::new(),
            });
            entry.base_ns.push(total(base));
            entry.head_ns.push(total(benchmark));
            entry.base_first.push(order[0] == "base");
        }
        on_round(index + 1);
    }
    Ok((adapter_label, by_id.into_values().collect(), None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Precision;

    fn request() -> ProcessRequest {
        ProcessRequest::new("base/cargo-convbench".into(), "head/cargo-convbench".into())
    }

    #[test]
    fn a_round_with_nothing_selected_spells_out_every_count() {
        assert_eq!(
            request().round_args(Path::new("out.json")),
            [
                "run",
                "--quiet",
                "--rounds",
                "1",
                "--samples",
                "10",
                "--warmup",
                "3",
                "--warmup-ms",
                "200",
                "--out",
                "out.json"
            ]
        );
    }

    #[test]
    fn a_round_passes_the_selection_adapter_and_kernels_to_both_sides() {
        let request = ProcessRequest {
            manifest_path: Some("ws/Cargo.toml".into()),
            selection: Selection {
                models: vec!["lenet".into(), "alexnet".into()],
                suites: vec!["layers".into()],
                batches: vec![1, 8],
                precisions: vec![Precision::F16],
                stages: vec![Stage::Eval],
                shapes: Some("convs.csv".into()),
            },
            adapter: Some("vulkan".into()),
            samples: 4,
            warmup_iterations: Some(0),
            warmup_min_ms: Some(50),
            kernels: KernelRequest::Named("direct".into()),
            ..request()
        };
        assert_eq!(
            request.round_args(Path::new("r.json")).join(" "),
            "run --quiet --rounds 1 --manifest-path ws/Cargo.toml --model lenet,alexnet --suite layers \
             --shapes convs.csv --batch 1,8 --precision f16 --stage eval --adapter vulkan --samples 4 --warmup 0 \
             --warmup-ms 50 --out r.json --kernel direct"
        );
        let heuristic = ProcessRequest {
            kernels: KernelRequest::Heuristic,
            ..request
        };
        assert_eq!(
            heuristic
                .round_args(Path::new("r.json"))
                .last()
                .map(String::as_str),
            Some("--no-tune")
        );
    }

    #[test]
    fn a_missing_base_binary_is_an_input_error_that_says_how_to_build_it() {
        let error = ProcessRequest::new("/nonexistent/cargo-convbench".into(), "head".into())
            .run(&CompareConfig::default(), &|| false, &mut |_| {})
            .expect_err("no base binary");
        assert!(
            matches!(&error, Error::Ab(e) if matches!(&**e, AbError::BaseBinNotAFile { path }
                if path.ends_with("nonexistent/cargo-convbench"))),
            "{error:?}"
        );
        assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
        assert!(error.to_string().contains("git worktree add"), "{error}");
    }
}
