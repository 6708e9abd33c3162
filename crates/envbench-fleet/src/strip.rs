//! The envbench a fleet copies to its hosts, without its debug information.
//!
//! A build with line tables carries hundreds of megabytes of `.debug_*` sections that only a debugger or a backtrace
//! on this host reads; `--copy-binary` sends every host the program alone. This is `strip --strip-debug` for the one
//! kind of file it meets (a 64-bit little-endian ELF executable: envbench itself), written here so the coordinator
//! needs no binutils. The sections keep their indices: a debug section's header becomes an inactive `SHT_NULL` entry,
//! so the symbol table, which names sections by index, stays right. The loaded part of the file is copied byte for
//! byte; the sections after it that are kept (symbols, strings, notes) are moved down, and the section headers follow.

use std::fmt;

const SHT_NULL: u32 = 0;
const SHT_NOBITS: u32 = 8;
const SHF_ALLOC: u64 = 0x2;
const SHN_XINDEX: u16 = 0xffff;
const HEADER_BYTES: usize = 64;
const SECTION_HEADER_BYTES: usize = 64;
const PROGRAM_HEADER_BYTES: usize = 56;

/// Why a program's image could not be read as an ELF executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StripError(String);

impl fmt::Display for StripError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StripError {}

fn malformed(what: &str) -> StripError {
    StripError(format!("not a 64-bit little-endian ELF executable envbench can strip: {what}"))
}

/// A program image with its debug sections taken out.
#[derive(Debug)]
pub struct Stripped {
    /// The image to send.
    pub image: Vec<u8>,
    /// Bytes of debug information left out.
    pub debug_bytes: u64,
}

/// One section header, with where it sits in the file's table.
#[derive(Debug, Clone, Copy)]
struct Section {
    name: u32,
    kind: u32,
    flags: u64,
    offset: u64,
    size: u64,
    align: u64,
}

impl Section {
    fn has_file_data(&self) -> bool {
        self.kind != SHT_NULL && self.kind != SHT_NOBITS && self.size > 0
    }

    fn end(&self) -> u64 {
        self.offset.saturating_add(self.size)
    }
}

fn read_u16(bytes: &[u8], at: usize) -> Result<u16, StripError> {
    bytes.get(at..at + 2).map(|b| u16::from_le_bytes([b[0], b[1]])).ok_or_else(|| malformed("truncated header"))
}

fn read_u32(bytes: &[u8], at: usize) -> Result<u32, StripError> {
    bytes
        .get(at..at + 4)
        .map(|b| u32::from_le_bytes(b.try_into().expect("four bytes")))
        .ok_or_else(|| malformed("truncated header"))
}

fn read_u64(bytes: &[u8], at: usize) -> Result<u64, StripError> {
    bytes
        .get(at..at + 8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("eight bytes")))
        .ok_or_else(|| malformed("truncated header"))
}

fn as_index(value: u64, what: &str) -> Result<usize, StripError> {
    usize::try_from(value).map_err(|_| malformed(what))
}

/// A parsed executable: its section headers and where its tables are.
struct Elf<'a> {
    image: &'a [u8],
    program_headers: usize,
    program_count: usize,
    section_headers: usize,
    sections: Vec<Section>,
    names: Section,
}

