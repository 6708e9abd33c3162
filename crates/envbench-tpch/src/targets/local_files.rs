//! The generated Parquet files as DataFusion's reader fetches them: the local file system of `object_store`, except
//! that the column chunks of a row group are read in the thread that decodes them.
//!
//! `object_store`'s `LocalFileSystem` hands every `get_ranges` call (one per row group: its projected column chunks)
//! to tokio's blocking pool, opens the file again there and zeroes each buffer before reading into it. In the power
//! test at SF 1 on 2 threads that was 2.3% of the CPU time in `memset` alone, plus a thread hand-off per row group;
//! and the reads ran on threads outside the count the user asked for, so "1 thread" used more than one core. Here the
//! query's own worker reads with `pread` into a buffer it does not clear first, as DuckDB's threads do. Everything
//! else (listing, metadata, the rare single-range read) goes to `LocalFileSystem` unchanged.
//!
//! Measured with `tpch_bench power` at SF 1, old and new builds alternating (6 runs each on 2 threads, 4 on 1): with
//! this store the geometric mean was 1.11x faster on 2 threads; with this store and the malloc thresholds of
//! [`DataFusionTarget`](crate::targets::DataFusionTarget), 1.19x on 2 threads and 1.24x on 1 (every query but Q1 and
//! Q10 faster; answers unchanged, validated). On slow network storage a read now holds its worker, as DuckDB's do: the
//! threads a user gives are the reads in flight.

use bytes::Bytes;
use datafusion::object_store::local::LocalFileSystem;
use datafusion::object_store::path::Path;
use datafusion::object_store::{
    CopyOptions, Error as StoreError, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions, Result as StoreResult,
};
use futures::stream::BoxStream;
use std::fs::File;
use std::ops::Range;
use std::os::unix::io::AsRawFd;

/// The local file system, with ranged reads done in the calling thread (see the module documentation).
#[derive(Debug, Default)]
pub struct LocalFiles {
    inner: LocalFileSystem,
}

impl std::fmt::Display for LocalFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LocalFiles (reads in the calling thread)")
    }
}

impl LocalFiles {
    pub fn new() -> LocalFiles {
        LocalFiles::default()
    }
}

/// `range` of `file` read with `pread` into a new buffer that is not zeroed first; an error if the file ends before
/// the range does.
fn read_range(file: &File, path: &std::path::Path, range: &Range<u64>) -> StoreResult<Bytes> {
    let error = |source: std::io::Error| StoreError::Generic {
        store: "LocalFiles",
        source: format!("reading bytes {}..{} of {}: {source}", range.start, range.end, path.display()).into(),
    };
    let length = usize::try_from(range.end.saturating_sub(range.start))
        .map_err(|_| error(std::io::Error::other("the range is larger than memory")))?;
    let mut buffer: Vec<u8> = Vec::with_capacity(length);
    while buffer.len() < length {
        let filled = buffer.len();
        let offset = libc::off_t::try_from(range.start + filled as u64)
            .map_err(|_| error(std::io::Error::other("the offset is past what pread accepts")))?;
        let spare = buffer.spare_capacity_mut();
        // SAFETY: `spare` is the vector's allocated, unused capacity of at least `length - filled` bytes; pread writes
        // at most that many bytes into it and returns how many it wrote, which are then the only ones marked used.
        let read = unsafe { libc::pread(file.as_raw_fd(), spare.as_mut_ptr().cast(), length - filled, offset) };
        match read {
            0 => {
                return Err(error(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!("the file ends after {filled} bytes of the range"),
                )));
            }
            n if n > 0 => {
                // SAFETY: pread initialized the first `n` bytes of the spare capacity (see above).
                unsafe { buffer.set_len(filled + n as usize) };
            }
            _ => {
                let os_error = std::io::Error::last_os_error();
                if os_error.kind() != std::io::ErrorKind::Interrupted {
                    return Err(error(os_error));
                }
            }
        }
    }
    Ok(Bytes::from(buffer))
}

