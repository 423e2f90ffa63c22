//! `render` against outputs worked out by hand.

use super::*;
use crate::student::Confidence;

fn set(name: &str, values: &[f64]) -> Dataset {
    Dataset {
        name: name.to_string(),
        values: values.to_vec(),
    }
}

fn width(width: usize) -> RenderOptions {
    RenderOptions {
        width,
        ..RenderOptions::default()
    }
}

const HEADER: &str =
    "    N           Min           Max        Median           Avg        Stddev\n";

// a = 0 0 5 10 10: avg 5, variance (25+25+0+25+25)/4 = 25, stddev 5.
// b = 0 5 5 5 10: avg 5, variance 50/4 = 12.5, stddev 3.5355339.
// Plot bounds 0..10; with width 11 each column is one unit wide and the
// column of v is trunc(v + 0.5): 0, 5 and 10 land in columns 0, 5 and 10,
// b's avg -/+ stddev (1.46, 8.54) in columns 1 and 9.
const A: [f64; 5] = [0.0, 10.0, 5.0, 0.0, 10.0];
const B: [f64; 5] = [5.0, 0.0, 5.0, 10.0, 5.0];
const TABLE_AB: &str = "\
x   5             0            10             5             5             5
+   5             0            10             5             5     3.5355339
No difference proven at 95.0% confidence
";

#[test]
fn ties_stack_and_shared_cells_or_their_symbols() {
    // Column 0 holds a, a and b: rows 1 and 2 for a, b OR-ed into row 1 (x|+ = *).
    // Column 5 holds a once and b three times; column 10 like column 0.
    // Shared bar: a's |____A____| first, then b's | at 1 and 9 over the _.
    let out = render(&[set("a", &A), set("b", &B)], &width(11));
    let expected = format!(
        "x a\n+ b\n\
         +-----------+\n\
         |     +     |\n\
         |x    +    x|\n\
         |*    *    *|\n\
         |||___A___|||\n\
         +-----------+\n\
         {HEADER}{TABLE_AB}"
    );
    assert_eq!(out, expected);
}

#[test]
fn separate_bars() {
    let options = RenderOptions {
        separate_bars: true,
        ..width(11)
    };
    let out = render(&[set("a", &A), set("b", &B)], &options);
    let expected = format!(
        "x a\n+ b\n\
         +-----------+\n\
         |     +     |\n\
         |x    +    x|\n\
         |*    *    *|\n\
         ||____A____||\n\
         | |___A___| |\n\
         +-----------+\n\
         {HEADER}{TABLE_AB}"
    );
    assert_eq!(out, expected);
}

#[test]
fn wider_plot_spreads_the_same_columns() {
    // Width 21: half a unit per column, column of v = trunc(2v + 0.5):
    // 0, 5, 10 -> 0, 10, 20; b's 1.46 and 8.54 -> 3 and 17.
    let out = render(&[set("a", &A), set("b", &B)], &width(21));
    let expected = format!(
        "x a\n+ b\n\
         +---------------------+\n\
         |          +          |\n\
         |x         +         x|\n\
         |*         *         *|\n\
         ||__|______A______|__||\n\
         +---------------------+\n\
         {HEADER}{TABLE_AB}"
    );
    assert_eq!(out, expected);
}

#[test]
fn a_shorter_last_set_cuts_taller_stacks_off() {
    // Same sets, b first: b (x) stacks 3 high in column 5, a (+) only 2 high,
    // so the point area is 2 rows and b's third point in column 5 is not shown.
    let out = render(&[set("b", &B), set("a", &A)], &width(11));
    let plot: Vec<&str> = out.lines().skip(2).take(5).collect();
    assert_eq!(
        plot,
        [
            "+-----------+",
            "|+    x    +|",
            "|*    *    *|",
            "|||___A___|||",
            "+-----------+",
        ]
    );
}

#[test]
fn zero_span_has_no_plot() {
    let out = render(
        &[set("s", &[7.0, 7.0, 7.0]), set("t", &[7.0; 4])],
        &width(30),
    );
    let expected = format!(
        "x s\n+ t\n[no plot, span is zero width]\n{HEADER}\
         x   3             7             7             7             7             0\n\
         +   4             7             7             7             7             0\n\
         No difference proven at 95.0% confidence\n"
    );
    assert_eq!(out, expected);
}

#[test]
fn difference_block_at_other_confidence() {
    // 1 2 3 against 4 5 6 (see compare.rs): 3 +/- 2.26659, 150% +/- 215.773%.
    // At 80%, t(4 df) = 1.533: error 1.533 * sqrt(2/3) = 1.25169;
    // percent error 1.533 * sqrt(14.5/6) * 100 / 2 = 119.157.
    let options = RenderOptions {
        confidence: Confidence::P80,
        show_plot: false,
        ..RenderOptions::default()
    };
    let out = render(
        &[set("low", &[1.0, 2.0, 3.0]), set("high", &[4.0, 5.0, 6.0])],
        &options,
    );
    let expected = format!(
        "x low\n+ high\n{HEADER}\
         x   3             1             3             2             2             1\n\
         +   3             4             6             5             5             1\n\
         Difference at 80.0% confidence\n\
         \t3 +/- 1.25169\n\
         \t150% +/- 119.157%\n\
         \t(Student's t, pooled s = 1)\n"
    );
    assert_eq!(out, expected);
}

