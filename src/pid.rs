//! Whether a process is alive: it exists and is not a zombie (a killed
//! process whose parent has not reaped it yet still exists but does no
//! work). Shared by the run's lock (is its holder alive?) and the language
//! server (is its editor?); a leaf like [`crate::visible`].

/// Whether process `pid` exists (`kill(pid, 0)`; one of another user's
/// counts) and is not a zombie. False for `pid <= 0`.
pub fn alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    let exists = rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    exists && !zombie(pid)
}

/// Whether process `pid` is a zombie, from `/proc/<pid>/stat` (field 3);
/// false when that cannot be read.
fn zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            // `pid (comm) state …`; comm may contain spaces and parens.
            let rest = stat.rsplit_once(')')?.1.to_string();
            rest.split_whitespace().next().map(|s| s == "Z")
        })
        .unwrap_or(false)
}
