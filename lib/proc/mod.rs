//! All process spawning: own process groups, killing whole groups.

mod group;

pub use group::{GRACE, kill_group, reap_group, tokio_command};