#[test]
fn quiet_and_statistics_only() {
    let options = RenderOptions {
        show_plot: false,
        show_comparisons: false,
        quiet: true,
        ..RenderOptions::default()
    };
    let out = render(
        &[set("low", &[1.0, 2.0, 3.0]), set("high", &[4.0, 5.0, 6.0])],
        &options,
    );
    assert_eq!(
        out,
        "x   3             1             3             2             2             1\n\
         +   3             4             6             5             5             1\n"
    );
}

#[test]
fn plot_only() {
    let options = RenderOptions {
        show_table: false,
        show_comparisons: false,
        ..width(11)
    };
    let out = render(&[set("a", &A)], &options);
    assert_eq!(
        out,
        "x a\n\
         +-----------+\n\
         |x         x|\n\
         |x    x    x|\n\
         ||____A____||\n\
         +-----------+\n"
    );
}

#[test]
fn seed_002_redirect_comparison() {
    // Five points per set rebuilt from the seed's N, Min, Max, Median, Avg and
    // Stddev (sums 11151253 and 41175226; see the integration test).
    let before = set(
        "net.inet.ip.redirect=1 (default)",
        &[2199966.5, 2201553.5, 2210097.0, 2230574.0, 2309062.0],
    );
    let after = set(
        "net.inet.ip.redirect=0",
        &[8211578.0, 8214640.5, 8244041.0, 8245451.0, 8259515.5],
    );
    let out = render(&[before, after], &RenderOptions::default());
    let tail: Vec<&str> = out.lines().rev().take(6).collect();
    assert_eq!(
        tail,
        [
            "\t(Student's t, pooled s = 35554.9)",
            "\t269.243% +/- 7.86461%",
            "\t6.00479e+06 +/- 51854.8",
            "Difference at 95.0% confidence",
            "+   5       8211578     8259515.5       8244041     8235045.2      20946.73",
            "x   5     2199966.5       2309062       2210097     2230250.6     45711.484",
        ]
    );
}

#[test]
fn empty_and_extra_sets_do_not_panic() {
    let sets: Vec<Dataset> = (0..9)
        .map(|k| set(&format!("s{k}"), &[1.0, 2.0, f64::from(k)]))
        .collect();
    let out = render(&sets, &RenderOptions::default());
    assert_eq!(out.lines().filter(|l| l.starts_with("O s6")).count(), 1);
    assert!(!out.contains("s7"));

    let out = render(
        &[set("none", &[]), set("one", &[1.0])],
        &RenderOptions::default(),
    );
    assert!(out.contains("x   0           nan"), "{out}");
    assert!(out.contains("No difference proven"), "{out}");
    assert_eq!(render(&[], &RenderOptions::default()), "");
}

#[test]
fn analysis_has_the_rendered_figures() {
    let analysis = analyze(
        &[set("low", &[1.0, 2.0, 3.0]), set("high", &[4.0, 5.0, 6.0])],
        Confidence::P95,
    );
    assert_eq!(analysis.datasets.len(), 2);
    assert_eq!(analysis.datasets[1].symbol, '+');
    assert_eq!(analysis.datasets[1].summary.avg, 5.0);
    assert_eq!(analysis.comparisons.len(), 1);
    let c = &analysis.comparisons[0];
    assert_eq!((c.baseline.as_str(), c.name.as_str()), ("low", "high"));
    assert_eq!(c.comparison.difference, 3.0);
    assert!(c.comparison.significant);

    let json = serde_json::to_value(&analysis).unwrap();
    assert_eq!(json["confidence"], 95.0);
    assert_eq!(json["datasets"][0]["name"], "low");
    assert_eq!(json["datasets"][0]["stddev"], 1.0);
    assert_eq!(json["comparisons"][0]["percent"], 150.0);
    assert_eq!(json["comparisons"][0]["pooled_s"], 1.0);
    assert_eq!(json["comparisons"][0]["t"], 2.776);
    assert_eq!(json["comparisons"][0]["significant"], true);
}

#[test]
fn the_plot_spans_each_sets_avg_plus_and_minus_its_stddev() {
    // Skewed sets whose avg - stddev lies below their minimum (a) and
    // avg + stddev above their maximum (c): the plot's bounds come from
    // those, not from the values. Expected output: Debian's ministat
    // (`ministat -w 40 a c b`), the same plot code, run by hand.
    let out = render(
        &[
            set("a", &[0.3, 0.7, 10.1]),
            set("c", &[0.2, 9.6, 10.4]),
            set("b", &[4.1, 5.3, 7.2]),
        ],
        &width(40),
    );
    let expected = format!(
        "x a\n+ c\n* b\n\
         +----------------------------------------+\n\
         |      *x        *   *    *     + x+     |\n\
         ||______M|______A|___A__A|_____|M_______||\n\
         +----------------------------------------+\n\
         {HEADER}\
         x   3           0.3          10.1           0.7           3.7     5.5461698\n\
         +   3           0.2          10.4           9.6     6.7333333     5.6721542\n\
         No difference proven at 95.0% confidence\n\
         *   3           4.1           7.2           5.3     5.5333333     1.5631165\n\
         No difference proven at 95.0% confidence\n"
    );
    assert_eq!(out, expected);
}
