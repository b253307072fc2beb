//! The seccomp filter: the network off where Landlock cannot reach, and
//! two file changes Landlock has no right for.
//!
//! The network:
//! Landlock (ABI 4) rules cover TCP connect and bind only, so UDP, raw and
//! packet sockets are refused at `socket()`. The filter refuses every
//! `AF_INET`, `AF_INET6` and `AF_PACKET` socket, TCP included, so that the
//! network is off even on a kernel with Landlock but without its TCP
//! rules; Unix sockets stay allowed. `io_uring_setup` is refused too,
//! because an io_uring can create sockets without calling `socket()`.
//!
//! Files: Landlock governs opening, creating and removing, never a file's
//! mode or extended attributes, so a confined command could make a binary
//! it may not write setuid (as root: `chmod u+s /usr/bin/python3`) or give
//! it file capabilities (`setcap`, an extended attribute), privileges that
//! outlive the sandbox. So `chmod` and its kin are refused when the new
//! mode has the setuid or setgid bit, and setting extended attributes is
//! refused altogether (few development tools set them; `cp -a` warns).
//! Other mode, owner and time changes stay allowed: `chmod +x` in the
//! workspace is common, and Landlock cannot confine them to it.
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

/// The compiled filter, as `lib/proc` installs it; the network rules only
/// when `net` is false.
pub(super) fn filter(net: bool) -> Result<Vec<libc::sock_filter>, Error> {
    let err = |e: seccompiler::BackendError| Error::Seccomp(e.to_string());
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(err)?;
    let arg_is = |arg: u8, value: i32| -> Result<SeccompRule, Error> {
        let value = u64::try_from(value).unwrap_or_default();
        SeccompRule::new(vec![
            SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value)
                .map_err(err)?,
        ])
        .map_err(err)
    };
    // Either special bit in the mode argument: two rules, either matches.
    let mode_bits = |arg: u8| -> Result<Vec<SeccompRule>, Error> {
        [libc::S_ISUID, libc::S_ISGID]
            .into_iter()
            .map(|bit| {
                let bit = u64::from(bit);
                SeccompRule::new(vec![
                    SeccompCondition::new(
                        arg,
                        SeccompCmpArgLen::Dword,
                        SeccompCmpOp::MaskedEq(bit),
                        bit,
                    )
                    .map_err(err)?,
                ])
                .map_err(err)
            })
            .collect()
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    if !net {
        let socket_rules = vec![
            arg_is(0, libc::AF_INET)?,
            arg_is(0, libc::AF_INET6)?,
            arg_is(0, libc::AF_PACKET)?,
        ];
        rules.insert(libc::SYS_socket, socket_rules.clone());
        // An empty list of rules matches the call whatever its arguments.
        rules.insert(libc::SYS_io_uring_setup, Vec::new());
        #[cfg(target_arch = "x86_64")]
        {
            rules.insert(X32_SYSCALL_BIT | libc::SYS_socket, socket_rules);
            rules.insert(X32_SYSCALL_BIT | libc::SYS_io_uring_setup, Vec::new());
        }
    }
    rules.insert(libc::SYS_fchmod, mode_bits(1)?);
    rules.insert(libc::SYS_fchmodat, mode_bits(2)?);
    #[cfg(target_arch = "x86_64")]
    {
        rules.insert(libc::SYS_chmod, mode_bits(1)?);
        rules.insert(libc::SYS_fchmodat2, mode_bits(2)?);
    }
    for call in [libc::SYS_setxattr, libc::SYS_lsetxattr, libc::SYS_fsetxattr] {
        rules.insert(call, Vec::new());
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
        let f = super::filter(false).unwrap();
        assert!(f.len() > 8, "{} instructions", f.len());
    }
}
