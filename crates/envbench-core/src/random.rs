//! Bytes from the kernel's random source, for tokens: the `getrandom` system call, which needs no `/dev` (a chroot
//! or a container may have none), and `/dev/urandom` only on a kernel without it.

/// Fill `bytes` from the kernel's random source.
pub fn fill(bytes: &mut [u8]) -> std::io::Result<()> {
    let mut filled = 0;
    while filled < bytes.len() {
        let rest = &mut bytes[filled..];
        // SAFETY: getrandom writes at most `rest.len()` bytes into `rest`, which we own.
        let got = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if got < 0 {
            let error = std::io::Error::last_os_error();
            match error.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::ENOSYS) => {
                    use std::io::Read;
                    return std::fs::File::open("/dev/urandom")?.read_exact(rest);
                }
                _ => return Err(error),
            }
        }
        filled += got as usize;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_draws_differ() {
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        super::fill(&mut a).unwrap();
        super::fill(&mut b).unwrap();
        assert_ne!(a, b);
    }
}
