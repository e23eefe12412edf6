//! What the gRPC service did, for `/metrics`: calls by method and final status, and the
//! messages received and sent by method, so tests compare a run's counts with the target's.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::wire::Code;

/// A method the target knows, or `Other` (answered UNIMPLEMENTED).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Create,
    Get,
    Watch,
    ReflectionV1,
    ReflectionV1Alpha,
    Other,
}

/// Method labels, in the order of the enum.
const METHODS: [&str; 6] = [
    "/permits.v1.Permits/Create",
    "/permits.v1.Permits/Get",
    "/permits.v1.Permits/Watch",
    "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
    "other",
];

impl Method {
    pub fn of(path: &str) -> Method {
        match METHODS.iter().position(|m| *m == path) {
            Some(0) => Method::Create,
            Some(1) => Method::Get,
            Some(2) => Method::Watch,
            Some(3) => Method::ReflectionV1,
            Some(4) => Method::ReflectionV1Alpha,
            _ => Method::Other,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Lock-free counters (relaxed atomic adds on fixed arrays).
#[derive(Debug, Default)]
pub struct GrpcCounters {
    calls: [[AtomicU64; Code::ALL.len()]; METHODS.len()],
    received: [AtomicU64; METHODS.len()],
    sent: [AtomicU64; METHODS.len()],
}

impl GrpcCounters {
    /// A call ended with `code`.
    pub fn call(&self, method: Method, code: Code) {
        self.calls[method.index()][usize::from(code.as_u8())].fetch_add(1, Relaxed);
    }

    pub fn received(&self, method: Method, n: usize) {
        self.received[method.index()].fetch_add(n as u64, Relaxed);
    }

    pub fn sent(&self, method: Method, n: usize) {
        self.sent[method.index()].fetch_add(n as u64, Relaxed);
    }

    /// The Prometheus exposition of the counters (lines with zero left out).
    pub fn render(&self, out: &mut String) {
        let _ = writeln!(out, "# HELP loadlab_target_grpc_calls_total gRPC calls ended, by method and status.\n# TYPE loadlab_target_grpc_calls_total counter");
        for (m, method) in METHODS.iter().enumerate() {
            for code in Code::ALL {
                let n = self.calls[m][usize::from(code.as_u8())].load(Relaxed);
                if n > 0 {
                    let _ = writeln!(
                        out,
                        "loadlab_target_grpc_calls_total{{method=\"{method}\",code=\"{code}\"}} {n}"
                    );
                }
            }
        }
        for (name, help, counts) in [
            (
                "loadlab_target_grpc_messages_received_total",
                "gRPC request messages received, by method.",
                &self.received,
            ),
            (
                "loadlab_target_grpc_messages_sent_total",
                "gRPC response messages sent, by method.",
                &self.sent,
            ),
        ] {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
            for (m, method) in METHODS.iter().enumerate() {
                let n = counts[m].load(Relaxed);
                if n > 0 {
                    let _ = writeln!(out, "{name}{{method=\"{method}\"}} {n}");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_by_path() {
        assert_eq!(Method::of("/permits.v1.Permits/Create"), Method::Create);
        assert_eq!(Method::of("/permits.v1.Permits/Watch"), Method::Watch);
        assert_eq!(
            Method::of("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"),
            Method::ReflectionV1Alpha
        );
        assert_eq!(Method::of("/permits.v1.Permits/Delete"), Method::Other);
        assert_eq!(Method::of("other"), Method::Other);
    }

    #[test]
    fn renders_calls_and_messages() {
        let c = GrpcCounters::default();
        c.call(Method::Create, Code::Ok);
        c.call(Method::Create, Code::Ok);
        c.call(Method::Other, Code::Unimplemented);
        c.received(Method::Watch, 1);
        c.sent(Method::Watch, 3);
        let mut out = String::new();
        c.render(&mut out);
        for line in [
            "loadlab_target_grpc_calls_total{method=\"/permits.v1.Permits/Create\",code=\"OK\"} 2\n",
            "loadlab_target_grpc_calls_total{method=\"other\",code=\"UNIMPLEMENTED\"} 1\n",
            "loadlab_target_grpc_messages_received_total{method=\"/permits.v1.Permits/Watch\"} 1\n",
            "loadlab_target_grpc_messages_sent_total{method=\"/permits.v1.Permits/Watch\"} 3\n",
        ] {
            assert!(out.contains(line), "{line:?} in\n{out}");
        }
        assert!(!out.contains("Get"), "{out}");
    }
}
