//! What the server target tests share.

use envbench_tpch::data::TableName;

/// Half of each table's rows (about), so a query that read a decoy would answer differently.
pub fn decoy_rows(table: TableName) -> &'static str {
    match table {
        TableName::Region => "r_regionkey <> 0",
        TableName::Nation => "n_nationkey % 2 = 0",
        TableName::Supplier => "s_suppkey % 2 = 0",
        TableName::Customer => "c_custkey % 2 = 0",
        TableName::Part => "p_partkey % 2 = 0",
        TableName::PartSupp => "ps_partkey % 2 = 0",
        TableName::Orders => "o_orderkey % 3 <> 0",
        TableName::LineItem => "l_linenumber <> 1",
    }
}
