//! Student's t critical values at ministat's six confidence levels.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::cparse::parse_c_double;
use crate::error::StatsError;

/// A confidence level of the two-sample t test, one of ministat's six.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Confidence {
    P80,
    P90,
    #[default]
    P95,
    P98,
    P99,
    P99_5,
}

impl Confidence {
    /// A level a user typed as a flag (`compare -c 95`): one message for
    /// any text that is not one of the six levels.
    pub fn parse_level(text: &str) -> Result<Confidence, StatsError> {
        text.parse()
            .map_err(|_| StatsError::InvalidConfidence(text.to_string()))
    }

    /// All levels, in ministat's order.
    pub const ALL: [Confidence; 6] = [
        Confidence::P80,
        Confidence::P90,
        Confidence::P95,
        Confidence::P98,
        Confidence::P99,
        Confidence::P99_5,
    ];

    /// The level in percent: 80, 90, 95, 98, 99 or 99.5.
    pub fn percent(self) -> f64 {
        match self {
            Confidence::P80 => 80.0,
            Confidence::P90 => 90.0,
            Confidence::P95 => 95.0,
            Confidence::P98 => 98.0,
            Confidence::P99 => 99.0,
            Confidence::P99_5 => 99.5,
        }
    }

    /// The t value ministat uses for `degrees_of_freedom` (n1 + n2 - 2):
    /// its table for 1 to 100, the infinity row above 100 (and, as ministat
    /// indexes it, for 0).
    pub fn critical_t(self, degrees_of_freedom: usize) -> f64 {
        let row = if degrees_of_freedom > LAST_TABULATED_DF {
            0
        } else {
            degrees_of_freedom
        };
        T_TABLE[row][self as usize]
    }
}

impl fmt::Display for Confidence {
    /// As ministat's usage text prints it: "80", ..., "99.5".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.percent())
    }
}

impl FromStr for Confidence {
    type Err = StatsError;

    /// Any number `strtod` reads that equals one of the six levels, so "95",
    /// "95.0" and "9.5e1" are all 95% as for ministat's `-c`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let value = parse_c_double(text.as_bytes())
            .ok_or_else(|| StatsError::ConfidenceNotANumber(text.to_string()))?;
        Confidence::ALL
            .into_iter()
            .find(|level| level.percent() == value)
            .ok_or_else(|| StatsError::UnsupportedConfidence(text.to_string()))
    }
}

impl Serialize for Confidence {
    /// As the number of percent, e.g. `95.0`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.percent())
    }
}

impl<'de> Deserialize<'de> for Confidence {
    /// From the number of percent [`Serialize`] writes.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let percent = f64::deserialize(deserializer)?;
        Confidence::ALL
            .into_iter()
            .find(|level| level.percent() == percent)
            .ok_or_else(|| serde::de::Error::custom(format!("unsupported confidence {percent}")))
    }
}

const LAST_TABULATED_DF: usize = 100;