#[async_trait::async_trait]
impl ObjectStore for LocalFiles {
    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> StoreResult<Vec<Bytes>> {
        let path = self.inner.path_to_filesystem(location)?;
        let file = File::open(&path).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => {
                StoreError::NotFound { path: path.display().to_string(), source: source.into() }
            }
            _ => StoreError::Generic {
                store: "LocalFiles",
                source: format!("opening {}: {source}", path.display()).into(),
            },
        })?;
        ranges.iter().map(|range| read_range(&file, &path, range)).collect()
    }

    async fn put_opts(&self, location: &Path, payload: PutPayload, options: PutOptions) -> StoreResult<PutResult> {
        self.inner.put_opts(location, payload, options).await
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        options: PutMultipartOptions,
    ) -> StoreResult<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, options).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> StoreResult<GetResult> {
        self.inner.get_opts(location, options).await
    }

    fn delete_stream(&self, locations: BoxStream<'static, StoreResult<Path>>) -> BoxStream<'static, StoreResult<Path>> {
        self.inner.delete_stream(locations)
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, StoreResult<ObjectMeta>> {
        self.inner.list(prefix)
    }

    fn list_with_offset(&self, prefix: Option<&Path>, offset: &Path) -> BoxStream<'static, StoreResult<ObjectMeta>> {
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> StoreResult<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> StoreResult<()> {
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> StoreResult<()> {
        self.inner.rename_opts(from, to, options).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::object_store::ObjectStoreExt;

    /// A directory of this test's own, removed when dropped.
    struct Scratch(std::path::PathBuf);

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn store_and_file(name: &str, bytes: &[u8]) -> (Scratch, LocalFiles, Path) {
        let dir = std::env::temp_dir().join(format!("envbench-tpch-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("data.bin");
        std::fs::write(&file, bytes).unwrap();
        let location = Path::from_filesystem_path(&file).unwrap();
        (Scratch(dir), LocalFiles::new(), location)
    }

    #[test]
    fn ranges_read_the_bytes_of_a_real_file() {
        let bytes: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let (_dir, store, location) = store_and_file("ranges", &bytes);
        let ranges = [0..10, 100..200_000, 299_990..300_000, 5..5];
        let read = tokio_test_runtime().block_on(store.get_ranges(&location, &ranges)).unwrap();
        for (range, got) in ranges.iter().zip(&read) {
            assert_eq!(got.as_ref(), &bytes[range.start as usize..range.end as usize]);
        }
        // What is not a ranged read goes to LocalFileSystem: the object's size and a single range.
        let runtime = tokio_test_runtime();
        assert_eq!(runtime.block_on(store.head(&location)).unwrap().size, 300_000);
        assert_eq!(runtime.block_on(store.get_range(&location, 7..9)).unwrap().as_ref(), &bytes[7..9]);
    }

    #[test]
    fn a_range_past_the_end_or_a_missing_file_is_an_error_that_names_it() {
        let (dir, store, location) = store_and_file("range-errors", b"0123456789");
        let runtime = tokio_test_runtime();
        let past =
            runtime.block_on(store.get_ranges(&location, std::slice::from_ref(&(5..20)))).unwrap_err().to_string();
        assert!(
            past.contains("bytes 5..20") && past.contains("data.bin") && past.contains("ends after 5 bytes"),
            "{past}"
        );
        let missing = Path::from_absolute_path(dir.0.join("missing.parquet")).unwrap();
        let error = runtime.block_on(store.get_ranges(&missing, std::slice::from_ref(&(0..1)))).unwrap_err();
        assert!(matches!(error, StoreError::NotFound { .. }), "{error}");
        assert!(error.to_string().contains("missing.parquet"), "{error}");
    }

    fn tokio_test_runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().build().unwrap()
    }
}
