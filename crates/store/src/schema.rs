//! The index's tables, and the columns later versions added (old stores are upgraded in place).

use rusqlite::Connection;

const TABLES: &str = "
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    started_at TEXT NOT NULL,
    scenario TEXT NOT NULL,
    scenario_file TEXT,
    variant TEXT,
    study TEXT,
    status TEXT NOT NULL,
    pid INTEGER,
    load TEXT,
    rate REAL,
    p95_ms REAL,
    error_rate REAL,
    valid INTEGER,
    passed INTEGER,
    path TEXT
);
CREATE INDEX IF NOT EXISTS runs_study ON runs(study);
CREATE TABLE IF NOT EXISTS studies (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    scenario_file TEXT,
    started_at TEXT NOT NULL,
    status TEXT NOT NULL,
    pid INTEGER,
    path TEXT
);
CREATE TABLE IF NOT EXISTS labels (
    owner TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (owner, key)
);
";

/// Columns added after the first release: (table, column, type), applied when the store's
/// `user_version` is below 2.
const ADDED: &[(&str, &str, &str)] = &[
    ("runs", "requests", "INTEGER"),
    ("runs", "segment", "TEXT"),
    ("runs", "plan_hash", "TEXT"),
    ("runs", "merged_from", "TEXT"),
    ("runs", "partial", "INTEGER"),
    ("studies", "plan_hash", "TEXT"),
    ("studies", "runs_done", "INTEGER"),
    ("studies", "runs_planned", "INTEGER"),
];

/// The schema version this code writes (`PRAGMA user_version`). Version 3 added the
/// `labels` table (created by `TABLES` when an older store is opened; old rows have none).
const VERSION: i64 = 3;

/// Creates or upgrades the tables. Several processes (the segments of one plan) may open a
/// new store at once: the version is read and the change made in one write transaction.
/// (The version, not the table's columns, decides: a connection's cached view of a table
/// can lag behind another process's change, the database header cannot.)
pub fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    // Up to date: nothing to write (so a store on a full disk can still be read).
    if conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))? >= VERSION {
        return Ok(());
    }
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let result = (|| {
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if version >= VERSION {
            return Ok(());
        }
        conn.execute_batch(TABLES)?;
        let has_columns = version == 0 && has_column(conn, "runs", "requests")?;
        if version < 2 && !has_columns {
            for (table, column, kind) in ADDED {
                conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {kind}"))?;
            }
        }
        conn.execute_batch(&format!("PRAGMA user_version = {VERSION}"))
    })();
    match result {
        Ok(()) => conn.execute_batch("COMMIT"),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// Whether `table` has `column` (for stores written during this version's development,
/// before it recorded its version).
fn has_column(conn: &Connection, table: &str, column: &str) -> rusqlite::Result<bool> {
    conn.prepare(&format!(
        "SELECT 1 FROM pragma_table_info('{table}') WHERE name = ?1"
    ))?
    .exists([column])
}
