//! Reading a file whole before searching it, so that its lines are
//! numbered only where a match is kept. Searching a stream with line
//! numbers counts every line of every file (a sixth of a search's
//! instructions on a large tree with few matches); searching the whole text
//! at once lets the sink count newlines up to the lines it keeps, and a
//! file without a kept match is never counted. A file larger than
//! [`WHOLE_LIMIT`] is searched as a stream, with numbers, as before, so
//! that memory stays bounded.

use std::fs::File;
use std::io::{self, Read};

/// Largest file read whole; each search thread keeps a buffer that grows
/// to at most about this size.
pub const WHOLE_LIMIT: usize = 4 << 20;
/// The buffer's first size: most source files fit, so that one read takes
/// the file and a second sees its end.
const START: usize = 64 << 10;

/// What [`read`] took of a file.
#[derive(Debug, PartialEq, Eq)]
pub enum Taken {
    /// The whole file: its first `n` bytes are all of it.
    All(usize),
    /// Only the first `n` bytes: the file is longer than [`WHOLE_LIMIT`],
    /// and the rest is still to be read from it.
    Head(usize),
}

/// Reads `file` into `buf` from where it stands, whole if it holds at most
/// [`WHOLE_LIMIT`] bytes, else its first bytes. `buf` keeps its size from
/// call to call (it is the thread's reused buffer); the bytes read are its
/// first `n`.
pub fn read(mut file: &File, buf: &mut Vec<u8>) -> io::Result<Taken> {
    if buf.len() < START {
        buf.resize(START, 0);
    }
    let mut n = 0;
    loop {
        if n == buf.len() {
            if n > WHOLE_LIMIT {
                return Ok(Taken::Head(n));
            }
            // One byte past the limit tells a file of exactly the limit
            // (read whole) from a longer one.
            let grown = (n * 2).min(WHOLE_LIMIT + 1);
            buf.resize(grown, 0);
        }
        match file.read(&mut buf[n..]) {
            Ok(0) => return Ok(Taken::All(n)),
            Ok(got) => n += got,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn file_of(len: usize) -> File {
        let mut f = tempfile::tempfile().unwrap();
        let bytes: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
        f.write_all(&bytes).unwrap();
        io::Seek::rewind(&mut f).unwrap();
        f
    }

    #[test]
    fn small_and_limit_sized_files_are_read_whole_and_larger_ones_in_part() {
        let mut buf = Vec::new();
        for len in [0, 1, START - 1, START, START + 1, WHOLE_LIMIT] {
            let f = file_of(len);
            assert_eq!(read(&f, &mut buf).unwrap(), Taken::All(len), "{len}");
            assert!(
                buf[..len]
                    .iter()
                    .enumerate()
                    .all(|(i, b)| *b == b'a' + (i % 26) as u8)
            );
        }
        let f = file_of(WHOLE_LIMIT + 10);
        let Taken::Head(n) = read(&f, &mut buf).unwrap() else {
            panic!("a file past the limit was read whole");
        };
        assert_eq!(n, WHOLE_LIMIT + 1);
        // The rest is still in the file, to be searched as a stream.
        let mut rest = Vec::new();
        (&f).read_to_end(&mut rest).unwrap();
        assert_eq!(n + rest.len(), WHOLE_LIMIT + 10);
        // The buffer does not grow past the limit and a byte.
        assert_eq!(buf.len(), WHOLE_LIMIT + 1);
    }
}
