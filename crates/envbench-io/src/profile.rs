//! The storage profiles of the specification (section 3) and the order their tests run in.
//!
//! Order: CrystalDiskMark's. Its "All" run does every test's read first, top to bottom, then every test's write
//! (`ExecDiskBenchAll` in CrystalDiskMark's DiskBench.cpp), so reads see the freshly filled file before any write
//! test rewrites it. We do the same; the `db` profile's single tests (the 70/30 mix and the log writes) run after
//! that, in table order, as CrystalDiskMark runs its mix tests last.

use crate::spec::{Operation, Pattern, SpecError, TestSpec, WriteSync};
use serde::{Deserialize, Serialize};

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

/// A named set of tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// CrystalDiskMark 8/9 default set (the default profile).
    #[default]
    Cdm,
    /// CrystalDiskMark's NVMe SSD set.
    CdmNvme,
    /// CrystalDiskMark 5, the version in the source material.
    Cdm5,
    /// Anvil's Storage Utilities, IOPS-focused.
    Anvil,
    /// Database-shaped: page reads, a 70/30 mix, full scans, commit (log) writes.
    Db,
}

impl Profile {
    /// Every profile, in the order they are listed to users.
    pub const ALL: [Profile; 5] = [Profile::Cdm, Profile::CdmNvme, Profile::Cdm5, Profile::Anvil, Profile::Db];

    /// The name users type.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Cdm => "cdm",
            Profile::CdmNvme => "cdm-nvme",
            Profile::Cdm5 => "cdm5",
            Profile::Anvil => "anvil",
            Profile::Db => "db",
        }
    }

    /// One line about the profile, for `--help`-style listings.
    pub fn description(self) -> &'static str {
        match self {
            Profile::Cdm => "CrystalDiskMark 8/9 default: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1",
            Profile::CdmNvme => "CrystalDiskMark NVMe: SEQ1M Q8T1, SEQ128K Q32T1, RND4K Q32T16, RND4K Q1T1",
            Profile::Cdm5 => "CrystalDiskMark 5: Seq Q32T1 (128K), 4K Q32T1, Seq (1M Q1T1), 4K (Q1T1)",
            Profile::Anvil => "Anvil (IOPS): Seq (4M Q1T1), 4K Q1, 4K Q4, 4K Q16",
            Profile::Db => {
                "database: 8K random reads Q1 and Q32, 8K 70/30 mix Q16, 128K scans Q8, 16K log writes with fdatasync, \
                 then the commit profile's tests"
            }
        }
    }

    /// The profile called `name` (case does not matter); the error lists the valid names.
    pub fn parse(name: &str) -> Result<Profile, SpecError> {
        let wanted = name.trim().to_ascii_lowercase();
        Profile::ALL.into_iter().find(|profile| profile.name() == wanted).ok_or_else(|| SpecError::UnknownProfile {
            found: name.to_string(),
            valid: Profile::ALL.map(Profile::name).join(", "),
            hint: envbench_core::text::did_you_mean(&envbench_core::text::suggestions(
                name,
                Profile::ALL.map(Profile::name),
            )),
        })
    }

    /// The tests, in run order: every read, then every write, then the single tests.
    pub fn tests(self) -> Vec<TestSpec> {
        let seq = |block_bytes, queue_depth, threads| {
            TestSpec::new(Pattern::Sequential, block_bytes, queue_depth, threads, Operation::Read)
        };
        let rnd = |block_bytes, queue_depth, threads| {
            TestSpec::new(Pattern::Random, block_bytes, queue_depth, threads, Operation::Read)
        };
        let (paired, single): (Vec<TestSpec>, Vec<TestSpec>) = match self {
            Profile::Cdm => (vec![seq(MIB, 8, 1), seq(MIB, 1, 1), rnd(4 * KIB, 32, 1), rnd(4 * KIB, 1, 1)], vec![]),
            Profile::CdmNvme => {
                (vec![seq(MIB, 8, 1), seq(128 * KIB, 32, 1), rnd(4 * KIB, 32, 16), rnd(4 * KIB, 1, 1)], vec![])
            }
            Profile::Cdm5 => (
                vec![
                    seq(128 * KIB, 32, 1).labelled("Seq Q32T1"),
                    rnd(4 * KIB, 32, 1).labelled("4K Q32T1"),
                    seq(MIB, 1, 1).labelled("Seq"),
                    rnd(4 * KIB, 1, 1).labelled("4K"),
                ],
                vec![],
            ),
            Profile::Anvil => (
                vec![
                    seq(4 * MIB, 1, 1).labelled("Seq"),
                    rnd(4 * KIB, 1, 1).labelled("4K Q1"),
                    rnd(4 * KIB, 4, 1).labelled("4K Q4"),
                    rnd(4 * KIB, 16, 1).labelled("4K Q16"),
                ],
                vec![],
            ),
            Profile::Db => (
                vec![rnd(8 * KIB, 1, 1), rnd(8 * KIB, 32, 1), seq(128 * KIB, 8, 1)],
                vec![
                    rnd(8 * KIB, 16, 1).with_operation(Operation::Mixed { read_percent: 70 }),
                    seq(16 * KIB, 1, 1)
                        .with_operation(Operation::Write)
                        .with_sync(WriteSync::Fsync { every: 1 })
                        .labelled("LOG16K Q1T1"),
                ],
            ),
        };
        let writes = paired.iter().map(|test| test.clone().with_operation(Operation::Write));
        paired.iter().cloned().chain(writes).chain(single).collect()
    }
}

