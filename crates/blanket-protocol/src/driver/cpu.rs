//! Process CPU time, for the per-role CPU figures of the driver.

/// CPU seconds used by this process so far (all threads), from
/// `clock_gettime(CLOCK_PROCESS_CPUTIME_ID)`; 0 if the clock is missing.
#[allow(unsafe_code)]
pub(crate) fn process_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
