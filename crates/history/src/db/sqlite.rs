//! The embedded backend: one SQLite file, through rusqlite with SQLite
//! compiled in. Writers take the database's write lock when their
//! transaction begins (`BEGIN IMMEDIATE`) and wait up to a minute for
//! another writer; the write-ahead log lets readers go on meanwhile.

use std::path::Path;
use std::time::Duration;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use super::sql::{Col, Conn, Dialect, Value};

/// How long a writer waits for another one to finish.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// Opens (and with `create`, creates) the file.
pub fn open(path: &Path, create: bool) -> Result<Connection, String> {
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let conn = Connection::open_with_flags(path, flags).map_err(|e| e.to_string())?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| e.to_string())?;
    // Write-ahead log: a crash mid-transaction leaves the last committed
    // state, and readers do not block the writer.
    conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
        .map_err(|e| e.to_string())?;
    conn.execute_batch("PRAGMA foreign_keys=ON")
        .map_err(|e| e.to_string())?;
    Ok(conn)
}

/// Runs `f` in a transaction: committed when it returns Ok, rolled back
/// otherwise.
pub fn transaction<T>(
    conn: &mut Connection,
    write: bool,
    f: &mut dyn FnMut(&mut dyn Conn) -> Result<T, String>,
) -> Result<T, String> {
    let behavior = if write {
        TransactionBehavior::Immediate
    } else {
        TransactionBehavior::Deferred
    };
    let tx = conn
        .transaction_with_behavior(behavior)
        .map_err(|e| e.to_string())?;
    let out = f(&mut SqliteConn(&tx))?;
    tx.commit().map_err(|e| e.to_string())?;
    Ok(out)
}

struct SqliteConn<'a>(&'a Connection);

fn bind(params: &[Value]) -> Vec<SqlValue> {
    params
        .iter()
        .map(|p| match p {
            Value::Int(Some(v)) => SqlValue::Integer(*v),
            Value::Real(Some(v)) => SqlValue::Real(*v),
            Value::Text(Some(v)) => SqlValue::Text(v.clone()),
            Value::Int(None) | Value::Real(None) | Value::Text(None) => SqlValue::Null,
        })
        .collect()
}

impl Conn for SqliteConn<'_> {
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, String> {
        let mut stmt = self.0.prepare_cached(sql).map_err(|e| e.to_string())?;
        let n = stmt
            .execute(rusqlite::params_from_iter(bind(params)))
            .map_err(|e| e.to_string())?;
        Ok(n as u64)
    }

    fn query(
        &mut self,
        sql: &str,
        params: &[Value],
        cols: &[Col],
    ) -> Result<Vec<Vec<Value>>, String> {
        let mut stmt = self.0.prepare_cached(sql).map_err(|e| e.to_string())?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(bind(params)), |row| {
                cols.iter()
                    .enumerate()
                    .map(|(i, c)| {
                        Ok(match c {
                            Col::Int => Value::Int(row.get(i)?),
                            Col::Real => Value::Real(row.get(i)?),
                            Col::Text => Value::Text(row.get(i)?),
                        })
                    })
                    .collect::<Result<Vec<Value>, rusqlite::Error>>()
            })
            .map_err(|e| e.to_string())?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())
    }

    fn batch(&mut self, sql: &str) -> Result<(), String> {
        self.0.execute_batch(sql).map_err(|e| e.to_string())
    }

    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }
}
