//! The groups and bit counts of FD.io CSIT's `jumpavg` package on the
//! same series, compared to the last bit. Every expected value was printed
//! by the real package (jumpavg 0.4.2 from PyPI, CPython 3.11):
//!
//! ```text
//! python3 -m venv venv && venv/bin/pip install jumpavg==0.4.2
//! venv/bin/python -c 'from jumpavg import classify; gl = classify(VALUES, unit=U, sbps=S)
//! i = 0
//! for g in gl: print(i, len(g.run_list), g.comment, g.stats.size,
//!     repr(g.stats.avg), repr(g.stats.stdev), repr(g.bits)); i += len(g.run_list)
//! print(repr(gl.unit), repr(gl.bits))'
//! ```
//!
//! with VALUES, U and S as each test gives them (a list inside the list is
//! one indivisible run, as CSIT passes a build's samples).

use super::*;

/// (first run, runs, kind, samples, average, deviation, bits) of a group.
type Want = (usize, usize, Kind, u64, f64, f64, f64);

fn floats(values: &[f64]) -> (Vec<AvgStdev>, f64) {
    let max = values.iter().copied().fold(0.0, f64::max);
    (values.iter().map(|&v| AvgStdev::sample(v)).collect(), max)
}

fn lists(values: &[&[f64]]) -> (Vec<AvgStdev>, f64) {
    let max = values
        .iter()
        .flat_map(|v| v.iter())
        .copied()
        .fold(0.0, f64::max);
    (values.iter().map(|v| AvgStdev::of_values(v)).collect(), max)
}

fn check(
    (runs, max): (Vec<AvgStdev>, f64),
    unit: Option<f64>,
    sbps: Option<f64>,
    want_unit: f64,
    want_bits: f64,
    want: &[Want],
) {
    let got = classify(&runs, max, unit, sbps).unwrap();
    assert_eq!(got.unit, want_unit, "unit");
    let groups: Vec<Want> = got
        .groups
        .iter()
        .map(|g| {
            (
                g.first,
                g.len,
                g.kind,
                g.stats.size,
                g.stats.avg,
                g.stats.stdev,
                g.bits,
            )
        })
        .collect();
    assert_eq!(groups, want);
    assert_eq!(got.bits, want_bits, "total bits");
}

use Kind::{Normal, Progression, Regression};

#[test]
fn the_readme_example() {
    // classify(values=[2.1, 3.1, 3.2], unit=0.1): 6.0444 and 10.2152 bits.
    check(
        floats(&[2.1, 3.1, 3.2]),
        Some(0.1),
        None,
        0.1,
        16.259635384671846,
        &[
            (0, 1, Normal, 1, 2.1, 0.0, 6.044394119358453),
            (
                1,
                2,
                Progression,
                2,
                3.1500000000000004,
                0.050000000000000044,
                10.215241265313393,
            ),
        ],
    );
}

#[test]
fn a_flat_series_is_one_group() {
    // classify([5.0, 5.0, 5.0, 5.0])
    check(
        floats(&[5.0; 4]),
        None,
        None,
        0.0006104260774020266,
        23.973248124873237,
        &[(0, 4, Normal, 4, 5.0, 0.0, 23.973248124873237)],
    );
}

#[test]
fn a_step_down_is_a_regression() {
    // classify([100.0, 101.0, 99.0, 100.5, 80.0, 81.0, 79.5, 80.2])
    check(
        floats(&[100.0, 101.0, 99.0, 100.5, 80.0, 81.0, 79.5, 80.2]),
        None,
        None,
        0.012330606763520938,
        92.97996282142216,
        &[
            (
                0,
                4,
                Normal,
                4,
                100.125,
                0.739509972887452,
                46.71716154672501,
            ),
            (
                4,
                4,
                Regression,
                4,
                80.17500000000001,
                0.5402545696243577,
                46.26280127469715,
            ),
        ],
    );
}

#[test]
fn a_noisy_step_up_is_a_progression() {
    // classify([10.0, 12.0, 11.0, 13.0, 10.5, 20.0, 21.5, 19.0, 22.0, 20.5, 21.0])
    check(
        floats(&[
            10.0, 12.0, 11.0, 13.0, 10.5, 20.0, 21.5, 19.0, 22.0, 20.5, 21.0,
        ]),
        None,
        None,
        0.002685874740568917,
        147.612490277498,
        &[
            (0, 5, Normal, 5, 11.3, 1.077032961426901, 68.95142292976487),
            (
                5,
                6,
                Progression,
                6,
                20.666666666666668,
                0.986013297183269,
                78.66106734773314,
            ),
        ],
    );
}

