//! A whole answer made again: a small model sent the same nine calls
//! (a command, two edits, a commit, a log…) answer after answer, each
//! turn taking minutes to write, until the run's clock ran out. Each call
//! has its own count in `repeats.rs`, which stops a run at the fifth
//! identical result; an answer of several calls that comes back whole,
//! and finds nothing moved since the last time, says the same sooner and
//! more surely. The third such answer in a row stops the run.
//!
//! Nothing moved when no call changed a file and every call that ran
//! returned what it returned the last time (numbers aside). A call that
//! failed moves nothing, however its error is worded. A command that
//! exits non-zero ran: what it prints is its result, and a new output is
//! movement. An answer that looks at a background job is never counted:
//! a job may work quietly for minutes while a quick model looks at it
//! again and again. One call repeated alone is left to its own count,
//! which gives the model more room after the note it gets.

use std::collections::HashMap;

/// Answers in a row, each with the calls of the one before and with
/// nothing moved, that stop the run.
pub const STOP_AT: u32 = 3;

/// One prompt's answers, as far as their repeats go.
#[derive(Debug, Default)]
pub struct SameAnswer {
    /// The calls of the answer under way (tool and arguments, hashed), in
    /// the order they ended.
    calls: Vec<u64>,
    /// Whether a call of the answer under way moved anything.
    moved: bool,
    /// Whether a call of the answer under way failed.
    failed: bool,
    /// The last answer's calls, sorted.
    last: Vec<u64>,
    /// Answers in a row that made the last one's calls and moved nothing,
    /// counting the first of them.
    run: u32,
    /// What each call that succeeded returned last (hashed).
    outputs: HashMap<u64, u64>,
}

/// How a run of repeated answers ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repeated {
    /// Answers in the run.
    pub answers: u32,
    /// Calls in each.
    pub calls: usize,
    /// Whether a call of the last one failed.
    pub failed: bool,
}

impl SameAnswer {
    /// Takes a call of the answer under way: `call` hashed; what it
    /// returned, hashed, when it ran (`None` for an error); whether it
    /// failed (an error, or a command that exited non-zero); and whether
    /// it moved something whatever it returned: it changed a file, or it
    /// looked at a background job, whose quiet stretch is no circle.
    pub fn call(&mut self, call: u64, output: Option<u64>, failed: bool, moved: bool) {
        self.calls.push(call);
        self.failed |= failed;
        self.moved |= moved;
        if let Some(output) = output {
            self.moved |= self.outputs.insert(call, output) != Some(output);
        }
    }

    /// Ends the answer under way; the run of repeats once it must stop.
    pub fn end(&mut self) -> Option<Repeated> {
        let mut calls = std::mem::take(&mut self.calls);
        calls.sort_unstable();
        let moved = std::mem::take(&mut self.moved);
        let failed = std::mem::take(&mut self.failed);
        self.run = if calls.len() >= 2 && calls == self.last && !moved {
            self.run + 1
        } else {
            1
        };
        let n = calls.len();
        self.last = calls;
        (self.run >= STOP_AT).then_some(Repeated {
            answers: self.run,
            calls: n,
            failed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An answer of `calls`, each (call, output, failed, changed); an
    /// output of 0 stands for an error.
    fn answer(s: &mut SameAnswer, calls: &[(u64, u64, bool, bool)]) -> Option<Repeated> {
        for &(c, o, f, ch) in calls {
            s.call(c, (o != 0).then_some(o), f, ch);
        }
        s.end()
    }

    #[test]
    fn the_third_identical_answer_that_moved_nothing_stops() {
        let mut s = SameAnswer::default();
        // A command exiting non-zero, a failing edit, a look.
        let same = [
            (1, 10, true, false),
            (2, 0, true, false),
            (3, 30, false, false),
        ];
        assert_eq!(answer(&mut s, &same), None);
        assert_eq!(answer(&mut s, &same), None);
        // The calls in another order (an error is an error, however
        // it is worded).
        let reordered = [
            (3, 30, false, false),
            (2, 0, true, false),
            (1, 10, true, false),
        ];
        assert_eq!(
            answer(&mut s, &reordered),
            Some(Repeated {
                answers: 3,
                calls: 3,
                failed: true
            })
        );
    }

    #[test]
    fn movement_or_another_call_starts_the_count_again() {
        let mut s = SameAnswer::default();
        let same = [(1, 10, false, false), (2, 20, false, false)];
        answer(&mut s, &same);
        answer(&mut s, &same);
        // A look that now sees something else: the model may be waiting
        // on it, or acting between looks.
        assert_eq!(
            answer(&mut s, &[(1, 11, false, false), (2, 20, false, false)]),
            None
        );
        assert_eq!(
            answer(&mut s, &[(1, 11, false, false), (2, 20, false, false)]),
            None
        );
        // A file changed again (an edit whose old text is still there).
        assert_eq!(
            answer(&mut s, &[(1, 11, false, false), (2, 20, false, true)]),
            None
        );
        assert_eq!(
            answer(&mut s, &[(1, 11, false, false), (2, 20, false, false)]),
            None
        );
        // A call more.
        assert_eq!(
            answer(
                &mut s,
                &[
                    (1, 11, false, false),
                    (2, 20, false, false),
                    (4, 40, false, false)
                ]
            ),
            None
        );
        let stop = answer(
            &mut s,
            &[
                (1, 11, false, false),
                (2, 20, false, false),
                (4, 40, false, false),
            ],
        );
        assert_eq!(stop, None);
        let stop = answer(
            &mut s,
            &[
                (1, 11, false, false),
                (2, 20, false, false),
                (4, 40, false, false),
            ],
        );
        assert_eq!(
            stop,
            Some(Repeated {
                answers: 3,
                calls: 3,
                failed: false
            })
        );
    }

    #[test]
    fn a_call_that_failed_and_now_runs_is_movement() {
        let mut s = SameAnswer::default();
        answer(&mut s, &[(1, 0, true, false), (2, 20, false, false)]);
        answer(&mut s, &[(1, 0, true, false), (2, 20, false, false)]);
        assert_eq!(
            answer(&mut s, &[(1, 10, false, false), (2, 20, false, false)]),
            None
        );
        assert_eq!(
            answer(&mut s, &[(1, 10, false, false), (2, 20, false, false)]),
            None
        );
    }

    #[test]
    fn one_call_alone_is_left_to_its_own_count() {
        let mut s = SameAnswer::default();
        for _ in 0..6 {
            assert_eq!(answer(&mut s, &[(1, 10, false, false)]), None);
        }
    }
}
