//! The seccomp filter that turns the network off where Landlock cannot:
//! Landlock (ABI 4) rules cover TCP connect and bind only, so UDP, raw and
//! packet sockets are refused at `socket()`. The filter refuses every
//! `AF_INET`, `AF_INET6` and `AF_PACKET` socket, TCP included, so that the
//! network is off even on a kernel with Landlock but without its TCP
//! rules; Unix sockets stay allowed. `io_uring_setup` is refused too,
//! because an io_uring can create sockets without calling `socket()`.
//!
//! The errno is `EACCES`, the one Landlock returns for a refused connect,
//! and one `socket(2)` documents ("permission to create a socket of the
//! specified type is denied"), so that programs print "Permission denied"
//! whichever layer refused and [`super::explain`] reads both alike. `EPERM`
//! would read "Operation not permitted", which programs seldom expect from
//! `socket()`.

use std::collections::BTreeMap;

use nix::libc;
use seccompiler::{
    SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch,
};

use super::Error;

/// x86_64's x32 ABI numbers its system calls from this bit up; the filter
/// checks the architecture but not the ABI, so the x32 numbers of the
/// refused calls are listed too.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: i64 = 0x4000_0000;

/// The compiled filter, as `lib/proc` installs it.
pub(super) fn filter() -> Result<Vec<libc::sock_filter>, Error> {
    let err = |e: seccompiler::BackendError| Error::Seccomp(e.to_string());
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(err)?;
    let domain = |family: i32| -> Result<SeccompRule, Error> {
        let family = u64::try_from(family).unwrap_or_default();
        SeccompRule::new(vec![
            SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, family)
                .map_err(err)?,
        ])
        .map_err(err)
    };
    let socket_rules = vec![
        domain(libc::AF_INET)?,
        domain(libc::AF_INET6)?,
        domain(libc::AF_PACKET)?,
    ];
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(libc::SYS_socket, socket_rules.clone());
    // An empty list of rules matches the call whatever its arguments.
    rules.insert(libc::SYS_io_uring_setup, Vec::new());
    #[cfg(target_arch = "x86_64")]
    {
        rules.insert(X32_SYSCALL_BIT | libc::SYS_socket, socket_rules);
        rules.insert(X32_SYSCALL_BIT | libc::SYS_io_uring_setup, Vec::new());
    }
    let eacces = u32::try_from(libc::EACCES).unwrap_or(13);
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(eacces),
        arch,
    )
    .map_err(err)?;
    let program: seccompiler::BpfProgram = filter.try_into().map_err(err)?;
    Ok(program
        .into_iter()
        .map(|i| libc::sock_filter {
            code: i.code,
            jt: i.jt,
            jf: i.jf,
            k: i.k,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_filter_compiles_for_this_machine() {
        let f = super::filter().unwrap();
        assert!(f.len() > 8, "{} instructions", f.len());
    }
}
