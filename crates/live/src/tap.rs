//! A tap watches every run of one command (a study makes many): the dashboard's server or an
//! output's sender lives as long as the command and gives each run its own observer.

use loadlab_metrics::LiveObserver;

/// Lives for the whole command; one observer per run.
pub trait LiveTap: Send + Sync {
    /// An observer for the next run.
    fn observer(&self) -> Box<dyn LiveObserver>;
}
