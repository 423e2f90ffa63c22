//! A POSIX getopt(3) for pkt-gen's command line.
//!
//! clap cannot reproduce getopt: pkt-gen's options repeat with meaning (a
//! second `-l` is the minimum size), take their value glued or separate
//! (`-ftx`, `-f tx`) and combine (`-NW`); this is the small parser that
//! does exactly that. Like glibc's getopt, operands may come between options
//! (they are collected, not parsed); `--` ends the options.

/// One option as getopt returns it, in command-line order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt {
    pub name: char,
    pub value: Option<String>,
}

/// The parsed command line: options in order, then the operands.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    pub opts: Vec<Opt>,
    pub operands: Vec<String>,
}

/// Parses `args` (without the program name) against a getopt `spec` such as
/// `"46a:f:N"`. Errors are getopt's two: an unknown option, a missing value.
pub fn getopt(spec: &str, args: &[String]) -> Result<Parsed, String> {
    let mut parsed = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--" {
            parsed.operands.extend(args[i..].iter().cloned());
            break;
        }
        let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.is_empty()) else {
            parsed.operands.push(arg.clone());
            continue;
        };
        for (at, name) in cluster.char_indices() {
            match takes_value(spec, name) {
                None => return Err(format!("unknown option -{name}")),
                Some(false) => parsed.opts.push(Opt { name, value: None }),
                Some(true) => {
                    let glued = &cluster[at + name.len_utf8()..];
                    let value = if !glued.is_empty() {
                        glued.to_string()
                    } else if i < args.len() {
                        i += 1;
                        args[i - 1].clone()
                    } else {
                        return Err(format!("option -{name} needs a value"));
                    };
                    parsed.opts.push(Opt {
                        name,
                        value: Some(value),
                    });
                    break;
                }
            }
        }
    }
    Ok(parsed)
}

/// `Some(true)` for an option with a value (`a:`), `Some(false)` for a flag,
/// `None` when `spec` does not have it.
fn takes_value(spec: &str, name: char) -> Option<bool> {
    if name == ':' {
        return None;
    }
    let at = spec.find(name)?;
    Some(spec[at + name.len_utf8()..].starts_with(':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    fn opt(name: char, value: Option<&str>) -> Opt {
        Opt {
            name,
            value: value.map(str::to_string),
        }
    }

    const SPEC: &str = "46a:f:Nl:W";

    #[test]
    fn glued_separate_and_combined() {
        let p = getopt(SPEC, &args("-ftx -l 60 -NW -4l64 -a 2")).unwrap();
        assert_eq!(
            p.opts,
            [
                opt('f', Some("tx")),
                opt('l', Some("60")),
                opt('N', None),
                opt('W', None),
                opt('4', None),
                opt('l', Some("64")),
                opt('a', Some("2")),
            ]
        );
        assert!(p.operands.is_empty());
    }

    #[test]
    fn a_value_may_look_like_an_option() {
        let p = getopt(SPEC, &args("-f -N")).unwrap();
        assert_eq!(p.opts, [opt('f', Some("-N"))]);
    }

    #[test]
    fn operands_and_double_dash() {
        let p = getopt(SPEC, &args("x -N - y -- -W z")).unwrap();
        assert_eq!(p.opts, [opt('N', None)]);
        assert_eq!(p.operands, ["x", "-", "y", "-W", "z"]);
    }

    #[test]
    fn errors() {
        assert_eq!(
            getopt(SPEC, &args("-N -q")),
            Err("unknown option -q".into())
        );
        assert_eq!(getopt(SPEC, &args("-Nq")), Err("unknown option -q".into()));
        assert_eq!(getopt(SPEC, &args("-:")), Err("unknown option -:".into()));
        assert_eq!(
            getopt(SPEC, &args("-N -l")),
            Err("option -l needs a value".into())
        );
    }
}
