//! lopdf's load, watched object by object.
//!
//! The skim ([`super::scan`]) bounds what one parse of the file builds, but
//! not how often lopdf parses: a cross-reference table may name one offset
//! for many objects, and lopdf then parses what is there once for each.
//! lopdf's only hook into its load is a filter that sees each object after
//! it is parsed, a plain `fn` with no state of its own; so the state is a
//! static, and one load runs at a time (attachments are rare, and a PDF
//! takes milliseconds). When an object goes over a limit the filter stops
//! the load: lopdf has no way to be stopped, so the filter unwinds with a
//! payload of its own through `resume_unwind`, which runs no panic hook (so
//! nothing is printed), and [`load`] catches it.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Mutex;

use lopdf::{Document, LoadOptions, Object, ObjectId};

use super::limits::{MAX_OBJECTS, MAX_STREAM, MAX_VALUES, Refusal};

/// What one load has read so far.
struct Budget {
    objects: usize,
    values: usize,
    stream_bytes: usize,
    /// The stream bytes allowed: a file's streams, each read a few times.
    max_stream_bytes: usize,
    /// Why the load was stopped.
    stopped: Option<Refusal>,
}

/// The budget of the load under way.
static BUDGET: Mutex<Option<Budget>> = Mutex::new(None);

/// Held for a whole load, so that loads do not share [`BUDGET`].
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The payload the filter unwinds with.
struct Stop;

/// Loads `bytes` with lopdf, each stream inflating to [`MAX_STREAM`] at
/// most, under the guard. A file whose cross-reference data could not be
/// read is scanned for its objects instead, as lopdf itself does when it
/// loads without a filter.
pub fn load(bytes: &[u8]) -> Result<Document, Refusal> {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let doc = guarded(bytes, false)?;
    if doc.xref_recovery != Some(lopdf::xref::XrefRecovery::Reconstructed)
        && !page_tree_loaded(&doc)
    {
        drop(doc);
        return guarded(bytes, true);
    }
    Ok(doc)
}

fn guarded(bytes: &[u8], reconstruct: bool) -> Result<Document, Refusal> {
    *budget() = Some(Budget {
        objects: 0,
        values: 0,
        stream_bytes: 0,
        max_stream_bytes: bytes.len().saturating_mul(2).saturating_add(MAX_STREAM),
        stopped: None,
    });
    let options = LoadOptions {
        filter: Some(admit),
        max_decompressed_size: Some(MAX_STREAM),
        force_reconstruct: reconstruct,
        ..LoadOptions::default()
    };
    let loaded = catch_unwind(AssertUnwindSafe(|| {
        Document::load_mem_with_options(bytes, options)
    }));
    let stopped = budget().take().and_then(|b| b.stopped);
    match loaded {
        Ok(Ok(doc)) => Ok(doc),
        Ok(Err(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded {
            ..
        }))) => Err(Refusal::StreamSize),
        Ok(Err(e)) => Err(Refusal::Unreadable(e.to_string())),
        Err(payload) if payload.is::<Stop>() => Err(stopped.unwrap_or(Refusal::Repeated)),
        Err(_) => Err(Refusal::Crashed),
    }
}

fn budget() -> std::sync::MutexGuard<'static, Option<Budget>> {
    BUDGET
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Whether the catalog leads to a page tree (lopdf's own test for when to
/// scan the file for its objects instead).
fn page_tree_loaded(doc: &Document) -> bool {
    doc.catalog()
        .and_then(|c| c.get(b"Pages"))
        .and_then(Object::as_reference)
        .and_then(|root| doc.get_dictionary(root))
        .and_then(|root| root.get_deref(b"Kids", doc))
        .and_then(Object::as_array)
        .is_ok()
}

/// The filter: counts the object into the budget, and stops the load when
/// it goes over.
fn admit(id: ObjectId, object: &mut Object) -> Option<(ObjectId, Object)> {
    let over = {
        let mut guard = budget();
        match guard.as_mut() {
            Some(b) => b.add(object),
            None => false,
        }
    };
    if over {
        resume_unwind(Box::new(Stop));
    }
    // lopdf keeps its own `object` when the filter answers for an object
    // of the file, but keeps the answer for an object of an object stream;
    // so the answer is a copy, dropped at once in the first case.
    Some((id, object.clone()))
}

impl Budget {
    /// Adds an object; true when that is over a limit (the reason is kept).
    fn add(&mut self, object: &Object) -> bool {
        self.objects += 1;
        let (values, bytes) = size(object);
        self.values = self.values.saturating_add(values);
        self.stream_bytes = self.stream_bytes.saturating_add(bytes);
        self.stopped = if self.objects > MAX_OBJECTS {
            Some(Refusal::Objects)
        } else if self.values > 2 * MAX_VALUES || self.stream_bytes > self.max_stream_bytes {
            // The skim allowed MAX_VALUES of them in the file: twice that
            // parsed means the same ones again and again.
            Some(Refusal::Repeated)
        } else {
            None
        };
        self.stopped.is_some()
    }
}

/// The values in an object and the bytes of its stream data, counted
/// without recursion.
fn size(object: &Object) -> (usize, usize) {
    let (mut values, mut bytes) = (0usize, 0usize);
    let mut todo = vec![object];
    while let Some(o) = todo.pop() {
        values += 1;
        match o {
            Object::Array(items) => todo.extend(items.iter()),
            Object::Dictionary(d) => {
                values += d.len();
                todo.extend(d.iter().map(|(_, v)| v));
            }
            Object::Stream(s) => {
                values += s.dict.len();
                bytes += s.content.len();
                todo.extend(s.dict.iter().map(|(_, v)| v));
            }
            _ => {}
        }
    }
    (values, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdf::testing::file;

    const CATALOG: &str = "<< /Type /Catalog /Pages 2 0 R >>";
    const PAGES: &str = "<< /Type /Pages /Kids [] /Count 0 >>";

    #[test]
    fn a_plain_file_loads() {
        let doc = load(&file(&[CATALOG, PAGES], None)).unwrap();
        assert_eq!(doc.objects.len(), 2);
    }

    #[test]
    fn one_place_named_for_many_objects_stops_the_load() {
        // Object 3 is a stream of 1 MiB; the table names it for 30
        // objects, and lopdf would copy it 30 times.
        let data = "x".repeat(1 << 20);
        let big = format!("<< /Length {} >>\nstream\n{data}\nendstream", data.len());
        let mut xref = vec![0, 1];
        xref.extend([2; 30]);
        let bytes = file(&[CATALOG, PAGES, big.as_str()], Some(&xref));
        let e = load(&bytes).unwrap_err();
        assert_eq!(e, Refusal::Repeated);
        // The guard is cleared for the next load.
        assert!(budget().is_none());
        assert!(load(&file(&[CATALOG, PAGES], None)).is_ok());
    }
}
