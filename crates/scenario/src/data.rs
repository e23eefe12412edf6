//! Data sets: CSV files (header row = column names), JSON Lines files (an object per line) and
//! inline lists, loaded at load time.
//!
//! The CSV reader is the RFC 4180 subset test data uses (quoted fields, `""` escapes, CRLF);
//! a 60-line function here avoids a dependency for reading a few thousand rows once.

use crate::model::{DataSet, Pick};
use crate::raw::{RawData, RawPick, RawSplit};
use serde_json::Value;
use std::path::Path;

/// Loads one data set; errors are messages for the `data.NAME` field.
pub fn load(name: &str, raw: RawData, base_dir: &Path) -> Result<DataSet, String> {
    let pick = match raw.pick {
        None | Some(RawPick::Sequential) => Pick::Sequential,
        Some(RawPick::Random) => Pick::Random,
        Some(RawPick::Unique) => Pick::Unique,
    };
    let split = matches!(raw.split, Some(RawSplit::Segments));
    let csv = raw.csv.clone();
    let values = match (raw.jsonl, raw.values, &raw.csv) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            return Err("give one of `csv`, `jsonl` or `values`".into())
        }
        (Some(file), None, None) => Some(jsonl(&base_dir.join(file))?),
        (None, values, _) => values,
    };
    let (columns, rows) = match (raw.csv, values) {
        (Some(_), Some(_)) => return Err("give either `csv` or `values`, not both".into()),
        (None, None) => {
            return Err("a data set needs `csv: path/to/file.csv` or `values: [ ... ]`".into())
        }
        (Some(file), None) => csv_table(&base_dir.join(&file))?,
        (None, Some(values)) => values_table(values)?,
    };
    if rows.is_empty() {
        return Err(format!("data set `{name}` has no rows"));
    }
    Ok(DataSet {
        name: name.to_string(),
        columns,
        rows,
        pick,
        split,
        csv,
    })
}

/// A table's column names and its rows.
type Table = (Vec<String>, Vec<Vec<Value>>);

/// A CSV file's header row as the columns, every other row as text values.
fn csv_table(path: &Path) -> Result<Table, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "cannot read CSV file `{}`: {e} (the path is relative to the scenario file)",
            path.display()
        )
    })?;
    // Spreadsheets save "CSV UTF-8" with a byte-order mark, which would cling to the first
    // column's name.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut records = parse_csv(text).map_err(|m| format!("{}: {m}", path.display()))?;
    if records.is_empty() {
        return Err(format!(
            "CSV file `{}` is empty: it needs a header row with column names",
            path.display()
        ));
    }
    let header: Vec<String> = records
        .remove(0)
        .into_iter()
        .map(|h| h.trim().to_string())
        .collect();
    if let Some(k) = (1..header.len()).find(|&k| header[..k].contains(&header[k])) {
        return Err(format!(
            "{}: the header names column `{}` twice (columns {} and {}): rename one",
            path.display(),
            header[k],
            header[..k]
                .iter()
                .position(|h| *h == header[k])
                .unwrap_or(0)
                + 1,
            k + 1
        ));
    }
    for (i, r) in records.iter().enumerate() {
        if r.len() != header.len() {
            return Err(format!(
                "{}: row {} has {} fields, the header has {}",
                path.display(),
                i + 2,
                r.len(),
                header.len()
            ));
        }
    }
    let rows = records
        .into_iter()
        .map(|r| r.into_iter().map(Value::String).collect())
        .collect();
    Ok((header, rows))
}

/// Inline or JSON Lines values: mappings give their keys (the first one's) as columns,
/// plain values make a single `value` column.
fn values_table(values: Vec<Value>) -> Result<Table, String> {
    let Some(Value::Object(first)) = values.first() else {
        return scalar_table(values);
    };
    let columns: Vec<String> = first.keys().cloned().collect();
    let mut rows = Vec::new();
    for (i, v) in values.iter().enumerate() {
        let Value::Object(m) = v else {
            return Err(format!(
                "values[{i}]: every item must be a mapping like the first"
            ));
        };
        let row = columns
            .iter()
            .map(|c| {
                m.get(c)
                    .cloned()
                    .ok_or_else(|| format!("values[{i}] has no `{c}` (the first item has it)"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        rows.push(row);
    }
    Ok((columns, rows))
}

/// Plain values, one per row in a column named `value`.
fn scalar_table(values: Vec<Value>) -> Result<Table, String> {
    for (i, v) in values.iter().enumerate() {
        if v.is_array() || v.is_object() || v.is_null() {
            return Err(format!(
                "values[{i}]: expected a number, a string or a boolean"
            ));
        }
    }
    Ok((
        vec!["value".to_string()],
        values.into_iter().map(|v| vec![v]).collect(),
    ))
}

/// The objects of a JSON Lines file (blank lines skipped), each line's mistake located.
fn jsonl(path: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "cannot read JSON Lines file `{}`: {e} (the path is relative to the scenario file)",
            path.display()
        )
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(v @ Value::Object(_)) => out.push(v),
            Ok(_) => {
                return Err(format!(
                    "{} line {}: each line must be a JSON object like {{\"prompt\": \"...\"}}",
                    path.display(),
                    i + 1
                ))
            }
            Err(e) => return Err(format!("{} line {}: {e}", path.display(), i + 1)),
        }
    }
    Ok(out)
}

/// Parses CSV text into records of fields.
pub fn parse_csv(text: &str) -> Result<Vec<Vec<String>>, String> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut in_quotes = false;
    let mut line = 1;
    let mut any = false;
    while let Some(c) = chars.next() {
        any = true;
        if in_quotes {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => in_quotes = false,
                '\n' => {
                    line += 1;
                    field.push(c);
                }
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' if field.is_empty() => in_quotes = true,
            ',' => record.push(std::mem::take(&mut field)),
            '\r' => {}
            '\n' => {
                line += 1;
                record.push(std::mem::take(&mut field));
                if !(record.len() == 1 && record[0].is_empty()) {
                    records.push(std::mem::take(&mut record));
                } else {
                    record.clear();
                }
                any = false;
            }
            _ => field.push(c),
        }
    }
    if in_quotes {
        return Err(format!("unclosed quote (line {line})"));
    }
    if any {
        record.push(field);
        if !(record.len() == 1 && record[0].is_empty()) {
            records.push(record);
        }
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::{csv_table, parse_csv};

    #[test]
    fn a_byte_order_mark_is_no_part_of_the_first_column_and_a_column_is_named_once() {
        let dir = tempfile::tempdir().unwrap();
        let bom = dir.path().join("bom.csv");
        std::fs::write(&bom, "\u{feff}username,password\r\nann,pw\r\n").unwrap();
        let (columns, rows) = csv_table(&bom).unwrap();
        assert_eq!(columns, ["username", "password"]);
        assert_eq!(rows.len(), 1);
        let twice = dir.path().join("twice.csv");
        std::fs::write(&twice, "id,name,id\n1,a,2\n").unwrap();
        let err = csv_table(&twice).unwrap_err();
        assert!(
            err.ends_with("the header names column `id` twice (columns 1 and 3): rename one"),
            "{err}"
        );
    }

    #[test]
    fn parses_quotes_and_blank_lines() {
        let r = parse_csv("a,b\r\n1,\"x, \"\"y\"\"\"\n\n2,z").unwrap();
        assert_eq!(
            r,
            vec![vec!["a", "b"], vec!["1", "x, \"y\""], vec!["2", "z"]]
        );
        assert!(parse_csv("a\n\"open").is_err());
    }
}
