//! One file per subcommand.

pub mod ab;
pub mod adapters;
pub mod baseline;
pub mod bisect;
pub mod ci;
pub mod compare;
pub mod history;
pub mod init;
pub mod kernels;
pub mod list;
pub mod peers;
pub mod plot;
pub mod report;
pub mod run;
pub mod tune;
pub mod verify;
