//! Flags of `cargo convbench peers`.

use crate::Result;
use crate::cli::RunArgs;
use crate::config::parse_duration;
use crate::peers::PeerRequest;

/// Arguments of `peers`: `run`'s, and the peer.
#[derive(Debug, clap::Args)]
pub struct PeersArgs {
    /// Peers, comma-separated: `torch` (peers/torch), `jax` (scripts/cpu-peer.py); the first
    /// is the reference of the ratios (docs/peers.md).
    #[arg(long, value_delimiter = ',', required = true)]
    pub peer: Vec<String>,
    /// The command that starts a peer, words split on spaces, as `NAME=COMMAND` (or just
    /// `COMMAND` with one peer); default: the peer's own.
    #[arg(long, value_name = "[NAME=]COMMAND")]
    pub peer_command: Vec<String>,
    /// How long each call of a peer may take before it is killed, e.g. `2h` (default: 5 minutes
    /// to describe itself; to run, 10 minutes plus its work at a slow CPU's pace).
    #[arg(long, value_name = "DURATION", env = crate::peers::TIMEOUT_ENV)]
    pub peer_timeout: Option<String>,
    /// convbench's side, whose models, batches, precisions and samples the peer runs too.
    #[command(flatten)]
    pub run: RunArgs,
}

impl PeersArgs {
    /// The library's peer request: an unknown peer, or a `--peer-timeout` that is not a
    /// duration, is an error naming it.
    pub fn request(&self) -> Result<PeerRequest> {
        let mut request = PeerRequest::new(&self.peer, &self.peer_command, self.run.request())?;
        request.timeout = (self.peer_timeout.as_deref())
            .map(|text| parse_duration(text, "--peer-timeout"))
            .transpose()?;
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, clap::Parser)]
    struct Line {
        #[command(flatten)]
        args: PeersArgs,
    }

    fn parse(line: &str) -> PeersArgs {
        match Line::try_parse_from(line.split_whitespace()) {
            Ok(parsed) => parsed.args,
            Err(e) => panic!("`{line}` does not parse: {e}"),
        }
    }

    #[test]
    fn peer_timeout_is_a_duration_and_one_that_is_not_names_its_flag() {
        let request = parse("peers --peer torch --model lenet --peer-timeout 90s").request();
        assert_eq!(
            request.ok().and_then(|r| r.timeout),
            Some(std::time::Duration::from_secs(90))
        );
        let error = (parse("peers --peer torch --peer-timeout soon").request()).expect_err("not a duration");
        assert!(error.to_string().contains("--peer-timeout"), "{error}");
    }
}
