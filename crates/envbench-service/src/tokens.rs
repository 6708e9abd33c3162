//! Submitters' upload tokens: made on the server, shown once, kept only as their SHA-256.

use envbench_core::model::sha256_hex;

/// What every token begins with, so one pasted in the wrong place is recognised.
pub const TOKEN_PREFIX: &str = "envb_";

/// A new token: the prefix and 32 bytes from the kernel's random source, in hex.
pub fn new_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    envbench_core::random::fill(&mut bytes)?;
    Ok(format!("{TOKEN_PREFIX}{}", bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()))
}

/// The most characters a submitter's name has.
pub const SUBMITTER_MAX_CHARS: usize = 64;

/// True for a name a submitter can have: it is part of the addresses of their runs (`https://host/alice/label:nvme`),
/// so ASCII letters, digits, `.`, `_` and `-` only, beginning with a letter or digit.
pub fn is_submitter_name(name: &str) -> bool {
    name.len() <= SUBMITTER_MAX_CHARS
        && name.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Why a submitter's name cannot be given, or nothing.
pub fn check_submitter_name(name: &str) -> Result<(), String> {
    if is_submitter_name(name) {
        return Ok(());
    }
    Err(format!(
        "'{}' cannot name a submitter: the name is part of the addresses of their runs (https://host/NAME/label:x), \
         so use ASCII letters, digits, '.', '_' and '-', beginning with a letter or digit, at most \
         {SUBMITTER_MAX_CHARS} characters",
        envbench_core::text::truncate(&envbench_core::text::printable(name), 80)
    ))
}

/// What the store keeps of a token.
pub fn token_sha256(token: &str) -> String {
    sha256_hex(token.as_bytes())
}

/// A token as read from a file: its first line, trimmed; or why it is not one.
pub fn read_token(text: &str) -> Result<String, String> {
    let token = text.lines().next().unwrap_or("").trim();
    if !token.starts_with(TOKEN_PREFIX) || token.len() != TOKEN_PREFIX.len() + 64 {
        return Err(format!(
            "the file does not hold an envbench upload token ({TOKEN_PREFIX} and 64 hex digits, as `envbench results \
             token create` prints it)"
        ));
    }
    Ok(token.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_recognisable_and_kept_as_digests() {
        let (a, b) = (new_token().unwrap(), new_token().unwrap());
        assert_ne!(a, b);
        assert_eq!(read_token(&format!("{a}\n")).unwrap(), a);
        assert!(read_token("hunter2").is_err());
        assert_eq!(token_sha256(&a).len(), 64);
        assert!(!token_sha256(&a).contains(&a[5..]));
    }
}
