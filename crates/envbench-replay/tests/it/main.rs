//! envbench-replay's integration tests: captures written by real servers (a private PostgreSQL cluster with every
//! log destination on, the shared MariaDB's general and slow logs), read back and summarised.

mod common;
mod mariadb_capture;
mod postgres_capture;
mod postgres_replay;
