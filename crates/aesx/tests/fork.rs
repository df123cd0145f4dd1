//! Multi-threaded CTR keeps working in a child after `fork()` (HPN-SSH's threaded AES-CTR hung
//! there: its worker threads did not exist in the child). Its own test binary, so the fork
//! happens in a process with as few threads as possible.
#![cfg(unix)]

use std::time::{Duration, Instant};

use aesx::Aes;

#[test]
fn child_after_fork_can_encrypt_in_parallel() {
    let aes = Aes::new(&[9u8; 32]).unwrap();
    let iv = [0xffu8; 16]; // the counter wraps mod 2^128 at the first block
    let src: Vec<u8> = (0..(4 << 20))
        .map(|i: usize| (i * 13 + (i >> 11)) as u8)
        .collect();
    let mut want = src.clone();
    aes.ctr_xor_at(&iv, 0, &mut want);

    // Start the pool in the parent.
    let mut got = src.clone();
    aes.ctr_xor_at_threads(&iv, 0, &mut got, 4);
    assert_eq!(got, want, "parent, parallel");

    // SAFETY: fork has no memory-safety preconditions; the child only runs the encryption
    // below (which may start threads of its own) and then leaves with `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let mut got = src.clone();
        aes.ctr_xor_at_threads(&iv, 0, &mut got, 4);
        let code = if got == want { 0 } else { 3 };
        // SAFETY: ends the child without running the parent's test-harness destructors.
        unsafe { libc::_exit(code) };
    }
    let start = Instant::now();
    let mut status = 0;
    loop {
        // SAFETY: `pid` is our child; `status` is a valid out-pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            break;
        }
        if start.elapsed() > Duration::from_secs(60) {
            // SAFETY: killing our own child process.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("the child hung after fork()");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        libc::WIFEXITED(status),
        "child did not exit normally: {status}"
    );
    assert_eq!(
        libc::WEXITSTATUS(status),
        0,
        "child computed a different keystream"
    );
}