impl<'a> Elf<'a> {
    fn parse(image: &'a [u8]) -> Result<Option<Self>, StripError> {
        if image.len() < HEADER_BYTES || &image[..4] != b"\x7fELF" {
            return Err(malformed("no ELF header"));
        }
        if image[4] != 2 || image[5] != 1 {
            return Err(malformed("not 64-bit little-endian"));
        }
        let program_headers = as_index(read_u64(image, 0x20)?, "program header offset")?;
        let section_headers = as_index(read_u64(image, 0x28)?, "section header offset")?;
        let program_count = usize::from(read_u16(image, 0x38)?);
        let mut section_count = usize::from(read_u16(image, 0x3c)?);
        let mut names_index = usize::from(read_u16(image, 0x3e)?);
        if section_headers == 0 {
            return Ok(None);
        }
        if usize::from(read_u16(image, 0x3a)?) != SECTION_HEADER_BYTES
            || (program_count > 0 && usize::from(read_u16(image, 0x36)?) != PROGRAM_HEADER_BYTES)
        {
            return Err(malformed("unexpected header sizes"));
        }
        // More than 0xff00 sections, or a name table past that index: the real values are in section 0 (ELF's
        // escapes).
        if section_count == 0 {
            section_count = as_index(read_u64(image, section_headers + 32)?, "section count")?;
        }
        if names_index == usize::from(SHN_XINDEX) {
            names_index = as_index(u64::from(read_u32(image, section_headers + 40)?), "name table index")?;
        }
        section_count
            .checked_mul(SECTION_HEADER_BYTES)
            .and_then(|bytes| bytes.checked_add(section_headers))
            .filter(|&end| end <= image.len())
            .ok_or_else(|| malformed("section headers past the end of the file"))?;
        let mut sections = Vec::with_capacity(section_count);
        for index in 0..section_count {
            let at = section_headers + index * SECTION_HEADER_BYTES;
            let section = Section {
                name: read_u32(image, at)?,
                kind: read_u32(image, at + 4)?,
                flags: read_u64(image, at + 8)?,
                offset: read_u64(image, at + 24)?,
                size: read_u64(image, at + 32)?,
                align: read_u64(image, at + 48)?,
            };
            if section.has_file_data() && section.end() > image.len() as u64 {
                return Err(malformed("a section runs past the end of the file"));
            }
            sections.push(section);
        }
        let names = *sections.get(names_index).ok_or_else(|| malformed("no section-name table"))?;
        Ok(Some(Elf { image, program_headers, program_count, section_headers, sections, names }))
    }

    /// A section's name from the section-name string table.
    fn name(&self, section: &Section) -> &'a [u8] {
        let start = self.names.offset.saturating_add(u64::from(section.name));
        let Some(rest) = usize::try_from(start).ok().and_then(|start| self.image.get(start..)) else { return b"" };
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        &rest[..end]
    }

    /// Whether a section is debug information: not loaded, with data, named `.debug_*` (or `.zdebug_*`).
    fn is_debug(&self, section: &Section) -> bool {
        let name = self.name(section);
        section.flags & SHF_ALLOC == 0
            && section.has_file_data()
            && (name.starts_with(b".debug_") || name.starts_with(b".zdebug_"))
    }

    /// The end of what the loader maps: every segment and every allocated section, the headers included.
    fn loaded_end(&self) -> Result<u64, StripError> {
        let mut end =
            (HEADER_BYTES as u64).max((self.program_headers + self.program_count * PROGRAM_HEADER_BYTES) as u64);
        for index in 0..self.program_count {
            let at = self.program_headers + index * PROGRAM_HEADER_BYTES;
            let offset = read_u64(self.image, at + 8)?;
            let file_size = read_u64(self.image, at + 32)?;
            end = end.max(offset.saturating_add(file_size));
        }
        for section in self.sections.iter().filter(|s| s.flags & SHF_ALLOC != 0 && s.has_file_data()) {
            end = end.max(section.end());
        }
        if end > self.image.len() as u64 {
            return Err(malformed("a segment runs past the end of the file"));
        }
        Ok(end)
    }
}

/// The names of `image`'s sections that hold debug information.
pub fn debug_section_names(image: &[u8]) -> Result<Vec<String>, StripError> {
    let Some(elf) = Elf::parse(image)? else { return Ok(Vec::new()) };
    Ok(elf
        .sections
        .iter()
        .filter(|section| elf.is_debug(section))
        .map(|section| String::from_utf8_lossy(elf.name(section)).into_owned())
        .collect())
}