/// ministat's table, kept value for value so its output can be reproduced:
/// row 0 is infinite degrees of freedom, row k is k degrees of freedom; the
/// columns are the six levels in `Confidence` order. These are two-sided
/// critical values, except that the "99.5" column holds the one-sided 0.999
/// quantile (318.313 for 1 df, 3.090 at infinity), which is what ministat
/// has always used for 99.5.
#[rustfmt::skip]
#[allow(clippy::approx_constant)] // 2.718 is t(98%, 11 df), not e
const T_TABLE: [[f64; 6]; LAST_TABULATED_DF + 1] = [
    [1.282, 1.645, 1.960, 2.326, 2.576, 3.090], // df > 100
    [3.078, 6.314, 12.706, 31.821, 63.657, 318.313], // df = 1
    [1.886, 2.920, 4.303, 6.965, 9.925, 22.327], // df = 2
    [1.638, 2.353, 3.182, 4.541, 5.841, 10.215], // df = 3
    [1.533, 2.132, 2.776, 3.747, 4.604, 7.173], // df = 4
    [1.476, 2.015, 2.571, 3.365, 4.032, 5.893], // df = 5
    [1.440, 1.943, 2.447, 3.143, 3.707, 5.208], // df = 6
    [1.415, 1.895, 2.365, 2.998, 3.499, 4.782], // df = 7
    [1.397, 1.860, 2.306, 2.896, 3.355, 4.499], // df = 8
    [1.383, 1.833, 2.262, 2.821, 3.250, 4.296], // df = 9
    [1.372, 1.812, 2.228, 2.764, 3.169, 4.143], // df = 10
    [1.363, 1.796, 2.201, 2.718, 3.106, 4.024], // df = 11
    [1.356, 1.782, 2.179, 2.681, 3.055, 3.929], // df = 12
    [1.350, 1.771, 2.160, 2.650, 3.012, 3.852], // df = 13
    [1.345, 1.761, 2.145, 2.624, 2.977, 3.787], // df = 14
    [1.341, 1.753, 2.131, 2.602, 2.947, 3.733], // df = 15
    [1.337, 1.746, 2.120, 2.583, 2.921, 3.686], // df = 16
    [1.333, 1.740, 2.110, 2.567, 2.898, 3.646], // df = 17
    [1.330, 1.734, 2.101, 2.552, 2.878, 3.610], // df = 18
    [1.328, 1.729, 2.093, 2.539, 2.861, 3.579], // df = 19
    [1.325, 1.725, 2.086, 2.528, 2.845, 3.552], // df = 20
    [1.323, 1.721, 2.080, 2.518, 2.831, 3.527], // df = 21
    [1.321, 1.717, 2.074, 2.508, 2.819, 3.505], // df = 22
    [1.319, 1.714, 2.069, 2.500, 2.807, 3.485], // df = 23
    [1.318, 1.711, 2.064, 2.492, 2.797, 3.467], // df = 24
    [1.316, 1.708, 2.060, 2.485, 2.787, 3.450], // df = 25
    [1.315, 1.706, 2.056, 2.479, 2.779, 3.435], // df = 26
    [1.314, 1.703, 2.052, 2.473, 2.771, 3.421], // df = 27
    [1.313, 1.701, 2.048, 2.467, 2.763, 3.408], // df = 28
    [1.311, 1.699, 2.045, 2.462, 2.756, 3.396], // df = 29
    [1.310, 1.697, 2.042, 2.457, 2.750, 3.385], // df = 30
    [1.309, 1.696, 2.040, 2.453, 2.744, 3.375], // df = 31
    [1.309, 1.694, 2.037, 2.449, 2.738, 3.365], // df = 32
    [1.308, 1.692, 2.035, 2.445, 2.733, 3.356], // df = 33
    [1.307, 1.691, 2.032, 2.441, 2.728, 3.348], // df = 34
    [1.306, 1.690, 2.030, 2.438, 2.724, 3.340], // df = 35
    [1.306, 1.688, 2.028, 2.434, 2.719, 3.333], // df = 36
    [1.305, 1.687, 2.026, 2.431, 2.715, 3.326], // df = 37
    [1.304, 1.686, 2.024, 2.429, 2.712, 3.319], // df = 38
    [1.304, 1.685, 2.023, 2.426, 2.708, 3.313], // df = 39
    [1.303, 1.684, 2.021, 2.423, 2.704, 3.307], // df = 40
    [1.303, 1.683, 2.020, 2.421, 2.701, 3.301], // df = 41
    [1.302, 1.682, 2.018, 2.418, 2.698, 3.296], // df = 42
    [1.302, 1.681, 2.017, 2.416, 2.695, 3.291], // df = 43
    [1.301, 1.680, 2.015, 2.414, 2.692, 3.286], // df = 44
    [1.301, 1.679, 2.014, 2.412, 2.690, 3.281], // df = 45
    [1.300, 1.679, 2.013, 2.410, 2.687, 3.277], // df = 46
    [1.300, 1.678, 2.012, 2.408, 2.685, 3.273], // df = 47
    [1.299, 1.677, 2.011, 2.407, 2.682, 3.269], // df = 48
    [1.299, 1.677, 2.010, 2.405, 2.680, 3.265], // df = 49
    [1.299, 1.676, 2.009, 2.403, 2.678, 3.261], // df = 50
    [1.298, 1.675, 2.008, 2.402, 2.676, 3.258], // df = 51
    [1.298, 1.675, 2.007, 2.400, 2.674, 3.255], // df = 52
    [1.298, 1.674, 2.006, 2.399, 2.672, 3.251], // df = 53
    [1.297, 1.674, 2.005, 2.397, 2.670, 3.248], // df = 54
    [1.297, 1.673, 2.004, 2.396, 2.668, 3.245], // df = 55
    [1.297, 1.673, 2.003, 2.395, 2.667, 3.242], // df = 56
    [1.297, 1.672, 2.002, 2.394, 2.665, 3.239], // df = 57
    [1.296, 1.672, 2.002, 2.392, 2.663, 3.237], // df = 58
    [1.296, 1.671, 2.001, 2.391, 2.662, 3.234], // df = 59
    [1.296, 1.671, 2.000, 2.390, 2.660, 3.232], // df = 60
    [1.296, 1.670, 2.000, 2.389, 2.659, 3.229], // df = 61
    [1.295, 1.670, 1.999, 2.388, 2.657, 3.227], // df = 62
    [1.295, 1.669, 1.998, 2.387, 2.656, 3.225], // df = 63
    [1.295, 1.669, 1.998, 2.386, 2.655, 3.223], // df = 64
    [1.295, 1.669, 1.997, 2.385, 2.654, 3.220], // df = 65
    [1.295, 1.668, 1.997, 2.384, 2.652, 3.218], // df = 66
    [1.294, 1.668, 1.996, 2.383, 2.651, 3.216], // df = 67
    [1.294, 1.668, 1.995, 2.382, 2.650, 3.214], // df = 68
    [1.294, 1.667, 1.995, 2.382, 2.649, 3.213], // df = 69
    [1.294, 1.667, 1.994, 2.381, 2.648, 3.211], // df = 70
    [1.294, 1.667, 1.994, 2.380, 2.647, 3.209], // df = 71
    [1.293, 1.666, 1.993, 2.379, 2.646, 3.207], // df = 72
    [1.293, 1.666, 1.993, 2.379, 2.645, 3.206], // df = 73
    [1.293, 1.666, 1.993, 2.378, 2.644, 3.204], // df = 74
    [1.293, 1.665, 1.992, 2.377, 2.643, 3.202], // df = 75
    [1.293, 1.665, 1.992, 2.376, 2.642, 3.201], // df = 76
    [1.293, 1.665, 1.991, 2.376, 2.641, 3.199], // df = 77
    [1.292, 1.665, 1.991, 2.375, 2.640, 3.198], // df = 78
    [1.292, 1.664, 1.990, 2.374, 2.640, 3.197], // df = 79
    [1.292, 1.664, 1.990, 2.374, 2.639, 3.195], // df = 80
    [1.292, 1.664, 1.990, 2.373, 2.638, 3.194], // df = 81
    [1.292, 1.664, 1.989, 2.373, 2.637, 3.193], // df = 82
    [1.292, 1.663, 1.989, 2.372, 2.636, 3.191], // df = 83
    [1.292, 1.663, 1.989, 2.372, 2.636, 3.190], // df = 84
    [1.292, 1.663, 1.988, 2.371, 2.635, 3.189], // df = 85
    [1.291, 1.663, 1.988, 2.370, 2.634, 3.188], // df = 86
    [1.291, 1.663, 1.988, 2.370, 2.634, 3.187], // df = 87
    [1.291, 1.662, 1.987, 2.369, 2.633, 3.185], // df = 88
    [1.291, 1.662, 1.987, 2.369, 2.632, 3.184], // df = 89
    [1.291, 1.662, 1.987, 2.368, 2.632, 3.183], // df = 90
    [1.291, 1.662, 1.986, 2.368, 2.631, 3.182], // df = 91
    [1.291, 1.662, 1.986, 2.368, 2.630, 3.181], // df = 92
    [1.291, 1.661, 1.986, 2.367, 2.630, 3.180], // df = 93
    [1.291, 1.661, 1.986, 2.367, 2.629, 3.179], // df = 94
    [1.291, 1.661, 1.985, 2.366, 2.629, 3.178], // df = 95
    [1.290, 1.661, 1.985, 2.366, 2.628, 3.177], // df = 96
    [1.290, 1.661, 1.985, 2.365, 2.627, 3.176], // df = 97
    [1.290, 1.661, 1.984, 2.365, 2.627, 3.175], // df = 98
    [1.290, 1.660, 1.984, 2.365, 2.626, 3.175], // df = 99
    [1.290, 1.660, 1.984, 2.364, 2.626, 3.174], // df = 100
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_flag_names_the_six_levels() {
        assert_eq!(Confidence::parse_level("99.5"), Ok(Confidence::P99_5));
        assert_eq!(
            Confidence::parse_level("97").unwrap_err().to_string(),
            "invalid confidence level '97': use 80, 90, 95, 98, 99 or 99.5"
        );
        assert!(Confidence::parse_level("x").unwrap_err().is_usage());
    }

    #[test]
    fn parses_the_six_levels_like_strtod() {
        assert_eq!("80".parse::<Confidence>().unwrap(), Confidence::P80);
        assert_eq!("90".parse::<Confidence>().unwrap(), Confidence::P90);
        assert_eq!("95.0".parse::<Confidence>().unwrap(), Confidence::P95);
        assert_eq!("9.8e1".parse::<Confidence>().unwrap(), Confidence::P98);
        assert_eq!("99".parse::<Confidence>().unwrap(), Confidence::P99);
        assert_eq!("99.5".parse::<Confidence>().unwrap(), Confidence::P99_5);
    }

    #[test]
    fn rejects_other_levels_and_non_numbers() {
        assert!(matches!(
            "97".parse::<Confidence>(),
            Err(StatsError::UnsupportedConfidence(v)) if v == "97"
        ));
        assert!(matches!(
            "ninety".parse::<Confidence>(),
            Err(StatsError::ConfidenceNotANumber(v)) if v == "ninety"
        ));
        assert!(matches!(
            "95%".parse::<Confidence>(),
            Err(StatsError::ConfidenceNotANumber(_))
        ));
    }

    #[test]
    fn critical_values_at_known_points() {
        // Standard two-sided t values.
        assert_eq!(Confidence::P95.critical_t(8), 2.306);
        assert_eq!(Confidence::P95.critical_t(1), 12.706);
        assert_eq!(Confidence::P90.critical_t(10), 1.812);
        assert_eq!(Confidence::P99.critical_t(100), 2.626);
        // Past the table: the normal distribution's values.
        assert_eq!(Confidence::P95.critical_t(101), 1.960);
        assert_eq!(Confidence::P80.critical_t(5000), 1.282);
        assert_eq!(Confidence::P99_5.critical_t(2), 22.327);
    }

    #[test]
    fn every_column_decreases_with_degrees_of_freedom() {
        for level in Confidence::ALL {
            for df in 1..LAST_TABULATED_DF {
                assert!(
                    level.critical_t(df) >= level.critical_t(df + 1),
                    "{level} at {df}"
                );
            }
            assert!(level.critical_t(LAST_TABULATED_DF) > level.critical_t(LAST_TABULATED_DF + 1));
        }
    }

    #[test]
    fn displays_and_serializes_as_percent() {
        assert_eq!(Confidence::P99_5.to_string(), "99.5");
        assert_eq!(Confidence::P95.to_string(), "95");
        assert_eq!(serde_json::to_string(&Confidence::P90).unwrap(), "90.0");
    }
}
