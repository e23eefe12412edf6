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
";

/// Columns added after the first release: (table, column, type).
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

pub fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(TABLES)?;
    for (table, column, kind) in ADDED {
        let exists = conn
            .prepare(&format!(
                "SELECT 1 FROM pragma_table_info('{table}') WHERE name = ?1"
            ))?
            .exists([column])?;
        if !exists {
            conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {kind}"))?;
        }
    }
    Ok(())
}