#[test]
fn labels_of_several_runs_stay_whole() {
    // classify([[788e3, 790e3, 785e3], [791e3, 786e3, 789e3],
    //   [820e3, 824e3, 819e3, 822e3], [818e3, 823e3],
    //   [720e3, 716e3, 722e3], [719e3, 721e3, 717e3]])
    check(
        lists(&[
            &[788e3, 790e3, 785e3],
            &[791e3, 786e3, 789e3],
            &[820e3, 824e3, 819e3, 822e3],
            &[818e3, 823e3],
            &[720e3, 716e3, 722e3],
            &[719e3, 721e3, 717e3],
        ]),
        None,
        None,
        100.59821755585399,
        171.02730835887456,
        &[
            (
                0,
                2,
                Normal,
                6,
                788166.6666666666,
                2114.7629234082533,
                55.10935563746439,
            ),
            (
                2,
                2,
                Progression,
                6,
                821000.0,
                2160.2468994692867,
                58.803913413672205,
            ),
            (
                4,
                2,
                Regression,
                6,
                719166.6666666667,
                2114.7629234082547,
                57.114039307737954,
            ),
        ],
    );
}

#[test]
fn sbps_sets_the_unit() {
    // classify([[1.0, 1.2], [1.1], [2.0, 2.2, 2.1], [2.05]], sbps=8)
    check(
        lists(&[&[1.0, 1.2], &[1.1], &[2.0, 2.2, 2.1], &[2.05]]),
        None,
        Some(8.0),
        0.004305283757338552,
        63.99661730278349,
        &[
            (
                0,
                2,
                Normal,
                3,
                1.1,
                0.08164965809277258,
                29.054835727128264,
            ),
            (
                2,
                2,
                Progression,
                4,
                2.0875,
                0.0739509972887453,
                34.94178157565523,
            ),
        ],
    );
}

#[test]
fn a_long_series_with_two_changes() {
    // vals = [(1000.0 if i < 20 else 900.0 if i < 45 else 1100.0)
    //         + float((i * 7919) % 61 - 30) for i in range(60)]
    // classify(vals)
    let vals: Vec<f64> = (0..60i64)
        .map(|i| {
            let base = if i < 20 {
                1000.0
            } else if i < 45 {
                900.0
            } else {
                1100.0
            };
            base + ((i * 7919) % 61 - 30) as f64
        })
        .collect();
    check(
        floats(&vals),
        None,
        None,
        0.137956293492858,
        603.7450414220975,
        &[
            (
                0,
                20,
                Normal,
                20,
                999.7,
                18.005832388423464,
                201.2298333675097,
            ),
            (
                20,
                25,
                Regression,
                25,
                898.64,
                17.59290766189603,
                248.6269309922892,
            ),
            (
                45,
                15,
                Progression,
                15,
                1103.9333333333332,
                16.425454500730112,
                153.88827706229856,
            ),
        ],
    );
}

#[test]
fn one_bad_label_is_a_group_of_its_own() {
    // classify([[500.0, 502.0], [501.0, 499.0], [300.0, 310.0],
    //   [500.5, 501.5], [499.5, 500.0]])
    check(
        lists(&[
            &[500.0, 502.0],
            &[501.0, 499.0],
            &[300.0, 310.0],
            &[500.5, 501.5],
            &[499.5, 500.0],
        ]),
        None,
        None,
        0.06128677817116347,
        107.13818297540061,
        &[
            (
                0,
                2,
                Normal,
                4,
                500.5,
                1.118033988749895,
                40.111284752994045,
            ),
            (2, 1, Regression, 2, 305.0, 5.0, 29.68934320747614),
            (
                3,
                2,
                Progression,
                4,
                500.375,
                0.739509972887452,
                37.33755501493042,
            ),
        ],
    );
}

#[test]
fn nothing_positive_is_refused() {
    assert_eq!(
        classify(&[AvgStdev::sample(0.0)], 0.0, None, None),
        Err(ClassifyError::NoPositiveValue)
    );
    assert_eq!(
        classify(&[AvgStdev::sample(f64::NAN)], 1.0, None, None),
        Err(ClassifyError::NotFinite)
    );
    // No run at all: no group, no bits.
    let empty = classify(&[], 1.0, None, None).unwrap();
    assert!(empty.groups.is_empty());
    assert_eq!(empty.bits, 0.0);
}