/// `image` without its debug sections, or `None` when it has none (it is sent as it is).
pub fn strip_debug(image: &[u8]) -> Result<Option<Stripped>, StripError> {
    let Some(elf) = Elf::parse(image)? else { return Ok(None) };
    let sections = &elf.sections;
    let debug: Vec<bool> = sections.iter().map(|section| elf.is_debug(section)).collect();
    if !debug.contains(&true) {
        return Ok(None);
    }
    // What the loader maps is copied unchanged.
    let loaded_end = elf.loaded_end()?;
    let mut out = image[..as_index(loaded_end, "loaded size")?].to_vec();

    // The kept sections after it, in file order, each at its alignment.
    let mut order: Vec<usize> = (0..sections.len())
        .filter(|&i| !debug[i] && sections[i].has_file_data() && sections[i].offset >= loaded_end)
        .collect();
    order.sort_by_key(|&i| sections[i].offset);
    let mut new_offsets: Vec<Option<u64>> = vec![None; sections.len()];
    for index in order {
        let section = sections[index];
        let align = section.align.max(1);
        let padding = (align - out.len() as u64 % align) % align;
        out.resize(out.len() + as_index(padding, "alignment")?, 0);
        new_offsets[index] = Some(out.len() as u64);
        let start = as_index(section.offset, "section offset")?;
        out.extend_from_slice(&image[start..as_index(section.end(), "section end")?]);
    }

    // The section headers last: debug entries made inactive, moved sections at their new offsets.
    out.resize(out.len().next_multiple_of(8), 0);
    let new_table = out.len() as u64;
    let mut debug_bytes = 0u64;
    for (index, section) in sections.iter().enumerate() {
        let at = elf.section_headers + index * SECTION_HEADER_BYTES;
        let mut header = image[at..at + SECTION_HEADER_BYTES].to_vec();
        if debug[index] {
            debug_bytes += section.size;
            // An inactive entry: type SHT_NULL, no name, no data.
            header.fill(0);
        } else if let Some(offset) = new_offsets[index] {
            header[24..32].copy_from_slice(&offset.to_le_bytes());
        }
        out.extend_from_slice(&header);
    }
    out[0x28..0x30].copy_from_slice(&new_table.to_le_bytes());
    Ok(Some(Stripped { image: out, debug_bytes }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::process::Command;

    /// This test program, built with line tables (the dev profile), stripped, still runs and lists the same tests.
    #[test]
    fn a_stripped_program_runs_without_its_debug_sections() {
        let exe = std::env::current_exe().unwrap();
        let image = std::fs::read(&exe).unwrap();
        let before = debug_section_names(&image).unwrap();
        assert!(before.iter().any(|name| name == ".debug_line"), "a dev build has line tables: {before:?}");
        let stripped = strip_debug(&image).unwrap().expect("there is debug information to strip");
        assert!(stripped.image.len() < image.len());
        assert!(stripped.debug_bytes > 0);
        assert_eq!(debug_section_names(&stripped.image).unwrap(), Vec::<String>::new());
        assert!(strip_debug(&stripped.image).unwrap().is_none(), "nothing is left to strip");

        let dir = std::env::temp_dir().join(format!("envbench-strip-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let copy = dir.join("stripped");
        std::fs::write(&copy, &stripped.image).unwrap();
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o700)).unwrap();
        let list = |program: &std::path::Path| {
            let output = Command::new(program).args(["--list", "strip::"]).output().unwrap();
            assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
            String::from_utf8(output.stdout).unwrap()
        };
        let (original, copied) = (list(&exe), list(&copy));
        // binutils, where present, reads the result as a well-formed ELF file with no debug sections.
        if let Ok(output) = Command::new("readelf").args(["-S", "-W"]).arg(&copy).output() {
            let sections = String::from_utf8_lossy(&output.stdout);
            assert!(output.status.success() && output.stderr.is_empty(), "{}", String::from_utf8_lossy(&output.stderr));
            // (.debug_gdb_scripts is loaded with the program: it stays.)
            assert!(sections.contains(".symtab"), "{sections}");
            assert!(!sections.contains(".debug_info") && !sections.contains(".debug_line"), "{sections}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(original.contains("a_stripped_program_runs_without_its_debug_sections"), "{original}");
        assert_eq!(original, copied);
    }

    #[test]
    fn what_is_not_an_elf_executable_is_refused_with_why() {
        assert_eq!(strip_debug(b"#!/bin/sh\n").unwrap_err().to_string(), malformed("no ELF header").to_string());
        let image = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let mut bad = image[..4096].to_vec();
        assert!(strip_debug(&bad).unwrap_err().to_string().contains("past the end of the file"));
        bad[4] = 1;
        assert!(strip_debug(&bad).unwrap_err().to_string().contains("not 64-bit little-endian"));
    }
}
