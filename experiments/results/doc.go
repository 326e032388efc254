// Package results is the schema of a run directory's CSV files: each
// file's name, its fixed columns (name, unit, meaning) and how its dynamic
// columns, if any, are named; and the CSV writer every writer of a run
// directory uses.
//
// A file's header is its leading dynamic columns (Before), then its fixed
// columns (Columns), then its trailing dynamic columns (After), in that
// order:
//
//	cdf.csv          fixed only
//	timeseries.csv   fixed, then for a fleet of groups one column per group
//	                 (provisioned_replicas.GROUP) and its spot replicas
//	                 (provisioned_spot_replicas.GROUP)
//	replications.csv fixed, then one column per flattened summary.json key
//	                 (sorted; the union over all arms)
//	sweep.csv        one column per swept scenario key, then fixed, then
//	                 the failure columns when the runs had [failures]
//	ettr.csv         one column per swept scenario key, then fixed
//	size.csv         fixed, then one column and its CI per --slo target
//	size_search.csv  fixed only
//	failures.csv     fixed only
//	ab.csv           fixed only; one row per metric key and compared arm
//	requests.csv     fixed only
//	calibration.csv  fixed only
//	columns.csv      fixed only: the data dictionary (Dictionary), one row
//	                 per file and per column of each CSV file
//
// Writers build rows with Table (in memory) or Writer (streaming), both on
// encoding/csv: a field holding a comma, a quote or a newline is quoted, and
// a row whose width differs from the header's is refused. Readers find
// columns by the names declared here (the constants below), never by
// position, so a column added to a file does not break them.
//
// Units: _ms milliseconds, _s seconds (simulated), _per_s per simulated
// second, _frac and _fraction in [0, 1], _pct percent, _ci95 the half-width
// of the two-sided 95% confidence interval (Student t over replications)
// of the column it follows, in that column's unit.
package results
