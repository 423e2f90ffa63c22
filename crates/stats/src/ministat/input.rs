//! Reading a data set the way ministat does.

use super::dataset::Dataset;
use crate::cparse::{is_c_space, parse_c_double};
use crate::error::StatsError;

/// The fewest points ministat accepts in a data set.
pub const MIN_POINTS: usize = 3;

/// Which numbers to take from each line: ministat's `-C` and `-d`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseOptions {
    /// 1-based column (field) number.
    pub column: usize,
    /// Bytes that separate fields; runs of them count as one (strtok).
    pub delimiters: Vec<u8>,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            column: 1,
            delimiters: b" \t".to_vec(),
        }
    }
}

/// Reads the data set `name` from `data` and checks it has at least
/// `MIN_POINTS` values.
pub fn read_dataset(
    name: &str,
    data: &[u8],
    options: &ParseOptions,
) -> Result<Dataset, StatsError> {
    let values = parse_values(name, data, options)?;
    if values.len() < MIN_POINTS {
        return Err(StatsError::TooFewPoints {
            name: name.to_string(),
        });
    }
    Ok(Dataset {
        name: name.to_string(),
        values,
    })
}

/// The values of one data file, in file order.
///
/// For each line: trailing blanks are dropped, the line is split into fields
/// on any run of delimiter bytes, a field starting with `#` ends the line
/// (comments), and a line without the wanted column is skipped. The wanted
/// field must be a number as a whole (C's `strtod`), otherwise the error
/// names the 1-based line.
pub fn parse_values(
    name: &str,
    data: &[u8],
    options: &ParseOptions,
) -> Result<Vec<f64>, StatsError> {
    let mut values = Vec::new();
    for (index, line) in lines(data).enumerate() {
        let Some(field) = wanted_field(line, options) else {
            continue;
        };
        let value = parse_c_double(field).ok_or_else(|| StatsError::InvalidData {
            name: name.to_string(),
            line: index + 1,
        })?;
        values.push(value);
    }
    Ok(values)
}

/// Lines as `fgets` returns them, without the newline; no empty line after a
/// final newline.
fn lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let data = data.strip_suffix(b"\n").unwrap_or(data);
    data.split(|&b| b == b'\n')
        .take(if data.is_empty() { 0 } else { usize::MAX })
}

fn wanted_field<'a>(line: &'a [u8], options: &ParseOptions) -> Option<&'a [u8]> {
    let end = line
        .iter()
        .rposition(|&b| !is_c_space(b))
        .map_or(0, |last| last + 1);
    let fields = line[..end]
        .split(|b| options.delimiters.contains(b))
        .filter(|field| !field.is_empty());
    for (number, field) in fields.enumerate() {
        if field.starts_with(b"#") {
            return None;
        }
        if number + 1 == options.column {
            return Some(field);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(data: &str, options: &ParseOptions) -> Result<Vec<f64>, StatsError> {
        parse_values("f", data.as_bytes(), options)
    }

    #[test]
    fn one_value_per_line() {
        let got = values("1\n2.5\n-3e2\n", &ParseOptions::default()).unwrap();
        assert_eq!(got, vec![1.0, 2.5, -300.0]);
    }

    #[test]
    fn blanks_comments_and_missing_columns_are_skipped() {
        let data = "# header\n\n   \n10 # trailing comment\n\t20\t\r\n#30\n40";
        assert_eq!(
            values(data, &ParseOptions::default()).unwrap(),
            vec![10.0, 20.0, 40.0]
        );
    }

    #[test]
    fn column_and_delimiters_select_the_field() {
        let options = ParseOptions {
            column: 3,
            delimiters: b",;".to_vec(),
        };
        // ",," is one separator, as with strtok; line 2 has only two fields.
        let data = "a,,b;7\nx,y\np,q,8.5,z\nc,#d,9\n";
        assert_eq!(values(data, &options).unwrap(), vec![7.0, 8.5]);
    }

    #[test]
    fn a_comment_before_the_column_ends_the_line() {
        let options = ParseOptions {
            column: 2,
            ..ParseOptions::default()
        };
        assert_eq!(values("1 #2\n3 4\n", &options).unwrap(), vec![4.0]);
    }

    #[test]
    fn invalid_data_names_the_line() {
        let err = values("1\n2\n\n3x\n4\n", &ParseOptions::default()).unwrap_err();
        assert_eq!(
            err,
            StatsError::InvalidData {
                name: "f".into(),
                line: 4
            }
        );
        assert_eq!(err.to_string(), "Invalid data on line 4 in f");
    }

    #[test]
    fn only_the_selected_column_must_be_numeric() {
        let options = ParseOptions {
            column: 2,
            ..ParseOptions::default()
        };
        assert_eq!(
            values("run1 5\nrun2 6\n", &options).unwrap(),
            vec![5.0, 6.0]
        );
    }

    #[test]
    fn fewer_than_three_points_is_an_error() {
        let err = read_dataset("few", b"1\n2\n", &ParseOptions::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Dataset few must contain at least 3 data points"
        );
        let ok = read_dataset("ok", b"1\n2\n3", &ParseOptions::default()).unwrap();
        assert_eq!(ok.values, vec![1.0, 2.0, 3.0]);
    }

    #[test]
    fn empty_input_has_no_lines() {
        assert_eq!(
            values("", &ParseOptions::default()).unwrap(),
            Vec::<f64>::new()
        );
        assert_eq!(
            values("\n", &ParseOptions::default()).unwrap(),
            Vec::<f64>::new()
        );
    }
}
