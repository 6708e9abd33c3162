//! Which envbench binary is running: its [`BinaryIdentity`] (size and the digest of its ends, taken at every run)
//! and its full SHA-256 (taken when runs are uploaded, to state the binary that ran them).

use envbench_core::provenance::BinaryIdentity;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// How much of each end of the binary its identity digests.
const END_BYTES: u64 = 1 << 20;

/// The identity of the binary at `path`.
pub fn binary_identity(path: &Path) -> std::io::Result<BinaryIdentity> {
    let mut file = File::open(path)?;
    let size_bytes = file.metadata()?.len();
    let mut hasher = Sha256::new();
    hasher.update(size_bytes.to_le_bytes());
    let mut buffer = vec![0u8; usize::try_from(END_BYTES.min(size_bytes)).unwrap_or(0)];
    file.read_exact(&mut buffer)?;
    hasher.update(&buffer);
    file.seek(SeekFrom::Start(size_bytes - buffer.len() as u64))?;
    file.read_exact(&mut buffer)?;
    hasher.update(&buffer);
    Ok(BinaryIdentity { size_bytes, ends_sha256: hex::encode(hasher.finalize()) })
}

/// The SHA-256 of the whole file at `path`, as `sha256sum` prints it.
pub fn file_sha256(path: &Path) -> std::io::Result<String> {
    let mut file = File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// The running binary (`/proc/self/exe`, which still reads when the file was replaced since it started).
pub fn current_binary() -> &'static Path {
    Path::new("/proc/self/exe")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binary_is_known_by_its_size_and_ends_and_hashed_whole_as_sha256sum_does() {
        let dir = std::env::temp_dir().join(format!("envbench-binary-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("file");
        std::fs::write(&path, b"abc").unwrap();
        assert_eq!(file_sha256(&path).unwrap(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        let small = binary_identity(&path).unwrap();
        assert_eq!(small.size_bytes, 3);
        // A change in the middle of a large binary escapes the identity, one at either end does not.
        let mut big = vec![7u8; 3 << 20];
        std::fs::write(&path, &big).unwrap();
        let before = binary_identity(&path).unwrap();
        big[(3 << 20) - 1] = 8;
        std::fs::write(&path, &big).unwrap();
        assert_ne!(binary_identity(&path).unwrap(), before);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
