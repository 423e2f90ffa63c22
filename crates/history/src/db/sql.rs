//! The little the history needs from a database, the same for SQLite and
//! PostgreSQL: statements with `?` placeholders, typed values in and out,
//! inside a transaction. The backends ([`super::sqlite`],
//! [`super::postgres`]) translate; everything above speaks this.

/// A value for a placeholder or from a column, with its type (PostgreSQL
/// needs a typed NULL).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<String>),
}

/// The type of a column to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Col {
    Int,
    Real,
    Text,
}

impl Value {
    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(v) => *v,
            _ => None,
        }
    }

    pub fn real(&self) -> Option<f64> {
        match self {
            Value::Real(v) => *v,
            _ => None,
        }
    }

    pub fn text(&self) -> Option<String> {
        match self {
            Value::Text(v) => v.clone(),
            _ => None,
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(Some(v))
    }
}

impl From<Option<i64>> for Value {
    fn from(v: Option<i64>) -> Value {
        Value::Int(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Int(Some(i64::from(v)))
    }
}

impl From<Option<bool>> for Value {
    fn from(v: Option<bool>) -> Value {
        Value::Int(v.map(i64::from))
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Real(Some(v))
    }
}

impl From<Option<f64>> for Value {
    fn from(v: Option<f64>) -> Value {
        Value::Real(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(Some(v.to_string()))
    }
}

impl From<&String> for Value {
    fn from(v: &String) -> Value {
        Value::Text(Some(v.clone()))
    }
}

impl From<&Option<String>> for Value {
    fn from(v: &Option<String>) -> Value {
        Value::Text(v.clone())
    }
}

/// A connection inside a transaction. Errors are the backend's text.
pub trait Conn {
    /// Runs a statement; the number of rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, String>;
    /// Runs a query; each row's columns read as `cols` says.
    fn query(
        &mut self,
        sql: &str,
        params: &[Value],
        cols: &[Col],
    ) -> Result<Vec<Vec<Value>>, String>;
    /// Runs statements separated by `;`, without parameters.
    fn batch(&mut self, sql: &str) -> Result<(), String>;
    /// Which SQL: table creation differs in its id columns.
    fn dialect(&self) -> Dialect;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// `?` placeholders numbered as PostgreSQL wants them (`$1`, `$2`, ...).
/// The history's statements have no `?` inside string literals.
pub fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push_str(&format!("${n}"));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn placeholders_numbered_in_order() {
        assert_eq!(
            super::numbered("INSERT INTO t (a, b) VALUES (?, ?) RETURNING id"),
            "INSERT INTO t (a, b) VALUES ($1, $2) RETURNING id"
        );
        assert_eq!(super::numbered("SELECT 1"), "SELECT 1");
    }
}
