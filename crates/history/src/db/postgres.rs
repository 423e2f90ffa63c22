//! The team backend: a PostgreSQL database, through the synchronous
//! `postgres` client (no TLS: a local socket, a trusted network or an ssh
//! tunnel). Transactions are PostgreSQL's own; a client killed in the
//! middle of one has it rolled back by the server.

use std::str::FromStr;

use postgres::types::ToSql;
use postgres::{Client, Config, NoTls, Transaction};

use super::sql::{numbered, Col, Conn, Dialect, Value};
use super::target::CONNECT_TIMEOUT;

/// Connects to `url` (a connection timeout of its own unless it names
/// one).
pub fn connect(url: &str) -> Result<Client, String> {
    let mut config = Config::from_str(url).map_err(|e| e.to_string())?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    config.connect(NoTls).map_err(|e| message(&e))
}

/// The server's own message when there is one ("relation ... does not
/// exist"), else the client's ("error connecting to server: ...").
pub fn message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                let more = s.to_string();
                if !text.contains(&more) {
                    text = format!("{text}: {more}");
                }
                source = s.source();
            }
            text
        }
    }
}

/// Runs `f` in a transaction: committed when it returns Ok, rolled back
/// otherwise.
pub fn transaction<T>(
    client: &mut Client,
    f: &mut dyn FnMut(&mut dyn Conn) -> Result<T, String>,
) -> Result<T, String> {
    let mut tx = client.transaction().map_err(|e| message(&e))?;
    let out = f(&mut PgConn(&mut tx))?;
    tx.commit().map_err(|e| message(&e))?;
    Ok(out)
}

struct PgConn<'a, 'b>(&'a mut Transaction<'b>);

fn bind(params: &[Value]) -> Vec<Box<dyn ToSql + Sync>> {
    params
        .iter()
        .map(|p| -> Box<dyn ToSql + Sync> {
            match p {
                Value::Int(v) => Box::new(*v),
                Value::Real(v) => Box::new(*v),
                Value::Text(v) => Box::new(v.clone()),
            }
        })
        .collect()
}

impl Conn for PgConn<'_, '_> {
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, String> {
        let boxed = bind(params);
        let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
        self.0
            .execute(&numbered(sql), &refs)
            .map_err(|e| message(&e))
    }

    fn query(
        &mut self,
        sql: &str,
        params: &[Value],
        cols: &[Col],
    ) -> Result<Vec<Vec<Value>>, String> {
        let boxed = bind(params);
        let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
        let rows = self
            .0
            .query(&numbered(sql), &refs)
            .map_err(|e| message(&e))?;
        rows.iter()
            .map(|row| {
                cols.iter()
                    .enumerate()
                    .map(|(i, c)| {
                        Ok(match c {
                            Col::Int => Value::Int(row.try_get(i).map_err(|e| message(&e))?),
                            Col::Real => Value::Real(row.try_get(i).map_err(|e| message(&e))?),
                            Col::Text => Value::Text(row.try_get(i).map_err(|e| message(&e))?),
                        })
                    })
                    .collect()
            })
            .collect()
    }

    fn batch(&mut self, sql: &str) -> Result<(), String> {
        self.0.batch_execute(sql).map_err(|e| message(&e))
    }

    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }
}
