//! The scenario travels to the pods in a ConfigMap: the scenario file and every CSV file its
//! `data:` names, mounted at `/scenario` with the same relative paths, so the file runs in the
//! pod exactly as it runs here.

use crate::error::K8sError;
use crate::options::K8sOptions;
use k8s_openapi::api::core::v1::{ConfigMap, KeyToPath};
use loadlab_scenario::Scenario;
use std::collections::BTreeMap;
use std::path::{Component, Path};

/// Where the ConfigMap is mounted in the pods.
pub const MOUNT: &str = "/scenario";

/// A ConfigMap holds at most 1 MiB.
const MAX_BYTES: usize = 1024 * 1024;

/// One file of the ConfigMap: its key and its path under the mount.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioFile {
    pub key: String,
    pub path: String,
    pub text: String,
}

/// Turns a relative path into a ConfigMap key (`data/users.csv` → `data--users.csv`).
fn key_of(path: &str) -> String {
    path.split('/')
        .map(|part| {
            part.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("--")
}

fn read(path: &Path) -> Result<String, K8sError> {
    std::fs::read_to_string(path).map_err(|e| K8sError::File {
        path: path.display().to_string(),
        message: format!("cannot read it: {e}"),
    })
}

/// The scenario file first, then its CSV files (relative to it, in `data:` order), and notes
/// for the reader: a CSV named by absolute path is expected in the image, not carried.
pub fn scenario_files(
    scenario: &Scenario,
    path: &Path,
) -> Result<(Vec<ScenarioFile>, Vec<String>), K8sError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .ok_or_else(|| K8sError::File {
            path: path.display().to_string(),
            message: "not a scenario file".into(),
        })?;
    let mut files = vec![ScenarioFile {
        key: key_of(&name),
        path: name,
        text: read(path)?,
    }];
    let base = path.parent().unwrap_or(Path::new("."));
    let mut notes = Vec::new();
    for data in &scenario.data {
        let Some(csv) = &data.csv else { continue };
        let rel = Path::new(csv);
        if rel.is_absolute() {
            notes.push(format!(
                "data `{}`: {csv} is named by absolute path, so it is not in the ConfigMap: the image must contain it",
                data.name
            ));
            continue;
        }
        let inside = rel
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !inside {
            return Err(K8sError::File {
                path: path.display().to_string(),
                message: format!("data `{}`: csv `{csv}` is not inside the scenario's directory; the pods get the scenario's directory only: move the file beside the scenario (or below it), or build it into the image and name it by absolute path", data.name),
            });
        }
        let clean: Vec<String> = rel
            .components()
            .filter_map(|c| match c {
                Component::Normal(p) => Some(p.to_string_lossy().to_string()),
                _ => None,
            })
            .collect();
        let rel_text = clean.join("/");
        if files.iter().any(|f| f.path == rel_text) {
            continue;
        }
        files.push(ScenarioFile {
            key: key_of(&rel_text),
            path: rel_text,
            text: read(&base.join(rel))?,
        });
    }
    let total: usize = files.iter().map(|f| f.text.len()).sum();
    if total > MAX_BYTES {
        return Err(K8sError::File {
            path: path.display().to_string(),
            message: format!("the scenario and its data files are {:.1} MiB, more than a ConfigMap holds (1 MiB): build an image with the data in it (FROM the loadlab image; COPY users.csv /data/), give it with --image, and name the file by absolute path (csv: /data/users.csv)", total as f64 / MAX_BYTES as f64),
        });
    }
    Ok((files, notes))
}

pub fn config_map(o: &K8sOptions, files: &[ScenarioFile]) -> Result<ConfigMap, K8sError> {
    let data: BTreeMap<String, String> = files
        .iter()
        .map(|f| (f.key.clone(), f.text.clone()))
        .collect();
    Ok(ConfigMap {
        metadata: crate::object_meta::metadata(o, &config_map_name(o), "scenario"),
        data: Some(data),
        ..Default::default()
    })
}

pub fn config_map_name(o: &K8sOptions) -> String {
    format!("{}-scenario", o.name)
}

/// The ConfigMap volume's items: each key back at its relative path.
pub fn items(files: &[ScenarioFile]) -> Vec<KeyToPath> {
    files
        .iter()
        .map(|f| KeyToPath {
            key: f.key.clone(),
            path: f.path.clone(),
            mode: None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::key_of;

    #[test]
    fn keys_are_legal_and_distinct() {
        assert_eq!(key_of("spike.yaml"), "spike.yaml");
        assert_eq!(key_of("data/users.csv"), "data--users.csv");
        assert_eq!(key_of("data/my users.csv"), "data--my_users.csv");
        assert_ne!(key_of("a/b.csv"), key_of("a-b.csv"));
    }
}
