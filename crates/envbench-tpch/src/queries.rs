//! The 22 TPC-H queries with their substitution parameters filled in.
//!
//! The text is portable SQL that DataFusion, PostgreSQL and MySQL/MariaDB all accept, so one rendering serves every
//! target: date arithmetic is done here and given to the database as literals (no `interval` syntax, which differs
//! between dialects), Q13's derived table names its columns inside the subquery, and Q15's view is a common table
//! expression. A target whose dialect needs a different text writes it in [`crate::targets::Target::query_sql`]. The table names
//! are given by the caller ([`TableNames`]): bare for DataFusion, which registers the tables by name, and qualified
//! with the schema a server target's tables are in, so no query reaches a table of the same name elsewhere on the
//! search path.
//!
//! Every text returns the specification's answer (SF 1 is checked against the reference answers), but some are
//! written the way a cost-based optimizer would rewrite them, so that an engine which plans a query as it is written
//! (DataFusion joins tables in the FROM list's order and evaluates a conjunction left to right) does the same work as
//! one which reorders it, and engines are compared on execution rather than on planning:
//! - FROM lists start at the most selective filtered table and add each table joined by a key to those before it
//!   (Q2, Q5, Q7, Q10, Q21); Q12 tests its one-year date range before the other predicates.
//! - Q2's correlated minimum and Q15's view are evaluated once, as windows over the rows the outer query keeps, instead
//!   of a second scan of partsupp (aggregated over every part) and of lineitem. For a part that passes Q2's filters,
//!   the subquery's offers (its suppliers in the region) are exactly the outer query's rows of that part, so their
//!   minimum is the subquery's.
//! - Q17 and Q20's correlated subqueries are the joins to an aggregate that decorrelation produces, with the
//!   aggregate restricted to the parts the outer query can match (a "magic set"), as DuckDB plans them.
//! - Q18's `IN` subquery is a join to the (unique) large orders, so it filters orders before they meet lineitem.
//!
//! PostgreSQL and MySQL/MariaDB reorder these joins themselves, so the same texts serve them.

/// How many queries TPC-H has: a query set is Q1 to Q22.
pub const QUERY_COUNT: u8 = 22;

use crate::data::TableName;
use crate::params::QueryParameters;

/// How the queries name the eight tables, as SQL: `lineitem`, or `"tpch"."lineitem"` for a server's schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableNames {
    pub region: String,
    pub nation: String,
    pub supplier: String,
    pub customer: String,
    pub part: String,
    pub partsupp: String,
    pub orders: String,
    pub lineitem: String,
}

impl TableNames {
    /// Each table named by `name`.
    pub fn new(name: impl Fn(TableName) -> String) -> TableNames {
        TableNames {
            region: name(TableName::Region),
            nation: name(TableName::Nation),
            supplier: name(TableName::Supplier),
            customer: name(TableName::Customer),
            part: name(TableName::Part),
            partsupp: name(TableName::PartSupp),
            orders: name(TableName::Orders),
            lineitem: name(TableName::LineItem),
        }
    }

    /// The tables by their bare names, as DataFusion registers them.
    pub fn bare() -> TableNames {
        TableNames::new(|table| table.as_str().to_string())
    }

    /// The name of one table.
    pub fn get(&self, table: TableName) -> &str {
        match table {
            TableName::Region => &self.region,
            TableName::Nation => &self.nation,
            TableName::Supplier => &self.supplier,
            TableName::Customer => &self.customer,
            TableName::Part => &self.part,
            TableName::PartSupp => &self.partsupp,
            TableName::Orders => &self.orders,
            TableName::LineItem => &self.lineitem,
        }
    }
}