impl std::str::FromStr for Profile {
    type Err = SpecError;
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Profile::parse(name)
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(profile: Profile) -> Vec<String> {
        profile.tests().iter().map(TestSpec::id).collect()
    }

    #[test]
    fn cdm_is_crystaldiskmark_default_reads_then_writes() {
        assert_eq!(
            ids(Profile::Cdm),
            [
                "SEQ1M Q8T1 read",
                "SEQ1M Q1T1 read",
                "RND4K Q32T1 read",
                "RND4K Q1T1 read",
                "SEQ1M Q8T1 write",
                "SEQ1M Q1T1 write",
                "RND4K Q32T1 write",
                "RND4K Q1T1 write",
            ]
        );
    }

    #[test]
    fn cdm_nvme_tests() {
        assert_eq!(
            ids(Profile::CdmNvme),
            [
                "SEQ1M Q8T1 read",
                "SEQ128K Q32T1 read",
                "RND4K Q32T16 read",
                "RND4K Q1T1 read",
                "SEQ1M Q8T1 write",
                "SEQ128K Q32T1 write",
                "RND4K Q32T16 write",
                "RND4K Q1T1 write",
            ]
        );
    }

    #[test]
    fn cdm5_tests_carry_their_names() {
        let tests = Profile::Cdm5.tests();
        let names: Vec<String> = tests.iter().map(TestSpec::display_name).collect();
        assert_eq!(
            names,
            [
                "Seq Q32T1 read",
                "4K Q32T1 read",
                "Seq read",
                "4K read",
                "Seq Q32T1 write",
                "4K Q32T1 write",
                "Seq write",
                "4K write",
            ]
        );
        assert_eq!(
            ids(Profile::Cdm5)[..4],
            ["SEQ128K Q32T1 read", "RND4K Q32T1 read", "SEQ1M Q1T1 read", "RND4K Q1T1 read"]
        );
    }

    #[test]
    fn anvil_tests() {
        assert_eq!(
            ids(Profile::Anvil),
            [
                "SEQ4M Q1T1 read",
                "RND4K Q1T1 read",
                "RND4K Q4T1 read",
                "RND4K Q16T1 read",
                "SEQ4M Q1T1 write",
                "RND4K Q1T1 write",
                "RND4K Q4T1 write",
                "RND4K Q16T1 write",
            ]
        );
    }

    #[test]
    fn db_mix_and_log_are_single_tests() {
        assert_eq!(
            ids(Profile::Db),
            [
                "RND8K Q1T1 read",
                "RND8K Q32T1 read",
                "SEQ128K Q8T1 read",
                "RND8K Q1T1 write",
                "RND8K Q32T1 write",
                "SEQ128K Q8T1 write",
                "RND8K Q16T1 mix70",
                "SEQ16K Q1T1 write fsync1",
            ]
        );
        let log = Profile::Db.tests().pop().unwrap();
        assert_eq!(log.display_name(), "LOG16K Q1T1 write");
        assert_eq!(log.pattern, Pattern::Sequential);
    }

    #[test]
    fn every_profile_test_is_valid() {
        for profile in Profile::ALL {
            for test in profile.tests() {
                test.validate().unwrap_or_else(|error| panic!("{profile}: {error}"));
            }
        }
    }

    #[test]
    fn profile_names_parse_and_unknown_ones_list_the_valid() {
        for profile in Profile::ALL {
            assert_eq!(Profile::parse(profile.name()).unwrap(), profile);
        }
        assert_eq!(Profile::parse("CDM-NVMe").unwrap(), Profile::CdmNvme);
        let error = Profile::parse("atto").unwrap_err();
        assert_eq!(error.to_string(), "unknown profile 'atto'; valid profiles: cdm, cdm-nvme, cdm5, anvil, db");
        let error = Profile::parse("cmd").unwrap_err().to_string();
        assert!(error.contains("; did you mean cdm"), "{error}");
    }
}
