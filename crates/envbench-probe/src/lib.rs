//! placeholder crate doc, replaced below
