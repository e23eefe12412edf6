//! The store's layout in one place: the kinds of result it keeps, their file names and
//! directories, and the words its index uses for studies. No other crate spells a store path.

use std::fmt;
use std::path::{Path, PathBuf};

/// Where a results directory keeps its runs, one directory each, named by id.
pub(crate) const RUNS_DIR: &str = "runs";
/// Where `loadlab compare` keeps its comparisons, one directory each.
const COMPARISONS_DIR: &str = "comparisons";

/// A result file the store writes, by what it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultFile {
    /// `runs/<id>/run.json`: a run's summary.
    Run,
    /// `studies/<id>/study.json`.
    Study,
    /// `capacity/<id>/capacity.json`.
    Capacity,
    /// `comparisons/<id>/compare.json`.
    Comparison,
}

impl ResultFile {
    pub const ALL: [ResultFile; 4] = [
        ResultFile::Study,
        ResultFile::Capacity,
        ResultFile::Run,
        ResultFile::Comparison,
    ];

    pub fn file_name(self) -> &'static str {
        match self {
            ResultFile::Run => "run.json",
            ResultFile::Study => "study.json",
            ResultFile::Capacity => "capacity.json",
            ResultFile::Comparison => "compare.json",
        }
    }

    /// The kind of a file named as the store names its results (`None` for any other name).
    pub fn of_path(path: &Path) -> Option<ResultFile> {
        let name = path.file_name()?.to_str()?;
        Self::ALL.into_iter().find(|f| f.file_name() == name)
    }

    /// The result file a directory holds, when it is one of the store's result directories.
    pub fn in_dir(dir: &Path) -> Option<PathBuf> {
        Self::ALL
            .into_iter()
            .map(|f| dir.join(f.file_name()))
            .find(|p| p.is_file())
    }
}

/// The two things the study index holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StudyKind {
    Study,
    Capacity,
}

impl StudyKind {
    /// The word kept in the index.
    pub fn as_str(self) -> &'static str {
        match self {
            StudyKind::Study => "study",
            StudyKind::Capacity => "capacity",
        }
    }

    pub(crate) fn from_index(word: &str) -> StudyKind {
        match word {
            "capacity" => StudyKind::Capacity,
            _ => StudyKind::Study,
        }
    }

    /// The first letter of its ids (`s…`, `c…`).
    pub(crate) fn id_prefix(self) -> &'static str {
        match self {
            StudyKind::Study => "s",
            StudyKind::Capacity => "c",
        }
    }

    /// Its directory in the store.
    pub(crate) fn dir_name(self) -> &'static str {
        match self {
            StudyKind::Study => "studies",
            StudyKind::Capacity => "capacity",
        }
    }

    pub fn result_file(self) -> ResultFile {
        match self {
            StudyKind::Study => ResultFile::Study,
            StudyKind::Capacity => ResultFile::Capacity,
        }
    }

    /// How a user names it: `study`, `capacity search`.
    pub fn noun(self) -> &'static str {
        match self {
            StudyKind::Study => "study",
            StudyKind::Capacity => "capacity search",
        }
    }
}

impl fmt::Display for StudyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// Where a study or capacity search stands in the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StudyStatus {
    Running,
    Done,
    Interrupted,
}

impl StudyStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            StudyStatus::Running => "running",
            StudyStatus::Done => "done",
            StudyStatus::Interrupted => "interrupted",
        }
    }

    pub(crate) fn from_index(word: &str) -> StudyStatus {
        match word {
            "running" => StudyStatus::Running,
            "done" => StudyStatus::Done,
            _ => StudyStatus::Interrupted,
        }
    }
}

impl fmt::Display for StudyStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// The results directory a stored study or capacity file belongs to
/// (`<results>/studies/<id>/study.json` → `<results>`), where its runs are.
pub fn results_dir_of(result_file: &Path) -> PathBuf {
    result_file
        .parent()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// A run's summary in a results directory, read from the files alone (no index).
pub fn run_file_in(results: &Path, run_id: &str) -> PathBuf {
    results
        .join(RUNS_DIR)
        .join(run_id)
        .join(ResultFile::Run.file_name())
}

/// A new comparison's file under a results directory (`comparisons/<id>/compare.json`).
pub fn new_comparison_file(results: &Path) -> PathBuf {
    results
        .join(COMPARISONS_DIR)
        .join(crate::new_id("m"))
        .join(ResultFile::Comparison.file_name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_of_the_index_read_back_as_themselves() {
        for k in [StudyKind::Study, StudyKind::Capacity] {
            assert_eq!(StudyKind::from_index(k.as_str()), k);
        }
        for s in [
            StudyStatus::Running,
            StudyStatus::Done,
            StudyStatus::Interrupted,
        ] {
            assert_eq!(StudyStatus::from_index(s.as_str()), s);
        }
    }

    #[test]
    fn result_files_are_known_by_name_and_lead_back_to_their_results_directory() {
        let study = Path::new("/r/studies/s1/study.json");
        assert_eq!(ResultFile::of_path(study), Some(ResultFile::Study));
        assert_eq!(ResultFile::of_path(Path::new("/r/x/result.json")), None);
        assert_eq!(results_dir_of(study), PathBuf::from("/r"));
        assert_eq!(
            run_file_in(Path::new("/r"), "r9"),
            PathBuf::from("/r/runs/r9/run.json")
        );
    }
}
