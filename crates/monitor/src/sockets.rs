//! TCP sockets of this network namespace. Every interval: the cheap totals of
//! `/proc/net/sockstat{,6}` and `/proc/net/snmp` (in use, established, TIME_WAIT, orphans).
//! Only when there are many sockets, or to find the process behind `port: 8080`: the full
//! tables `/proc/net/tcp{,6}` — sockets per state, local ports of the ephemeral range taken,
//! listening socket inodes. Reading those walks the kernel's whole connection hash table
//! (~4 ms per file on a machine with 24 GiB, even with no socket open), so it is not done
//! every second when it cannot matter.
//!
//! Parsed by hand instead of with `procfs::net::tcp()`: with 60,000 connections the files
//! are ~9 MB, and a scan that allocates nothing per line keeps the monitor's cost small.

use crate::sys::read_into;

/// Linux TCP states in the order of their numeric codes 1..=11 (`include/net/tcp_states.h`).
pub const TCP_STATES: [&str; 11] = [
    "established",
    "syn_sent",
    "syn_recv",
    "fin_wait1",
    "fin_wait2",
    "time_wait",
    "close",
    "close_wait",
    "last_ack",
    "listen",
    "closing",
];
const LISTEN: usize = 10;

/// One scan of both files.
#[derive(Debug, Default, Clone)]
pub struct SocketScan {
    /// Sockets per state, indexed by state code − 1 (see [`TCP_STATES`]).
    pub states: [u32; 11],
    /// Distinct local ports inside the ephemeral range, any state.
    pub ephemeral_in_use: u32,
    /// `(port, inode)` of every listening socket.
    pub listeners: Vec<(u16, u64)>,
}

/// The socket totals the kernel keeps counted (no table walk).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SocketTotals {
    /// TCP sockets in use, IPv4 and IPv6 (TIME_WAIT not included).
    pub in_use: u64,
    pub established: u64,
    pub time_wait: u64,
    pub orphans: u64,
}

impl SocketTotals {
    /// Reads `/proc/net/sockstat`, `/proc/net/sockstat6` and `/proc/net/snmp`.
    pub fn read() -> std::io::Result<SocketTotals> {
        let sockstat = std::fs::read_to_string("/proc/net/sockstat")?;
        let field = |text: &str, line: &str, key: &str| -> Option<u64> {
            let rest = text.lines().find_map(|l| l.strip_prefix(line))?;
            let mut words = rest.split_whitespace();
            while let Some(w) = words.next() {
                if w == key {
                    return words.next()?.parse().ok();
                }
            }
            None
        };
        let v6 = std::fs::read_to_string("/proc/net/sockstat6").unwrap_or_default();
        let snmp = std::fs::read_to_string("/proc/net/snmp").unwrap_or_default();
        Ok(SocketTotals {
            in_use: field(&sockstat, "TCP:", "inuse").unwrap_or(0)
                + field(&v6, "TCP6:", "inuse").unwrap_or(0),
            established: snmp_value(&snmp, "Tcp:", "CurrEstab").unwrap_or(0),
            time_wait: field(&sockstat, "TCP:", "tw").unwrap_or(0),
            orphans: field(&sockstat, "TCP:", "orphan").unwrap_or(0),
        })
    }
}

/// A value of `/proc/net/snmp`, whose lines come in pairs: names, then values.
fn snmp_value(text: &str, prefix: &str, name: &str) -> Option<u64> {
    let mut lines = text.lines().filter(|l| l.starts_with(prefix));
    let names = lines.next()?;
    let values = lines.next()?;
    let i = names.split_whitespace().position(|n| n == name)?;
    values.split_whitespace().nth(i)?.parse().ok()
}

/// Scans the socket tables, reusing buffers between intervals.
pub struct SocketScanner {
    buf: Vec<u8>,
    ports: Box<[u64; 1024]>,
    pub range: (u16, u16),
}

impl SocketScanner {
    pub fn new() -> Self {
        SocketScanner {
            buf: Vec::new(),
            ports: Box::new([0; 1024]),
            range: ephemeral_range().unwrap_or((32768, 60999)),
        }
    }

    /// Number of ports in the ephemeral range.
    pub fn range_size(&self) -> u32 {
        u32::from(self.range.1.saturating_sub(self.range.0)) + 1
    }

    /// Reads `/proc/net/tcp` and `/proc/net/tcp6`; a missing file (no IPv6) is skipped.
    pub fn scan(&mut self) -> std::io::Result<SocketScan> {
        let mut out = SocketScan::default();
        self.ports.fill(0);
        let mut any = false;
        for path in ["/proc/net/tcp", "/proc/net/tcp6"] {
            match read_into(path, &mut self.buf) {
                Ok(()) => any = true,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            }
            parse_table(&self.buf, self.range, &mut self.ports, &mut out);
        }
        if !any {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "/proc/net/tcp not found",
            ));
        }
        out.ephemeral_in_use = self.ports.iter().map(|w| w.count_ones()).sum();
        Ok(out)
    }
}

