//! The machine a run was measured on: CPU, cores, memory, OS — so a report can say where its
//! numbers come from (and a comparison can warn when two runs come from different machines).
//!
//! Read from `/proc` on Linux (no extra dependency); fields that cannot be read are `null`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Environment {
    /// Host name of the generator machine.
    pub hostname: Option<String>,
    /// Operating system and kernel release, e.g. `Linux 6.1.0-18-amd64`.
    pub os: String,
    /// CPU architecture, e.g. `x86_64`.
    pub arch: String,
    /// CPU model name, e.g. `AMD EPYC 7B13`.
    pub cpu_model: Option<String>,
    /// Logical CPUs available to the process.
    pub cpus: u32,
    /// Physical memory, in bytes.
    pub memory_bytes: Option<u64>,
    /// Kubernetes node and pod the generator ran in (from `NODE_NAME` and `POD_NAME`, which
    /// the manifests of `loadlab k8s` set through the downward API).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<String>,
}

impl Environment {
    /// Reads the current machine's description.
    pub fn detect() -> Environment {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let os = match (
            read("/proc/sys/kernel/ostype"),
            read("/proc/sys/kernel/osrelease"),
        ) {
            (Some(t), Some(r)) => format!("{t} {r}"),
            _ => std::env::consts::OS.to_string(),
        };
        let cpu_model = read("/proc/cpuinfo").and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name") || l.starts_with("Model"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        });
        let memory_bytes = read("/proc/meminfo").and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb * 1024)
        });
        Environment {
            hostname: read("/proc/sys/kernel/hostname"),
            os,
            arch: std::env::consts::ARCH.to_string(),
            cpu_model,
            cpus: std::thread::available_parallelism()
                .map(|n| n.get() as u32)
                .unwrap_or(1),
            memory_bytes,
            node: env_text("NODE_NAME"),
            pod: env_text("POD_NAME"),
        }
    }
}

fn env_text(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    #[test]
    fn detects_this_machine() {
        let e = super::Environment::detect();
        assert!(e.cpus >= 1);
        assert!(!e.os.is_empty());
        assert!(!e.arch.is_empty());
        if cfg!(target_os = "linux") {
            assert!(e.memory_bytes.unwrap_or(0) > 0);
        }
    }
}
