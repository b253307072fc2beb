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
//!
//! Extended attributes are the exception: setting one fails with
//! `EOPNOTSUPP`, as on a file system without them. Tools that copy a file's
//! access list along with its mode (`sed -i`, `cp -a`, `install`) take that
//! answer as "no ACLs here" and carry on quietly with the mode alone; with
//! `EACCES` every `sed -i` printed "preserving permissions ...: Permission
//! denied", which a model reads as its edit having failed. The two answers
//! are two filters joined into one program (see [`join`]).

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

/// The compiled filter, as `core/proc` installs it; the network rules only
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
    let mut xattr: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for call in [libc::SYS_setxattr, libc::SYS_lsetxattr, libc::SYS_fsetxattr] {
        xattr.insert(call, Vec::new());
        #[cfg(target_arch = "x86_64")]
        xattr.insert(X32_SYSCALL_BIT | call, Vec::new());
    }
    let compile = |rules: BTreeMap<i64, Vec<SeccompRule>>,
                   errno: i32|
     -> Result<Vec<libc::sock_filter>, Error> {
        let errno = u32::try_from(errno).unwrap_or(libc::EACCES as u32);
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(errno),
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
    };
    join(
        compile(rules, libc::EACCES)?,
        compile(xattr, libc::EOPNOTSUPP)?,
    )
}

/// `BPF_RET | BPF_K`: return the constant.
const RET_K: u16 = 0x06;
/// `BPF_JMP | BPF_JA`: jump forward by the constant.
const JA: u16 = 0x05;
/// The classic BPF program length the kernel takes at most.
const MAX_INSNS: usize = 4096;

/// One program that runs `first`, and where `first` would allow the call,
/// `second`: each of `first`'s allowing returns becomes a jump to the start
/// of `second` (classic BPF jumps only forward, and `second` starts by
/// loading what it reads). The kernel also takes two filters, but one is
/// what `core/proc` installs, and one program is evaluated once.
fn join(
    mut first: Vec<libc::sock_filter>,
    second: Vec<libc::sock_filter>,
) -> Result<Vec<libc::sock_filter>, Error> {
    if first.len() + second.len() > MAX_INSNS {
        return Err(Error::Seccomp(format!(
            "the filter would have {} instructions, more than the kernel's {MAX_INSNS}",
            first.len() + second.len()
        )));
    }
    let len = first.len();
    for (at, insn) in first.iter_mut().enumerate() {
        if insn.code == RET_K && insn.k == libc::SECCOMP_RET_ALLOW {
            *insn = libc::sock_filter {
                code: JA,
                jt: 0,
                jf: 0,
                k: u32::try_from(len - at - 1).unwrap_or(u32::MAX),
            };
        }
    }
    first.extend(second);
    Ok(first)
}

#[cfg(test)]
mod tests {
    use nix::libc;

    #[test]
    fn the_filter_compiles_for_this_machine() {
        let f = super::filter(false).unwrap();
        assert!(f.len() > 8, "{} instructions", f.len());
    }

    #[test]
    fn joining_sends_the_first_programs_allowing_returns_to_the_second() {
        let insn = |code, k| libc::sock_filter {
            code,
            jt: 0,
            jf: 0,
            k,
        };
        let allow = insn(super::RET_K, libc::SECCOMP_RET_ALLOW);
        let refuse = insn(super::RET_K, libc::SECCOMP_RET_ERRNO | 13);
        let load = insn(0x20, 0);
        let first = vec![load, refuse, allow];
        let second = vec![load, allow];
        let joined = super::join(first, second).unwrap();
        assert_eq!(joined.len(), 5);
        // The refusal stays; the allowing return jumps over nothing, to
        // the second program's first instruction.
        assert_eq!(
            (joined[1].code, joined[1].k),
            (super::RET_K, libc::SECCOMP_RET_ERRNO | 13)
        );
        assert_eq!((joined[2].code, joined[2].k), (super::JA, 0));
        assert_eq!(
            (joined[4].code, joined[4].k),
            (super::RET_K, libc::SECCOMP_RET_ALLOW)
        );
        let long = vec![load; super::MAX_INSNS];
        assert!(super::join(long, vec![allow]).is_err());
    }
}
