//! The kernel's receive timestamps (`SO_TIMESTAMPNS`): when a read's bytes reached the socket,
//! as an instant of the monotonic clock, for reads that happen later than that (see
//! deferred.rs).

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::RawFd;
use tokio::time::{Duration, Instant};

/// Asks the kernel to stamp what `fd` receives (`SO_TIMESTAMPNS`).
pub fn want_timestamps(fd: RawFd) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: `on` outlives the call and its size is passed.
    let done = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if done < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// One non-blocking `recvmsg` from `fd` into `dst`: the bytes read, and when they reached the
/// socket if the kernel stamped them.
pub fn receive_stamped(fd: RawFd, dst: &mut [u8]) -> io::Result<(usize, Option<Instant>)> {
    let mut iov = libc::iovec {
        iov_base: dst.as_mut_ptr().cast(),
        iov_len: dst.len(),
    };
    // Room for one SCM_TIMESTAMPNS (a cmsghdr and a timespec), 8-aligned.
    let mut control = [MaybeUninit::<u64>::uninit(); 8];
    // SAFETY: msghdr is plain data; zeroed is a valid empty header.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: `msg` points at `iov` (over `dst`) and `control`, all alive for the call.
    let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let stamp = if n > 0 { received_stamp(&msg) } else { None };
    Ok((n as usize, stamp))
}

/// The SCM_TIMESTAMPNS in `msg`, as an instant of the monotonic clock.
fn received_stamp(msg: &libc::msghdr) -> Option<Instant> {
    // SAFETY: `msg` was filled by recvmsg; the CMSG_* walk stays within msg_controllen.
    let stamp = unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(msg);
        let mut found = None;
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SO_TIMESTAMPNS {
                found = Some(std::ptr::read_unaligned(
                    libc::CMSG_DATA(cmsg).cast::<libc::timespec>(),
                ));
                break;
            }
            cmsg = libc::CMSG_NXTHDR(msg, cmsg);
        }
        found?
    };
    let now = Instant::now();
    let mut wall = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `wall` is a valid timespec to write.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut wall) };
    let age_ns = (i128::from(wall.tv_sec) - i128::from(stamp.tv_sec)) * 1_000_000_000
        + (i128::from(wall.tv_nsec) - i128::from(stamp.tv_nsec));
    // A stamp from the future (the wall clock stepped back) is read as "now"; one older than
    // a second cannot be this read's and is not trusted.
    match u64::try_from(age_ns) {
        Ok(ns) if ns < 1_000_000_000 => now.checked_sub(Duration::from_nanos(ns)),
        Ok(_) => None,
        Err(_) => Some(now),
    }
}
