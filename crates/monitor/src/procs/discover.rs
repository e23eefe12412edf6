//! Finding processes by what users know about them: the port they listen on (socket inode
//! from `/proc/net/tcp{,6}` → the processes whose `/proc/<pid>/fd` hold it) or a pattern on
//! their command line.

use std::collections::HashSet;

/// Why the owner of a listening port was not found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortLookup {
    /// Processes holding the listening socket (a pre-forking server shares it among several).
    Found(Vec<i32>),
    /// Nothing listens on the port.
    NotListening,
    /// Something listens, but no readable `/proc/<pid>/fd` holds the socket: another user's
    /// process (run as root or that user, or give `pid:`) or another network namespace.
    Hidden,
}

/// The processes listening on `port` (IPv4 or IPv6, any address).
pub fn processes_listening_on(port: u16) -> std::io::Result<PortLookup> {
    let inodes = crate::sockets::listening_inodes(port)?;
    if inodes.is_empty() {
        return Ok(PortLookup::NotListening);
    }
    let owners = owners_of_sockets(&inodes.into_iter().collect())?;
    Ok(if owners.is_empty() {
        PortLookup::Hidden
    } else {
        PortLookup::Found(owners)
    })
}

/// Pids whose open files include one of the socket inodes.
pub fn owners_of_sockets(inodes: &HashSet<u64>) -> std::io::Result<Vec<i32>> {
    let mut owners = Vec::new();
    for entry in std::fs::read_dir("/proc")? {
        let Ok(entry) = entry else { continue };
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        // Unreadable (another user's process) or gone: skip it.
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let Ok(target) = std::fs::read_link(fd.path()) else {
                continue;
            };
            if let Some(inode) = socket_inode(target.as_os_str().to_str().unwrap_or("")) {
                if inodes.contains(&inode) {
                    owners.push(pid);
                    break;
                }
            }
        }
    }
    owners.sort_unstable();
    Ok(owners)
}

/// `socket:[12345]` → 12345.
fn socket_inode(link: &str) -> Option<u64> {
    link.strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// The command line of `pid`, arguments joined by spaces; empty for kernel threads.
pub fn cmdline(pid: i32) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let text = String::from_utf8_lossy(&raw);
    Some(
        text.split('\0')
            .filter(|a| !a.is_empty())
            .collect::<Vec<_>>()
            .join(" "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_links() {
        assert_eq!(socket_inode("socket:[4242]"), Some(4242));
        assert_eq!(socket_inode("pipe:[4242]"), None);
        assert_eq!(socket_inode("/dev/null"), None);
    }

    #[test]
    fn finds_this_process_by_its_listening_port() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let me = std::process::id() as i32;
        assert_eq!(
            processes_listening_on(port).unwrap(),
            PortLookup::Found(vec![me])
        );
        drop(listener);
        assert_eq!(
            processes_listening_on(port).unwrap(),
            PortLookup::NotListening
        );
        let own = cmdline(me).unwrap();
        assert!(!own.is_empty() && !own.contains('\0'));
    }
}
