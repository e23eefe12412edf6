//! Maps operating-system errors to error kinds a user can act on.

use loadlab_metrics::ErrorKind;
use std::io;

/// Kind of an I/O error; `connecting` tells connect-phase errors from mid-exchange ones.
pub fn classify_io(e: &io::Error, connecting: bool) -> ErrorKind {
    match e.raw_os_error() {
        Some(libc::EADDRNOTAVAIL) => return ErrorKind::AddrUnavailable,
        // Out of file descriptors: the generator's limit, never the target's failure.
        Some(libc::EMFILE | libc::ENFILE) => return ErrorKind::FdExhausted,
        _ => {}
    }
    match e.kind() {
        io::ErrorKind::ConnectionRefused => ErrorKind::ConnectRefused,
        io::ErrorKind::AddrNotAvailable => ErrorKind::AddrUnavailable,
        io::ErrorKind::TimedOut if connecting => ErrorKind::ConnectTimeout,
        io::ErrorKind::TimedOut => ErrorKind::Timeout,
        io::ErrorKind::ConnectionReset
        | io::ErrorKind::ConnectionAborted
        | io::ErrorKind::BrokenPipe
        | io::ErrorKind::UnexpectedEof => ErrorKind::Reset,
        io::ErrorKind::InvalidData if !connecting => ErrorKind::Tls,
        _ => ErrorKind::Io,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let cases = [
            (
                io::Error::from_raw_os_error(libc::EADDRNOTAVAIL),
                true,
                ErrorKind::AddrUnavailable,
            ),
            (
                io::Error::from_raw_os_error(libc::ECONNREFUSED),
                true,
                ErrorKind::ConnectRefused,
            ),
            (
                io::Error::from_raw_os_error(libc::ECONNRESET),
                false,
                ErrorKind::Reset,
            ),
            (
                io::Error::from_raw_os_error(libc::EPIPE),
                false,
                ErrorKind::Reset,
            ),
            (
                io::Error::from_raw_os_error(libc::ETIMEDOUT),
                true,
                ErrorKind::ConnectTimeout,
            ),
            (
                io::Error::from_raw_os_error(libc::EMFILE),
                true,
                ErrorKind::FdExhausted,
            ),
            (
                io::Error::from_raw_os_error(libc::ENFILE),
                false,
                ErrorKind::FdExhausted,
            ),
            (
                io::Error::from_raw_os_error(libc::EACCES),
                true,
                ErrorKind::Io,
            ),
        ];
        for (e, connecting, want) in cases {
            assert_eq!(classify_io(&e, connecting), want, "{e}");
        }
    }
}
