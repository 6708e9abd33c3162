//! `/proc/self/mountinfo` parsing (proc(5)).

/// One line of mountinfo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MountEntry {
    pub major: u32,
    pub minor: u32,
    /// The directory of the file system that is mounted (field 4): `/` for a whole file system, a subdirectory for
    /// a bind mount or a cgroup namespace's view.
    pub root: String,
    pub mount_point: String,
    pub mount_options: String,
    pub filesystem: String,
    pub source: String,
    pub super_options: String,
}

/// Parse mountinfo text, skipping malformed lines. Octal escapes (`\040` for space) are decoded.
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<MountEntry> {
    let (before, after) = line.split_once(" - ")?;
    let fields: Vec<&str> = before.split(' ').collect();
    if fields.len() < 6 {
        return None;
    }
    let (major, minor) = fields[2].split_once(':')?;
    let mut tail = after.split(' ');
    Some(MountEntry {
        major: major.parse().ok()?,
        minor: minor.parse().ok()?,
        root: unescape(fields[3]),
        mount_point: unescape(fields[4]),
        mount_options: fields[5].to_string(),
        filesystem: tail.next()?.to_string(),
        source: unescape(tail.next()?),
        super_options: tail.next().unwrap_or("").to_string(),
    })
}

fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() && bytes[i + 1..i + 4].iter().all(|b| (b'0'..=b'7').contains(b)) {
            let value = (bytes[i + 1] - b'0') * 64 + (bytes[i + 2] - b'0') * 8 + (bytes[i + 3] - b'0');
            out.push(value);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// True when `mount_point` is `path` or one of its ancestors, by whole path components.
pub(crate) fn covers(mount_point: &str, path: &str) -> bool {
    mount_point == "/"
        || path == mount_point
        || (path.starts_with(mount_point) && path.as_bytes().get(mount_point.len()) == Some(&b'/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_optional_fields_and_escapes() {
        let text = "36 35 98:0 /mnt1 /mnt/my\\040disk rw,noatime master:1 shared:2 - ext3 /dev/root rw,errors=continue\n\
                    garbage line\n";
        let entries = parse_mountinfo(text);
        assert_eq!(entries.len(), 1);
        let entry = &entries[0];
        assert_eq!((entry.major, entry.minor), (98, 0));
        assert_eq!(entry.root, "/mnt1");
        assert_eq!(entry.mount_point, "/mnt/my disk");
        assert_eq!(entry.mount_options, "rw,noatime");
        assert_eq!(entry.filesystem, "ext3");
        assert_eq!(entry.source, "/dev/root");
        assert_eq!(entry.super_options, "rw,errors=continue");
    }

    #[test]
    fn covers_by_whole_components() {
        assert!(covers("/", "/anything"));
        assert!(covers("/data", "/data"));
        assert!(covers("/data", "/data/pg"));
        assert!(!covers("/data", "/database"));
    }
}
