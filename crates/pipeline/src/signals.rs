//! Signals a run must survive: SIGINT (Ctrl-C), SIGTERM (CI cancellation, `timeout`, `docker
//! stop`) and SIGHUP (a closed terminal) stop the load, and the partial result is summarised,
//! stored and printed; a second signal exits at once (the record on disk already holds every
//! completed interval). SIGXFSZ is ignored so a file-size limit is a write error the run
//! reports, not a silent death.

use loadlab_engine::Cancel;
use tokio::signal::unix::{signal, SignalKind};

/// What a `loadlab` process sets up before anything else: SIGXFSZ ignored, and a closed
/// standard output ending the process quietly.
pub fn prepare_process() {
    ignore_file_size_signal();
    quiet_exit_on_closed_stdout();
}

/// Ignores SIGXFSZ: writing past a file-size limit then fails with EFBIG instead of killing
/// the process, and the run reports that its results could not be stored.
fn ignore_file_size_signal() {
    // SAFETY: setting a signal's disposition to SIG_IGN has no preconditions.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// Watches for SIGINT, SIGTERM and SIGHUP on a thread of its own: the first cancels `cancel`
/// (with the signal's name as the reason), the second exits with code 3 at once: a
/// process-wide act, as a second Ctrl-C means "quit now" to every tool.
pub fn watch(cancel: Cancel) {
    let _ = std::thread::Builder::new()
        .name("loadlab-signals".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async move {
                let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
                    signal(SignalKind::interrupt()),
                    signal(SignalKind::terminate()),
                    signal(SignalKind::hangup()),
                ) else {
                    return;
                };
                let mut seen = 0;
                loop {
                    let name = tokio::select! {
                        _ = int.recv() => "SIGINT",
                        _ = term.recv() => "SIGTERM",
                        _ = hup.recv() => "SIGHUP",
                    };
                    seen += 1;
                    if seen == 1 {
                        eprintln!(
                            "\n{name}: stopping the load and writing the partial result (send it again to quit at once)"
                        );
                        cancel.cancel_because(loadlab_engine::StopCause::Signal(name.to_string()));
                    } else {
                        eprintln!(
                            "\n{name} again: quitting now; every completed interval is already on disk (`loadlab runs` shows the run as interrupted)"
                        );
                        std::process::exit(crate::exit_code::ABORTED);
                    }
                }
            });
        });
}

/// `loadlab runs | head` closes the pipe early: the next print panics inside `println!`. The
/// generator keeps SIGPIPE ignored (its sockets must see EPIPE, not die), so a reader that went
/// away is noticed here instead: the panic ends the process quietly, like any Unix tool whose
/// reader left — everything it had to store was stored before it printed.
fn quiet_exit_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if stdout_reader_gone() {
            std::process::exit(crate::exit_code::OK);
        }
        default(info);
    }));
}

/// A pipe whose reading end is closed polls as POLLERR for its writer.
fn stdout_reader_gone() -> bool {
    let mut fd = libc::pollfd {
        fd: libc::STDOUT_FILENO,
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one valid pollfd, zero timeout.
    let ready = unsafe { libc::poll(&mut fd, 1, 0) };
    ready == 1 && fd.revents & libc::POLLERR != 0
}