/// Socket inodes listening on `port`, from a fresh read of the tables.
pub fn listening_inodes(port: u16) -> std::io::Result<Vec<u64>> {
    let mut scanner = SocketScanner::new();
    Ok(scanner
        .scan()?
        .listeners
        .into_iter()
        .filter(|(p, _)| *p == port)
        .map(|(_, inode)| inode)
        .collect())
}

/// `net.ipv4.ip_local_port_range` (it applies to IPv6 too).
pub fn ephemeral_range() -> Option<(u16, u16)> {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let mut it = text.split_whitespace().map(|t| t.parse::<u16>().ok());
    Some((it.next()??, it.next()??))
}

/// Adds one table's sockets to `out` and marks their local ports in `ports`.
fn parse_table(buf: &[u8], range: (u16, u16), ports: &mut [u64; 1024], out: &mut SocketScan) {
    // Skip the header line.
    let body = match buf.iter().position(|&b| b == b'\n') {
        Some(i) => &buf[i + 1..],
        None => return,
    };
    for line in body.split(|&b| b == b'\n') {
        let mut fields = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
        let (Some(_sl), Some(local), Some(_remote), Some(state)) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let Some(port) = local
            .iter()
            .rposition(|&b| b == b':')
            .and_then(|i| hex(&local[i + 1..]))
            .and_then(|p| u16::try_from(p).ok())
        else {
            continue;
        };
        let Some(state) = hex(state).map(|s| s as usize) else {
            continue;
        };
        if (1..=TCP_STATES.len()).contains(&state) {
            out.states[state - 1] += 1;
        }
        if port >= range.0 && port <= range.1 {
            ports[usize::from(port) / 64] |= 1 << (port % 64);
        }
        if state == LISTEN {
            // tx_queue:rx_queue, tr:when, retrnsmt, uid, timeout, inode
            if let Some(inode) = fields.nth(5).and_then(dec) {
                out.listeners.push((port, inode));
            }
        }
    }
}

fn hex(field: &[u8]) -> Option<u64> {
    std::str::from_utf8(field)
        .ok()
        .and_then(|s| u64::from_str_radix(s, 16).ok())
}

fn dec(field: &[u8]) -> Option<u64> {
    std::str::from_utf8(field).ok().and_then(|s| s.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0
   1: 0100007F:8001 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 5151 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:8001 0100007F:1F91 06 00000000:00000000 03:00001770 00000000     0        0 0 3 0000000000000000
   3: 0100007F:8002 0100007F:1F90 06 00000000:00000000 03:00001770 00000000     0        0 0 3 0000000000000000
   4: 0100007F:0016 0100007F:1F90 08 00000000:00000000 00:00000000 00000000     0        0 77 1 0000000000000000
";

    #[test]
    fn counts_states_ports_and_listeners() {
        let mut ports = [0u64; 1024];
        let mut out = SocketScan::default();
        parse_table(TABLE.as_bytes(), (32768, 60999), &mut ports, &mut out);
        assert_eq!(out.states[0], 1, "established");
        assert_eq!(out.states[5], 2, "time_wait");
        assert_eq!(out.states[7], 1, "close_wait");
        assert_eq!(out.states[9], 1, "listen");
        // 0x8001 = 32769 twice (one port) and 0x8002 = 32770; 0x1F90 = 8080 is outside.
        assert_eq!(ports.iter().map(|w| w.count_ones()).sum::<u32>(), 2);
        assert_eq!(out.listeners, vec![(8080, 4242)]);
    }

    #[test]
    fn snmp_pairs() {
        let text = "Ip: Forwarding DefaultTTL\nIp: 1 64\nTcp: RtoAlgorithm CurrEstab InSegs\nTcp: 1 17 99\n";
        assert_eq!(snmp_value(text, "Tcp:", "CurrEstab"), Some(17));
        assert_eq!(snmp_value(text, "Tcp:", "Nope"), None);
        let totals = SocketTotals::read().unwrap();
        assert!(totals.in_use < 10_000_000);
    }

    #[test]
    fn scans_this_machine_and_finds_a_listener() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut scanner = SocketScanner::new();
        let scan = scanner.scan().unwrap();
        assert!(scan.states[LISTEN - 1] >= 1);
        assert!(scan.listeners.iter().any(|(p, _)| *p == port));
        assert_eq!(listening_inodes(port).unwrap().len(), 1);
        assert!(scanner.range_size() > 1000);
    }
}