/// A quoted SQL string literal.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// A decimal literal without exponent (Q11's fraction can be 0.0000001).
fn decimal(value: f64) -> String {
    let text = format!("{value:.12}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn list(values: &[i64], quote: bool) -> String {
    values.iter().map(|v| if quote { format!("'{v}'") } else { v.to_string() }).collect::<Vec<_>>().join(", ")
}

/// The SQL text of a query with its parameters, naming the tables by their bare names.
pub fn render(parameters: &QueryParameters) -> String {
    render_with(parameters, &TableNames::bare())
}

/// The SQL text of a query with its parameters, naming the tables as `tables` says.
pub fn render_with(parameters: &QueryParameters, tables: &TableNames) -> String {
    use QueryParameters as P;
    let TableNames { region, nation, supplier, customer, part, partsupp, orders, lineitem } = tables;
    match parameters {
        P::Q1 { delta_days } => {
            let date = crate::params::Date::new(1998, 12, 1).plus_days(-delta_days).sql();
            format!(
                "select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty, sum(l_extendedprice) as sum_base_price,
    sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
    sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,
    avg(l_quantity) as avg_qty, avg(l_extendedprice) as avg_price, avg(l_discount) as avg_disc, count(*) as count_order
from {lineitem}
where l_shipdate <= {date}
group by l_returnflag, l_linestatus
order by l_returnflag, l_linestatus"
            )
        }
        P::Q2 { size, type_suffix, region: region_name } => {
            let type_pattern = quoted(&format!("%{type_suffix}"));
            let region_name = quoted(region_name);
            format!(
                "select s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment
from (
    select s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment, ps_supplycost,
        min(ps_supplycost) over (partition by p_partkey) as min_supplycost
    from {part}, {partsupp}, {supplier}, {nation}, {region}
    where p_partkey = ps_partkey and s_suppkey = ps_suppkey and p_size = {size} and p_type like {type_pattern}
        and s_nationkey = n_nationkey and n_regionkey = r_regionkey and r_name = {region_name}
) as offers
where ps_supplycost = min_supplycost
order by s_acctbal desc, n_name, s_name, p_partkey
limit 100"
            )
        }
        P::Q3 { segment, date } => {
            let (segment, date) = (quoted(segment), date.sql());
            format!(
                "select l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue, o_orderdate, o_shippriority
from {customer}, {orders}, {lineitem}
where c_mktsegment = {segment} and c_custkey = o_custkey and l_orderkey = o_orderkey
    and o_orderdate < {date} and l_shipdate > {date}
group by l_orderkey, o_orderdate, o_shippriority
order by revenue desc, o_orderdate
limit 10"
            )
        }
        P::Q4 { date } => {
            let (from, to) = (date.sql(), date.plus_months(3).sql());
            format!(
                "select o_orderpriority, count(*) as order_count
from {orders}
where o_orderdate >= {from} and o_orderdate < {to}
    and exists (select * from {lineitem} where l_orderkey = o_orderkey and l_commitdate < l_receiptdate)
group by o_orderpriority
order by o_orderpriority"
            )
        }
        P::Q5 { region: region_name, date } => {
            let (region_name, from, to) = (quoted(region_name), date.sql(), date.plus_months(12).sql());
            format!(
                "select n_name, sum(l_extendedprice * (1 - l_discount)) as revenue
from {region}, {nation}, {supplier}, {lineitem}, {orders}, {customer}
where c_custkey = o_custkey and l_orderkey = o_orderkey and l_suppkey = s_suppkey and c_nationkey = s_nationkey
    and s_nationkey = n_nationkey and n_regionkey = r_regionkey and r_name = {region_name}
    and o_orderdate >= {from} and o_orderdate < {to}
group by n_name
order by revenue desc"
            )
        }
        P::Q6 { date, discount_percent, quantity } => {
            let (from, to) = (date.sql(), date.plus_months(12).sql());
            let (low, high) =
                (decimal((discount_percent - 1) as f64 / 100.0), decimal((discount_percent + 1) as f64 / 100.0));
            format!(
                "select sum(l_extendedprice * l_discount) as revenue
from {lineitem}
where l_shipdate >= {from} and l_shipdate < {to} and l_discount between {low} and {high} and l_quantity < {quantity}"
            )
        }
        P::Q7 { nation1, nation2 } => {
            let (n1, n2) = (quoted(nation1), quoted(nation2));
            format!(
                "select supp_nation, cust_nation, l_year, sum(volume) as revenue
from (
    select n1.n_name as supp_nation, n2.n_name as cust_nation, extract(year from l_shipdate) as l_year,
        l_extendedprice * (1 - l_discount) as volume
    from {nation} n1, {supplier}, {lineitem}, {orders}, {customer}, {nation} n2
    where s_suppkey = l_suppkey and o_orderkey = l_orderkey and c_custkey = o_custkey
        and s_nationkey = n1.n_nationkey and c_nationkey = n2.n_nationkey
        and ((n1.n_name = {n1} and n2.n_name = {n2}) or (n1.n_name = {n2} and n2.n_name = {n1}))
        and l_shipdate between date '1995-01-01' and date '1996-12-31'
) as shipping
group by supp_nation, cust_nation, l_year
order by supp_nation, cust_nation, l_year"
            )
        }
        P::Q8 { nation: nation_name, region: region_name, part_type } => {
            let (nation_name, region_name, part_type) = (quoted(nation_name), quoted(region_name), quoted(part_type));
            format!(
                "select o_year, sum(case when nation = {nation_name} then volume else 0 end) / sum(volume) as mkt_share
from (
    select extract(year from o_orderdate) as o_year, l_extendedprice * (1 - l_discount) as volume,
        n2.n_name as nation
    from {part}, {supplier}, {lineitem}, {orders}, {customer}, {nation} n1, {nation} n2, {region}
    where p_partkey = l_partkey and s_suppkey = l_suppkey and l_orderkey = o_orderkey and o_custkey = c_custkey
        and c_nationkey = n1.n_nationkey and n1.n_regionkey = r_regionkey and r_name = {region_name}
        and s_nationkey = n2.n_nationkey and o_orderdate between date '1995-01-01' and date '1996-12-31'
        and p_type = {part_type}
) as all_nations
group by o_year
order by o_year"
            )
        }
        P::Q9 { color } => {
            let pattern = quoted(&format!("%{color}%"));
            format!(
                "select nation, o_year, sum(amount) as sum_profit
from (
    select n_name as nation, extract(year from o_orderdate) as o_year,
        l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount
    from {part}, {supplier}, {lineitem}, {partsupp}, {orders}, {nation}
    where s_suppkey = l_suppkey and ps_suppkey = l_suppkey and ps_partkey = l_partkey and p_partkey = l_partkey
        and o_orderkey = l_orderkey and s_nationkey = n_nationkey and p_name like {pattern}
) as profit
group by nation, o_year
order by nation, o_year desc"
            )
        }
        P::Q10 { date } => {
            let (from, to) = (date.sql(), date.plus_months(3).sql());
            format!(
                "select c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) as revenue, c_acctbal, n_name,
    c_address, c_phone, c_comment
from {orders}, {lineitem}, {customer}, {nation}
where c_custkey = o_custkey and l_orderkey = o_orderkey and o_orderdate >= {from} and o_orderdate < {to}
    and l_returnflag = 'R' and c_nationkey = n_nationkey
group by c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
order by revenue desc
limit 20"
            )
        }
        P::Q11 { nation: nation_name, fraction } => {
            let (nation_name, fraction) = (quoted(nation_name), decimal(*fraction));
            format!(
                "select ps_partkey, sum(ps_supplycost * ps_availqty) as value
from {partsupp}, {supplier}, {nation}
where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = {nation_name}
group by ps_partkey
having sum(ps_supplycost * ps_availqty) > (
    select sum(ps_supplycost * ps_availqty) * {fraction}
    from {partsupp}, {supplier}, {nation}
    where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = {nation_name})
order by value desc"
            )
        }
        P::Q12 { shipmode1, shipmode2, date } => {
            let (m1, m2, from, to) = (quoted(shipmode1), quoted(shipmode2), date.sql(), date.plus_months(12).sql());
            format!(
                "select l_shipmode,
    sum(case when o_orderpriority = '1-URGENT' or o_orderpriority = '2-HIGH' then 1 else 0 end) as high_line_count,
    sum(case when o_orderpriority <> '1-URGENT' and o_orderpriority <> '2-HIGH' then 1 else 0 end) as low_line_count
from {orders}, {lineitem}
where o_orderkey = l_orderkey and l_receiptdate >= {from} and l_receiptdate < {to} and l_shipmode in ({m1}, {m2})
    and l_commitdate < l_receiptdate and l_shipdate < l_commitdate
group by l_shipmode
order by l_shipmode"
            )
        }
        P::Q13 { word1, word2 } => {
            let pattern = quoted(&format!("%{word1}%{word2}%"));
            format!(
                "select c_count, count(*) as custdist
from (
    select c_custkey, count(o_orderkey) as c_count
    from {customer} left outer join {orders} on c_custkey = o_custkey and o_comment not like {pattern}
    group by c_custkey
) as c_orders
group by c_count
order by custdist desc, c_count desc"
            )
        }
        P::Q14 { date } => {
            let (from, to) = (date.sql(), date.plus_months(1).sql());
            format!(
                "select 100.00 * sum(case when p_type like 'PROMO%' then l_extendedprice * (1 - l_discount) else 0 end)
    / sum(l_extendedprice * (1 - l_discount)) as promo_revenue
from {lineitem}, {part}
where l_partkey = p_partkey and l_shipdate >= {from} and l_shipdate < {to}"
            )
        }
        P::Q15 { date } => {
            let (from, to) = (date.sql(), date.plus_months(3).sql());
            format!(
                "with revenue0 as (
    select l_suppkey as supplier_no, sum(l_extendedprice * (1 - l_discount)) as total_revenue
    from {lineitem}
    where l_shipdate >= {from} and l_shipdate < {to}
    group by l_suppkey)
select s_suppkey, s_name, s_address, s_phone, total_revenue
from {supplier}, (select supplier_no, total_revenue, max(total_revenue) over () as max_revenue from revenue0) as ranked
where s_suppkey = supplier_no and total_revenue = max_revenue
order by s_suppkey"
            )
        }
        P::Q16 { brand, type_prefix, sizes } => {
            let (brand, type_pattern, sizes) = (quoted(brand), quoted(&format!("{type_prefix}%")), list(sizes, false));
            format!(
                "select p_brand, p_type, p_size, count(distinct ps_suppkey) as supplier_cnt
from {partsupp}, {part}
where p_partkey = ps_partkey and p_brand <> {brand} and p_type not like {type_pattern} and p_size in ({sizes})
    and ps_suppkey not in (select s_suppkey from {supplier} where s_comment like '%Customer%Complaints%')
group by p_brand, p_type, p_size
order by supplier_cnt desc, p_brand, p_type, p_size"
            )
        }
        P::Q17 { brand, container } => {
            let (brand, container) = (quoted(brand), quoted(container));
            format!(
                "select sum(l_extendedprice) / 7.0 as avg_yearly
from {part}, {lineitem}, (
    select l_partkey as average_partkey, 0.2 * avg(l_quantity) as small_quantity
    from {part}, {lineitem}
    where p_partkey = l_partkey and p_brand = {brand} and p_container = {container}
    group by l_partkey) as part_average
where p_partkey = l_partkey and p_brand = {brand} and p_container = {container}
    and average_partkey = l_partkey and l_quantity < small_quantity"
            )
        }
        P::Q18 { quantity } => format!(
            "select c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity) as sum_quantity
from (select l_orderkey as large_orderkey from {lineitem} group by l_orderkey having sum(l_quantity) > {quantity})
        as large_orders,
    {orders}, {customer}, {lineitem}
where o_orderkey = large_orderkey and c_custkey = o_custkey and o_orderkey = l_orderkey
group by c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
order by o_totalprice desc, o_orderdate
limit 100"
        ),
        P::Q19 { quantity1, quantity2, quantity3, brand1, brand2, brand3 } => {
            let (b1, b2, b3) = (quoted(brand1), quoted(brand2), quoted(brand3));
            let (q1, q2, q3) = (quantity1, quantity2, quantity3);
            format!(
                "select sum(l_extendedprice * (1 - l_discount)) as revenue
from {lineitem}, {part}
where (p_partkey = l_partkey and p_brand = {b1} and p_container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
        and l_quantity >= {q1} and l_quantity <= {q1} + 10 and p_size between 1 and 5
        and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON')
    or (p_partkey = l_partkey and p_brand = {b2} and p_container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
        and l_quantity >= {q2} and l_quantity <= {q2} + 10 and p_size between 1 and 10
        and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON')
    or (p_partkey = l_partkey and p_brand = {b3} and p_container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
        and l_quantity >= {q3} and l_quantity <= {q3} + 10 and p_size between 1 and 15
        and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON')"
            )
        }
        P::Q20 { color, date, nation: nation_name } => {
            let (pattern, from, to, nation_name) =
                (quoted(&format!("{color}%")), date.sql(), date.plus_months(12).sql(), quoted(nation_name));
            format!(
                "select s_name, s_address
from {supplier}, {nation}
where s_suppkey in (
        select ps_suppkey
        from {partsupp}, (
            select l_partkey, l_suppkey, 0.5 * sum(l_quantity) as half_quantity
            from {lineitem}
            where l_partkey in (select p_partkey from {part} where p_name like {pattern})
                and l_shipdate >= {from} and l_shipdate < {to}
            group by l_partkey, l_suppkey) as shipped
        where ps_partkey = l_partkey and ps_suppkey = l_suppkey and ps_availqty > half_quantity)
    and s_nationkey = n_nationkey and n_name = {nation_name}
order by s_name"
            )
        }
        P::Q21 { nation: nation_name } => {
            let nation_name = quoted(nation_name);
            format!(
                "select s_name, count(*) as numwait
from {nation}, {supplier}, {lineitem} l1, {orders}
where s_suppkey = l1.l_suppkey and o_orderkey = l1.l_orderkey and o_orderstatus = 'F'
    and l1.l_receiptdate > l1.l_commitdate
    and exists (select * from {lineitem} l2 where l2.l_orderkey = l1.l_orderkey and l2.l_suppkey <> l1.l_suppkey)
    and not exists (
        select * from {lineitem} l3
        where l3.l_orderkey = l1.l_orderkey and l3.l_suppkey <> l1.l_suppkey and l3.l_receiptdate > l3.l_commitdate)
    and s_nationkey = n_nationkey and n_name = {nation_name}
group by s_name
order by numwait desc, s_name
limit 100"
            )
        }
        P::Q22 { country_codes } => {
            let codes = list(country_codes, true);
            format!(
                "select cntrycode, count(*) as numcust, sum(c_acctbal) as totacctbal
from (
    select substring(c_phone from 1 for 2) as cntrycode, c_acctbal
    from {customer}
    where substring(c_phone from 1 for 2) in ({codes})
        and c_acctbal > (
            select avg(c_acctbal) from {customer}
            where c_acctbal > 0.00 and substring(c_phone from 1 for 2) in ({codes}))
        and not exists (select * from {orders} where o_custkey = c_custkey)
) as custsale
group by cntrycode
order by cntrycode"
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_queries_carry_their_parameters() {
        let q1 = render(&QueryParameters::validation(1, 1.0));
        assert!(q1.contains("l_shipdate <= date '1998-09-02'"), "{q1}");
        let q6 = render(&QueryParameters::validation(6, 1.0));
        assert!(q6.contains("between 0.05 and 0.07") && q6.contains("< date '1995-01-01'"), "{q6}");
        let q11 = render(&QueryParameters::validation(11, 1.0));
        assert!(q11.contains("* 0.0001\n"), "{q11}");
        let q22 = render(&QueryParameters::validation(22, 1.0));
        assert!(q22.contains("in ('13', '31', '23', '29', '30', '18', '17')"), "{q22}");
        assert_eq!(decimal(0.0001 / 1000.0), "0.0000001");
        assert_eq!(quoted("it's"), "'it''s'");
    }

    /// The tables each query reads, as the specification's query definitions list them.
    fn tables_read(query: u8) -> Vec<TableName> {
        use TableName::*;
        match query {
            1 | 6 => vec![LineItem],
            2 => vec![Region, Nation, Supplier, Part, PartSupp],
            3 | 18 => vec![Customer, Orders, LineItem],
            4 | 12 => vec![Orders, LineItem],
            5 => vec![Region, Nation, Supplier, Customer, Orders, LineItem],
            7 => vec![Nation, Supplier, Customer, Orders, LineItem],
            8 => vec![Region, Nation, Supplier, Customer, Part, Orders, LineItem],
            9 => vec![Nation, Supplier, Part, PartSupp, Orders, LineItem],
            10 => vec![Nation, Customer, Orders, LineItem],
            11 => vec![Nation, Supplier, PartSupp],
            13 | 22 => vec![Customer, Orders],
            14 | 17 | 19 => vec![Part, LineItem],
            15 => vec![Supplier, LineItem],
            16 => vec![Supplier, Part, PartSupp],
            20 => vec![Nation, Supplier, Part, PartSupp, LineItem],
            21 => vec![Nation, Supplier, Orders, LineItem],
            _ => unreachable!("Q{query}"),
        }
    }

    /// Table names where a FROM list names a table: after `from` or `join`, or after a comma.
    fn bare_table_references(sql: &str) -> Vec<String> {
        let words: Vec<&str> = sql.split(|c: char| c.is_whitespace()).filter(|w| !w.is_empty()).collect();
        let mut found = Vec::new();
        for pair in words.windows(2) {
            let name = pair[1].trim_end_matches([',', ')']);
            let table_position = matches!(pair[0], "from" | "join") || pair[0].ends_with(',');
            if table_position && TableName::ALL.iter().any(|t| t.as_str() == name) {
                found.push(format!("{} {}", pair[0], pair[1]));
            }
        }
        found
    }

    #[test]
    fn qualified_names_reach_every_table_read_and_change_nothing_else() {
        let qualified = TableNames::new(|table| format!("\"tpch schema\".\"{table}\""));
        let mut random = crate::params::SeededRandom::for_stream(3, 1, 0);
        for query in 1..=QUERY_COUNT {
            for parameters in
                [QueryParameters::validation(query, 1.0), QueryParameters::random(query, 1.0, &mut random)]
            {
                let bare = render(&parameters);
                let sql = render_with(&parameters, &qualified);
                // Nothing but the table names changed: not the column alias `nation` of Q8 and Q9, not a literal.
                let mut back = sql.clone();
                for table in TableName::ALL {
                    back = back.replace(qualified.get(table), table.as_str());
                }
                assert_eq!(back, bare, "Q{query}");
                // Every table the query reads is named qualified, and none is named bare.
                let named: Vec<TableName> =
                    TableName::ALL.into_iter().filter(|t| sql.contains(qualified.get(*t))).collect();
                assert_eq!(named, tables_read(query), "Q{query}:\n{sql}");
                assert!(!bare_table_references(&bare).is_empty(), "Q{query}: the check sees bare names");
                assert_eq!(bare_table_references(&sql), Vec::<String>::new(), "Q{query}:\n{sql}");
            }
        }
    }
}
